//! Reading one tile of one field of a fragment: the byte ranges, the filter
//! pipelines (with the encryption filter when the array has a key), and the
//! var-sized offsets rules.

use crate::context::ReadContext;
use crate::QueryError;
use rayon::prelude::*;
use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use tessera_filters::{
    unfilter_tile, unfilter_tile_chunks, unfilter_tile_into, unfilter_tile_part_into,
    unfilter_var_string_tile, ChunkTarget, FilterPipeline, TileContext,
};
use tessera_fragment::{Field, FileKind, FragmentMetadata};
use tessera_schema::CellValNum;
use tessera_tile::storage::Storage;
use tessera_tile::Datatype;

/// How a field of a fragment is stored.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    /// Which field.
    pub field: Field,
    /// Its datatype.
    pub datatype: Datatype,
    /// Values per cell.
    pub cell_val_num: CellValNum,
    /// Its filter pipeline.
    pub filters: FilterPipeline,
    /// Whether it has a validity file.
    pub nullable: bool,
}

impl FieldSpec {
    /// The spec of the attribute or dimension `name` of the fragment's
    /// schema; `None` when the fragment lacks it (schema evolution).
    pub fn named(frag: &FragmentMetadata, name: &str) -> Option<FieldSpec> {
        let s = &frag.schema;
        if let Some(i) = s.attributes.iter().position(|a| a.name == name) {
            return Some(FieldSpec::of(frag, Field::Attribute(i)));
        }
        s.dimensions
            .iter()
            .position(|d| d.name == name)
            .map(|j| FieldSpec::of(frag, Field::Dimension(j)))
    }

    /// The spec of an attribute, dimension or special field of the fragment's schema.
    pub fn of(frag: &FragmentMetadata, field: Field) -> FieldSpec {
        let s = &frag.schema;
        match field {
            Field::Attribute(i) => {
                let a = &s.attributes[i];
                FieldSpec {
                    field,
                    datatype: a.datatype,
                    cell_val_num: a.cell_val_num,
                    filters: a.filters.clone(),
                    nullable: a.nullable,
                }
            }
            Field::Dimension(j) => {
                let d = &s.dimensions[j];
                FieldSpec {
                    field,
                    datatype: d.datatype,
                    cell_val_num: d.cell_val_num,
                    filters: d.filters.clone(),
                    nullable: false,
                }
            }
            _ => FieldSpec {
                field,
                datatype: Datatype::UInt64,
                cell_val_num: CellValNum::Fixed(1),
                filters: s.coords_filters.clone(),
                nullable: false,
            },
        }
    }

    /// Bytes of one fixed-sized cell (of one value for var-sized fields).
    pub fn cell_size(&self) -> u64 {
        match self.cell_val_num {
            CellValNum::Fixed(n) => n as u64 * self.datatype.size(),
            CellValNum::Var => self.datatype.size(),
        }
    }
}

/// One decoded tile of one field.
#[derive(Debug, Clone, Default)]
pub struct FieldTile {
    /// Number of cells.
    pub cells: u64,
    /// Fixed-sized cells, or the values of var-sized ones.
    pub data: Vec<u8>,
    /// Start of each var-sized cell in `data`, plus a final end offset.
    pub offsets: Option<Vec<u64>>,
    /// One byte per cell, 0 for null.
    pub validity: Option<Vec<u8>>,
    /// Bytes per fixed-sized cell.
    pub cell_size: usize,
}

impl FieldTile {
    /// The bytes of cell `i`.
    #[inline]
    pub fn value(&self, i: usize) -> &[u8] {
        match &self.offsets {
            Some(o) => &self.data[o[i] as usize..o[i + 1] as usize],
            None => &self.data[i * self.cell_size..(i + 1) * self.cell_size],
        }
    }
    /// Whether cell `i` is valid (non-null).
    #[inline]
    pub fn valid(&self, i: usize) -> bool {
        self.validity.as_ref().is_none_or(|v| v[i] != 0)
    }
}

/// Calls `copy(from, to)` for each run of consecutive cells in `picked`
/// (ascending), so that runs copy as one slice.
fn for_runs(picked: &[u32], mut copy: impl FnMut(usize, usize)) {
    let mut i = 0;
    while i < picked.len() {
        let from = picked[i] as usize;
        let mut to = from + 1;
        i += 1;
        while i < picked.len() && picked[i] as usize == to {
            to += 1;
            i += 1;
        }
        copy(from, to);
    }
}

