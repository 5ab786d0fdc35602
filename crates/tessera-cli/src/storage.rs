//! Which storage serves a path given on the command line, and writes to
//! object stores.
//!
//! Local paths are served by [`LocalFs`]; URIs (`s3://`, `gs://`, `az://`,
//! `http(s)://`) by one object storage per store for the process, so an
//! array's folders are listed once however many times a command opens it.
//!
//! Writes to a URI are staged: the files the writers read (schemas and
//! enumerations, group markers and details) are copied into a local
//! folder, the write runs there as on any local array, and the files it
//! added are uploaded with the ones that make them visible last
//! (`tessera_object_store::publish_dir`: fragments, then commits).

use crate::args::BoxError;
use std::collections::HashSet;
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
/// it added. `op` gets the folder to write in.
pub fn staged_write<T>(
    path: &Path,
    op: impl FnOnce(&Path) -> Result<T, BoxError>,
) -> Result<T, BoxError> {
    let Some(store) = object_storage(path)? else {
        return op(&target(path));
    };
    let stage = Stage::new()?;
    let copied = stage.copy_from(store, path)?;
    let out = op(&stage.root)?;
    let n = tessera::object_store::publish_dir(store, &stage.root, path, &copied)?;
    eprintln!("uploaded {n} objects to {}", path.display());
    Ok(out)
}

/// A local folder removed when dropped.
struct Stage {
    /// The staging folder.
    dir: PathBuf,
    /// The array or group inside it.
    root: PathBuf,
}

impl Stage {
    fn new() -> Result<Stage, BoxError> {
        let dir =
            std::env::temp_dir().join(format!("tessera-stage-{}", tessera_write::name::uuid()?));
        std::fs::create_dir_all(&dir)?;
        // The array or group itself is made only if something is copied:
        // creating one wants no folder there.
        Ok(Stage {
            root: dir.join("object"),
            dir,
        })
    }

    /// Copies what writers read of the object at `uri`: the array schema
    /// folder (schemas, enumerations), a legacy schema, the group marker
    /// and details. Returns the copied files' relative paths.
    fn copy_from(&self, store: &ObjectStorage, uri: &Path) -> Result<HashSet<PathBuf>, BoxError> {
        let mut copied = HashSet::new();
        let mut wanted: Vec<PathBuf> = Vec::new();
        for e in store.list(uri)? {
            match (e.name.as_str(), e.is_dir) {
                ("__array_schema.tdb" | "__tiledb_group.tdb", false) => wanted.push(e.name.into()),
                ("__schema" | "__group", true) => {
                    let mut folders = vec![PathBuf::from(&e.name)];
                    while let Some(f) = folders.pop() {
                        for inner in store.list(&uri.join(&f))? {
                            let rel = f.join(&inner.name);
                            if inner.is_dir {
                                folders.push(rel);
                            } else {
                                wanted.push(rel);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let requests: Vec<(PathBuf, std::ops::Range<u64>)> = wanted
            .iter()
            .map(|rel| Ok((uri.join(rel), 0..store.size(&uri.join(rel))?)))
            .collect::<Result<_, std::io::Error>>()?;
        for (rel, bytes) in wanted.iter().zip(store.read_batch(&requests)?) {
            let local = self.root.join(rel);
            if let Some(parent) = local.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&local, bytes)?;
            copied.insert(rel.clone());
        }
        Ok(copied)
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Refuses a URI for `what`, which works on local arrays only (it reads
/// and removes many files in place), naming the alternative.
pub fn local_only(path: &Path, what: &str) -> Result<PathBuf, BoxError> {
    if tessera::is_uri(path) {
        return Err(format!(
            "{}: {what} works on local arrays and groups only; copy it locally, {what} it, and upload it",
            path.display()
        )
        .into());
    }
    Ok(target(path))
}
