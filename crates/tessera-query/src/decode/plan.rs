//! The read plan of a list of tiles ([`TileRuns`]): the tiles cut into
//! runs of neighbours, each run one byte range per file. Where a request
//! costs a round trip (object stores) runs are fetched in batches, the next
//! batch in flight while this one decodes; elsewhere each thread reads its
//! own run. Runs are decoded in parallel.

use super::fetch::*;
use super::spec::*;
use crate::context::ReadContext;
use crate::QueryError;
use rayon::prelude::*;
use std::io;
use std::ops::Range;
use std::path::PathBuf;
use tessera_fragment::FragmentMetadata;
use tessera_tile::storage::{PendingBatch, Storage};

/// The largest run of neighbouring tiles fetched with one request per file:
/// large enough that the cost of a request (a round trip on an object store)
/// is spread thin, small enough that runs remain units of parallel work and
/// the undecoded bytes held at once stay a few runs' worth.
pub const MAX_RUN_BYTES: u64 = 16 << 20;
// The read pool keeps two whole runs.
const _: () = assert!(2 * MAX_RUN_BYTES as usize == crate::context::READ_POOL_BYTES);

/// Runs are split so that the threads read in parallel only down to this
/// many bytes each ([`decode_in_runs`]): smaller reads stay one request.
pub const MIN_SPLIT_RUN_BYTES: u64 = 256 << 10;

/// The bytes of runs read as one batch where requests cost a round trip
/// ([`Storage::prefers_batches`]): sixteen runs of [`MAX_RUN_BYTES`], so
/// that the storage can merge neighbouring runs into large requests (up to
/// libtiledb's 100 MiB) and keep several in flight. Two waves are held at
/// once, one decoding while the next is in flight: a read of more than
/// 256 MiB of tiles holds up to 512 MiB undecoded, less than the result it
/// fills. Halving the waves instead made more, smaller requests (11 for
/// the S3 bench's `sparse_2d` instead of 7, 0.97 s instead of 0.57 s).
pub const WAVE_BYTES: u64 = 16 * MAX_RUN_BYTES;

/// A run of neighbouring tiles: their indexes in the plan's tile list, and
/// one byte range per file (from the first tile's start to the last's end).
struct Run {
    tiles: Vec<usize>,
    spans: Vec<(PathBuf, Range<u64>)>,
}

/// The read plan of a list of tiles of one fragment: which byte ranges are
/// fetched together, apart from the reading (as arrow-rs parquet keeps its
/// read plan apart from its reader), so that a caller can start fetching a
/// plan before it decodes another.
pub struct TileRuns {
    /// The tile numbers asked for, in the order results are returned.
    tiles: Vec<u64>,
    runs: Vec<Run>,
}

impl TileRuns {
    /// Plans reading `tiles` (in any order) of the files of `specs`: sorted
    /// and cut into runs of neighbours of at most [`MAX_RUN_BYTES`] (and, for
    /// a few tiles, about one run per thread, down to
    /// [`MIN_SPLIT_RUN_BYTES`]).
    pub fn plan(
        storage: &dyn Storage,
        frag: &FragmentMetadata,
        specs: &[&FieldSpec],
        tiles: &[u64],
    ) -> Result<TileRuns, QueryError> {
        let mut order: Vec<usize> = (0..tiles.len()).collect();
        order.sort_by_key(|&i| tiles[i]);
        // Tiles numbered back to back lie back to back in every file, so a
        // run spans one range per file.
        let mut each = Vec::with_capacity(order.len());
        for &i in &order {
            let mut spans = Vec::new();
            for spec in specs {
                for kind in files_of(frag, spec) {
                    let r = tile_range(storage, frag, spec, kind, tiles[i])?;
                    spans.push((frag.data_file(spec.field, kind), r));
                }
            }
            let bytes = span_bytes(&spans);
            each.push((i, spans, bytes));
        }
        let threads = rayon::current_num_threads() as u64;
        let sizes: Vec<(u64, u64)> = each.iter().map(|e| (tiles[e.0], e.2)).collect();
        let mut each = each.into_iter();
        let runs = cut_runs(&sizes, threads)
            .into_iter()
            .map(|n| {
                let mut run = Run {
                    tiles: Vec::with_capacity(n),
                    spans: Vec::new(),
                };
                for (i, spans, _) in each.by_ref().take(n) {
                    run.tiles.push(i);
                    if run.spans.is_empty() {
                        run.spans = spans;
                    } else {
                        for ((_, span), (_, r)) in run.spans.iter_mut().zip(&spans) {
                            span.end = span.end.max(r.end);
                        }
                    }
                }
                run
            })
            .collect();
        Ok(TileRuns {
            tiles: tiles.to_vec(),
            runs,
        })
    }

