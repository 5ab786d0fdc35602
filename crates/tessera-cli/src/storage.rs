//! Which storage serves a path given on the command line, and writes to
//! object stores.
//!
//! Local paths are served by [`LocalFs`]; URIs (`s3://`, `gs://`, `az://`,
//! `http(s)://`) by one object storage per store for the process, so an
//! array's folders are listed once however many times a command opens it.
//!
//! Writes to a URI go straight to its store through the same storage
//! ([`location`]): nothing is staged or copied to local disk.

use crate::error::BoxError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tessera::tile::storage::{LocalFs, Location, Storage};

/// The object storages made so far, by store (`scheme://bucket`).
static STORES: Mutex<Vec<(String, &'static ObjectStorage)>> = Mutex::new(Vec::new());

type ObjectStorage = tessera::object_store::ObjectStorage;

/// The storage serving `path`.
pub fn storage(path: &Path) -> Result<&'static dyn Storage, BoxError> {
    Ok(match object_storage(path)? {
        Some(s) => s,
        None => &LocalFs,
    })
}

/// The storage serving `path`, shared: what a read session keeps.
pub fn shared_storage(path: &Path) -> Result<Arc<dyn Storage>, BoxError> {
    Ok(match object_storage(path)? {
        Some(s) => Arc::new(s.clone()),
        None => Arc::new(LocalFs),
    })
}

/// The object storage serving `path`, `None` for a local path. Each is
/// made once and kept for the process (a command's lifetime).
fn object_storage(path: &Path) -> Result<Option<&'static ObjectStorage>, BoxError> {
    if !tessera::is_uri(path) {
        return Ok(None);
    }
    let uri = tessera::object_store::ObjectUri::parse(&path.to_string_lossy())?;
    let mut stores = STORES.lock().map_err(|_| "storage lock poisoned")?;
    if let Some((_, s)) = stores.iter().find(|(name, _)| *name == uri.store()) {
        return Ok(Some(s));
    }
    let made: &'static ObjectStorage = Box::leak(Box::new(ObjectStorage::for_uri(&uri.store())?));
    stores.push((uri.store(), made));
    Ok(Some(made))
}

/// A local path as given (a `file://` prefix removed), or the URI.
pub fn target(path: &Path) -> PathBuf {
    tessera::local_path(path).to_path_buf()
}

/// Where `path` is: a local folder, or a URI on its object store. Writes
/// go straight to it: fragment files streamed (multipart uploads on an
/// object store), small files put whole, in the order that keeps them
/// invisible until complete.
pub fn location(path: &Path) -> Result<Location, BoxError> {
    Ok(match object_storage(path)? {
        Some(s) => Location::new(Arc::new(s.clone()), path),
        None => Location::local(target(path)),
    })
}

/// Runs `op` on the location of `path` ([`location`]).
pub fn at_location<T>(
    path: &Path,
    op: impl FnOnce(&Location) -> Result<T, BoxError>,
) -> Result<T, BoxError> {
    op(&location(path)?)
}