/// The cells `picked` (ascending) of fixed-sized values `data` (`w` bytes
/// each) and of their validity, as a tile of their own.
pub fn pick_fixed(data: &[u8], validity: Option<&[u8]>, w: usize, picked: &[u32]) -> FieldTile {
    let mut out = Vec::with_capacity(picked.len() * w);
    for_runs(picked, |a, b| out.extend_from_slice(&data[a * w..b * w]));
    FieldTile {
        cells: picked.len() as u64,
        data: out,
        offsets: None,
        validity: validity.map(|v| picked.iter().map(|&i| v[i as usize]).collect()),
        cell_size: w,
    }
}

impl FieldTile {
    /// The cells `picked` (ascending) of this tile, as a tile of their own.
    pub fn pick(&self, picked: &[u32]) -> FieldTile {
        let Some(o) = &self.offsets else {
            return pick_fixed(&self.data, self.validity.as_deref(), self.cell_size, picked);
        };
        let mut data = Vec::new();
        let mut offsets = Vec::with_capacity(picked.len() + 1);
        offsets.push(0);
        for_runs(picked, |a, b| {
            let start = data.len() as u64;
            data.extend_from_slice(&self.data[o[a] as usize..o[b] as usize]);
            offsets.extend(o[a + 1..=b].iter().map(|x| x - o[a] + start));
        });
        FieldTile {
            cells: picked.len() as u64,
            data,
            offsets: Some(offsets),
            validity: self
                .validity
                .as_ref()
                .map(|v| picked.iter().map(|&i| v[i as usize]).collect()),
            cell_size: self.cell_size,
        }
    }
}

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

/// The files a field's tiles live in, in the order they are read.
fn files_of(frag: &FragmentMetadata, spec: &FieldSpec) -> Vec<FileKind> {
    let mut kinds = Vec::with_capacity(3);
    if spec.cell_val_num.is_var() {
        kinds.push(FileKind::Var);
        if !spec
            .filters
            .offsets_in_data(spec.datatype, frag.schema.version)
        {
            kinds.push(FileKind::Fixed);
        }
    } else {
        kinds.push(FileKind::Fixed);
    }
    if spec.nullable {
        kinds.push(FileKind::Validity);
    }
    kinds
}

/// Tile bytes read ahead: for a run of tiles, the byte ranges of neighbouring
/// tiles in one file are merged into one request. A range not held is read
/// from storage directly.
pub struct Fetched<'s> {
    storage: &'s dyn Storage,
    /// Where read buffers come from and go back to, and decoded tiles'.
    ctx: &'s ReadContext,
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

    fn bytes(&self, path: &Path, range: Range<u64>) -> Result<Cow<'_, [u8]>, QueryError> {
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

fn read_now(storage: &dyn Storage, path: &Path, range: Range<u64>) -> Result<Vec<u8>, QueryError> {
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
    let done: Vec<Vec<(usize, T)>> = runs
        .into_par_iter()
        .map(|run| {
            let fetched = Fetched::read(storage, ctx, run.spans)?;
            run.tiles
                .par_iter()
                .map(|&i| Ok((i, decode(&fetched, tiles[i])?)))
                .collect()
        })
        .collect::<Result<_, QueryError>>()?;
    let mut out: Vec<Option<T>> = (0..tiles.len()).map(|_| None).collect();
    for (i, v) in done.into_iter().flatten() {
        out[i] = Some(v);
    }
    Ok(out
        .into_iter()
        .map(|v| v.expect("every tile decoded"))
        .collect())
}

