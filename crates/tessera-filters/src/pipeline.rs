//! The filter pipeline (`format_spec/filter_pipeline.md`) and running it
//! over the chunks of a tile.

use crate::filters::{dictionary, rle, ChunkCx, Filter, FilterKind, FilterType};
use crate::gates::{self, LibtiledbRelease};
use crate::{EncryptionKey, FilterError};
use rayon::prelude::*;
use serde::Serialize;
use tessera_tile::{tile::ChunkList, Datatype, FormatVersion, Reader};

/// An ordered list of filters and the maximum chunk size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilterPipeline {
    /// Maximum chunk size within a tile.
    pub max_chunk_size: u32,
    /// The filters, in the order they run when writing.
    pub filters: Vec<Filter>,
}

/// Default maximum chunk size (64 KiB).
pub const DEFAULT_MAX_CHUNK_SIZE: u32 = 64 * 1024;

impl FilterPipeline {
    /// A pipeline of `filters`.
    pub fn new(filters: Vec<Filter>, max_chunk_size: u32) -> FilterPipeline {
        FilterPipeline {
            max_chunk_size,
            filters,
        }
    }

    /// The empty pipeline.
    pub fn empty() -> FilterPipeline {
        FilterPipeline::new(Vec::new(), DEFAULT_MAX_CHUNK_SIZE)
    }

    /// Parses a pipeline. `datatype` is the type of the field it filters;
    /// from version 20 each filter receives the previous filter's output type.
    pub fn parse(
        r: &mut Reader<'_>,
        version: FormatVersion,
        datatype: Datatype,
    ) -> Result<FilterPipeline, FilterError> {
        let prev = r.set_structure("filter pipeline");
        let max_chunk_size = r.u32("max chunk size")?;
        let n = r.u32("number of filters")?;
        let n = r.check_count("number of filters", n as u64, 5)?;
        let mut filters = Vec::with_capacity(n);
        let mut t = datatype;
        for _ in 0..n {
            let f = Filter::parse(r, version, t)?;
            if version.has(gates::FILTER_DATATYPE_CHAINING) {
                t = f.output_type(t);
            }
            filters.push(f);
        }
        r.set_structure(prev);
        Ok(FilterPipeline {
            max_chunk_size,
            filters,
        })
    }

    /// Serializes the pipeline as libtiledb does. (Schemas never hold the
    /// internal encryption filter; generic tile headers of encrypted tiles do.)
    pub fn serialize(&self, out: &mut Vec<u8>, version: FormatVersion) {
        out.extend_from_slice(&self.max_chunk_size.to_le_bytes());
        out.extend_from_slice(&(self.filters.len() as u32).to_le_bytes());
        for f in &self.filters {
            f.serialize(out, version);
        }
    }

    /// This pipeline with the internal AES-256-GCM filter appended.
    pub fn with_encryption(&self, key: Option<EncryptionKey>) -> FilterPipeline {
        let mut p = self.clone();
        let t = self
            .filters
            .last()
            .map_or(Datatype::Any, |f| f.output_type(f.input_type));
        p.filters
            .push(Filter::new(FilterKind::Aes256Gcm { key }, t));
        p
    }

    /// True if a filter of this type is in the pipeline.
    pub fn has(&self, t: FilterType) -> bool {
        self.filters.iter().any(|f| f.filter_type() == t)
    }

    /// True when the cell offsets of a var-sized field of `field_type` are
    /// folded into its data tile (RLE or dictionary on strings), so the
    /// offsets tile is not filtered: ASCII from 12 (RLE) and 13 (dictionary),
    /// UTF-8 from 17. `schema_version` is the array schema's version.
    pub fn offsets_in_data(&self, field_type: Datatype, schema_version: FormatVersion) -> bool {
        let v = schema_version;
        let ascii = field_type == Datatype::StringAscii;
        let utf8 = field_type == Datatype::StringUtf8;
        let utf8_ok = utf8 && v.has(gates::UTF8_OFFSETS_IN_DATA);
        (self.has(FilterType::Rle)
            && ((ascii && v.has(gates::RLE_ASCII_OFFSETS_IN_DATA)) || utf8_ok))
            || (self.has(FilterType::Dictionary)
                && ((ascii && v.has(gates::DICTIONARY_ASCII_OFFSETS_IN_DATA)) || utf8_ok))
    }
}

