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
use std::ops::Range;
use std::path::PathBuf;
use tessera_fragment::FragmentMetadata;
use tessera_storage::{PendingBatch, Storage, StorageResult};

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

/// Where requests cost a round trip ([`StorageHints::prefers_batches`](tessera_storage::StorageHints::prefers_batches)), runs
/// are fetched in units of up to this many bytes (and a quarter of the
/// read-ahead), one batch each (the storage merges a unit's neighbouring
/// runs and cuts it into requests of its own size); a unit is decoded as
/// soon as its bytes land, while the units after it are in flight.
pub const UNIT_BYTES: u64 = MAX_RUN_BYTES;

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

    /// Starts fetching every run as one batch ([`ReadableStorage::begin_batch`](tessera_storage::ReadableStorage::begin_batch)):
    /// on an object store the requests are in flight when this returns.
    pub fn begin<'s>(&self, storage: &'s dyn Storage) -> PendingBatch<'s> {
        storage.begin_batch(self.requests())
    }

    /// The byte ranges the plan fetches: one per run and file.
    pub(crate) fn requests(&self) -> Vec<(PathBuf, Range<u64>)> {
        requests(&self.runs)
    }

    /// Runs `decode` on each tile, in parallel, and returns the results in
    /// the order the tiles were asked for. Where requests cost a round
    /// trip, runs are fetched in units of [`UNIT_BYTES`], up to `ahead`
    /// bytes of them begun and not yet decoded, each decoded as soon as
    /// its bytes land ([`Pipeline`]); elsewhere each run is read by the
    /// thread that decodes it.
    pub fn decode<T, F>(
        self,
        storage: &dyn Storage,
        ctx: &ReadContext,
        ahead: u64,
        decode: F,
    ) -> Result<Vec<T>, QueryError>
    where
        T: Send,
        F: Fn(&Fetched<'_>, u64) -> Result<T, QueryError> + Sync,
    {
        let TileRuns { tiles, runs } = self;
        let done: Vec<Vec<(usize, T)>> = if storage.prefers_batches() {
            let pipeline = Pipeline {
                storage,
                ctx,
                tiles: &tiles,
                ahead,
            };
            pipeline.run(units(runs, (ahead / 4).clamp(1, UNIT_BYTES)), &decode)?
        } else {
            let maps = FileMaps::default();
            runs.into_par_iter()
                .map(|run| {
                    let fetched = Fetched::read(storage, ctx, &maps, run.spans)?;
                    decode_run(&tiles, &run.tiles, &fetched, &decode)
                })
                .collect::<Result<_, QueryError>>()?
        };
        Ok(in_order(tiles.len(), done))
    }

    /// The bytes the plan fetches.
    pub fn bytes(&self) -> u64 {
        self.runs
            .iter()
            .fold(0u64, |n, r| n.saturating_add(span_bytes(&r.spans)))
    }

    /// Runs `decode` on each tile, in parallel, from the bytes of
    /// [`TileRuns::begin`]'s batch; results in the order the tiles were
    /// asked for.
    pub fn decode_batch<T, F>(
        self,
        storage: &dyn Storage,
        ctx: &ReadContext,
        read: StorageResult<Vec<Vec<u8>>>,
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
/// [`TileRuns::decode`] with `ahead` bytes fetched ahead at most.
pub fn decode_in_runs<T, F>(
    storage: &dyn Storage,
    ctx: &ReadContext,
    ahead: u64,
    frag: &FragmentMetadata,
    specs: &[&FieldSpec],
    tiles: &[u64],
    decode: F,
) -> Result<Vec<T>, QueryError>
where
    T: Send,
    F: Fn(&Fetched<'_>, u64) -> Result<T, QueryError> + Sync,
{
    TileRuns::plan(storage, frag, specs, tiles)?.decode(storage, ctx, ahead, decode)
}

/// Units of runs fetched and decoded one after another, several in
/// flight: a stream of landed runs, decoded as they land.
struct Pipeline<'a, 's> {
    storage: &'s dyn Storage,
    ctx: &'a ReadContext,
    /// The plan's tile numbers.
    tiles: &'a [u64],
    /// Bytes of units begun and not yet decoded, at most (one unit at
    /// least, however large).
    ahead: u64,
}

impl Pipeline<'_, '_> {
    /// Begins units in order while they fit in the read-ahead, decodes
    /// the oldest once its bytes land (its tiles in parallel), and begins
    /// more as decoded units free their room.
    fn run<T, F>(
        &self,
        units: Vec<Vec<Run>>,
        decode: &F,
    ) -> Result<Vec<Vec<(usize, T)>>, QueryError>
    where
        T: Send,
        F: Fn(&Fetched<'_>, u64) -> Result<T, QueryError> + Sync,
    {
        let mut done = Vec::new();
        let mut waiting = units.into_iter().peekable();
        let mut begun: std::collections::VecDeque<(Vec<Run>, u64, PendingBatch<'_>)> =
            Default::default();
        let mut held = 0u64;
        loop {
            while let Some(unit) = waiting.peek() {
                // Lengths come off disk: summed without overflow.
                let bytes = (unit.iter()).fold(0u64, |n, r| n.saturating_add(span_bytes(&r.spans)));
                if !begun.is_empty() && held.saturating_add(bytes) > self.ahead {
                    break;
                }
                let unit = waiting.next().expect("peeked");
                let pending = self.storage.begin_batch(requests(&unit));
                held = held.saturating_add(bytes);
                begun.push_back((unit, bytes, pending));
            }
            let Some((unit, bytes, pending)) = begun.pop_front() else {
                break;
            };
            let read = pending.wait();
            done.extend(decode_fetched(
                self.storage,
                self.ctx,
                self.tiles,
                unit,
                read,
                decode,
            )?);
            held = held.saturating_sub(bytes);
        }
        Ok(done)
    }
}

/// The ranges of `runs`, run after run: one batch.
fn requests(runs: &[Run]) -> Vec<(PathBuf, Range<u64>)> {
    runs.iter().flat_map(|r| r.spans.iter().cloned()).collect()
}

/// Runs grouped into units of at most `max` bytes, in order (a run
/// larger than that is a unit of its own).
fn units(runs: Vec<Run>, max: u64) -> Vec<Vec<Run>> {
    let mut units: Vec<(Vec<Run>, u64)> = Vec::new();
    for run in runs {
        let bytes = span_bytes(&run.spans);
        match units.last_mut() {
            Some((unit, held)) if held.saturating_add(bytes) <= max => {
                *held += bytes;
                unit.push(run);
            }
            _ => units.push((vec![run], bytes)),
        }
    }
    units.into_iter().map(|w| w.0).collect()
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
    read: StorageResult<Vec<Vec<u8>>>,
    decode: &F,
) -> Result<Vec<Vec<(usize, T)>>, QueryError>
where
    T: Send,
    F: Fn(&Fetched<'_>, u64) -> Result<T, QueryError> + Sync,
{
    let asked = runs.iter().map(|r| r.spans.len()).sum::<usize>();
    let mut read = read?;
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