/// Cuts tiles (number, bytes; sorted by number) into runs, returning each
/// run's tile count: a gap in numbers or the byte cap ends a run. The cap
/// is [`MAX_RUN_BYTES`], or less for a few tiles: about one run per thread,
/// down to [`MIN_SPLIT_RUN_BYTES`] each, so that their reads (and the page
/// faults of fresh buffers) go in parallel and each run's tiles are decoded
/// as soon as its own bytes are in.
fn cut_runs(tiles: &[(u64, u64)], threads: u64) -> Vec<usize> {
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

impl FieldTile {
    /// Hands the tile's buffers back to `ctx` for the next tiles to reuse.
    pub(crate) fn recycle(self, ctx: &ReadContext) {
        ctx.tiles.give(self.data);
        if let Some(v) = self.validity {
            ctx.tiles.give(v);
        }
    }
}

/// Reads and unfilters tile `t` of a field, with one request per file.
pub fn read_field_tile(
    storage: &dyn Storage,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
) -> Result<FieldTile, QueryError> {
    // A one-off read: buffers of its own, nothing kept.
    let ctx = ReadContext::new();
    let fetched = Fetched::nothing(storage, &ctx);
    decode_field_tile(&fetched, frag, spec, t, key)
}

/// Unfilters tile `t` of a field from bytes fetched ahead (or read now).
pub fn decode_field_tile(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
) -> Result<FieldTile, QueryError> {
    decode_field_tile_span(src, frag, spec, t, key, None)
}

/// [`decode_field_tile`] for a reader that needs only the cells `span` of
/// the tile: of a fixed-sized field, only the chunks holding them are
/// decoded, and the other cells hold whatever the buffer held.
pub fn decode_field_tile_span(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    span: Option<Range<u64>>,
) -> Result<FieldTile, QueryError> {
    let storage = src.storage;
    let read = |kind: FileKind| tile_bytes(src, frag, spec, t, kind);
    let cells = frag.cell_num(t);
    let v = frag.version();
    let tile_err = |file: &str, e| tile_error(frag, t, file, e);
    let corrupt = |file: &str, m: String| QueryError::Corrupt {
        fragment: frag.name.clone(),
        file: file.to_owned(),
        tile: t,
        message: m,
    };
    let mut out = FieldTile {
        cells,
        cell_size: spec.cell_size() as usize,
        ..Default::default()
    };
    if spec.cell_val_num.is_var() {
        // One offset per cell: bounds the cell count (and so the validity
        // buffer below) before anything is allocated.
        tile_len(frag, t, 8)?;
        let (vbytes, vfile) = read(FileKind::Var)?;
        let pipeline = keyed(&spec.filters, key);
        let ctx = TileContext::new(v, spec.datatype.size());
        let (data, offsets) = if spec
            .filters
            .offsets_in_data(spec.datatype, frag.schema.version)
        {
            let (data, mut offsets) = unfilter_var_string_tile(&pipeline, &vbytes, &ctx)
                .map_err(|e| tile_err(&vfile, e))?;
            if offsets.len() as u64 != cells {
                return Err(corrupt(
                    &vfile,
                    format!("{} offsets for {cells} cells", offsets.len()),
                ));
            }
            offsets.push(data.len() as u64);
            if offsets.windows(2).any(|w| w[0] > w[1]) {
                return Err(corrupt(
                    &vfile,
                    "cell offsets are not monotone or exceed the var tile".into(),
                ));
            }
            (data, offsets)
        } else {
            let var_size = var_tile_size(storage, frag, spec.field, t)?;
            let data = unfilter_tile(&pipeline, &vbytes, &ctx.clone().expect_size(var_size))
                .map_err(|e| tile_err(&vfile, e))?;
            // offsets_into checks them: monotone, inside the values.
            let mut offsets = vec![0u64; cells as usize + 1];
            let (cell_offsets, end) = offsets.split_at_mut(cells as usize);
            offsets_into(src, frag, spec, t, key, cell_offsets, 0, data.len() as u64)?;
            end[0] = data.len() as u64;
            (data, offsets)
        };
        out.data = data;
        out.offsets = Some(offsets);
    } else {
        out.data = src.ctx.tile_buffer(fixed_tile_len(frag, spec, t)?);
    }
    let mut validity = spec.nullable.then(|| src.ctx.tile_buffer(cells as usize));
    let data = (!spec.cell_val_num.is_var()).then_some(out.data.as_mut_slice());
    let in_span = span.map(|s| move |r: Range<u64>| r.start < s.end && s.start < r.end);
    let only = in_span.as_ref().map(|f| f as &CellFilter<'_>);
    decode_tile_into(
        src,
        frag,
        spec,
        t,
        key,
        (data, validity.as_deref_mut()),
        only,
    )?;
    out.validity = validity;
    Ok(out)
}

/// Sizes scratch `buf` to `len` bytes, keeping what it holds. Growing past
/// its capacity takes fresh zeroed memory (`vec!`: the allocator's zeroed
/// pages, faulted in only where decoding writes) instead of copying the old
/// bytes and clearing the rest, which touched every page of a buffer of
/// which a picking read may decode a fifth.
pub fn scratch_to(buf: &mut Vec<u8>, len: usize) {
    if len > buf.capacity() {
        *buf = vec![0; len];
    } else {
        buf.resize(len, 0);
    }
}

/// Decodes fixed-sized field `spec` of tile `t` into scratch `data` (and
/// `validity`, for a nullable field), only the chunks holding the cells
/// `picked` (ascending); other cells hold whatever the scratch held.
pub fn decode_picked_fixed(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    picked: &[u32],
    (data, validity): (&mut Vec<u8>, &mut Vec<u8>),
) -> Result<(), QueryError> {
    scratch_to(data, fixed_tile_len(frag, spec, t)?);
    // Bounded by fixed_tile_len above.
    let cells = frag.cell_num(t) as usize;
    scratch_to(validity, if spec.nullable { cells } else { 0 });
    let v = spec.nullable.then_some(validity.as_mut_slice());
    let among = picked_cells(picked);
    decode_tile_into(src, frag, spec, t, key, (Some(data), v), Some(&among))
}

/// The cells `picked` (ascending) of var-sized tile `t`, decoding only the
/// chunks that hold them: the offsets chunks holding their offsets (and
/// the next cell's, where each value ends), then the values chunks holding
/// their bytes. `offsets` and `values` are scratch the caller reuses.
/// `None` for fields whose offsets live in the values tile (decode the tile
/// whole with [`decode_field_tile`]).
#[allow(clippy::too_many_arguments)]
pub fn pick_var_tile(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    picked: &[u32],
    (offsets, values): (&mut Vec<u8>, &mut Vec<u8>),
) -> Result<Option<FieldTile>, QueryError> {
    if spec
        .filters
        .offsets_in_data(spec.datatype, frag.schema.version)
    {
        return Ok(None);
    }
    let mut out = FieldTile {
        cells: picked.len() as u64,
        cell_size: spec.cell_size() as usize,
        offsets: Some(vec![0]),
        ..Default::default()
    };
    if picked.is_empty() {
        out.validity = spec.nullable.then(Vec::new);
        return Ok(Some(out));
    }
    let cells = frag.cell_num(t);
    if picked.last().is_some_and(|&c| c as u64 >= cells) {
        return Err(cells_past_tile(&frag.name, cells..cells + 1));
    }
    // Sizes off disk, bounded before anything is allocated.
    scratch_to(offsets, tile_len(frag, t, 8)?);
    let var_size = var_tile_size(src.storage, frag, spec.field, t)?;
    bounded_tile_bytes(frag, t, var_size, || {
        format!("a var tile of {var_size} bytes is")
    })?;
    let v = frag.version();
    // Offsets: a chunk is wanted when it holds a picked cell's or the next
    // cell's (the picked value's end).
    let (obytes, ofile) = tile_bytes(src, frag, spec, t, FileKind::Fixed)?;
    let octx = TileContext::new(v, 8).expect_size(cells * 8);
    let among = picked_cells(picked);
    let wanted_offsets = |r: Range<u64>| among((r.start / 8).saturating_sub(1)..r.end.div_ceil(8));
    unfilter_tile_part_into(
        &keyed(&frag.schema.offsets_filters, key),
        &obytes,
        &octx,
        offsets,
        &wanted_offsets,
    )
    .map_err(|e| tile_error(frag, t, &ofile, e))?;
    let offset = |c: u64| -> u64 {
        match c < cells {
            true => u64::from_le_bytes(
                offsets[c as usize * 8..c as usize * 8 + 8]
                    .try_into()
                    .expect("8 bytes"),
            ),
            false => var_size,
        }
    };
    // Each run of picked cells is one span of values.
    let mut spans: Vec<(Range<u64>, Range<u64>)> = Vec::new();
    let mut bad = None;
    let mut last_end = 0;
    for_runs(picked, |a, b| {
        let (a, b) = (a as u64, b as u64);
        let bytes = offset(a)..offset(b);
        // Every offset the run holds, and its end, in order and inside,
        // and the runs in order too.
        let monotone = (a..b).all(|c| offset(c) <= offset(c + 1));
        if bytes.end > var_size || bytes.start < last_end || !monotone {
            bad.get_or_insert(a);
        }
        last_end = bytes.end;
        spans.push((a..b, bytes));
    });
    if let Some(c) = bad {
        return Err(QueryError::Corrupt {
            fragment: frag.name.clone(),
            file: ofile,
            tile: t,
            message: format!(
                "cell offsets from cell {c} are not monotone or pass the values ({var_size} bytes)"
            ),
        });
    }
    // Values: only the chunks overlapping a span.
    scratch_to(values, var_size as usize);
    let (vbytes, vfile) = tile_bytes(src, frag, spec, t, FileKind::Var)?;
    let vctx = TileContext::new(v, spec.datatype.size()).expect_size(var_size);
    let needed: Vec<&Range<u64>> = spans
        .iter()
        .map(|s| &s.1)
        .filter(|b| !b.is_empty())
        .collect();
    let wanted_values = |r: Range<u64>| {
        let i = needed.partition_point(|b| b.end <= r.start);
        needed.get(i).is_some_and(|b| b.start < r.end)
    };
    unfilter_tile_part_into(
        &keyed(&spec.filters, key),
        &vbytes,
        &vctx,
        values,
        &wanted_values,
    )
    .map_err(|e| tile_error(frag, t, &vfile, e))?;
    let total: u64 = spans.iter().map(|s| s.1.end - s.1.start).sum();
    out.data.reserve_exact(total as usize);
    let out_offsets = out.offsets.as_mut().expect("set above");
    out_offsets.reserve_exact(picked.len());
    for (cells, bytes) in &spans {
        let at = out.data.len() as u64;
        out_offsets.extend((cells.start + 1..=cells.end).map(|c| offset(c) - bytes.start + at));
        out.data
            .extend_from_slice(&values[bytes.start as usize..bytes.end as usize]);
    }
    if spec.nullable {
        let mut validity = src.ctx.tile_buffer(cells as usize);
        decode_tile_into(
            src,
            frag,
            spec,
            t,
            key,
            (None, Some(&mut validity)),
            Some(&among),
        )?;
        out.validity = Some(picked.iter().map(|&c| validity[c as usize]).collect());
        src.ctx.tiles.give(validity);
    }
    Ok(Some(out))
}

/// Unfilters the offsets tile of var-sized tile `t` (values `len` bytes)
/// into `dst`, one per cell, each plus `base`: the start of each cell's
/// value in the caller's buffer. Offsets that decrease or pass the values
/// are an error.
#[allow(clippy::too_many_arguments)]
fn offsets_into(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    dst: &mut [u64],
    base: u64,
    len: u64,
) -> Result<(), QueryError> {
    let cells = dst.len() as u64;
    let (obytes, ofile) = tile_bytes(src, frag, spec, t, FileKind::Fixed)?;
    let octx = TileContext::new(frag.version(), 8).expect_size(cells * 8);
    // Scratch from the tile pool: offsets are rebased on the way out.
    let mut raw = src.ctx.tile_buffer(dst.len() * 8);
    unfilter_tile_into(
        &keyed(&frag.schema.offsets_filters, key),
        &obytes,
        &octx,
        &mut raw,
    )
    .map_err(|e| tile_error(frag, t, &ofile, e))?;
    let mut last = 0;
    let checked = dst
        .iter_mut()
        .zip(raw.chunks_exact(8))
        .try_for_each(|(o, c)| {
            let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            if x < last || x > len {
                return Err(QueryError::Corrupt {
                    fragment: frag.name.clone(),
                    file: ofile.clone(),
                    tile: t,
                    message: format!("cell offset {x} after {last}, in values of {len} bytes"),
                });
            }
            last = x;
            *o = base + x;
            Ok(())
        });
    src.ctx.tiles.give(raw);
    checked
}

/// Decodes var-sized tile `t` straight into the caller's buffers: values
/// into `data` (exactly the tile's var size, as the fragment metadata
/// gives it), offsets into `offsets` (one per cell, each plus `base`, the
/// position of `data` in the caller's values), validity into `validity`.
/// For fields whose offsets live in the values tile, use
/// [`decode_field_tile`].
#[allow(clippy::too_many_arguments)]
pub fn decode_var_tile_into(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    data: &mut [u8],
    (offsets, base): (&mut [u64], u64),
    validity: Option<&mut [u8]>,
) -> Result<(), QueryError> {
    let (vbytes, vfile) = tile_bytes(src, frag, spec, t, FileKind::Var)?;
    let ctx = TileContext::new(frag.version(), spec.datatype.size()).expect_size(data.len() as u64);
    unfilter_tile_into(&keyed(&spec.filters, key), &vbytes, &ctx, data)
        .map_err(|e| tile_error(frag, t, &vfile, e))?;
    offsets_into(src, frag, spec, t, key, offsets, base, data.len() as u64)?;
    decode_tile_into(src, frag, spec, t, key, (None, validity), None)
}

/// The unfiltered bytes of tile `t` of a fixed-sized field. The cell count
/// comes off disk: it is bounded here, before anything is allocated.
pub fn fixed_tile_len(
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
) -> Result<usize, QueryError> {
    tile_len(frag, t, spec.cell_size())
}

/// The bytes of tile `t`'s cells at `cell_size` bytes each, bounded by the
/// largest tile a pipeline may hold.
fn tile_len(frag: &FragmentMetadata, t: u64, cell_size: u64) -> Result<usize, QueryError> {
    let cells = frag.cell_num(t);
    let bytes = cells.saturating_mul(cell_size);
    bounded_tile_bytes(frag, t, bytes, || {
        format!("{cells} cells of {cell_size} bytes are")
    })
}

/// `bytes` of unfiltered tile `t`, as the fragment metadata claims them,
/// if no more than the largest tile a pipeline may hold; `what` states
/// the claim (subject and verb) in the error.
fn bounded_tile_bytes(
    frag: &FragmentMetadata,
    t: u64,
    bytes: u64,
    what: impl FnOnce() -> String,
) -> Result<usize, QueryError> {
    if bytes > tessera_filters::pipeline::DEFAULT_MAX_TILE_SIZE {
        return Err(QueryError::Corrupt {
            fragment: frag.name.clone(),
            file: "fragment metadata".into(),
            tile: t,
            message: format!("{} more than a tile may hold", what()),
        });
    }
    Ok(bytes as usize)
}

/// The unfiltered size of var-sized tile `t` of `field`, as the fragment
/// metadata records it.
pub fn var_tile_size(
    storage: &dyn Storage,
    frag: &FragmentMetadata,
    field: Field,
    t: u64,
) -> Result<u64, QueryError> {
    let corrupt = |message: String| QueryError::Corrupt {
        fragment: frag.name.clone(),
        file: "fragment metadata".into(),
        tile: t,
        message,
    };
    let idx = frag
        .field_index(field)
        .ok_or_else(|| corrupt(format!("no {field:?} in the fragment")))?;
    frag.tile_var_sizes(storage, idx)?
        .get(t as usize)
        .copied()
        .ok_or_else(|| corrupt(format!("no var tile size for tile {t}")))
}

/// The bytes of tile `t` in one of a field's files, and the file's name.
fn tile_bytes<'f>(
    src: &'f Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    kind: FileKind,
) -> Result<(Cow<'f, [u8]>, String), QueryError> {
    let path = frag.data_file(spec.field, kind);
    let bytes = src.bytes(&path, tile_range(src.storage, frag, spec, kind, t)?)?;
    Ok((bytes, file_name(&path)))
}

/// The name of a data file, as errors give it.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A pipeline with the array's encryption appended, when it has a key.
fn keyed(
    p: &FilterPipeline,
    key: Option<tessera_filters::EncryptionKey>,
) -> Cow<'_, FilterPipeline> {
    match key {
        Some(_) => Cow::Owned(p.with_encryption(key)),
        None => Cow::Borrowed(p),
    }
}