/// What the pipeline needs to know about the tile it runs on.
#[derive(Debug, Clone)]
pub struct TileContext {
    /// Format version the tile was written with.
    pub version: FormatVersion,
    /// Size of one cell (used by numeric RLE): the datatype size times the
    /// number of values per cell for fixed-sized data, the datatype size for
    /// var-sized data, 8 for offsets and 1 for validity.
    pub cell_size: u64,
    /// The unfiltered size the tile must have, when known.
    pub expected_size: Option<u64>,
    /// Decode chunks in parallel when the tile has several.
    pub parallel: bool,
    /// Largest unfiltered tile accepted: chunk lengths come off disk and are
    /// checked against it before anything is allocated.
    pub max_tile_size: u64,
    /// Size the forward pipeline cuts tiles into (see [`WRITER_CHUNK_SIZE`]).
    pub writer_chunk_size: u64,
    /// The libtiledb release whose writer the forward pipeline matches
    /// byte for byte where writers of one format version differ.
    pub writer: LibtiledbRelease,
}

/// libtiledb's writer cuts tiles into chunks of this size (its constant
/// `max_tile_chunk_size`), floored to whole cells, whatever the pipeline's
/// own max chunk size says: that value only turns chunking off when 0.
/// (Fact from `WriterTile::compute_chunk_size`, libtiledb 2.13 to 2.30;
/// checked by `tessera-query/tests/forward_exact.rs` on every fixture.)
pub const WRITER_CHUNK_SIZE: u64 = 64 * 1024;

/// Default for [`TileContext::max_tile_size`]: 1 GiB. libtiledb's tiles are
/// typically a few megabytes; a larger claim is almost surely corruption.
pub const DEFAULT_MAX_TILE_SIZE: u64 = 1 << 30;

impl TileContext {
    /// A context for a tile of `version` with cells of `cell_size` bytes.
    pub fn new(version: FormatVersion, cell_size: u64) -> TileContext {
        TileContext {
            version,
            cell_size,
            expected_size: None,
            parallel: true,
            max_tile_size: DEFAULT_MAX_TILE_SIZE,
            writer_chunk_size: WRITER_CHUNK_SIZE,
            writer: LibtiledbRelease::LATEST,
        }
    }

    /// Filters forward as libtiledb `release` wrote (default:
    /// [`LibtiledbRelease::LATEST`]).
    pub fn writer(mut self, release: LibtiledbRelease) -> TileContext {
        self.writer = release;
        self
    }

    /// Cuts forward-filtered tiles at `size` bytes instead of
    /// [`WRITER_CHUNK_SIZE`] (libtiledb's tests do the same to get several
    /// chunks out of small tiles).
    pub fn writer_chunk_size(mut self, size: u64) -> TileContext {
        self.writer_chunk_size = size.max(1);
        self
    }

    /// The chunk size libtiledb's writer uses for a tile of `tile` bytes.
    fn forward_chunk_size(&self, tile: u64) -> u64 {
        let cell = self.cell_size.max(1);
        (self.writer_chunk_size.min(tile) / cell * cell).max(cell)
    }

    /// Requires the unfiltered tile to have `size` bytes.
    pub fn expect_size(mut self, size: u64) -> TileContext {
        self.expected_size = Some(size);
        self
    }

    fn chunk(&self, chunk: usize, original_len: u32) -> ChunkCx<'_> {
        ChunkCx {
            version: self.version,
            writer: self.writer,
            cell_size: self.cell_size.max(1),
            chunk,
            // Intermediate buffers never exceed the chunk's final size by more
            // than the filters' own metadata.
            max_alloc: original_len as u64 + (1 << 20),
            _marker: std::marker::PhantomData,
        }
    }
}

