//! Fetching tiles' bytes: neighbouring tiles in one request per file,
//! runs of tiles decoded in parallel.

use super::spec::*;
use crate::context::ReadContext;
use crate::QueryError;
use rayon::prelude::*;
use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use tessera_fragment::{FileKind, FragmentMetadata};
use tessera_tile::storage::Storage;

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

/// Tile bytes read ahead: for a run of tiles, the byte ranges of neighbouring
/// tiles in one file are merged into one request. A range not held is read
/// from storage directly.
pub struct Fetched<'s> {
    pub(super) storage: &'s dyn Storage,
    /// Where read buffers come from and go back to, and decoded tiles'.
    pub(super) ctx: &'s ReadContext,
    /// The spans read, one after the other.
    buf: Vec<u8>,
    /// Per span: file, first byte in the file, first byte in `buf`, length.
    spans: Vec<(PathBuf, u64, usize, usize)>,
}

impl<'s> Fetched<'s> {
    /// Nothing fetched: every range is read when asked for.
    pub fn nothing(storage: &'s dyn Storage, ctx: &'s ReadContext) -> Self {
        Fetched {
            storage,
            ctx,
            buf: Vec::new(),
            spans: Vec::new(),
        }
    }

    /// Reads `spans` into one buffer, taken from the pool: a run's reads
    /// are then one allocation, large enough for huge pages, and reused.
    fn read(
        storage: &'s dyn Storage,
        ctx: &'s ReadContext,
        spans: Vec<(PathBuf, Range<u64>)>,
    ) -> Result<Self, QueryError> {
        let total = spans.iter().map(|(_, r)| (r.end - r.start) as usize).sum();
        let mut fetched = Fetched {
            storage,
            ctx,
            buf: {
                let mut b = ctx.read.take(total);
                b.clear();
                b
            },
            spans: Vec::with_capacity(spans.len()),
        };
        // One reservation for the whole run (lengths come from metadata).
        if let Err(e) = fetched.buf.try_reserve_exact(total) {
            return Err(QueryError::Io {
                path: spans
                    .first()
                    .map(|s| s.0.display().to_string())
                    .unwrap_or_default(),
                source: std::io::Error::new(std::io::ErrorKind::OutOfMemory, e.to_string()),
            });
        }
        for (path, r) in spans {
            let at = fetched.buf.len();
            storage
                .read_range_into(&path, r.clone(), &mut fetched.buf)
                .map_err(|e| QueryError::Io {
                    path: path.display().to_string(),
                    source: e,
                })?;
            fetched
                .spans
                .push((path, r.start, at, fetched.buf.len() - at));
        }
        Ok(fetched)
    }

    /// Holds `spans` read already (by a batch), their bytes in `bytes`.
    fn from_batch(
        storage: &'s dyn Storage,
        ctx: &'s ReadContext,
        spans: Vec<(PathBuf, Range<u64>)>,
        bytes: Vec<Vec<u8>>,
    ) -> Self {
        let total = bytes.iter().map(Vec::len).sum();
        let mut buf = ctx.read.take(total);
        buf.clear();
        let mut held = Vec::with_capacity(spans.len());
        for ((path, r), b) in spans.into_iter().zip(bytes) {
            held.push((path, r.start, buf.len(), b.len()));
            buf.extend_from_slice(&b);
        }
        Fetched {
            storage,
            ctx,
            buf,
            spans: held,
        }
    }

    pub(super) fn bytes(
        &self,
        path: &Path,
        range: Range<u64>,
    ) -> Result<Cow<'_, [u8]>, QueryError> {
        for (p, start, at, len) in &self.spans {
            if p == path && range.start >= *start && range.end <= start + *len as u64 {
                let from = at + (range.start - start) as usize;
                return Ok(Cow::Borrowed(
                    &self.buf[from..from + (range.end - range.start) as usize],
                ));
            }
        }
        read_now(self.storage, path, range).map(Cow::Owned)
    }
}

impl Drop for Fetched<'_> {
    fn drop(&mut self) {
        self.ctx.read.give(std::mem::take(&mut self.buf));
    }
}

pub(super) fn read_now(
    storage: &dyn Storage,
    path: &Path,
    range: Range<u64>,
) -> Result<Vec<u8>, QueryError> {
    storage.read_range(path, range).map_err(|e| QueryError::Io {
        path: path.display().to_string(),
        source: e,
    })
}

pub(crate) fn tile_range(
    storage: &dyn Storage,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    kind: FileKind,
    t: u64,
) -> Result<Range<u64>, QueryError> {
    let idx = frag.field_index(spec.field).ok_or_else(|| {
        QueryError::Invalid(format!("fragment {} has no {:?}", frag.name, spec.field))
    })?;
    Ok(frag.tile_range(storage, idx, kind, t)?)
}

