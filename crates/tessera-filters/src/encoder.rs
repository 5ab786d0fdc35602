//! Running a filter pipeline forward on one tile: [`TileEncoder`] writes
//! the bytes libtiledb stores, chunks cut as libtiledb's writer cuts them.

use crate::chunk_metadata::{StringCodes, StringEncodingMetadata};
use crate::filters::{dictionary, rle, FilterKind, FilterType};
use crate::pipeline::{FilterPipeline, TileContext};
use crate::FilterError;
use rayon::prelude::*;

/// A filter pipeline run forward, as libtiledb's writer runs it.
///
/// ```
/// use tessera_filters::{Filter, FilterKind, FilterPipeline, TileContext, TileDecoder, TileEncoder};
/// use tessera_tile::{Datatype, FormatVersion};
///
/// let p = FilterPipeline::new(vec![Filter::new(FilterKind::Zstd { level: 3 }, Datatype::Int32)], 65536);
/// let ctx = TileContext::new(FormatVersion::new(22), 4);
/// let cells: Vec<u8> = (0..1000i32).flat_map(|v| v.to_le_bytes()).collect();
/// let tile = TileEncoder::new(&p, &ctx).encode(&cells).unwrap();
/// assert!(tile.len() < cells.len());
/// assert_eq!(TileDecoder::new(&p, &tile, &ctx).unwrap().decode().unwrap(), cells);
/// ```
pub struct TileEncoder<'t> {
    pipeline: &'t FilterPipeline,
    ctx: &'t TileContext,
}