/// A filter error in tile `t` of `file`, naming the fragment.
fn tile_error(
    frag: &FragmentMetadata,
    t: u64,
    file: &str,
    e: tessera_filters::FilterError,
) -> QueryError {
    QueryError::Tile {
        fragment: frag.name.clone(),
        file: file.to_owned(),
        tile: t,
        source: Box::new(e),
    }
}

/// A fixed-sized field's cells (`cells x cell size` bytes) and a nullable
/// field's validity (one byte per cell), to decode into; either may be
/// left out.
pub type TileBuffers<'b> = (Option<&'b mut [u8]>, Option<&'b mut [u8]>);

/// Whether a reader needs any of the cells in a range.
pub type CellFilter<'f> = dyn Fn(Range<u64>) -> bool + Sync + 'f;

/// A [`CellFilter`] for the cells `picked` (ascending).
pub fn picked_cells(picked: &[u32]) -> impl Fn(Range<u64>) -> bool + Sync + '_ {
    move |r: Range<u64>| {
        let i = picked.partition_point(|&c| (c as u64) < r.start);
        picked.get(i).is_some_and(|&c| (c as u64) < r.end)
    }
}

/// Decodes tile `t` of a field straight into the caller's buffers. With
/// `only`, just the chunks holding cells it asks for are decoded; the bytes
/// of other cells are left as they were.
pub fn decode_tile_into(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    (data, validity): TileBuffers<'_>,
    only: Option<&CellFilter<'_>>,
) -> Result<(), QueryError> {
    let cells = frag.cell_num(t);
    let v = frag.version();
    let unfilter = |kind: FileKind, pipeline: &FilterPipeline, cell_size: u64, dst: &mut [u8]| {
        let (bytes, file) = tile_bytes(src, frag, spec, t, kind)?;
        let ctx = TileContext::new(v, cell_size).expect_size(cells * cell_size);
        let pipeline = keyed(pipeline, key);
        let decoded = match only {
            None => unfilter_tile_into(&pipeline, &bytes, &ctx, dst),
            Some(only) => {
                // A chunk is wanted when a wanted cell overlaps its bytes.
                let wanted = |r: Range<u64>| only(r.start / cell_size..r.end.div_ceil(cell_size));
                unfilter_tile_part_into(&pipeline, &bytes, &ctx, dst, &wanted)
            }
        };
        decoded.map_err(|e| tile_error(frag, t, &file, e))
    };
    if let Some(dst) = data {
        unfilter(FileKind::Fixed, &spec.filters, spec.cell_size(), dst)?;
    }
    if let Some(dst) = validity {
        unfilter(FileKind::Validity, &frag.schema.validity_filters, 1, dst)?;
    }
    Ok(())
}

