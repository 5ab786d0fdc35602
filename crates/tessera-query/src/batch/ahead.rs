//! The tiles of the batches after the one being read, fetched while it is
//! read. Where a request costs a round trip (object stores) a read in
//! batches begins the tiles of the pieces after the current one, up to
//! [`StorageHints::batches_ahead`] bytes, and each piece's own requests
//! are served from those as they land ([`TilesAhead`]), so the network
//! carries the next batches while one decodes, not one batch at a time.

use crate::context::ReadContext;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use tessera_storage::{
    DirEntry, KeptFile, ListableStorage, MappedFile, PendingBatch, ReadableStorage, Storage,
    StorageError, StorageErrorKind, StorageHints, StorageResult,
};

/// A storage serving requests from the tiles begun ahead where they cover
/// them, and passing everything else to the storage it wraps.
pub(crate) struct TilesAhead {
    inner: Arc<dyn Storage>,
    /// The read's buffers: what a request served from tiles begun ahead
    /// is copied into (memory touched already, where fresh memory's pages
    /// must each be cleared by the kernel).
    context: Arc<ReadContext>,
    /// Every piece's tiles begun and not yet retired, in piece order.
    begun: Mutex<Vec<Arc<Begun>>>,
}

/// One piece's tiles, begun ahead.
struct Begun {
    /// The piece's number in its read.
    piece: u64,
    requests: Vec<(PathBuf, Range<u64>)>,
    bytes: u64,
    /// The batch in flight, taken by the first request that needs it.
    pending: Mutex<Option<PendingBatch<'static>>>,
    /// Its bytes once landed; an error kept as its kind and message (each
    /// request served from it fails as the fetch did).
    landed: OnceLock<Landed>,
}

/// A batch's bytes, or its error.
type Landed = StorageResult<Vec<Vec<u8>>>;

/// A part of a request's bytes: bytes `range` of request `k` of a begun
/// piece.
type Part = (Arc<Begun>, usize, Range<usize>);

impl Begun {
    /// Appends bytes `range` of request `k` to `out`, waiting for the
    /// batch to land first.
    fn copy(&self, k: usize, range: Range<usize>, out: &mut Vec<u8>) -> StorageResult<()> {
        // Other requests wait here while the first waits for the batch.
        let landed = self.landed.get_or_init(|| {
            let pending = self
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            let pending = pending.unwrap_or_else(|| PendingBatch::ready(Ok(Vec::new())));
            pending.wait()
        });
        let bytes = match landed {
            Ok(all) => all.get(k).and_then(|b| b.get(range.clone())),
            Err(e) => return Err(e.copied()),
        };
        let bytes = bytes.ok_or_else(|| {
            StorageError::new(
                StorageErrorKind::OutOfRange,
                self.requests[k].0.to_string_lossy(),
                format!("bytes {range:?} of a range fetched ahead were not returned"),
            )
        })?;
        out.extend_from_slice(bytes);
        Ok(())
    }
}

impl TilesAhead {
    /// Serves from nothing begun yet; `inner` answers the rest.
    pub(crate) fn new(inner: Arc<dyn Storage>, context: Arc<ReadContext>) -> Self {
        TilesAhead {
            inner,
            context,
            begun: Mutex::new(Vec::new()),
        }
    }

    fn begun(&self) -> MutexGuard<'_, Vec<Arc<Begun>>> {
        self.begun.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Begins fetching `requests`, the tiles of piece `piece`, if with
    /// them all begun and not retired stays within `limit` bytes (else
    /// false, nothing begun): merged into one range per run of
    /// neighbouring bytes of a file, which the storage hands over whole (a
    /// range served from a larger one is a copy).
    pub(crate) fn begin(
        &self,
        piece: u64,
        mut requests: Vec<(PathBuf, Range<u64>)>,
        limit: u64,
    ) -> bool {
        requests.sort_by(|a, b| (&a.0, a.1.start).cmp(&(&b.0, b.1.start)));
        requests.dedup_by(|next, run| {
            let joins = next.0 == run.0 && next.1.start <= run.1.end;
            if joins {
                run.1.end = run.1.end.max(next.1.end);
            }
            joins
        });
        let bytes = (requests.iter()).fold(0u64, |n, (_, r)| n.saturating_add(r.end - r.start));
        let mut begun = self.begun();
        let held = (begun.iter()).fold(0u64, |n, b| n.saturating_add(b.bytes));
        if held.saturating_add(bytes) > limit {
            return false;
        }
        let pending = self.inner.begin_batch(requests.clone());
        begun.push(Arc::new(Begun {
            piece,
            requests,
            bytes,
            pending: Mutex::new(Some(pending)),
            landed: OnceLock::new(),
        }));
        true
    }

