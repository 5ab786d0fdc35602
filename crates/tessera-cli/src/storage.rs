//! Which storage serves a path given on the command line, and writes to
//! object stores.
//!
//! Local paths are served by [`LocalFs`]; URIs (`s3://`, `gs://`, `az://`,
//! `http(s)://`) by one object storage per store for the command
//! ([`Stores`]), so an array's folders are listed once however many times
//! a command opens it.
//!
//! Writes to a URI go straight to its store through the same storage
//! ([`Stores::location`]): nothing is staged or copied to local disk.

use crate::error::BoxError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tessera::storage::{LocalFs, Location, Storage};

type ObjectStorage = tessera::object_store::ObjectStorage;

/// The storages one command reads and writes through: local paths by
/// [`LocalFs`], each object store (`scheme://bucket`) by one object
/// storage made the first time a path on it is given. A command owns its
/// `Stores` and drops them when it ends.
#[derive(Default)]
pub struct Stores {
    made: Mutex<Vec<(String, ObjectStorage)>>,
}

impl Stores {
    /// The storage serving `path`.
    pub fn storage(&self, path: &Path) -> Result<Arc<dyn Storage>, BoxError> {
        Ok(match self.object_storage(path)? {
            Some(s) => Arc::new(s),
            None => Arc::new(LocalFs),
        })
    }

    /// Where `path` is: a local folder, or a URI on its object store.
    /// Writes go straight to it: fragment files streamed (multipart
    /// uploads on an object store), small files put whole, in the order
    /// that keeps them invisible until complete.
    pub fn location(&self, path: &Path) -> Result<Location, BoxError> {
        Ok(match self.object_storage(path)? {
            Some(s) => Location::new(Arc::new(s), path),
            None => Location::local(target(path)),
        })
    }

    /// Runs `op` on the location of `path` ([`Stores::location`]).
    pub fn at_location<T>(
        &self,
        path: &Path,
        op: impl FnOnce(&Location) -> Result<T, BoxError>,
    ) -> Result<T, BoxError> {
        op(&self.location(path)?)
    }

    /// The object storage serving `path` (a handle on the one kept for its
    /// store), `None` for a local path.
    fn object_storage(&self, path: &Path) -> Result<Option<ObjectStorage>, BoxError> {
        if !tessera::is_uri(path) {
            return Ok(None);
        }
        let uri = tessera::object_store::ObjectUri::parse(&path.to_string_lossy())?;
        let mut made = self.made.lock().map_err(|_| "storage lock poisoned")?;
        if let Some((_, s)) = made.iter().find(|(name, _)| *name == uri.store()) {
            return Ok(Some(s.clone()));
        }
        let storage = ObjectStorage::for_uri(&uri.store())?;
        made.push((uri.store(), storage.clone()));
        Ok(Some(storage))
    }
}

/// A local path as given (a `file://` prefix removed), or the URI.
pub fn target(path: &Path) -> PathBuf {
    tessera::local_path(path).to_path_buf()
}
