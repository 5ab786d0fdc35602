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
        let mut sized: Vec<(PathBuf, u64)> = Vec::new();
        for e in store.list(uri)? {
            match (e.name.as_str(), e.is_dir) {
                ("__array_schema.tdb" | "__tiledb_group.tdb", false) => {
                    let size = store.size(&uri.join(&e.name))?;
                    sized.push((e.name.into(), size));
                }
                ("__schema" | "__group", true) => {
                    sized.extend(files_below(store, uri, PathBuf::from(&e.name))?)
                }
                _ => {}
            }
        }
        copy_files(store, uri, &self.root, &sized)?;
        let copied = sized.into_iter().map(|(rel, _)| rel).collect();
        Ok(copied)
    }
}

/// Every file in the folder `folder` of `uri` and below it, relative to
/// `uri`, with its size.
pub(crate) fn files_below(
    store: &ObjectStorage,
    uri: &Path,
    folder: PathBuf,
) -> std::io::Result<Vec<(PathBuf, u64)>> {
    let mut files = Vec::new();
    let mut folders = vec![folder];
    while let Some(f) = folders.pop() {
        for e in store.list(&uri.join(&f))? {
            let rel = f.join(&e.name);
            match (e.is_dir, e.size) {
                (true, _) => folders.push(rel),
                (false, Some(size)) => files.push((rel, size)),
                (false, None) => {
                    let size = store.size(&uri.join(&rel))?;
                    files.push((rel, size));
                }
            }
        }
    }
    Ok(files)
}

/// The bytes copied down in one batch: a large copy is not held in
/// memory whole.
const COPY_BATCH_BYTES: u64 = 64 << 20;

/// Copies `files` (paths relative to `uri`, with their sizes) to the same
/// paths under `root`, in batches of about [`COPY_BATCH_BYTES`].
pub(crate) fn copy_files(
    store: &ObjectStorage,
    uri: &Path,
    root: &Path,
    files: &[(PathBuf, u64)],
) -> Result<(), ObjectStoreError> {
    let mut rest = files;
    while !rest.is_empty() {
        // At least one file a batch, however large.
        let mut n = 1;
        let mut bytes = rest[0].1;
        while n < rest.len() && bytes.saturating_add(rest[n].1) <= COPY_BATCH_BYTES {
            bytes += rest[n].1;
            n += 1;
        }
        let (batch, later) = rest.split_at(n);
        let requests: Vec<(PathBuf, std::ops::Range<u64>)> = batch
            .iter()
            .map(|(rel, size)| (uri.join(rel), 0..*size))
            .collect();
        for ((rel, _), bytes) in batch.iter().zip(store.read_batch(&requests)?) {
            let local = root.join(rel);
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
        }
        rest = later;
    }
    Ok(())
}

impl Drop for Stage {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