fn parse_chunks(tile: &[u8], ctx: &TileContext) -> Result<ChunkList, FilterError> {
    let mut r = Reader::new(tile, "tile");
    let chunks = ChunkList::parse(&mut r)?;
    let total = chunks.original_size();
    if total > ctx.max_tile_size {
        return Err(FilterError::Size {
            chunk: 0,
            message: format!(
                "the chunks claim {total} unfiltered bytes, more than the {} a tile may have",
                ctx.max_tile_size
            ),
        });
    }
    Ok(chunks)
}

/// Runs the pipeline in reverse on one chunk, down to filter `stop` (exclusive).
fn reverse_chunk(
    p: &FilterPipeline,
    stop: usize,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let mut m = std::borrow::Cow::Borrowed(meta);
    let mut d = std::borrow::Cow::Borrowed(data);
    for f in p.filters[stop..].iter().rev() {
        let (m2, d2) = f.reverse(&m, &d, cx)?;
        m = m2.into();
        d = d2.into();
    }
    Ok((m.into_owned(), d.into_owned()))
}

/// Reverses one chunk into `dst`, which has the chunk's original length.
/// The last reverse step decompresses straight into `dst` when it can.
fn reverse_chunk_into(
    p: &FilterPipeline,
    meta: &[u8],
    data: &[u8],
    dst: &mut [u8],
    cx: &ChunkCx<'_>,
) -> Result<(), FilterError> {
    let first = &p.filters[0];
    // Decryption last (the only filter, or the first written): into `dst`.
    if let (FilterKind::Aes256Gcm { key }, 1) = (&first.kind, p.filters.len()) {
        if crate::filters::encryption::reverse_into(key.as_ref(), meta, data, dst, cx)? {
            return Ok(());
        }
    }
    let out = if matches!(
        first.kind,
        FilterKind::Gzip { .. }
            | FilterKind::Zstd { .. }
            | FilterKind::Lz4 { .. }
            | FilterKind::Bzip2 { .. }
    ) {
        let (m, d) = if p.filters.len() > 1 {
            let (m, d) = reverse_chunk(p, 1, meta, data, cx)?;
            (std::borrow::Cow::Owned(m), std::borrow::Cow::Owned(d))
        } else {
            (
                std::borrow::Cow::Borrowed(meta),
                std::borrow::Cow::Borrowed(data),
            )
        };
        if crate::filters::compression::reverse_into(first, &m, &d, dst, cx)? {
            return Ok(());
        }
        first.reverse(&m, &d, cx)?.1
    } else {
        reverse_chunk(p, 0, meta, data, cx)?.1
    };
    if out.len() != dst.len() {
        return Err(FilterError::Size {
            chunk: cx.chunk,
            message: format!(
                "chunk unfiltered to {} bytes, framing says {}",
                out.len(),
                dst.len()
            ),
        });
    }
    dst.copy_from_slice(&out);
    Ok(())
}

/// Reverses the pipeline on every chunk of `tile`, returning the cell bytes.
pub fn unfilter_tile(
    p: &FilterPipeline,
    tile: &[u8],
    ctx: &TileContext,
) -> Result<Vec<u8>, FilterError> {
    let chunks = parse_chunks(tile, ctx)?;
    let total = chunks.original_size();
    check_size(total, ctx.expected_size)?;
    let mut out = vec![0u8; total as usize];
    unfilter_chunks_where(p, tile, &chunks, ctx, &mut out, None)?;
    Ok(out)
}

