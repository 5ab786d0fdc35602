//! Reading byte ranges of files, at once or as batches in flight.

use crate::error::StorageResult;
use crate::kept::KeptFile;
use crate::mapped::MappedFile;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Reading byte ranges of files: what decoders are fed from.
///
/// Readers call it from rayon jobs, and a thread may wait for another's
/// read (of a fragment metadata section both want): an implementation
/// should not run jobs on the caller's rayon pool while it reads (a pool
/// of its own, or threads of its own, are fine).
pub trait ReadableStorage: Send + Sync {
    /// Reads `range` of the file at `path`. Fails if the file is shorter.
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>>;

    /// Appends the bytes of `range` of `path` to `buf`. Readers that fetch
    /// many ranges gather them in one buffer they reuse, so memory already
    /// touched is filled again instead of fresh pages being faulted in. The
    /// default copies from [`ReadableStorage::read_range`].
    fn read_range_into(
        &self,
        path: &Path,
        range: Range<u64>,
        buf: &mut Vec<u8>,
    ) -> StorageResult<()> {
        buf.extend_from_slice(&self.read_range(path, range)?);
        Ok(())
    }

    /// Reads the bytes of `path` from `start` on into `bufs`, filling each
    /// in turn (a scatter read of `start..start + total length`). Readers
    /// that place unfiltered cells straight into their result use it: the
    /// bytes are copied once, from storage to their place. Storage that
    /// opens files keeps the file open in `kept`, the reader's, for its
    /// next scatter read. The default reads the range and copies it out.
    fn read_scattered(
        &self,
        path: &Path,
        start: u64,
        bufs: &mut [&mut [u8]],
        kept: &mut KeptFile,
    ) -> StorageResult<()> {
        let _ = kept;
        let total: u64 = bufs.iter().map(|b| b.len() as u64).sum();
        let bytes = self.read_range(path, start..start.saturating_add(total))?;
        let mut at = 0;
        for b in bufs.iter_mut() {
            b.copy_from_slice(&bytes[at..at + b.len()]);
            at += b.len();
        }
        Ok(())
    }

    /// The file at `path` mapped into memory, for a reader about to read
    /// `run_bytes` of it: where the storage maps files (local ones) and a
    /// run that large pays for a mapping, readers decode it from the
    /// mapping, with no copy. `None` (the default) where it does not;
    /// readers then read ranges.
    fn map(&self, path: &Path, run_bytes: u64) -> Option<StorageResult<MappedFile>> {
        let _ = (path, run_bytes);
        None
    }

    /// Reads several ranges of one file. Implementations may coalesce them.
    fn read_ranges(&self, path: &Path, ranges: &[Range<u64>]) -> StorageResult<Vec<Vec<u8>>> {
        ranges
            .iter()
            .map(|r| self.read_range(path, r.clone()))
            .collect()
    }

    /// Reads many ranges of one or several files, in the order asked: a
    /// read plan fetched as one batch. Storage where a request costs a
    /// round trip (object stores) issues them concurrently, merging
    /// neighbouring ranges of a file and reading overlapping ones once; the
    /// default reads them one after the other.
    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> StorageResult<Vec<Vec<u8>>> {
        requests
            .iter()
            .map(|(p, r)| self.read_range(p, r.clone()))
            .collect()
    }

    /// Starts reading a batch ([`ReadableStorage::read_batch`]) and returns at
    /// once where the storage keeps requests in flight on its own (object
    /// stores), so that a reader decodes one batch while the next is
    /// fetched; [`PendingBatch::wait`] gives the bytes. The batch owns
    /// what it waits on, so a reader may hold it past the call (a read in
    /// batches begins the tiles of the batches after the one it reads).
    /// The default reads the batch before it returns.
    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'static> {
        PendingBatch::ready(self.read_batch(&requests))
    }

    /// [`ReadableStorage::read_tail`] of several files as one batch (fragment
    /// footers when an array opens), each file's result on its own.
    fn read_tails(&self, files: &[PathBuf], max: u64) -> Vec<StorageResult<(u64, Vec<u8>)>> {
        files.iter().map(|f| self.read_tail(f, max)).collect()
    }

    /// Reads a whole file.
    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        let size = self.size(path)?;
        self.read_range(path, 0..size)
    }

    /// The size of the file at `path` and its last `max` bytes (the whole
    /// file if shorter): readers of footers ask for both at once. The
    /// default asks [`ReadableStorage::size`], then [`ReadableStorage::read_range`].
    fn read_tail(&self, path: &Path, max: u64) -> StorageResult<(u64, Vec<u8>)> {
        let size = self.size(path)?;
        let start = size.saturating_sub(max);
        Ok((size, self.read_range(path, start..size)?))
    }

    /// Size of a file in bytes.
    fn size(&self, path: &Path) -> StorageResult<u64>;
}

/// A batch of reads begun by [`ReadableStorage::begin_batch`]: its bytes, or
/// how to wait for them.
pub struct PendingBatch<'s>(Pending<'s>);

enum Pending<'s> {
    Ready(StorageResult<Vec<Vec<u8>>>),
    InFlight(Box<dyn FnOnce() -> StorageResult<Vec<Vec<u8>>> + Send + 's>),
}

impl<'s> PendingBatch<'s> {
    /// A batch read already.
    pub fn ready(read: StorageResult<Vec<Vec<u8>>>) -> Self {
        PendingBatch(Pending::Ready(read))
    }

    /// A batch in flight: `wait` blocks until its bytes are in.
    pub fn in_flight(wait: impl FnOnce() -> StorageResult<Vec<Vec<u8>>> + Send + 's) -> Self {
        PendingBatch(Pending::InFlight(Box::new(wait)))
    }

    /// The batch's ranges, in the order asked, once all are in.
    pub fn wait(self) -> StorageResult<Vec<Vec<u8>>> {
        match self.0 {
            Pending::Ready(read) => read,
            Pending::InFlight(wait) => wait(),
        }
    }
}

impl std::fmt::Debug for PendingBatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Pending::Ready(_) => "PendingBatch(ready)",
            Pending::InFlight(_) => "PendingBatch(in flight)",
        })
    }
}
