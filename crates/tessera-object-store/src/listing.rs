//! The folder listings an [`ObjectStorage`](crate::ObjectStorage) keeps.
//!
//! A folder is listed once per storage. Where a folder's whole subtree
//! fits in one page of a recursive listing (an array of a few hundred
//! files: its fragments, commits, schemas and metadata), that one request
//! gives every folder under it too, so opening an array lists once
//! instead of once per folder (`__schema`, `__fragments`, `__commits`,
//! `__fragment_meta`, `__meta`). A folder absent from such a listing is
//! empty: object stores have no empty folders.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use tessera_storage::{DirEntry, StorageError, StorageErrorKind, StorageResult};

/// Listings by folder id (the folder's URI, `scheme://bucket/key`).
#[derive(Debug, Default)]
pub struct Listings {
    folders: HashMap<String, Vec<DirEntry>>,
    /// Folders whose whole subtree is in `folders`.
    complete: HashSet<String>,
}

impl Listings {
    /// The listing of folder `id`, if known: kept, or empty because a
    /// folder above it was listed whole and it was not there.
    pub fn get(&self, id: &str) -> Option<Vec<DirEntry>> {
        if let Some(l) = self.folders.get(id) {
            return Some(l.clone());
        }
        ancestors(id)
            .any(|a| self.complete.contains(a))
            .then(Vec::new)
    }

    /// Keeps the listing of one folder.
    pub fn insert(&mut self, id: String, mut entries: Vec<DirEntry>) {
        entries.sort();
        entries.dedup_by(|a, b| a.name == b.name);
        self.folders.insert(id, entries);
    }

    /// Keeps the listing of folder `root` and of every folder under it,
    /// from every object below `root`: its key relative to `root`
    /// (`a/b/file`) and size.
    pub fn insert_tree(&mut self, root: &str, objects: &[(String, u64)]) {
        let mut tree: BTreeMap<String, Vec<DirEntry>> = BTreeMap::new();
        tree.insert(String::new(), Vec::new());
        for (key, size) in objects {
            let mut folder = String::new();
            let parts: Vec<&str> = key.split('/').filter(|p| !p.is_empty()).collect();
            let Some((file, dirs)) = parts.split_last() else {
                continue;
            };
            for dir in dirs {
                let listing = tree.entry(folder.clone()).or_default();
                listing.push(DirEntry {
                    name: dir.to_string(),
                    is_dir: true,
                    size: None,
                });
                folder = join(&folder, dir);
                tree.entry(folder.clone()).or_default();
            }
            tree.entry(folder).or_default().push(DirEntry {
                name: file.to_string(),
                is_dir: false,
                size: Some(*size),
            });
        }
        for (folder, entries) in tree {
            let id = join(root, &folder);
            self.complete.insert(id.clone());
            self.insert(id, entries);
        }
    }

    /// Forgets what a write or delete at `id` changes: the listings of
    /// every folder above it, and that their subtrees were listed whole.
    pub fn forget(&mut self, id: &str) {
        for a in ancestors(id) {
            self.folders.remove(a);
            self.complete.remove(a);
        }
    }

    /// Forgets the folder `id` with everything below it (removed whole),
    /// and what that changes above it.
    pub fn forget_folder(&mut self, id: &str) {
        let below = format!("{id}/");
        self.folders
            .retain(|f, _| f != id && !f.starts_with(&below));
        self.complete.retain(|f| f != id && !f.starts_with(&below));
        self.forget(id);
    }
}

/// `id`'s folders, from its parent up to the store (`s3://b/x/y` gives
/// `s3://b/x` and `s3://b`).
fn ancestors(id: &str) -> impl Iterator<Item = &str> {
    let store_end = id.find("://").map_or(0, |i| i + 3);
    let mut rest = Some(id);
    std::iter::from_fn(move || {
        let current = rest?;
        let cut = current[store_end..].rfind('/').map(|i| i + store_end);
        rest = cut.map(|i| &current[..i]);
        rest
    })
}

fn join(folder: &str, name: &str) -> String {
    match (folder.is_empty(), name.is_empty()) {
        (_, true) => folder.to_string(),
        (true, false) => name.to_string(),
        (false, false) => format!("{folder}/{name}"),
    }
}

/// The size of the object at `path` from its listing `entry`.
pub(crate) fn sized(path: &Path, entry: Option<DirEntry>) -> StorageResult<u64> {
    match entry {
        Some(DirEntry {
            size: Some(size), ..
        }) => Ok(size),
        Some(_) => Err(StorageError::new(
            StorageErrorKind::InvalidKey,
            path.to_string_lossy(),
            "a folder, not an object",
        )),
        None => Err(StorageError::new(
            StorageErrorKind::NotFound,
            path.to_string_lossy(),
            "no such object",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(l: &[DirEntry]) -> Vec<(&str, bool)> {
        l.iter().map(|e| (e.name.as_str(), e.is_dir)).collect()
    }

    #[test]
    fn a_recursive_listing_lists_every_folder_below() {
        let mut l = Listings::default();
        let objects = [
            ("__schema/s1".to_string(), 10),
            ("__fragments/f1/a0.tdb".to_string(), 5),
            ("__fragments/f1/__fragment_metadata.tdb".to_string(), 7),
            ("__commits/f1.wrt".to_string(), 0),
            ("__array_schema.tdb".to_string(), 3),
        ];
        l.insert_tree("s3://b/arr", &objects);
        let root = l.get("s3://b/arr").unwrap();
        assert_eq!(
            names(&root),
            [
                ("__array_schema.tdb", false),
                ("__commits", true),
                ("__fragments", true),
                ("__schema", true)
            ]
        );
        assert_eq!(root[0].size, Some(3));
        let f1 = l.get("s3://b/arr/__fragments/f1").unwrap();
        assert_eq!(
            names(&f1),
            [("__fragment_metadata.tdb", false), ("a0.tdb", false)]
        );
        // Not in the listing: empty, without another request.
        assert_eq!(l.get("s3://b/arr/__fragment_meta"), Some(vec![]));
        assert_eq!(l.get("s3://b/arr/__fragments/f9"), Some(vec![]));
        // Outside it: unknown.
        assert_eq!(l.get("s3://b/other"), None);
        assert_eq!(l.get("s3://b"), None);
    }

    #[test]
    fn a_write_forgets_the_folders_above_it_only() {
        let mut l = Listings::default();
        l.insert_tree(
            "s3://b/arr",
            &[
                ("__schema/s1".to_string(), 1),
                ("__commits/c.wrt".to_string(), 0),
            ],
        );
        l.forget("s3://b/arr/__fragment_meta/x.meta");
        // The folder written to and the array: listed anew.
        assert_eq!(l.get("s3://b/arr/__fragment_meta"), None);
        assert_eq!(l.get("s3://b/arr"), None);
        // Its siblings are as they were.
        assert_eq!(
            names(&l.get("s3://b/arr/__schema").unwrap()),
            [("s1", false)]
        );
        assert_eq!(l.get("s3://b/arr/__schema/deeper"), Some(vec![]));
    }

    #[test]
    fn ancestors_stop_at_the_store() {
        let a: Vec<&str> = ancestors("s3://b/x/y").collect();
        assert_eq!(a, ["s3://b/x", "s3://b"]);
        assert_eq!(ancestors("s3://b").count(), 0);
    }
}