/// Reverses the pipeline on every chunk of `tile` straight into `out`, which
/// must have the tile's unfiltered size: a reader places tiles in its result
/// without a buffer per tile.
///
/// ```
/// use tessera_filters::{filter_tile, unfilter_tile_into, Filter, FilterKind, FilterPipeline, TileContext};
/// use tessera_tile::{Datatype, FormatVersion};
///
/// let p = FilterPipeline::new(vec![Filter::new(FilterKind::Zstd { level: 3 }, Datatype::Int32)], 65536);
/// let ctx = TileContext::new(FormatVersion::new(22), 4);
/// let tile = filter_tile(&p, &[1, 0, 0, 0, 2, 0, 0, 0], &ctx).unwrap();
/// let mut result = [0u8; 12];
/// unfilter_tile_into(&p, &tile, &ctx, &mut result[4..]).unwrap();
/// assert_eq!(result, [0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
/// assert!(unfilter_tile_into(&p, &tile, &ctx, &mut result).is_err());
/// ```
pub fn unfilter_tile_into(
    p: &FilterPipeline,
    tile: &[u8],
    ctx: &TileContext,
    out: &mut [u8],
) -> Result<(), FilterError> {
    unfilter_into_where(p, tile, ctx, out, None)
}

/// [`unfilter_tile_into`] for only the chunks that `wanted` asks for, given
/// each chunk's byte range in the unfiltered tile; the bytes of the other
/// chunks in `out` are left as they were (and their checksums unchecked). A
/// reader that needs a few cells of a tile skips decoding the rest, as
/// libtiledb's sparse readers do.
///
/// ```
/// use tessera_filters::{filter_tile, unfilter_tile_part_into, Filter, FilterKind, FilterPipeline, TileContext};
/// use tessera_tile::{Datatype, FormatVersion};
///
/// let p = FilterPipeline::new(vec![Filter::new(FilterKind::Zstd { level: 3 }, Datatype::UInt8)], 65536);
/// let ctx = TileContext::new(FormatVersion::new(22), 1).writer_chunk_size(4);
/// let tile = filter_tile(&p, b"abcdefgh", &ctx).unwrap(); // chunks "abcd", "efgh"
/// let mut out = *b"........";
/// unfilter_tile_part_into(&p, &tile, &ctx, &mut out, &|r| r.start >= 4).unwrap();
/// assert_eq!(&out, b"....efgh");
/// ```
pub fn unfilter_tile_part_into(
    p: &FilterPipeline,
    tile: &[u8],
    ctx: &TileContext,
    out: &mut [u8],
    wanted: &(dyn Fn(std::ops::Range<u64>) -> bool + Sync),
) -> Result<(), FilterError> {
    unfilter_into_where(p, tile, ctx, out, Some(wanted))
}

/// Checks `out` against the tile's size, then fills the wanted chunks.
fn unfilter_into_where(
    p: &FilterPipeline,
    tile: &[u8],
    ctx: &TileContext,
    out: &mut [u8],
    wanted: Option<&(dyn Fn(std::ops::Range<u64>) -> bool + Sync)>,
) -> Result<(), FilterError> {
    let chunks = parse_chunks(tile, ctx)?;
    let total = chunks.original_size();
    check_size(total, ctx.expected_size)?;
    check_size(total, Some(out.len() as u64))?;
    unfilter_chunks_where(p, tile, &chunks, ctx, out, wanted)
}

/// The unfiltered size the chunks claim against the size the tile must have.
fn check_size(total: u64, expected: Option<u64>) -> Result<(), FilterError> {
    match expected {
        Some(expected) if total != expected => Err(FilterError::Size {
            chunk: 0,
            message: format!(
                "the chunks unfilter to {total} bytes but the tile must have {expected}"
            ),
        }),
        _ => Ok(()),
    }
}