impl<'t> TileEncoder<'t> {
    /// An encoder running `pipeline` with `ctx` (the format version, the
    /// cell size, the writer's chunk size and release).
    pub fn new(pipeline: &'t FilterPipeline, ctx: &'t TileContext) -> TileEncoder<'t> {
        TileEncoder { pipeline, ctx }
    }

    /// Runs the pipeline forward on fixed-sized cells, producing the tile bytes libtiledb stores:
    /// `num chunks` then the chunks, cut as libtiledb's writer cuts them: at
    /// [`TileContext::writer_chunk_size`] floored to whole cells, or not at all
    /// when the pipeline's max chunk size is 0 or it holds WebP (which encodes
    /// whole images).
    pub fn encode(&self, cells: &[u8]) -> Result<Vec<u8>, FilterError> {
        self.encode_parts(cells).map(TileBytes::into_vec)
    }

    /// [`encode`](Self::encode), the tile left in the pieces it is made
    /// in (each chunk's header, each chunk's data), to be written back to
    /// back without first being copied into one buffer.
    pub fn encode_parts(&self, cells: &[u8]) -> Result<TileBytes, FilterError> {
        let (p, ctx) = (self.pipeline, self.ctx);
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
    /// [`encode_strings`](Self::encode_strings).)
    pub fn encode_var(&self, data: &[u8], offsets: &[u64]) -> Result<Vec<u8>, FilterError> {
        self.encode_var_parts(data, offsets)
            .map(TileBytes::into_vec)
    }

    /// [`encode_var`](Self::encode_var), the tile left in pieces (see
    /// [`encode_parts`](Self::encode_parts)).
    pub fn encode_var_parts(&self, data: &[u8], offsets: &[u64]) -> Result<TileBytes, FilterError> {
        let (p, ctx) = (self.pipeline, self.ctx);
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

    /// Runs the pipeline forward on var-sized strings whose offsets are folded
    /// into the data tile (the first filter is RLE or dictionary encoding): one
    /// chunk, as libtiledb writes it. `offsets` are the cell start offsets.
    pub fn encode_strings(&self, data: &[u8], offsets: &[u64]) -> Result<Vec<u8>, FilterError> {
        let (p, ctx) = (self.pipeline, self.ctx);
        let first = p.filters.first().ok_or_else(|| {
            FilterError::Unsupported("empty pipeline has no string encoding".into())
        })?;
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
        let dict;
        let (encoded, codes) = match &first.kind {
            FilterKind::Rle { .. } => {
                let (e, run_length_width, string_length_width) = rle::compress_strings(&strings);
                let codes = StringCodes::Rle {
                    run_length_width,
                    string_length_width,
                };
                (e, codes)
            }
            FilterKind::Dictionary { .. } => {
                let (e, id_width, string_length_width, d) = dictionary::compress(&strings);
                dict = d;
                let codes = StringCodes::Dictionary {
                    id_width,
                    string_length_width,
                    dictionary: &dict,
                };
                (e, codes)
            }
            _ => {
                return Err(FilterError::Unsupported(
                    "offsets are folded into the data only under RLE or dictionary encoding".into(),
                ))
            }
        };
        let m = StringEncodingMetadata {
            metadata_parts: 0,
            data_parts: 1,
            decoded: data.len() as u32,
            encoded: encoded.len() as u32,
            offsets: (offsets.len() * 8) as u32,
            codes,
        }
        .encode();
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
) -> Result<TileBytes, FilterError> {
    let ends = bounds[1..].iter().copied().chain([cells.len() as u64]);
    let pieces: Vec<&[u8]> = bounds
        .iter()
        .zip(ends)
        .map(|(&a, b)| &cells[a as usize..b as usize])
        .collect();
    // Chunks are filtered in parallel, as libtiledb's writer does, then
    // laid out in order.
    let chunks: Vec<(u32, Vec<u8>, Vec<u8>)> = pieces
        .par_iter()
        .enumerate()
        .map(|(i, piece)| {
            let cx = ctx.chunk(i, piece.len() as u32);
            // The first filter reads the cells in place.
            let mut m = Vec::new();
            let mut d = std::borrow::Cow::Borrowed(*piece);
            for f in &p.filters {
                let (m2, d2) = f.forward(&m, &d, &cx)?;
                (m, d) = (m2, d2.into());
            }
            Ok((piece.len() as u32, m.concat(), d.into_owned()))
        })
        .collect::<Result<_, FilterError>>()?;
    // Each chunk's header and metadata in a piece of its own, before its
    // data as the filters left it.
    let mut out = TileBytes::default();
    let mut head = (pieces.len() as u64).to_le_bytes().to_vec();
    for (len, m, d) in chunks {
        head.extend_from_slice(&len.to_le_bytes());
        head.extend_from_slice(&(d.len() as u32).to_le_bytes());
        head.extend_from_slice(&(m.len() as u32).to_le_bytes());
        head.extend_from_slice(&m);
        out.push(std::mem::take(&mut head));
        out.push(d);
    }
    if !head.is_empty() {
        out.push(head);
    }
    Ok(out)
}

/// A filtered tile as it is stored, in pieces to be written back to back.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TileBytes {
    parts: Vec<Vec<u8>>,
    len: usize,
}

impl TileBytes {
    /// The tile's size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tile has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pieces, in order.
    pub fn parts(&self) -> &[Vec<u8>] {
        &self.parts
    }

    /// The tile in one buffer (a tile of one piece is not copied).
    pub fn into_vec(mut self) -> Vec<u8> {
        match self.parts.len() {
            1 => self.parts.pop().unwrap_or_default(),
            _ => self.parts.concat(),
        }
    }

    fn push(&mut self, part: Vec<u8>) {
        self.len += part.len();
        self.parts.push(part);
    }
}

impl From<Vec<u8>> for TileBytes {
    fn from(bytes: Vec<u8>) -> TileBytes {
        let mut t = TileBytes::default();
        t.push(bytes);
        t
    }
}

#[cfg(test)]
mod tests {
    use crate::{Filter, FilterKind, FilterPipeline, TileContext, TileDecoder, TileEncoder};
    use tessera_tile::{Datatype, FormatVersion};

    /// The pieces of a tile, back to back, are the tile: chunked, with a
    /// filter whose metadata the compressor compresses before its data,
    /// and fixed- and var-sized.
    #[test]
    fn a_tile_in_pieces_is_the_tile() {
        let zstd = Filter::new(FilterKind::Zstd { level: 3 }, Datatype::Int64);
        let reduce = Filter::new(
            FilterKind::BitWidthReduction { max_window: 256 },
            Datatype::Int64,
        );
        let cells: Vec<u8> = (0..5000i64).flat_map(|v| (v % 300).to_le_bytes()).collect();
        let ctx = TileContext::new(FormatVersion::new(22), 8).writer_chunk_size(8000);
        for filters in [vec![zstd.clone()], vec![reduce, zstd]] {
            let p = FilterPipeline::new(filters, 65536);
            let e = TileEncoder::new(&p, &ctx);
            let parts = e.encode_parts(&cells).unwrap();
            // Five chunks: a header and the data of each.
            assert_eq!(parts.parts().len(), 10);
            assert_eq!(
                parts.len(),
                parts.parts().iter().map(Vec::len).sum::<usize>()
            );
            let tile = parts.clone().into_vec();
            assert_eq!(tile, e.encode(&cells).unwrap());
            let back = TileDecoder::new(&p, &tile, &ctx).unwrap().decode().unwrap();
            assert_eq!(back, cells);
            let offsets: Vec<u64> = (0..5000).map(|i| i * 8).collect();
            let var = e.encode_var_parts(&cells, &offsets).unwrap();
            assert_eq!(var.into_vec(), e.encode_var(&cells, &offsets).unwrap());
        }
    }
}
