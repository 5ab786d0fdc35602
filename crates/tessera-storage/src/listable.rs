//! Listing folders: how an array's files are found.

use crate::error::StorageResult;
use std::path::Path;

/// One entry of a folder listing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    /// File or folder name (no path).
    pub name: String,
    /// True for folders.
    pub is_dir: bool,
    /// Size in bytes, where the listing gives it without another request
    /// (object-store listings and [`Memory`] do; local folders do not, and
    /// [`ReadableStorage::size`] asks); `None` for folders.
    pub size: Option<u64>,
}

/// Listing folders: how an array's files are found.
pub trait ListableStorage: Send + Sync {
    /// Lists a folder. A missing folder lists as empty: git, and some object
    /// stores, drop empty folders that libtiledb creates; so does a file,
    /// as a key with nothing under it does on an object store.
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>>;

    /// True if a file or folder exists at `path`.
    fn exists(&self, path: &Path) -> bool;

    /// Forgets the folder listings kept (object stores keep them for a
    /// storage's life), so the next listing asks anew: an array is listed
    /// again when a file it listed was gone. Nothing, where none are kept.
    fn list_anew(&self) {}
}
