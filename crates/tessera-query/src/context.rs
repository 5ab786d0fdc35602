//! The buffers a read reuses, owned by a [`ReadContext`] that reads are
//! given: memory the process has touched already, where a fresh buffer's
//! pages must each be faulted in and cleared by the kernel (most of the
//! cost of a small sparse read, and half of a large dense one).
//!
//! Nothing here is process-wide: a read uses the context its session was
//! given ([`crate::ReadSession::context`]; callers that want reads to share
//! buffers give their sessions one context), or else one of its own; a read in batches gives
//! itself a context capped by its own memory budget, so one caller's budget
//! never shrinks another's pools.

use rayon::prelude::*;
use std::sync::{Arc, Mutex};
use tessera_filters::Reuse;

/// Buffers handed back for later use, bounded in count and bytes.
pub(crate) struct BufferPool {
    buffers: Mutex<Vec<Vec<u8>>>,
    max_count: usize,
    max_bytes: usize,
}

impl BufferPool {
    const fn new(max_count: usize, max_bytes: usize) -> BufferPool {
        BufferPool {
            buffers: Mutex::new(Vec::new()),
            max_count,
            max_bytes,
        }
    }

    /// A buffer with room for `len` bytes if the pool has one (the smallest
    /// that fits), else the largest there (it grows), else a new one. It
    /// keeps its old bytes: clearing is the caller's choice.
    pub(crate) fn take(&self, len: usize) -> Vec<u8> {
        let mut pool = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let fits = (0..pool.len())
            .filter(|&i| pool[i].capacity() >= len)
            .min_by_key(|&i| pool[i].capacity());
        let pick = fits.or_else(|| (0..pool.len()).max_by_key(|&i| pool[i].capacity()));
        pick.map_or_else(Vec::new, |i| pool.swap_remove(i))
    }

    /// Keeps `b` for a later [`BufferPool::take`], if the pool has room.
    pub(crate) fn give(&self, b: Vec<u8>) {
        if b.capacity() == 0 {
            return;
        }
        let mut pool = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let held: usize = pool.iter().map(Vec::capacity).sum();
        if pool.len() < self.max_count && held + b.capacity() <= self.max_bytes {
            pool.push(b);
        }
    }

    /// Bytes the pool holds now.
    pub(crate) fn held(&self) -> usize {
        let pool = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        pool.iter().map(Vec::capacity).sum()
    }
}

/// Read buffers kept, at most: two runs of neighbouring tiles
/// (`decode::MAX_RUN_BYTES` each).
/// Sets of scratch buffers that a tile's fields decode into while its
/// cells are picked (coordinates, one field, the condition's fields): one
/// set per tile picked at a time, taken and given back, those kept within
/// `max_bytes` and dropped with the context.
pub(crate) struct ScratchSets {
    sets: Mutex<Vec<Vec<Vec<u8>>>>,
    max_bytes: usize,
}

impl ScratchSets {
    const fn new(max_bytes: usize) -> ScratchSets {
        ScratchSets {
            sets: Mutex::new(Vec::new()),
            max_bytes,
        }
    }

    /// A set given back earlier, or an empty one.
    pub(crate) fn take(&self) -> Vec<Vec<u8>> {
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        sets.pop().unwrap_or_default()
    }

    /// Keeps `set` for the next tile, unless that would hold more than the
    /// bound.
    pub(crate) fn give(&self, set: Vec<Vec<u8>>) {
        let bytes = |set: &Vec<Vec<u8>>| set.iter().map(Vec::capacity).sum::<usize>();
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        let held: usize = sets.iter().map(bytes).sum();
        if held + bytes(&set) <= self.max_bytes {
            sets.push(set);
        }
    }

    fn held(&self) -> usize {
        let sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        sets.iter().flatten().map(Vec::capacity).sum()
    }
}

pub(crate) const READ_POOL_BYTES: usize = 32 << 20;
/// Decoded fixed-sized tiles kept, at most.
const TILE_POOL_BYTES: usize = 32 << 20;
/// Result buffers kept for the next batch, at most.
const RESULT_POOL_BYTES: usize = 1 << 30;

/// The buffers reads reuse: read buffers of finished runs of tiles,
/// decoded tiles a reader is done with, result buffers a caller hands
/// back ([`crate::ReadResult::recycle`]), and the codec contexts and
/// chunk scratch buffers of tile decoding ([`tessera_filters::Reuse`]). Safe to share between threads
/// and reads.
///
/// ```
/// use std::sync::Arc;
/// use tessera_query::{ReadContext, ReadRequest, ReadSession};
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
/// // A context of this caller's own, capped at 64 MiB of kept buffers.
/// let context = Arc::new(ReadContext::with_budget(64 << 20));
/// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap().context(context);
/// let r = session.execute(&ReadRequest::new()).unwrap();
/// assert!(r.cell_count > 0);
/// r.recycle(); // its buffers go back to `context`, for the next read
/// ```
pub struct ReadContext {
    pub(crate) read: BufferPool,
    pub(crate) tiles: BufferPool,
    pub(crate) results: BufferPool,
    pub(crate) scratch: ScratchSets,
    /// Codec contexts and chunk scratch buffers decoding tiles reuses.
    pub(crate) codecs: Arc<Reuse>,
}

impl Default for ReadContext {
    fn default() -> Self {
        ReadContext::new()
    }
}