    /// A plan of no tiles.
    #[cfg(test)]
    pub(crate) fn empty() -> TileRuns {
        TileRuns {
            tiles: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Starts fetching every run as one batch ([`Storage::begin_batch`]):
    /// on an object store the requests are in flight when this returns.
    pub fn begin<'s>(&self, storage: &'s dyn Storage) -> PendingBatch<'s> {
        storage.begin_batch(requests(&self.runs))
    }

    /// Runs `decode` on each tile, in parallel, and returns the results in
    /// the order the tiles were asked for: fetched in waves of
    /// [`WAVE_BYTES`] where requests cost a round trip, the next wave in
    /// flight while this one decodes; else each run read by the thread
    /// that decodes it.
    pub fn decode<T, F>(
        self,
        storage: &dyn Storage,
        ctx: &ReadContext,
        decode: F,
    ) -> Result<Vec<T>, QueryError>
    where
        T: Send,
        F: Fn(&Fetched<'_>, u64) -> Result<T, QueryError> + Sync,
    {
        let TileRuns { tiles, runs } = self;
        let done: Vec<Vec<(usize, T)>> = if storage.prefers_batches() {
            let mut done = Vec::with_capacity(runs.len());
            let mut waves = waves(runs).into_iter();
            let begin = |wave: Vec<Run>| {
                let pending = storage.begin_batch(requests(&wave));
                (wave, pending)
            };
            let mut next = waves.next().map(begin);
            while let Some((wave, pending)) = next.take() {
                next = waves.next().map(begin);
                let read = pending.wait();
                done.extend(decode_fetched(storage, ctx, &tiles, wave, read, &decode)?);
            }
            done
        } else {
            runs.into_par_iter()
                .map(|run| {
                    let fetched = Fetched::read(storage, ctx, run.spans)?;
                    decode_run(&tiles, &run.tiles, &fetched, &decode)
                })
                .collect::<Result<_, QueryError>>()?
        };
        Ok(in_order(tiles.len(), done))
    }

    /// Runs `decode` on each tile, in parallel, from the bytes of
    /// [`TileRuns::begin`]'s batch; results in the order the tiles were
    /// asked for.
    pub fn decode_batch<T, F>(
        self,
        storage: &dyn Storage,
        ctx: &ReadContext,
        read: io::Result<Vec<Vec<u8>>>,
        decode: F,
    ) -> Result<Vec<T>, QueryError>
    where
        T: Send,
        F: Fn(&Fetched<'_>, u64) -> Result<T, QueryError> + Sync,
    {
        let TileRuns { tiles, runs } = self;
        let done = decode_fetched(storage, ctx, &tiles, runs, read, &decode)?;
        Ok(in_order(tiles.len(), done))
    }
}

/// Runs `decode` on each tile of `tiles` (in any order), in parallel, and
/// returns the results in the order of `tiles`: [`TileRuns::plan`], then
/// [`TileRuns::decode`].
pub fn decode_in_runs<T, F>(
    storage: &dyn Storage,
    ctx: &ReadContext,
    frag: &FragmentMetadata,
    specs: &[&FieldSpec],
    tiles: &[u64],
    decode: F,
) -> Result<Vec<T>, QueryError>
where
    T: Send,
    F: Fn(&Fetched<'_>, u64) -> Result<T, QueryError> + Sync,
{
    TileRuns::plan(storage, frag, specs, tiles)?.decode(storage, ctx, decode)
}

/// The ranges of `runs`, run after run: one batch.
fn requests(runs: &[Run]) -> Vec<(PathBuf, Range<u64>)> {
    runs.iter().flat_map(|r| r.spans.iter().cloned()).collect()
}

/// Runs grouped into waves of at most [`WAVE_BYTES`] (a run larger than
/// that is a wave of its own).
fn waves(runs: Vec<Run>) -> Vec<Vec<Run>> {
    let mut waves: Vec<(Vec<Run>, u64)> = Vec::new();
    for run in runs {
        let bytes = span_bytes(&run.spans);
        match waves.last_mut() {
            Some((wave, held)) if held.saturating_add(bytes) <= WAVE_BYTES => {
                *held += bytes;
                wave.push(run);
            }
            _ => waves.push((vec![run], bytes)),
        }
    }
    waves.into_iter().map(|w| w.0).collect()
}

/// Runs `decode` on the tiles of one run (indexes into `tiles`), in
/// parallel, from its fetched bytes.
fn decode_run<T, F>(
    tiles: &[u64],
    run: &[usize],
    fetched: &Fetched<'_>,
    decode: &F,
) -> Result<Vec<(usize, T)>, QueryError>
where
    T: Send,
    F: Fn(&Fetched<'_>, u64) -> Result<T, QueryError> + Sync,
{
    run.par_iter()
        .map(|&i| Ok((i, decode(fetched, tiles[i])?)))
        .collect()
}

/// Decodes `runs` from the bytes of the batch of their ranges, runs in
/// parallel.
fn decode_fetched<T, F>(
    storage: &dyn Storage,
    ctx: &ReadContext,
    tiles: &[u64],
    runs: Vec<Run>,
    read: io::Result<Vec<Vec<u8>>>,
    decode: &F,
) -> Result<Vec<Vec<(usize, T)>>, QueryError>
where
    T: Send,
    F: Fn(&Fetched<'_>, u64) -> Result<T, QueryError> + Sync,
{
    let asked = runs.iter().map(|r| r.spans.len()).sum::<usize>();
    let mut read = read.map_err(|e| QueryError::Io {
        path: runs
            .iter()
            .flat_map(|r| r.spans.first())
            .map(|s| s.0.display().to_string())
            .next()
            .unwrap_or_default(),
        source: e,
    })?;
    if read.len() != asked {
        return Err(QueryError::Invalid(format!(
            "the storage returned {} ranges for a batch of {asked}",
            read.len()
        )));
    }
    let mut parts = Vec::with_capacity(runs.len());
    for run in runs {
        let rest = read.split_off(run.spans.len());
        parts.push((run, std::mem::replace(&mut read, rest)));
    }
    parts
        .into_par_iter()
        .map(|(run, bytes)| {
            let fetched = Fetched::from_batch(storage, ctx, run.spans, bytes);
            decode_run(tiles, &run.tiles, &fetched, decode)
        })
        .collect()
}

/// Results by tile index, in the order the tiles were asked for.
fn in_order<T>(n: usize, done: Vec<Vec<(usize, T)>>) -> Vec<T> {
    let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
    for (i, v) in done.into_iter().flatten() {
        out[i] = Some(v);
    }
    out.into_iter()
        .map(|v| v.expect("every tile decoded"))
        .collect()
}

fn span_bytes(spans: &[(PathBuf, Range<u64>)]) -> u64 {
    spans
        .iter()
        .fold(0u64, |n, (_, r)| n.saturating_add(r.end - r.start))
}

/// Cuts tiles (number, bytes; sorted by number) into runs, returning each
/// run's tile count: a gap in numbers or the byte cap ends a run. The cap
/// is [`MAX_RUN_BYTES`], or less for a few tiles: about one run per thread,
/// down to [`MIN_SPLIT_RUN_BYTES`] each, so that their reads (and the page
/// faults of fresh buffers) go in parallel and each run's tiles are decoded
/// as soon as its own bytes are in.
pub(super) fn cut_runs(tiles: &[(u64, u64)], threads: u64) -> Vec<usize> {
    let total = tiles.iter().fold(0u64, |n, t| n.saturating_add(t.1));
    let cap = MAX_RUN_BYTES.min(total.div_ceil(threads.max(1)).max(MIN_SPLIT_RUN_BYTES));
    let mut runs: Vec<(usize, u64)> = Vec::new();
    let mut last = None;
    for &(t, bytes) in tiles {
        match runs.last_mut() {
            Some(run)
                if last.is_some_and(|l: u64| t - l <= 1) && run.1.saturating_add(bytes) <= cap =>
            {
                run.0 += 1;
                run.1 += bytes;
            }
            _ => runs.push((1, bytes)),
        }
        last = Some(t);
    }
    runs.into_iter().map(|r| r.0).collect()
}
