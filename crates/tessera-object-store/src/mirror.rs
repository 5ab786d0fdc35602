//! Maintenance of an array on an object store (consolidation, vacuum)
//! through a local mirror: the operations work on local folders, reading
//! every fragment and removing whole folders, so the array is copied
//! down, the operation runs on the copy, and what it changed goes back:
//! the files it added first, in the order that keeps them invisible until
//! whole ([`publish_dir`]), then the files it removed, in the order that
//! hides them first ([`removal_rank`]).

use crate::publish::collect;
use crate::stage::{copy_files, files_below, Stage};
use crate::{publish_dir, ObjectStorage, ObjectStoreError};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What [`mirrored_change`] sent back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MirroredChange {
    /// Objects copied down (read).
    pub copied: usize,
    /// Objects uploaded (added or changed by the operation).
    pub uploaded: usize,
    /// Objects deleted (removed by the operation).
    pub removed: usize,
}

/// Runs `op` on a local copy of the array (or any folder) at `uri`, then
/// uploads the files it added or changed and deletes the ones it removed.
/// Nothing is sent if `op` fails; the copy is removed either way.
///
/// ```
/// use std::path::Path;
/// use tessera_object_store::{mirrored_change, ObjectStorage, Storage};
/// let store = ObjectStorage::for_uri("memory://bucket").unwrap();
/// store.put(Path::new("memory://bucket/a/__commits/old.wrt"), vec![]).unwrap();
/// let ((), done) = mirrored_change(&store, Path::new("memory://bucket/a"), |local| {
///     std::fs::remove_file(local.join("__commits/old.wrt"))?;
///     std::fs::write(local.join("__commits/new.wrt"), b"")?;
///     Ok::<_, tessera_object_store::ObjectStoreError>(())
/// }).unwrap();
/// assert_eq!((done.copied, done.uploaded, done.removed), (1, 1, 1));
/// let names: Vec<String> = store.list(Path::new("memory://bucket/a/__commits"))
///     .unwrap().into_iter().map(|e| e.name).collect();
/// assert_eq!(names, ["new.wrt"]);
/// ```
pub fn mirrored_change<T, E: From<ObjectStoreError>>(
    store: &ObjectStorage,
    uri: &Path,
    op: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<(T, MirroredChange), E> {
    mirrored_change_reading(store, uri, |_| true, op)
}

/// [`mirrored_change`] for an operation that reads only some files (a
/// vacuum reads commits and vacuum lists, and removes fragments by name):
/// the files `reads` refuses (by path relative to `uri`) are not copied
/// down but made empty in the copy, so the operation still finds their
/// names and can remove them; it must not read or change them.
///
/// ```
/// use std::path::Path;
/// use tessera_object_store::{mirrored_change_reading, ObjectStorage, Storage};
/// let store = ObjectStorage::for_uri("memory://bucket").unwrap();
/// store.put(Path::new("memory://bucket/a/__fragments/f/a0.tdb"), vec![7; 1000]).unwrap();
/// store.put(Path::new("memory://bucket/a/__commits/f.wrt"), vec![]).unwrap();
/// let data = |rel: &Path| !rel.starts_with("__fragments");
/// let ((), done) = mirrored_change_reading(&store, Path::new("memory://bucket/a"), data, |local| {
///     // Not copied: empty, but there to remove.
///     assert_eq!(std::fs::read(local.join("__fragments/f/a0.tdb"))?.len(), 0);
///     std::fs::remove_dir_all(local.join("__fragments/f"))?;
///     Ok::<_, tessera_object_store::ObjectStoreError>(())
/// }).unwrap();
/// assert_eq!((done.copied, done.uploaded, done.removed), (1, 0, 1));
/// assert!(!store.exists(Path::new("memory://bucket/a/__fragments/f/a0.tdb")));
/// ```
pub fn mirrored_change_reading<T, E: From<ObjectStoreError>>(
    store: &ObjectStorage,
    uri: &Path,
    reads: impl Fn(&Path) -> bool,
    op: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<(T, MirroredChange), E> {
    let stage = Stage::new()?;
    let (before, copied) = copy_down(store, uri, &stage.root, &reads)?;
    let out = op(&stage.root)?;
    let mut after = Vec::new();
    if stage.root.exists() {
        collect(&stage.root, &stage.root, &mut after)?;
    }
    let kept: HashSet<PathBuf> = after
        .iter()
        .filter(|rel| {
            before
                .get(*rel)
                .is_some_and(|s| *s == stamp(&stage.root.join(rel)))
        })
        .cloned()
        .collect();
    let uploaded = match stage.root.exists() {
        true => publish_dir(store, &stage.root, uri, &kept)?,
        false => 0,
    };
    let present: HashSet<&PathBuf> = after.iter().collect();
    let mut gone: Vec<&PathBuf> = before.keys().filter(|r| !present.contains(r)).collect();
    gone.sort_by_key(|rel| (removal_rank(rel), (*rel).clone()));
    for rel in &gone {
        store.delete(&uri.join(rel)).map_err(ObjectStoreError::Io)?;
    }
    let done = MirroredChange {
        copied,
        uploaded,
        removed: gone.len(),
    };
    Ok((out, done))
}

/// The order removed files are deleted in: a fragment's commit first (the
/// fragment is then invisible), its files next, other files, and the
/// vacuum lists (which keep readers off what they list) last.
fn removal_rank(rel: &Path) -> u8 {
    let text = rel.to_string_lossy();
    match () {
        _ if text.ends_with(".vac") => 3,
        _ if text.starts_with("__commits") => 0,
        _ if text.starts_with("__fragments") => 1,
        _ => 2,
    }
}

/// A local file's size and modification time: what tells a file the
/// operation rewrote from one it left alone.
type Stamp = Option<(u64, SystemTime)>;

fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// Copies every object under `uri` that `reads` accepts to `root` (the
/// rest made empty there); returns each one's relative path and the stamp
/// of its copy, and how many were copied.
fn copy_down(
    store: &ObjectStorage,
    uri: &Path,
    root: &Path,
    reads: &dyn Fn(&Path) -> bool,
) -> Result<(HashMap<PathBuf, Stamp>, usize), ObjectStoreError> {
    let (files, named): (Vec<_>, Vec<_>) = files_below(store, uri, PathBuf::new())?
        .into_iter()
        .partition(|(rel, _)| reads(rel));
    copy_files(store, uri, root, &files)?;
    for (rel, _) in &named {
        let local = root.join(rel);
        let make = || -> std::io::Result<()> {
            if let Some(parent) = local.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::File::create(&local).map(drop)
        };
        make().map_err(|source| ObjectStoreError::Local {
            path: local.display().to_string(),
            source,
        })?;
    }
    let stamped = files
        .iter()
        .chain(&named)
        .map(|(rel, _)| (rel.clone(), stamp(&root.join(rel))))
        .collect();
    Ok((stamped, files.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_go_first_and_vacuum_lists_last() {
        let mut rels: Vec<PathBuf> = [
            "__commits/a.vac",
            "__meta/m.vac",
            "__fragments/f/a0.tdb",
            "__meta/m",
            "__commits/f.wrt",
        ]
        .map(PathBuf::from)
        .to_vec();
        rels.sort_by_key(|r| (removal_rank(r), r.clone()));
        let order: Vec<String> = rels.iter().map(|r| r.display().to_string()).collect();
        assert_eq!(
            order,
            [
                "__commits/f.wrt",
                "__fragments/f/a0.tdb",
                "__meta/m",
                "__commits/a.vac",
                "__meta/m.vac"
            ]
        );
    }
}
