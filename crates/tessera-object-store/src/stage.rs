//! Writes to an object store staged in a local folder: the writers work on
//! local folders, so the files they read (schemas, enumerations, group
//! markers and details) are copied down, the write runs there, and the
//! files it added are published with those that make them visible last
//! ([`publish_dir`]).

use crate::{publish_dir, ObjectStorage, ObjectStoreError};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use tessera_tile::storage::Storage;

/// Runs the write `op` on the array or group at `uri` in a local staging
/// folder, then uploads what it added. `op` gets the local folder (absent
/// until `op` makes it, for an object that does not exist yet). Returns
/// `op`'s result and the number of objects uploaded; nothing is uploaded
/// if `op` fails, and the staging folder is removed either way.
///
/// ```
/// use std::path::Path;
/// use tessera_object_store::{staged_write, ObjectStorage, Storage};
/// let store = ObjectStorage::for_uri("memory://bucket").unwrap();
/// let uri = Path::new("memory://bucket/g");
/// let ((), uploaded) = staged_write(&store, uri, |local| {
///     std::fs::create_dir_all(local.join("__commits"))?;
///     std::fs::write(local.join("__commits/c.wrt"), b"")?;
///     Ok::<_, tessera_object_store::ObjectStoreError>(())
/// }).unwrap();
/// assert_eq!(uploaded, 1);
/// assert_eq!(store.list(uri).unwrap()[0].name, "__commits");
/// ```
pub fn staged_write<T, E: From<ObjectStoreError>>(
    store: &ObjectStorage,
    uri: &Path,
    op: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<(T, usize), E> {
    let stage = Stage::new()?;
    let copied = stage.copy_from(store, uri)?;
    let out = op(&stage.root)?;
    let uploaded = publish_dir(store, &stage.root, uri, &copied)?;
    Ok((out, uploaded))
}

/// A local folder, removed when dropped.
pub(crate) struct Stage {
    /// The staging folder.
    dir: PathBuf,
    /// The array or group inside it.
    pub(crate) root: PathBuf,
}

/// Staging folders made by this process, for unique names.
static STAGES: AtomicU64 = AtomicU64::new(0);

impl Stage {
    pub(crate) fn new() -> Result<Stage, ObjectStoreError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "tessera-stage-{}-{nanos}-{}",
            std::process::id(),
            STAGES.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|source| ObjectStoreError::Local {
            path: dir.display().to_string(),
            source,
        })?;
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
    fn copy_from(
        &self,
        store: &ObjectStorage,
        uri: &Path,
    ) -> Result<HashSet<PathBuf>, ObjectStoreError> {
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
        let mut copied = HashSet::new();
        for (rel, bytes) in wanted.iter().zip(store.read_batch(&requests)?) {
            let local = self.root.join(rel);
            let write = || -> std::io::Result<()> {
                if let Some(parent) = local.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&local, bytes)
            };
            write().map_err(|source| ObjectStoreError::Local {
                path: local.display().to_string(),
                source,
            })?;
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