/// Unfilters chunk `i` of `tile` into `dst`, the chunk's original length:
/// copied when the pipeline is empty, else reversed.
fn unfilter_chunk_into(
    p: &FilterPipeline,
    tile: &[u8],
    i: usize,
    c: &tessera_tile::tile::Chunk,
    ctx: &TileContext,
    dst: &mut [u8],
) -> Result<(), FilterError> {
    let data = &tile[c.data.clone()];
    if p.filters.is_empty() {
        if data.len() != dst.len() {
            return Err(FilterError::Size {
                chunk: i,
                message: format!(
                    "unfiltered chunk has {} bytes, framing says {}",
                    data.len(),
                    dst.len()
                ),
            });
        }
        dst.copy_from_slice(data);
        return Ok(());
    }
    let meta = &tile[c.metadata.clone()];
    reverse_chunk_into(p, meta, data, dst, &ctx.chunk(i, c.original_len))
}

/// Fills the chunks of `out` that `wanted` asks for (all when `None`).
fn unfilter_chunks_where(
    p: &FilterPipeline,
    tile: &[u8],
    chunks: &ChunkList,
    ctx: &TileContext,
    out: &mut [u8],
    wanted: Option<&(dyn Fn(std::ops::Range<u64>) -> bool + Sync)>,
) -> Result<(), FilterError> {
    let total = out.len();
    // Split the output into one slice per chunk, then fill them (in parallel).
    let mut slices = Vec::with_capacity(chunks.chunks.len());
    let mut rest: &mut [u8] = out;
    let mut at = 0u64;
    for c in &chunks.chunks {
        let (head, tail) = rest.split_at_mut(c.original_len as usize);
        let bytes = at..at + c.original_len as u64;
        at = bytes.end;
        slices.push(wanted.is_none_or(|w| w(bytes)).then_some(head));
        rest = tail;
    }
    let work = |(i, (c, dst)): (usize, (&tessera_tile::tile::Chunk, &mut Option<&mut [u8]>))| -> Result<(), FilterError> {
        match dst {
            Some(dst) => unfilter_chunk_into(p, tile, i, c, ctx, dst),
            None => Ok(()),
        }
    };
    if ctx.parallel && chunks.chunks.len() > 1 && total > 256 * 1024 {
        chunks
            .chunks
            .par_iter()
            .zip(slices.par_iter_mut())
            .enumerate()
            .try_for_each(work)?;
    } else {
        chunks
            .chunks
            .iter()
            .zip(slices.iter_mut())
            .enumerate()
            .try_for_each(work)?;
    }
    Ok(())
}

/// Where [`unfilter_tile_chunks`] puts one chunk's unfiltered bytes.
#[derive(Debug)]
pub enum ChunkTarget<'a, D> {
    /// Not needed: the chunk is not decoded (nor its checksum checked).
    Skip,
    /// The chunk's bytes go whole into this slice (the chunk's length).
    Into(&'a mut [u8]),
    /// The chunk is decoded into a scratch buffer and handed to `place`
    /// with this.
    Scratch(D),
}

