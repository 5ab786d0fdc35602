//! Footers (and schema files) fetched as one batch before fragments load,
//! on storage where a request costs a round trip: the loaders then find
//! each fragment's file tail already read instead of reading it from one
//! rayon thread at a time, and a schema file no larger than a tail whole.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tessera_storage::{
    DirEntry, ListableStorage, PendingBatch, ReadableStorage, Storage, StorageHints, StorageResult,
};

/// A storage whose `read_tail` of some files was done ahead; everything
/// else goes to the storage underneath.
pub(crate) struct Prefetched<'s> {
    inner: &'s dyn Storage,
    max: u64,
    /// Taken on use: each tail is read by one loader.
    tails: Mutex<HashMap<PathBuf, (u64, Vec<u8>)>>,
}

impl<'s> Prefetched<'s> {
    /// Reads the last `max` bytes of each of `files` as one batch. A file
    /// whose tail failed is left to be read (and fail, named) on use.
    pub(crate) fn tails(inner: &'s dyn Storage, files: Vec<PathBuf>, max: u64) -> Self {
        let read = inner.read_tails(&files, max);
        let tails = files
            .into_iter()
            .zip(read)
            .filter_map(|(f, r)| Some((f, r.ok()?)))
            .collect();
        Prefetched {
            inner,
            max,
            tails: Mutex::new(tails),
        }
    }
}

impl ReadableStorage for Prefetched<'_> {
    fn read_tail(&self, path: &Path, max: u64) -> StorageResult<(u64, Vec<u8>)> {
        if max == self.max {
            if let Some(t) = self.tails.lock().ok().and_then(|mut t| t.remove(path)) {
                return Ok(t);
            }
        }
        self.inner.read_tail(path, max)
    }

    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        self.inner.read_range(path, range)
    }

    fn read_range_into(
        &self,
        path: &Path,
        range: Range<u64>,
        buf: &mut Vec<u8>,
    ) -> StorageResult<()> {
        self.inner.read_range_into(path, range, buf)
    }

    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> StorageResult<Vec<Vec<u8>>> {
        self.inner.read_batch(requests)
    }

    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'static> {
        self.inner.begin_batch(requests)
    }

    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        // A tail holding the whole file is the file.
        if let Ok(mut tails) = self.tails.lock() {
            if tails
                .get(path)
                .is_some_and(|(size, t)| *size == t.len() as u64)
            {
                if let Some((_, whole)) = tails.remove(path) {
                    return Ok(whole);
                }
            }
        }
        self.inner.read_all(path)
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        self.inner.size(path)
    }
}

impl ListableStorage for Prefetched<'_> {
    fn list_anew(&self) {
        self.inner.list_anew()
    }

    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        self.inner.list(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
}

impl StorageHints for Prefetched<'_> {
    tessera_storage::forward_storage_hints!(inner);
}
