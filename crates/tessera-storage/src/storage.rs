//! All a reader needs of a storage.

use crate::error::StorageResult;
use crate::hints::StorageHints;
use crate::listable::ListableStorage;
use crate::readable::ReadableStorage;
use std::path::PathBuf;

/// All a reader needs: byte ranges ([`ReadableStorage`]), listings
/// ([`ListableStorage`]) and the hints it plans with ([`StorageHints`]).
/// Every type with the three is one; readers take `&dyn Storage`.
pub trait Storage: ReadableStorage + ListableStorage + StorageHints {
    /// Whole files: where requests cost a round trip
    /// ([`StorageHints::prefers_batches`]) all at once, as the tails (of at most
    /// 1 TiB) of one [`ReadableStorage::read_tails`] batch; else one after another.
    fn read_files(&self, files: &[PathBuf]) -> Vec<StorageResult<Vec<u8>>> {
        if !self.prefers_batches() {
            return files.iter().map(|f| self.read_all(f)).collect();
        }
        self.read_tails(files, 1 << 40)
            .into_iter()
            .map(|r| r.map(|(_, bytes)| bytes))
            .collect()
    }
}

impl<T: ReadableStorage + ListableStorage + StorageHints + ?Sized> Storage for T {}