/// Chunks of at most this size are decoded into a buffer each thread keeps;
/// larger ones (tiles written unchunked) into a buffer of their own.
const SCRATCH_KEEP: usize = 1 << 20;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Reverses the pipeline on the chunks of `tile` one by one, without a
/// buffer for the whole unfiltered tile: a reader that places a tile's
/// cells in several parts of its result decodes each chunk into a small
/// buffer the thread reuses (in cache, and no fresh memory to fault in),
/// and copies the parts out from there.
///
/// `targets` is called once per chunk, in order, with the chunk's byte range
/// in the unfiltered tile, and says where its bytes go ([`ChunkTarget`]).
/// `place` receives each [`ChunkTarget::Scratch`] value with the chunk's
/// bytes. Chunks are decoded in parallel when `ctx.parallel` allows.
///
/// ```
/// use tessera_filters::{filter_tile, unfilter_tile_chunks, ChunkTarget, Filter, FilterKind, FilterPipeline, TileContext};
/// use tessera_tile::{Datatype, FormatVersion};
///
/// let p = FilterPipeline::new(vec![Filter::new(FilterKind::Zstd { level: 3 }, Datatype::UInt8)], 65536);
/// let ctx = TileContext::new(FormatVersion::new(22), 1).writer_chunk_size(4);
/// let tile = filter_tile(&p, b"abcdefghij", &ctx).unwrap(); // "abcd", "efgh", "ij"
/// let (mut first, mut parts) = ([0u8; 4], std::sync::Mutex::new(Vec::new()));
/// let mut targets = vec![ChunkTarget::Into(&mut first[..]), ChunkTarget::Skip, ChunkTarget::Scratch(8)].into_iter();
/// unfilter_tile_chunks(&p, &tile, &ctx, |_| targets.next().unwrap(), |at: u64, bytes: &[u8]| {
///     parts.lock().unwrap().push((at, bytes.to_vec()));
/// }).unwrap();
/// assert_eq!(&first, b"abcd");
/// assert_eq!(parts.into_inner().unwrap(), vec![(8, b"ij".to_vec())]);
/// ```
pub fn unfilter_tile_chunks<'a, D: Send>(
    p: &FilterPipeline,
    tile: &[u8],
    ctx: &TileContext,
    mut targets: impl FnMut(std::ops::Range<u64>) -> ChunkTarget<'a, D>,
    place: impl Fn(D, &[u8]) + Sync,
) -> Result<(), FilterError> {
    let chunks = parse_chunks(tile, ctx)?;
    check_size(chunks.original_size(), ctx.expected_size)?;
    let mut at = 0u64;
    let mut work = Vec::with_capacity(chunks.chunks.len());
    for (i, c) in chunks.chunks.iter().enumerate() {
        let bytes = at..at + c.original_len as u64;
        at = bytes.end;
        match targets(bytes) {
            ChunkTarget::Skip => {}
            target => work.push((i, c, target)),
        }
    }
    let decode = |(i, c, target): (usize, &tessera_tile::tile::Chunk, ChunkTarget<'a, D>)| {
        let len = c.original_len as usize;
        let run = |dst: &mut [u8]| unfilter_chunk_into(p, tile, i, c, ctx, dst);
        match target {
            ChunkTarget::Skip => Ok(()),
            ChunkTarget::Into(dst) => {
                if dst.len() != len {
                    return Err(FilterError::Size {
                        chunk: i,
                        message: format!("chunk has {len} bytes, its place {}", dst.len()),
                    });
                }
                run(dst)
            }
            ChunkTarget::Scratch(d) => {
                let mut own = Vec::new();
                SCRATCH.with(|kept| {
                    // The thread's buffer, unless the chunk is large or the
                    // buffer is in use (a nested call on this thread).
                    let mut kept = kept.try_borrow_mut().ok().filter(|_| len <= SCRATCH_KEEP);
                    let buf = kept.as_deref_mut().unwrap_or(&mut own);
                    // Old bytes stay (the chunk is decoded over them).
                    if buf.len() < len {
                        buf.resize(len, 0);
                    }
                    run(&mut buf[..len])?;
                    place(d, &buf[..len]);
                    Ok(())
                })
            }
        }
    };
    if ctx.parallel && work.len() > 1 {
        work.into_par_iter().try_for_each(decode)
    } else {
        work.into_iter().try_for_each(decode)
    }
}

