//! The writing half of storage: whole files put at once, large files
//! streamed in parts, removal, and the URI libtiledb names a file by.
//!
//! Every writer (fragments, commits, metadata, schemas, groups,
//! consolidation, vacuum) goes through [`WritableStorage`], so one code
//! path writes a local folder and an object store. What a backend can
//! promise is stated per method: a put appears whole or not at all (a
//! local rename, a single object PUT), and a streamed file appears only
//! when finished (a local rename, a completed multipart upload).

use crate::error::{StorageError, StorageErrorKind, StorageResult};
use crate::listable::DirEntry;
use crate::storage::Storage;
use std::path::Path;

/// Storage that can be written as well as read.
pub trait WritableStorage: Storage {
    /// Writes `bytes` as the whole file at `path`, replacing any file
    /// there: a reader sees the old file (or none) or all of the new one,
    /// never part of it.
    fn put(&self, path: &Path, bytes: &[u8]) -> StorageResult<()>;

    /// Writes `bytes` as the whole file at `path` only if no file is
    /// there: the store decides, so of two writers of one name exactly
    /// one succeeds and the other gets [`StorageErrorKind::AlreadyExists`]
    /// (a conditional put: a local hard link, `If-None-Match: *` on S3 and
    /// Azure, `ifGenerationMatch=0` on GCS). A put whose answer was lost
    /// and is sent again finds its own bytes there, and succeeds.
    ///
    /// The default, for storage that cannot put conditionally, looks
    /// first and then puts: another writer may come between the two.
    fn put_new(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        put_after_looking(self, path, bytes)
    }

    /// Starts the file at `path`, written in parts (a fragment's data file,
    /// tile after tile). Nothing is at `path` until [`FileWriter::finish`];
    /// a writer dropped unfinished leaves nothing behind.
    fn writer(&self, path: &Path) -> StorageResult<Box<dyn FileWriter>>;

    /// Removes the file at `path`; false if there was none (as far as
    /// the store tells: an S3 `DELETE` answers alike either way).
    fn delete(&self, path: &Path) -> StorageResult<bool>;

    /// Removes the folder at `path` with everything below it; how many
    /// files it held (0 if there was no such folder).
    fn delete_folder(&self, path: &Path) -> StorageResult<usize>;

    /// Makes the folder at `path` and its parents, where folders exist;
    /// object stores have none (a key's prefix is its folder), so there it
    /// does nothing.
    fn create_folder(&self, path: &Path) -> StorageResult<()>;

    /// Whether [`WritableStorage::rename_folder`] moves a folder in one
    /// step (a local rename). Object stores cannot: there a new array or
    /// group is written in place, in an order that keeps it invisible
    /// until whole.
    fn renames_folders(&self) -> bool {
        false
    }

    /// Moves the folder `from` to `to` in one step, where
    /// [`WritableStorage::renames_folders`].
    fn rename_folder(&self, from: &Path, to: &Path) -> StorageResult<()> {
        let _ = to;
        Err(StorageError::new(
            StorageErrorKind::Unsupported,
            from.to_string_lossy(),
            "folders cannot be renamed here",
        ))
    }

    /// The URI libtiledb names `path` by (in vacuum lists before format
    /// 19, in group members): `file:///absolute/path` for local files,
    /// the object's URI on an object store. `path` must exist locally.
    fn uri(&self, path: &Path) -> StorageResult<String>;
}

/// A file being written in parts (see [`WritableStorage::writer`]).
pub trait FileWriter: Send + Sync {
    /// Appends `bytes`.
    fn write(&mut self, bytes: &[u8]) -> StorageResult<()>;

    /// Appends `parts`, back to back (a filtered tile's pieces), as one
    /// write where the storage can (a local file's vectored write).
    fn write_parts(&mut self, parts: &[&[u8]]) -> StorageResult<()> {
        parts.iter().try_for_each(|p| self.write(p))
    }

    /// Completes the file, which then appears whole; returns its size.
    fn finish(self: Box<Self>) -> StorageResult<u64>;
}

/// A put only if nothing is at `path` when looked at, for storage that
/// cannot put conditionally: another writer may come between the look and
/// the put.
pub fn put_after_looking<S: WritableStorage + ?Sized>(
    storage: &S,
    path: &Path,
    bytes: &[u8],
) -> StorageResult<()> {
    if storage.exists(path) {
        return Err(already_there(path));
    }
    storage.put(path, bytes)
}

/// The error of a conditional put that found a file at `path`.
pub fn already_there(path: &Path) -> StorageError {
    StorageError::new(
        StorageErrorKind::AlreadyExists,
        path.to_string_lossy(),
        "another writer wrote this file first (it is kept, not overwritten)",
    )
}

/// The names of the entries of the folder `dir`, sorted; none if there is
/// no such folder.
pub fn entry_names(storage: &dyn Storage, dir: &Path) -> StorageResult<Vec<String>> {
    let mut names: Vec<String> = storage
        .list(dir)?
        .into_iter()
        .map(|e: DirEntry| e.name)
        .collect();
    names.sort();
    Ok(names)
}
