//! What running a pipeline reuses from chunk to chunk, held by whoever runs
//! it (a read, a write) rather than by the threads it runs on: zstd and
//! zlib contexts (setting one up costs about as much as decoding a 64 KiB
//! chunk) and scratch buffers for chunks decoded apart from their place.
//! Dropped with their holder.

use std::sync::{Mutex, MutexGuard};

/// Of each kind, at most this many are kept: more than the threads that
/// decode at once.
const KEPT: usize = 64;

/// Scratch buffers larger than this (tiles written unchunked) are not kept.
const SCRATCH_KEEP: usize = 1 << 20;

/// Codec contexts and scratch buffers a pipeline's chunks reuse, for
/// [`TileContext::reusing`](crate::TileContext::reusing). Chunks decoded
/// side by side each take their own and give it back. Without one, each
/// chunk sets up its own.
///
/// ```
/// use std::sync::Arc;
/// use tessera_filters::{Filter, FilterKind, FilterPipeline, Reuse, TileContext, TileDecoder, TileEncoder};
/// use tessera_tile::{Datatype, FormatVersion};
/// let pipeline = FilterPipeline::new(vec![Filter::new(FilterKind::Zstd { level: 3 }, Datatype::Int64)], 65536);
/// let cells: Vec<u8> = (0..100_000i64).flat_map(|v| v.to_le_bytes()).collect();
/// let ctx = TileContext::new(FormatVersion::new(22), 8).reusing(Arc::new(Reuse::default()));
/// let tile = TileEncoder::new(&pipeline, &ctx).encode(&cells).unwrap();
/// // 13 chunks of 64 KiB, encoded and decoded with one context each way.
/// assert_eq!(TileDecoder::new(&pipeline, &tile, &ctx).unwrap().decode().unwrap(), cells);
/// ```
#[derive(Default)]
pub struct Reuse {
    scratch: Mutex<Vec<Vec<u8>>>,
    zstd_in: Mutex<Vec<zstd::bulk::Decompressor<'static>>>,
    zlib_in: Mutex<Vec<flate2::Decompress>>,
    /// With the level each compresses at.
    zstd_out: Mutex<Vec<(i32, zstd::bulk::Compressor<'static>)>>,
}

impl std::fmt::Debug for Reuse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reuse")
            .field("scratch", &locked(&self.scratch).len())
            .field("zstd_in", &locked(&self.zstd_in).len())
            .field("zlib_in", &locked(&self.zlib_in).len())
            .field("zstd_out", &locked(&self.zstd_out).len())
            .finish()
    }
}

/// The pool, whatever a thread that panicked holding it left: each item
/// is whole or taken.
fn locked<T>(pool: &Mutex<Vec<T>>) -> MutexGuard<'_, Vec<T>> {
    pool.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on an item of `pool` that `fits` (or a new one from `make`),
/// then keeps the item in the pool for the next call.
fn with_kept<T, R, E>(
    pool: Option<&Mutex<Vec<T>>>,
    fits: impl Fn(&T) -> bool,
    make: impl FnOnce() -> Result<T, E>,
    f: impl FnOnce(&mut T) -> Result<R, E>,
) -> Result<R, E> {
    let kept = pool.and_then(|p| {
        let mut items = locked(p);
        let i = items.iter().rposition(&fits)?;
        Some(items.swap_remove(i))
    });
    let mut item = match kept {
        Some(item) => item,
        None => make()?,
    };
    let out = f(&mut item);
    if let Some(p) = pool {
        let mut items = locked(p);
        if items.len() < KEPT {
            items.push(item);
        }
    }
    out
}

impl Reuse {
    /// Runs `f` on a scratch buffer of `len` bytes (what it held before
    /// is left in it).
    pub(crate) fn scratch<R, E>(
        reuse: Option<&Reuse>,
        len: usize,
        f: impl FnOnce(&mut [u8]) -> Result<R, E>,
    ) -> Result<R, E> {
        let pool = reuse.filter(|_| len <= SCRATCH_KEEP).map(|r| &r.scratch);
        with_kept(
            pool,
            |_| true,
            || Ok(Vec::new()),
            |buf| {
                if buf.len() < len {
                    buf.resize(len, 0);
                }
                f(&mut buf[..len])
            },
        )
    }

    /// Runs `f` with a zstd decompression context.
    pub(crate) fn zstd_in<R>(
        reuse: Option<&Reuse>,
        f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> std::io::Result<R>,
    ) -> std::io::Result<R> {
        let pool = reuse.map(|r| &r.zstd_in);
        with_kept(pool, |_| true, zstd::bulk::Decompressor::new, f)
    }

    /// Runs `f` with a zlib decompression context, reset.
    pub(crate) fn zlib_in<R, E>(
        reuse: Option<&Reuse>,
        f: impl FnOnce(&mut flate2::Decompress) -> Result<R, E>,
    ) -> Result<R, E> {
        let pool = reuse.map(|r| &r.zlib_in);
        let new = || Ok(flate2::Decompress::new(true));
        with_kept(
            pool,
            |_| true,
            new,
            |d| {
                d.reset(true);
                f(d)
            },
        )
    }

    /// Runs `f` with a zstd compression context at `level`.
    pub(crate) fn zstd_out<R>(
        reuse: Option<&Reuse>,
        level: i32,
        f: impl FnOnce(&mut zstd::bulk::Compressor<'static>) -> std::io::Result<R>,
    ) -> std::io::Result<R> {
        let pool = reuse.map(|r| &r.zstd_out);
        let make = || zstd::bulk::Compressor::new(level).map(|c| (level, c));
        with_kept(pool, |(l, _)| *l == level, make, |(_, c)| f(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_kept_for_the_next_call_and_bounded() {
        let reuse = Reuse::default();
        Reuse::scratch(Some(&reuse), 10, |b: &mut [u8]| {
            b.fill(7);
            Ok::<_, ()>(())
        })
        .unwrap();
        // The same buffer again: its old bytes are still there.
        let again = Reuse::scratch(Some(&reuse), 4, |b: &mut [u8]| Ok::<_, ()>(b.to_vec()));
        assert_eq!(again.unwrap(), [7; 4]);
        // Large buffers are not kept.
        Reuse::scratch(Some(&reuse), SCRATCH_KEEP + 1, |_| Ok::<_, ()>(())).unwrap();
        assert!(locked(&reuse.scratch)
            .iter()
            .all(|b| b.len() <= SCRATCH_KEEP));
        // A compression context at another level is a new one.
        for level in [1, 3, 1] {
            Reuse::zstd_out(Some(&reuse), level, |c| c.compress(b"abc")).unwrap();
        }
        assert_eq!(locked(&reuse.zstd_out).len(), 2);
        // No more than KEPT of a kind, however many were in use at once.
        let pool = Mutex::new(Vec::new());
        for _ in 0..2 * KEPT {
            with_kept(Some(&pool), |_| false, || Ok::<_, ()>(0u8), |_| Ok(())).unwrap();
        }
        assert_eq!(locked(&pool).len(), KEPT);
    }
}
