//! Reversing a filter pipeline on one tile: [`TileDecoder`] parses the
//! tile's chunk framing once, then decodes it whole, into a buffer, only
//! the chunks a reader needs, chunk by chunk to their places, or (strings
//! whose offsets the encoding folds into the data) as values and offsets.

use crate::chunk_metadata::{string_encoding, DataParts, StringCodes};
use crate::filters::{dictionary, rle, ChunkCx, FilterKind};
use crate::pipeline::{FilterPipeline, TileContext};
use crate::reuse::Reuse;
use crate::FilterError;
use rayon::prelude::*;
use tessera_tile::parse::parse;
use tessera_tile::tile::{chunk_list, Chunk, ChunkList};

/// Which of a tile's chunks a reader needs, given each one's byte range in
/// the unfiltered tile.
pub type ChunkFilter<'f> = dyn Fn(std::ops::Range<u64>) -> bool + Sync + 'f;

/// One filtered tile, its chunk framing parsed, ready to decode.
///
/// ```
/// use tessera_filters::{Filter, FilterKind, FilterPipeline, TileContext, TileDecoder, TileEncoder};
/// use tessera_tile::{Datatype, FormatVersion};
///
/// let p = FilterPipeline::new(vec![Filter::new(FilterKind::Zstd { level: 3 }, Datatype::UInt8)], 65536);
/// let ctx = TileContext::new(FormatVersion::new(22), 1).writer_chunk_size(4);
/// let tile = TileEncoder::new(&p, &ctx).encode(b"abcdefgh").unwrap(); // chunks "abcd", "efgh"
/// let decoder = TileDecoder::new(&p, &tile, &ctx).unwrap();
/// assert_eq!(decoder.unfiltered_len(), 8);
/// assert_eq!(decoder.decode().unwrap(), b"abcdefgh");
/// // Straight into a buffer of the tile's size:
/// let mut out = [0u8; 8];
/// decoder.decode_into(&mut out).unwrap();
/// assert_eq!(&out, b"abcdefgh");
/// assert!(decoder.decode_into(&mut [0u8; 9]).is_err());
/// // Only the chunks a reader needs; the others keep what they held:
/// let mut out = *b"........";
/// decoder.decode_where(&mut out, &|r| r.start >= 4).unwrap();
/// assert_eq!(&out, b"....efgh");
/// ```
pub struct TileDecoder<'t> {
    pipeline: &'t FilterPipeline,
    ctx: &'t TileContext,
    tile: &'t [u8],
    chunks: ChunkList,
}