/// Runs `decode` on each tile of `tiles` (in any order), in parallel, and
/// returns the results in the order of `tiles`. The tiles are first sorted
/// and cut into runs of neighbours of at most [`MAX_RUN_BYTES`] over the
/// files of `specs` (and, for a few tiles, into about one run per thread,
/// down to [`MIN_SPLIT_RUN_BYTES`]); each run is fetched with one request
/// per file and its tiles decoded from those bytes, runs in parallel with
/// each other.
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
    let mut order: Vec<usize> = (0..tiles.len()).collect();
    order.sort_by_key(|&i| tiles[i]);
    // Cut runs: a gap in tile numbers, or the byte cap, ends one. Tiles
    // numbered back to back lie back to back in every file, so a run spans
    // one range per file, from its first tile's start to its last's end.
    struct Run {
        tiles: Vec<usize>,
        spans: Vec<(PathBuf, Range<u64>)>,
    }
    let mut each = Vec::with_capacity(order.len());
    for &i in &order {
        let mut spans = Vec::new();
        for spec in specs {
            for kind in files_of(frag, spec) {
                let r = tile_range(storage, frag, spec, kind, tiles[i])?;
                spans.push((frag.data_file(spec.field, kind), r));
            }
        }
        let bytes = spans
            .iter()
            .fold(0u64, |n, (_, r)| n.saturating_add(r.end - r.start));
        each.push((i, spans, bytes));
    }
    let threads = rayon::current_num_threads() as u64;
    let sizes: Vec<(u64, u64)> = each.iter().map(|e| (tiles[e.0], e.2)).collect();
    let mut each = each.into_iter();
    let runs: Vec<Run> = cut_runs(&sizes, threads)
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
    let decode_run = |fetched: Fetched<'_>, run_tiles: &[usize]| {
        run_tiles
            .par_iter()
            .map(|&i| Ok((i, decode(&fetched, tiles[i])?)))
            .collect::<Result<Vec<(usize, T)>, QueryError>>()
    };
    let done: Vec<Vec<(usize, T)>> = if storage.prefers_batches() {
        // A round trip per request: each wave of runs is read as one
        // batch (the storage keeps its requests in flight together), then
        // its runs decoded in parallel.
        let mut done = Vec::with_capacity(runs.len());
        let mut runs = runs.into_iter().peekable();
        while runs.peek().is_some() {
            let mut wave = Vec::new();
            let mut bytes = 0u64;
            while let Some(run) =
                runs.next_if(|r| wave.is_empty() || bytes + span_bytes(&r.spans) <= WAVE_BYTES)
            {
                bytes += span_bytes(&run.spans);
                wave.push(run);
            }
            let requests: Vec<(PathBuf, Range<u64>)> =
                wave.iter().flat_map(|r| r.spans.iter().cloned()).collect();
            let mut read = storage.read_batch(&requests).map_err(|e| QueryError::Io {
                path: requests
                    .first()
                    .map(|r| r.0.display().to_string())
                    .unwrap_or_default(),
                source: e,
            })?;
            if read.len() != requests.len() {
                return Err(QueryError::Invalid(format!(
                    "the storage returned {} ranges for a batch of {}",
                    read.len(),
                    requests.len()
                )));
            }
            let mut parts = Vec::with_capacity(wave.len());
            for run in wave {
                let rest = read.split_off(run.spans.len());
                let mine = std::mem::replace(&mut read, rest);
                parts.push((run, mine));
            }
            let decoded: Vec<Vec<(usize, T)>> = parts
                .into_par_iter()
                .map(|(run, bytes)| {
                    decode_run(
                        Fetched::from_batch(storage, ctx, run.spans, bytes),
                        &run.tiles,
                    )
                })
                .collect::<Result<_, QueryError>>()?;
            done.extend(decoded);
        }
        done
    } else {
        runs.into_par_iter()
            .map(|run| decode_run(Fetched::read(storage, ctx, run.spans)?, &run.tiles))
            .collect::<Result<_, QueryError>>()?
    };
    let mut out: Vec<Option<T>> = (0..tiles.len()).map(|_| None).collect();
    for (i, v) in done.into_iter().flatten() {
        out[i] = Some(v);
    }
    Ok(out
        .into_iter()
        .map(|v| v.expect("every tile decoded"))
        .collect())
}

/// The bytes of runs read as one batch where requests cost a round trip
/// ([`Storage::prefers_batches`]): sixteen runs of [`MAX_RUN_BYTES`], so
/// that the storage can merge neighbouring runs into large requests and
/// keep several in flight, while the undecoded bytes held stay bounded.
pub const WAVE_BYTES: u64 = 16 * MAX_RUN_BYTES;

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
