//! Which storage serves a path given on the command line, and writes to
//! object stores.
//!
//! Local paths are served by [`LocalFs`]; URIs (`s3://`, `gs://`, `az://`,
//! `http(s)://`) by one object storage per store for the process, so an
//! array's folders are listed once however many times a command opens it.
//!
//! Writes to a URI are staged (`tessera_object_store::staged_write`): the
//! write runs on a local copy of what writers read, and the files it added
//! are uploaded with the ones that make them visible last.

use crate::args::BoxError;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tessera::tile::storage::{LocalFs, Storage};

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

/// Runs the write `op` on the array or group at `path`: in place for a
/// local path; for a URI in a local staging folder, then publishes what
/// it added (`tessera_object_store::staged_write`). `op` gets the folder
/// to write in.
pub fn staged_write<T>(
    path: &Path,
    op: impl FnOnce(&Path) -> Result<T, BoxError>,
) -> Result<T, BoxError> {
    let Some(store) = object_storage(path)? else {
        return op(&target(path));
    };
    let (out, n) = tessera::object_store::staged_write(store, path, op)?;
    eprintln!("uploaded {n} objects to {}", path.display());
    Ok(out)
}

/// Runs the maintenance `op` (consolidation, vacuum) on the array at
/// `path`: in place for a local path; for a URI on a local copy of the
/// array, then uploads what it added and deletes what it removed
/// (`tessera_object_store::mirrored_change`). Absolute `file://` URIs the
/// op wrote into vacuum lists (arrays of format versions before 19 list
/// the files they replace that way) are turned into the array's URI.
pub fn mirrored_change<T>(
    path: &Path,
    op: impl FnOnce(&Path) -> Result<T, BoxError>,
) -> Result<T, BoxError> {
    mirrored_change_reading(path, |_| true, op)
}

/// [`mirrored_change`] for an op that reads only the files `reads`
/// accepts (paths relative to the array): the others are not copied down
/// (`tessera_object_store::mirrored_change_reading`).
pub fn mirrored_change_reading<T>(
    path: &Path,
    reads: impl Fn(&Path) -> bool,
    op: impl FnOnce(&Path) -> Result<T, BoxError>,
) -> Result<T, BoxError> {
    let Some(store) = object_storage(path)? else {
        return op(&target(path));
    };
    let (out, done) = tessera::object_store::mirrored_change_reading(store, path, reads, |at| {
        let out = op(at)?;
        relocate_vacuum_lists(at, path)?;
        Ok::<_, BoxError>(out)
    })?;
    eprintln!(
        "copied {} objects from {}, uploaded {}, deleted {}",
        done.copied,
        path.display(),
        done.uploaded,
        done.removed
    );
    Ok(out)
}

/// Rewrites the `file://` URIs of the local copy `at` in its vacuum lists
/// (`__commits/*.vac`, `__meta/*.vac`) as URIs under `uri`.
fn relocate_vacuum_lists(at: &Path, uri: &Path) -> Result<(), BoxError> {
    let Ok(abs) = std::fs::canonicalize(at) else {
        return Ok(());
    };
    let local = format!("file://{}", abs.display());
    let remote = uri.to_string_lossy().trim_end_matches('/').to_owned();
    for folder in ["__commits", "__meta"] {
        let Ok(entries) = std::fs::read_dir(at.join(folder)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "vac") {
                continue;
            }
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            if text.contains(&local) {
                std::fs::write(&p, text.replace(&local, &remote))
                    .map_err(|e| format!("{}: {e}", p.display()))?;
            }
        }
    }
    Ok(())
}
