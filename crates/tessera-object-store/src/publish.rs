//! Publishing a folder written locally to an object store, in the order
//! that keeps readers from seeing it half written.

use crate::{ObjectStorage, ObjectStoreError};
use std::path::{Path, PathBuf};

/// Uploads every file under `local` but those in `skip` (paths relative
/// to `local`) to the same relative keys under `uri`, and returns how
/// many. The files that make others visible go
/// last, each after everything it could name: commit files (`__commits/`)
/// after fragments' files, then the group details (`__group/`), then the
/// array schema and group markers, which make a new array or group exist,
/// and vacuum lists (`*.vac`) very last: readers skip the files a vacuum
/// list names, so it must not show before what replaces them (a
/// consolidated fragment and its commit, a consolidated metadata file).
/// Each object is one `PUT`, whole or absent; a failure stops before the
/// later files, leaving what was uploaded invisible to readers (or, for
/// metadata files, as a whole write).
pub fn publish_dir(
    storage: &ObjectStorage,
    local: &Path,
    uri: &Path,
    skip: &std::collections::HashSet<PathBuf>,
) -> Result<usize, ObjectStoreError> {
    let mut files = Vec::new();
    collect(local, local, &mut files)?;
    files.retain(|f| !skip.contains(f));
    files.sort_by_key(|rel| (rank(rel), rel.clone()));
    for rel in &files {
        let path = local.join(rel);
        let bytes = std::fs::read(&path).map_err(|source| ObjectStoreError::Local {
            path: path.display().to_string(),
            source,
        })?;
        storage.put(&uri.join(rel), bytes)?;
    }
    Ok(files.len())
}

/// Upload order: data first, what makes it visible last.
fn rank(rel: &Path) -> u8 {
    if rel.extension().is_some_and(|e| e == "vac") {
        return 4;
    }
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    match first.as_str() {
        "__commits" => 1,
        "__group" => 2,
        "__schema" | "__array_schema.tdb" | "__tiledb_group.tdb" => 3,
        _ => 0,
    }
}

/// Every file under `dir`, relative to `root`, appended to `out`.
pub(crate) fn collect(
    root: &Path,
    dir: &Path,
    out: &mut Vec<PathBuf>,
) -> Result<(), ObjectStoreError> {
    let local = |source| ObjectStoreError::Local {
        path: dir.display().to_string(),
        source,
    };
    for e in std::fs::read_dir(dir).map_err(local)? {
        let p = e.map_err(local)?.path();
        if p.is_dir() {
            collect(root, &p, out)?;
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_path_buf());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A consolidation's files go data first, then its commit, then the
    /// vacuum list naming what it replaces.
    #[test]
    fn vacuum_lists_go_after_what_replaces_their_files() {
        let mut rels: Vec<PathBuf> = [
            "__commits/__1_9_u_22.vac",
            "__commits/__1_9_u_22.wrt",
            "__fragments/__1_9_u_22/a0.tdb",
            "__meta/__1_9_v.vac",
            "__meta/__1_9_v",
        ]
        .map(PathBuf::from)
        .to_vec();
        rels.sort_by_key(|rel| (rank(rel), rel.clone()));
        let order: Vec<String> = rels.iter().map(|r| r.display().to_string()).collect();
        assert_eq!(
            order,
            [
                "__fragments/__1_9_u_22/a0.tdb",
                "__meta/__1_9_v",
                "__commits/__1_9_u_22.wrt",
                "__commits/__1_9_u_22.vac",
                "__meta/__1_9_v.vac"
            ]
        );
    }
}