/// Runs of a tile's cells: the byte offset of a run's first cell in the
/// (unfiltered) tile, and its destination, as long as the run.
pub(crate) type Runs<'d> = Vec<(u64, &'d mut [u8])>;

/// Decodes the cells of tile `t` of a fixed-sized field (validity aside)
/// that `runs` ask for straight to their destinations, with no buffer for
/// the tile: each chunk holding a wanted cell is decoded into a small buffer
/// the thread reuses and its parts copied out (or, when one destination is
/// the whole chunk, decoded into it). Chunks no run needs are not decoded.
/// Runs may share tile cells; a run past the tile is an error.
pub(crate) fn decode_tile_runs(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    runs: Runs<'_>,
) -> Result<(), QueryError> {
    let w = spec.cell_size().max(1);
    let total = fixed_tile_len(frag, spec, t)? as u64;
    if let Some((at, d)) = runs.iter().find(|(at, d)| at + d.len() as u64 > total) {
        return Err(cells_past_tile(
            &frag.name,
            at / w..(at + d.len() as u64) / w,
        ));
    }
    let (bytes, file) = tile_bytes(src, frag, spec, t, FileKind::Fixed)?;
    let ctx = TileContext::new(frag.version(), w).expect_size(total);
    let mut parts = ChunkParts::new(runs);
    let targets = |chunk: Range<u64>| parts.of(chunk);
    let place = |parts: Vec<(usize, &mut [u8])>, chunk: &[u8]| {
        for (at, dst) in parts {
            dst.copy_from_slice(&chunk[at..at + dst.len()]);
        }
    };
    unfilter_tile_chunks(&keyed(&spec.filters, key), &bytes, &ctx, targets, place)
        .map_err(|e| tile_error(frag, t, &file, e))
}