/// Reverses the pipeline on a var-sized string data tile whose cell offsets
/// are folded into the data (see [`FilterPipeline::offsets_in_data`]).
/// Returns the cell bytes and the cell offsets.
pub fn unfilter_var_string_tile(
    p: &FilterPipeline,
    tile: &[u8],
    ctx: &TileContext,
) -> Result<(Vec<u8>, Vec<u64>), FilterError> {
    let first = p
        .filters
        .first()
        .ok_or_else(|| FilterError::Unsupported("empty pipeline has no string encoding".into()))?;
    let chunks = parse_chunks(tile, ctx)?;
    let mut data = Vec::new();
    let mut offsets = Vec::new();
    for (i, c) in chunks.chunks.iter().enumerate() {
        let cx = ctx.chunk(i, c.original_len);
        let (m, d) = reverse_chunk(p, 1, &tile[c.metadata.clone()], &tile[c.data.clone()], &cx)?;
        let mut r = Reader::new(&m, "string encoding metadata");
        r.u32("number of metadata parts")?;
        r.u32("number of data parts")?;
        let out_len = r.u32("uncompressed length")? as usize;
        let in_len = r.u32("compressed length")? as u64;
        r.u32("offsets length")?;
        let input = Reader::new(&d, "string encoding data").bytes("encoded strings", in_len)?;
        if out_len as u64 != c.original_len as u64 {
            return Err(FilterError::Size {
                chunk: i,
                message: format!(
                    "string encoding says {out_len} bytes, framing says {}",
                    c.original_len
                ),
            });
        }
        let (bytes, offs) = match &first.kind {
            FilterKind::Rle { .. } => {
                let rw = r.u8("run length width")?;
                let lw = r.u8("string length width")?;
                rle::decompress_strings(input, rw, lw, out_len)
            }
            FilterKind::Dictionary { .. } => {
                let iw = r.u8("id width")?;
                let lw = r.u8("string length width")?;
                let size = r.u32("dictionary size")?;
                let dict = r.bytes("dictionary", size as u64)?;
                dictionary::decompress(input, iw, lw, dict, out_len)
            }
            _ => {
                return Err(FilterError::Unsupported(
                    "offsets are folded into the data only under RLE or dictionary encoding".into(),
                ))
            }
        }
        .map_err(|e| FilterError::codec(first.filter_type().name(), i, e))?;
        let base = data.len() as u64;
        offsets.extend(offs.into_iter().map(|o| o + base));
        data.extend_from_slice(&bytes);
    }
    Ok((data, offsets))
}

/// Runs the pipeline forward, producing the tile bytes libtiledb stores:
/// `num chunks` then the chunks, cut as libtiledb's writer cuts them: at
/// [`TileContext::writer_chunk_size`] floored to whole cells, or not at all
/// when the pipeline's max chunk size is 0 or it holds WebP (which encodes
/// whole images).
pub fn filter_tile(
    p: &FilterPipeline,
    cells: &[u8],
    ctx: &TileContext,
) -> Result<Vec<u8>, FilterError> {
    let len = cells.len() as u64;
    let mut bounds = vec![0u64];
    if chunked(p) && len > 0 {
        let size = ctx.forward_chunk_size(len);
        bounds.extend((1..len.div_ceil(size)).map(|i| i * size));
    }
    run_forward(p, cells, &bounds, ctx)
}

/// Runs the pipeline forward on the values of a var-sized tile, cutting
/// chunks at cell boundaries as libtiledb does: a chunk closes once it
/// passes the chunk size, taking the cell that crosses it when the chunk is
/// at most half full or stays under one and a half chunk sizes; a cell
/// larger than a chunk gets a chunk of its own. `offsets` are the cells'
/// start offsets. (For strings under RLE or dictionary encoding use
/// [`filter_var_string_tile`].)
pub fn filter_var_tile(
    p: &FilterPipeline,
    data: &[u8],
    offsets: &[u64],
    ctx: &TileContext,
) -> Result<Vec<u8>, FilterError> {
    let len = data.len() as u64;
    let mut bounds = vec![0u64];
    if chunked(p) {
        let size = ctx.forward_chunk_size(len);
        if len != size {
            let (min, max) = (size / 2, size + size / 2);
            let mut current = 0u64;
            for (c, &start) in offsets.iter().enumerate() {
                let end = offsets.get(c + 1).copied().unwrap_or(len);
                if start > end || end > len {
                    return Err(FilterError::Unsupported(format!(
                        "offset {start} of cell {c} is out of order or out of range"
                    )));
                }
                let cell = end - start;
                let grown = current + cell;
                if grown <= size {
                    current = grown;
                } else if current <= min || grown <= max {
                    bounds.push(end);
                    current = 0;
                } else {
                    bounds.push(start);
                    current = cell;
                    if cell > size {
                        if c + 1 != offsets.len() {
                            bounds.push(end);
                        }
                        current = 0;
                    }
                }
            }
        }
    }
    run_forward(p, data, &bounds, ctx)
}