    /// Drops what was begun for piece `piece` (read, or abandoned).
    pub(crate) fn retire(&self, piece: u64) {
        self.begun().retain(|b| b.piece != piece);
    }

    /// The parts of begun requests that hold bytes `range` of `path`, in
    /// order; `None` unless they cover every byte of it.
    fn cover(begun: &[Arc<Begun>], path: &Path, range: &Range<u64>) -> Option<Vec<Part>> {
        let mut parts = Vec::new();
        let mut at = range.start;
        while at < range.end {
            let (b, k, r) = begun.iter().find_map(|b| {
                let k = (b.requests.iter())
                    .position(|(p, r)| p == path && r.start <= at && at < r.end)?;
                Some((b, k, &b.requests[k].1))
            })?;
            let end = r.end.min(range.end);
            parts.push((
                b.clone(),
                k,
                (at - r.start) as usize..(end - r.start) as usize,
            ));
            at = end;
        }
        Some(parts)
    }
}

impl ReadableStorage for TilesAhead {
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

    fn read_scattered(
        &self,
        path: &Path,
        start: u64,
        bufs: &mut [&mut [u8]],
        kept: &mut KeptFile,
    ) -> StorageResult<()> {
        self.inner.read_scattered(path, start, bufs, kept)
    }

    fn map(&self, path: &Path, run_bytes: u64) -> Option<StorageResult<MappedFile>> {
        self.inner.map(path, run_bytes)
    }

    fn read_ranges(&self, path: &Path, ranges: &[Range<u64>]) -> StorageResult<Vec<Vec<u8>>> {
        self.inner.read_ranges(path, ranges)
    }

    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> StorageResult<Vec<Vec<u8>>> {
        self.begin_batch(requests.to_vec()).wait()
    }

    /// The requests covered by tiles begun ahead are served from them (as
    /// they land); the others are begun now, as one batch.
    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'static> {
        let begun = self.begun().clone();
        let mut covered: Vec<(usize, Vec<Part>)> = Vec::new();
        let mut rest: Vec<usize> = Vec::new();
        for (i, (path, range)) in requests.iter().enumerate() {
            match TilesAhead::cover(&begun, path, range) {
                Some(parts) => covered.push((i, parts)),
                None => rest.push(i),
            }
        }
        if covered.is_empty() {
            return self.inner.begin_batch(requests);
        }
        let asked: Vec<(PathBuf, Range<u64>)> = rest.iter().map(|&i| requests[i].clone()).collect();
        let others = (!asked.is_empty()).then(|| self.inner.begin_batch(asked));
        let context = self.context.clone();
        PendingBatch::in_flight(move || {
            let mut out: Vec<Vec<u8>> = vec![Vec::new(); requests.len()];
            if let Some(others) = others {
                for (i, bytes) in rest.into_iter().zip(others.wait()?) {
                    out[i] = bytes;
                }
            }
            for (i, parts) in covered {
                let (r_path, r) = &requests[i];
                let len = (r.end - r.start) as usize;
                let mut bytes = context.read.take(len);
                bytes.clear();
                bytes
                    .try_reserve_exact(len)
                    .map_err(|_| StorageError::no_memory(r_path, len as u64))?;
                for (begun, k, range) in parts {
                    begun.copy(k, range, &mut bytes)?;
                }
                out[i] = bytes;
            }
            Ok(out)
        })
    }

    fn read_tails(&self, files: &[PathBuf], max: u64) -> Vec<StorageResult<(u64, Vec<u8>)>> {
        self.inner.read_tails(files, max)
    }

    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        self.inner.read_all(path)
    }

    fn read_tail(&self, path: &Path, max: u64) -> StorageResult<(u64, Vec<u8>)> {
        self.inner.read_tail(path, max)
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        self.inner.size(path)
    }
}

impl ListableStorage for TilesAhead {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        self.inner.list(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }

    fn list_anew(&self) {
        self.inner.list_anew()
    }
}

impl StorageHints for TilesAhead {
    tessera_storage::forward_storage_hints!(inner);
}