/// The error for cells a read would take from past the end of a tile.
pub(crate) fn cells_past_tile(fragment: &str, cells: Range<u64>) -> QueryError {
    QueryError::Invalid(format!(
        "fragment {fragment}: cells {}..{} are past its tile",
        cells.start, cells.end
    ))
}

/// Cuts runs of a tile's cells at its chunks' bounds: for each chunk in
/// turn, the parts of the runs inside it.
struct ChunkParts<'d> {
    /// Runs not yet reached, by first byte.
    pending: std::iter::Peekable<std::vec::IntoIter<(u64, &'d mut [u8])>>,
    /// Runs begun in an earlier chunk (their rest), or reached.
    open: Runs<'d>,
}

impl<'d> ChunkParts<'d> {
    fn new(mut runs: Runs<'d>) -> ChunkParts<'d> {
        runs.sort_unstable_by_key(|r| r.0);
        ChunkParts {
            pending: runs.into_iter().peekable(),
            open: Vec::new(),
        }
    }

    /// Where the bytes of the chunk holding tile bytes `chunk` go, chunks
    /// given in order: nowhere, whole into one run, or in parts (each at
    /// its offset in the chunk).
    fn of(&mut self, chunk: Range<u64>) -> ChunkTarget<'d, Vec<(usize, &'d mut [u8])>> {
        while let Some(r) = self.pending.next_if(|r| r.0 < chunk.end) {
            self.open.push(r);
        }
        let mut parts = Vec::new();
        for (at, dst) in std::mem::take(&mut self.open) {
            let end = at + dst.len() as u64;
            let (here, rest) = dst.split_at_mut((end.min(chunk.end) - at) as usize);
            parts.push(((at - chunk.start) as usize, here));
            if !rest.is_empty() {
                self.open.push((chunk.end, rest));
            }
        }
        match parts.as_slice() {
            [] => ChunkTarget::Skip,
            [(0, d)] if d.len() as u64 == chunk.end - chunk.start => {
                ChunkTarget::Into(parts.pop().expect("one part").1)
            }
            _ => ChunkTarget::Scratch(parts),
        }
    }
}