/// Whether libtiledb's writer chunks tiles of this pipeline at all.
fn chunked(p: &FilterPipeline) -> bool {
    p.max_chunk_size != 0 && !p.has(FilterType::Webp)
}

/// Filters `cells` as chunks starting at `bounds` (the first is 0; the last
/// chunk runs to the end, and may be empty, as libtiledb's may).
fn run_forward(
    p: &FilterPipeline,
    cells: &[u8],
    bounds: &[u64],
    ctx: &TileContext,
) -> Result<Vec<u8>, FilterError> {
    let ends = bounds[1..].iter().copied().chain([cells.len() as u64]);
    let pieces: Vec<&[u8]> = bounds
        .iter()
        .zip(ends)
        .map(|(&a, b)| &cells[a as usize..b as usize])
        .collect();
    let mut out = (pieces.len() as u64).to_le_bytes().to_vec();
    for (i, piece) in pieces.iter().enumerate() {
        let cx = ctx.chunk(i, piece.len() as u32);
        let mut m = Vec::new();
        let mut d = piece.to_vec();
        for f in &p.filters {
            (m, d) = f.forward(&m, &d, &cx)?;
        }
        let m = m.concat();
        out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
        out.extend_from_slice(&(d.len() as u32).to_le_bytes());
        out.extend_from_slice(&(m.len() as u32).to_le_bytes());
        out.extend_from_slice(&m);
        out.extend_from_slice(&d);
    }
    Ok(out)
}

/// Runs the pipeline forward on var-sized strings whose offsets are folded
/// into the data tile (the first filter is RLE or dictionary encoding): one
/// chunk, as libtiledb writes it. `offsets` are the cell start offsets.
pub fn filter_var_string_tile(
    p: &FilterPipeline,
    data: &[u8],
    offsets: &[u64],
    ctx: &TileContext,
) -> Result<Vec<u8>, FilterError> {
    let first = p
        .filters
        .first()
        .ok_or_else(|| FilterError::Unsupported("empty pipeline has no string encoding".into()))?;
    let mut strings = Vec::with_capacity(offsets.len());
    for (i, &o) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).copied().unwrap_or(data.len() as u64);
        if o > end || end > data.len() as u64 {
            return Err(FilterError::Unsupported(format!(
                "offset {o} of cell {i} is out of order or out of range"
            )));
        }
        strings.push(&data[o as usize..end as usize]);
    }
    let (encoded, mut extra) = match &first.kind {
        FilterKind::Rle { .. } => {
            let (e, rw, lw) = rle::compress_strings(&strings);
            (e, vec![rw, lw])
        }
        FilterKind::Dictionary { .. } => {
            let (e, iw, lw, dict) = dictionary::compress(&strings);
            let mut x = vec![iw, lw];
            x.extend_from_slice(&(dict.len() as u32).to_le_bytes());
            x.extend_from_slice(&dict);
            (e, x)
        }
        _ => {
            return Err(FilterError::Unsupported(
                "offsets are folded into the data only under RLE or dictionary encoding".into(),
            ))
        }
    };
    let mut m = Vec::new();
    for v in [
        0u32,
        1,
        data.len() as u32,
        encoded.len() as u32,
        (offsets.len() * 8) as u32,
    ] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    m.append(&mut extra);
    let cx = ctx.chunk(0, data.len() as u32);
    let (mut m, mut d) = (vec![m], encoded);
    for f in &p.filters[1..] {
        (m, d) = f.forward(&m, &d, &cx)?;
    }
    let m = m.concat();
    let mut out = 1u64.to_le_bytes().to_vec();
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&(d.len() as u32).to_le_bytes());
    out.extend_from_slice(&(m.len() as u32).to_le_bytes());
    out.extend_from_slice(&m);
    out.extend_from_slice(&d);
    Ok(out)
}