impl std::fmt::Debug for ReadContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadContext")
            .field("read_bytes", &self.read.held())
            .field("tile_bytes", &self.tiles.held())
            .field("result_bytes", &self.results.held())
            .field("scratch_bytes", &self.scratch.held())
            .finish()
    }
}

impl ReadContext {
    /// A context with the default bounds: up to 96 MiB of read, decoded
    /// tile and scratch buffers, and 1 GiB of recycled results.
    pub fn new() -> ReadContext {
        ReadContext {
            read: BufferPool::new(8, READ_POOL_BYTES),
            tiles: BufferPool::new(64, TILE_POOL_BYTES),
            results: BufferPool::new(16, RESULT_POOL_BYTES),
            scratch: ScratchSets::new(TILE_POOL_BYTES),
            codecs: Arc::default(),
        }
    }

    /// A context whose kept buffers stay inside a memory budget of `bytes`:
    /// read, tile and scratch buffers a sixteenth of it each,
    /// recycled results half of it (they wait for the next batch, which
    /// takes them instead of fresh memory).
    pub fn with_budget(bytes: u64) -> ReadContext {
        let share = |d: u64| usize::try_from(bytes / d).unwrap_or(usize::MAX);
        ReadContext {
            read: BufferPool::new(8, READ_POOL_BYTES.min(share(16))),
            tiles: BufferPool::new(64, TILE_POOL_BYTES.min(share(16))),
            results: BufferPool::new(16, RESULT_POOL_BYTES.min(share(2))),
            scratch: ScratchSets::new(TILE_POOL_BYTES.min(share(16))),
            codecs: Arc::default(),
        }
    }

    /// A tile buffer of `len` bytes: a recycled one, holding old bytes (they
    /// are decoded over, all of them unless a span limits the decoding, and
    /// then only the span is read), or fresh zeroed memory.
    pub(crate) fn tile_buffer(&self, len: usize) -> Vec<u8> {
        let mut b = self.tiles.take(len);
        if b.capacity() == 0 {
            return vec![0; len];
        }
        // Old bytes stay; only growth is zero-filled.
        b.truncate(len);
        b.resize(len, 0);
        b
    }

    /// An empty buffer with room for `len` bytes of a result column: a
    /// recycled one when the pool holds one large enough.
    pub(crate) fn result_buffer(&self, len: usize) -> Vec<u8> {
        self.recycled_result(len)
            .unwrap_or_else(|| Vec::with_capacity(len))
    }

    /// `len` bytes of `byte` for a result column. Without a recycled
    /// buffer, zeros come from the allocator untouched: the kernel clears
    /// their pages where they are first written, in parallel, not here.
    pub(crate) fn result_filled(&self, len: usize, byte: u8) -> Vec<u8> {
        match self.recycled_result(len) {
            Some(mut b) => {
                // Written in parallel: large results fill at both cores' speed.
                b.par_extend(rayon::iter::repeat_n(byte, len));
                b
            }
            None => vec![byte; len],
        }
    }

    /// `len` bytes for a result column whose every byte the caller writes:
    /// a recycled buffer keeps its old bytes (zeroing only growth), so no
    /// pass goes over it first; a fresh one is zeroed by the kernel, page
    /// by page as it is written.
    pub(crate) fn result_overwritten(&self, len: usize) -> Vec<u8> {
        self.recycled_overwritten(len)
            .unwrap_or_else(|| vec![0; len])
    }

    /// [`ReadContext::result_overwritten`]'s recycled buffer of `len`
    /// bytes, if the pool holds one: for callers that make fresh memory
    /// their own way.
    pub(crate) fn recycled_overwritten(&self, len: usize) -> Option<Vec<u8>> {
        self.recycled(len).map(|mut b| {
            b.truncate(len);
            b.resize(len, 0);
            b
        })
    }

    /// A recycled result buffer with room for `len` bytes, emptied, if the
    /// pool holds one. Empty requests (columns built to be replaced) take
    /// none.
    fn recycled_result(&self, len: usize) -> Option<Vec<u8>> {
        self.recycled(len).map(|mut b| {
            b.clear();
            b
        })
    }

    /// A recycled result buffer with room for `len` bytes, as it was left,
    /// if the pool holds one; none for empty requests.
    fn recycled(&self, len: usize) -> Option<Vec<u8>> {
        if len == 0 {
            return None;
        }
        let b = self.results.take(len);
        if b.capacity() < len {
            self.results.give(b);
            return None;
        }
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns built empty (to be replaced) must not drain the pool of
    /// recycled results.
    #[test]
    fn empty_result_buffers_take_nothing_from_the_pool() {
        let ctx = ReadContext::new();
        ctx.results.give(Vec::with_capacity((3 << 20) + 17));
        assert_eq!(ctx.result_buffer(0).capacity(), 0);
        assert!(ctx.result_filled(0, 7).is_empty());
        assert_eq!(ctx.results.held(), (3 << 20) + 17);
    }

    /// A budget caps its own context; another context (the shared one
    /// included) keeps its bounds.
    #[test]
    fn a_budget_caps_only_its_own_context() {
        let small = ReadContext::with_budget(1 << 20);
        small.results.give(Vec::with_capacity(1 << 20));
        assert_eq!(small.results.held(), 0, "over half the budget: not kept");
        small.results.give(Vec::with_capacity(256 << 10));
        assert_eq!(small.results.held(), 256 << 10);
        let other = ReadContext::new();
        other.results.give(Vec::with_capacity(1 << 20));
        assert_eq!(other.results.held(), 1 << 20);
    }
}