/// Splits a legacy coordinates tile into one tile per dimension. Zipped
/// tiles interleave the coordinates cell by cell; unzipped ones store each
/// dimension's coordinates together.
pub fn split_coords(
    tile: &FieldTile,
    dims: usize,
    coord_size: usize,
    zipped: bool,
) -> Vec<FieldTile> {
    let cells = tile.cells as usize;
    (0..dims)
        .map(|j| {
            let mut data = Vec::with_capacity(cells * coord_size);
            for i in 0..cells {
                let at = if zipped {
                    (i * dims + j) * coord_size
                } else {
                    (j * cells + i) * coord_size
                };
                data.extend_from_slice(&tile.data[at..at + coord_size]);
            }
            FieldTile {
                cells: tile.cells,
                data,
                offsets: None,
                validity: None,
                cell_size: coord_size,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the chunk of bytes `r` of a tile gets: None (skipped), the
    /// length of a whole-chunk destination as `(0, len)`, or its parts'
    /// (offset in the chunk, length).
    fn parts(p: &mut ChunkParts<'_>, r: Range<u64>) -> Option<Vec<(usize, usize)>> {
        match p.of(r) {
            ChunkTarget::Skip => None,
            ChunkTarget::Into(d) => Some(vec![(0, d.len())]),
            ChunkTarget::Scratch(v) => Some(v.iter().map(|(at, d)| (*at, d.len())).collect()),
        }
    }

    /// Runs given out of order, across chunk bounds, sharing tile bytes,
    /// and a chunk no run needs: each chunk gets the parts inside it, and
    /// every byte of every run is handed out once.
    #[test]
    fn runs_are_cut_at_chunk_bounds() {
        let (mut a, mut b, mut c, mut d) = ([0u8; 10], [0u8; 8], [0u8; 4], [0u8; 3]);
        // Tile bytes: a 6..16, b 0..8 (whole first chunk), c 10..14
        // (inside a), d 33..36; chunks of 8 bytes.
        let runs = vec![
            (6, &mut a[..]),
            (0, &mut b[..]),
            (10, &mut c[..]),
            (33, &mut d[..]),
        ];
        let mut p = ChunkParts::new(runs);
        assert_eq!(parts(&mut p, 0..8), Some(vec![(0, 8), (6, 2)]));
        assert_eq!(parts(&mut p, 8..16), Some(vec![(0, 8), (2, 4)]));
        assert_eq!(parts(&mut p, 16..24), None);
        assert_eq!(parts(&mut p, 24..32), None);
        assert_eq!(parts(&mut p, 32..40), Some(vec![(1, 3)]));
        assert_eq!(parts(&mut p, 40..44), None);
        // One run that is exactly a chunk is that chunk's destination.
        let mut e = [0u8; 8];
        let mut p = ChunkParts::new(vec![(8, &mut e[..])]);
        assert_eq!(parts(&mut p, 0..8), None);
        assert!(matches!(p.of(8..16), ChunkTarget::Into(d) if d.len() == 8));
    }

    /// Runs end at gaps and at the byte cap; a few large tiles are split
    /// one run per thread, small ones never below MIN_SPLIT_RUN_BYTES.
    #[test]
    fn runs_are_cut_at_gaps_caps_and_for_threads() {
        let kib = |n: u64| n << 10;
        // Two neighbours of 240 KiB: one run per thread when there are two.
        let two = [(7, kib(240)), (8, kib(240))];
        assert_eq!(cut_runs(&two, 2), vec![1, 1]);
        assert_eq!(cut_runs(&two, 1), vec![2]);
        // Forty neighbours of 10 KiB: split on 2 threads into runs of
        // 256 KiB at least, none on one.
        let small: Vec<(u64, u64)> = (0..40).map(|t| (t, kib(10))).collect();
        assert_eq!(cut_runs(&small, 2), vec![25, 15]);
        assert_eq!(cut_runs(&small, 8), vec![25, 15]);
        assert_eq!(cut_runs(&small, 1), vec![40]);
        // A gap ends a run; so does MAX_RUN_BYTES.
        assert_eq!(cut_runs(&[(1, 10), (2, 10), (4, 10)], 1), vec![2, 1]);
        let big: Vec<(u64, u64)> = (0..5).map(|t| (t, MAX_RUN_BYTES / 2)).collect();
        assert_eq!(cut_runs(&big, 1), vec![2, 2, 1]);
    }
}