impl<'t> TileDecoder<'t> {
    /// Parses the chunk framing of `tile`, filtered with `pipeline`. The
    /// chunks' lengths come off disk: their total is checked against
    /// [`TileContext::max_tile_size`] before anything is allocated.
    pub fn new(
        pipeline: &'t FilterPipeline,
        tile: &'t [u8],
        ctx: &'t TileContext,
    ) -> Result<TileDecoder<'t>, FilterError> {
        Ok(TileDecoder {
            pipeline,
            ctx,
            tile,
            chunks: parse_chunks(tile, ctx)?,
        })
    }

    /// The tile's unfiltered size, as its chunks claim it.
    pub fn unfiltered_len(&self) -> u64 {
        self.chunks.original_size()
    }

    /// Decodes every chunk, returning the cell bytes.
    pub fn decode(&self) -> Result<Vec<u8>, FilterError> {
        let total = self.unfiltered_len();
        check_size(total, self.ctx.expected_size)?;
        let mut out = vec![0u8; total as usize];
        self.chunks_where(&mut out, None)?;
        Ok(out)
    }

    /// Decodes every chunk straight into `out`, which must have the tile's
    /// unfiltered size: a reader places tiles in its result without a
    /// buffer per tile.
    pub fn decode_into(&self, out: &mut [u8]) -> Result<(), FilterError> {
        self.decode_checked(out, None)
    }

    /// [`decode_into`](Self::decode_into) for only the chunks `wanted`
    /// asks for; the bytes of the other chunks in `out` are left as they
    /// were (and their checksums unchecked). A reader that needs a few
    /// cells of a tile skips decoding the rest, as libtiledb's sparse
    /// readers do.
    pub fn decode_where(
        &self,
        out: &mut [u8],
        wanted: &ChunkFilter<'_>,
    ) -> Result<(), FilterError> {
        self.decode_checked(out, Some(wanted))
    }

    fn decode_checked(
        &self,
        out: &mut [u8],
        wanted: Option<&ChunkFilter<'_>>,
    ) -> Result<(), FilterError> {
        let total = self.unfiltered_len();
        check_size(total, self.ctx.expected_size)?;
        check_size(total, Some(out.len() as u64))?;
        self.chunks_where(out, wanted)
    }

    /// Decodes the chunks one by one, without a buffer for the whole
    /// unfiltered tile: a reader that places a tile's cells in several
    /// parts of its result decodes each chunk into a small buffer the
    /// thread reuses (in cache, and no fresh memory to fault in), and
    /// copies the parts out from there.
    ///
    /// `targets` is called once per chunk, in order, with the chunk's byte
    /// range in the unfiltered tile, and says where its bytes go
    /// ([`ChunkTarget`]). `place` receives each [`ChunkTarget::Scratch`]
    /// value with the chunk's bytes. Chunks are decoded in parallel when
    /// the context allows.
    ///
    /// ```
    /// use tessera_filters::{ChunkTarget, Filter, FilterKind, FilterPipeline, TileContext, TileDecoder, TileEncoder};
    /// use tessera_tile::{Datatype, FormatVersion};
    ///
    /// let p = FilterPipeline::new(vec![Filter::new(FilterKind::Zstd { level: 3 }, Datatype::UInt8)], 65536);
    /// let ctx = TileContext::new(FormatVersion::new(22), 1).writer_chunk_size(4);
    /// let tile = TileEncoder::new(&p, &ctx).encode(b"abcdefghij").unwrap(); // "abcd", "efgh", "ij"
    /// let (mut first, mut parts) = ([0u8; 4], std::sync::Mutex::new(Vec::new()));
    /// let mut targets = vec![ChunkTarget::Into(&mut first[..]), ChunkTarget::Skip, ChunkTarget::Scratch(8)].into_iter();
    /// TileDecoder::new(&p, &tile, &ctx).unwrap().decode_chunks(|_| targets.next().unwrap(), |at: u64, bytes: &[u8]| {
    ///     parts.lock().unwrap().push((at, bytes.to_vec()));
    /// }).unwrap();
    /// assert_eq!(&first, b"abcd");
    /// assert_eq!(parts.into_inner().unwrap(), vec![(8, b"ij".to_vec())]);
    /// ```
    pub fn decode_chunks<'a, D: Send>(
        &self,
        mut targets: impl FnMut(std::ops::Range<u64>) -> ChunkTarget<'a, D>,
        place: impl Fn(D, &[u8]) + Sync,
    ) -> Result<(), FilterError> {
        let (ctx, chunks) = (self.ctx, &self.chunks);
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
        let decode = |(i, c, target): (usize, &Chunk, ChunkTarget<'a, D>)| {
            let len = c.original_len as usize;
            let run = |dst: &mut [u8]| self.chunk_into(i, c, dst);
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
                // A scratch buffer the caller's reuse keeps (old bytes stay:
                // the chunk is decoded over them).
                ChunkTarget::Scratch(d) => Reuse::scratch(ctx.reuse.as_deref(), len, |buf| {
                    run(buf)?;
                    place(d, buf);
                    Ok(())
                }),
            }
        };
        if ctx.parallel && work.len() > 1 {
            work.into_par_iter().try_for_each(decode)
        } else {
            work.into_iter().try_for_each(decode)
        }
    }

    /// Decodes a var-sized string data tile whose cell offsets are folded
    /// into the data (see [`FilterPipeline::offsets_in_data`]), returning
    /// the cell bytes and the cell offsets.
    pub fn decode_strings(&self) -> Result<(Vec<u8>, Vec<u64>), FilterError> {
        let (p, tile, ctx, chunks) = (self.pipeline, self.tile, self.ctx, &self.chunks);
        let first = p.filters.first().ok_or_else(|| {
            FilterError::Unsupported("empty pipeline has no string encoding".into())
        })?;
        let mut data = Vec::new();
        let mut offsets = Vec::new();
        for (i, c) in chunks.chunks.iter().enumerate() {
            let cx = ctx.chunk(i, c.original_len);
            let (m, d) =
                reverse_chunk(p, 1, &tile[c.metadata.clone()], &tile[c.data.clone()], &cx)?;
            let dictionary =
                match first.kind {
                    FilterKind::Rle { .. } => false,
                    FilterKind::Dictionary { .. } => true,
                    _ => return Err(FilterError::Unsupported(
                        "offsets are folded into the data only under RLE or dictionary encoding"
                            .into(),
                    )),
                };
            let structure = "string encoding metadata";
            let (header, _) = parse(&m, structure, 0, string_encoding(dictionary))?;
            let out_len = header.decoded as usize;
            let input = DataParts::new(&d, "string encoding data")
                .take("encoded strings", header.encoded.into())?;
            if out_len as u64 != c.original_len as u64 {
                return Err(FilterError::Size {
                    chunk: i,
                    message: format!(
                        "string encoding says {out_len} bytes, framing says {}",
                        c.original_len
                    ),
                });
            }
            let (bytes, offs) = match header.codes {
                StringCodes::Rle {
                    run_length_width,
                    string_length_width,
                } => rle::decompress_strings(input, run_length_width, string_length_width, out_len),
                StringCodes::Dictionary {
                    id_width,
                    string_length_width,
                    dictionary,
                } => dictionary::decompress(
                    input,
                    id_width,
                    string_length_width,
                    dictionary,
                    out_len,
                ),
            }
            .map_err(|e| FilterError::codec(first.filter_type().name(), i, e))?;
            let base = data.len() as u64;
            offsets.extend(offs.into_iter().map(|o| o + base));
            data.extend_from_slice(&bytes);
        }
        Ok((data, offsets))
    }

    /// Decodes chunk `i` (`c`) into `dst`, which has its original length.
    fn chunk_into(&self, i: usize, c: &Chunk, dst: &mut [u8]) -> Result<(), FilterError> {
        let (p, tile, ctx) = (self.pipeline, self.tile, self.ctx);
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

    /// Decodes the chunks `wanted` asks for (all, without) into `out`, in
    /// parallel where there are several and the tile is large.
    fn chunks_where(
        &self,
        out: &mut [u8],
        wanted: Option<&ChunkFilter<'_>>,
    ) -> Result<(), FilterError> {
        let chunks = &self.chunks;
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
        let work =
            |(i, (c, dst)): (usize, (&Chunk, &mut Option<&mut [u8]>))| -> Result<(), FilterError> {
                match dst {
                    Some(dst) => self.chunk_into(i, c, dst),
                    None => Ok(()),
                }
            };
        if self.ctx.parallel && chunks.chunks.len() > 1 && total > 256 * 1024 {
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
}

/// Where [`TileDecoder::decode_chunks`] puts one chunk's unfiltered bytes.
#[derive(Debug)]
pub enum ChunkTarget<'a, D> {
    /// Not needed: the chunk is not decoded (nor its checksum checked).
    Skip,
    /// The chunk's bytes go whole into this slice (the chunk's length).
    Into(&'a mut [u8]),
    /// The chunk is decoded into a scratch buffer (kept for the next by
    /// the context's [`Reuse`], where it has one) and handed to `place`
    /// with this.
    Scratch(D),
}

fn parse_chunks(tile: &[u8], ctx: &TileContext) -> Result<ChunkList, FilterError> {
    let (chunks, _) = parse(tile, "tile chunk list", 0, chunk_list)?;
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
