//! Compression filters: gzip, zstd, LZ4, bzip2, RLE, double delta and delta
//! (`format_spec/tile.md#compression-filters`).
//!
//! Metadata: `num metadata parts: u32, num data parts: u32`, then
//! `(original length: u32, compressed length: u32)` per part; the data holds
//! the compressed metadata parts, then the compressed data parts.

use super::{parts::check_alloc, ChunkCx, Filter, FilterKind};
use crate::chunk_metadata::{compression, CompressedPart, CompressionMetadata, DataParts};
use crate::reuse::Reuse;
use crate::FilterError;
use std::io::Read;
use tessera_tile::parse::parse;
use tessera_tile::Datatype;

fn name(f: &Filter) -> &'static str {
    f.filter_type().name()
}

fn codec_type(f: &Filter) -> Datatype {
    match &f.kind {
        FilterKind::DoubleDelta {
            reinterpret: Some(t),
            ..
        }
        | FilterKind::Delta {
            reinterpret: Some(t),
            ..
        } => *t,
        _ => f.input_type,
    }
}

/// Reverses a compression filter.
pub(crate) fn reverse(
    f: &Filter,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let (m, _) = parse(meta, "compression filter metadata", 0, compression)?;
    let size = |parts: &[CompressedPart]| parts.iter().map(|p| u64::from(p.original)).sum();
    let out_meta_len: u64 = size(&m.metadata_parts);
    let out_data_len: u64 = size(&m.data_parts);
    let mut out_meta = Vec::with_capacity(check_alloc(out_meta_len, cx, "decompressed metadata")?);
    let mut out_data = Vec::with_capacity(check_alloc(out_data_len, cx, "decompressed data")?);
    let mut d = DataParts::new(data, "compressed chunk data");
    let metadata_parts = m.metadata_parts.iter().map(|p| (p, true));
    for (p, is_metadata) in metadata_parts.chain(m.data_parts.iter().map(|p| (p, false))) {
        let input = d.take("compressed part", p.compressed.into())?;
        let out = if is_metadata {
            &mut out_meta
        } else {
            &mut out_data
        };
        let start = out.len();
        out.resize(start + p.original as usize, 0);
        decompress(f, input, &mut out[start..], cx)?;
    }
    Ok((out_meta, out_data))
}

/// Reverses a compression filter straight into `dst` when its output is
/// exactly the data parts (no metadata parts) and they fill `dst`: the last
/// reverse step of most pipelines, so the tile is written without a copy.
/// Returns `false`, having done nothing, when that does not apply.
pub(crate) fn reverse_into(
    f: &Filter,
    meta: &[u8],
    data: &[u8],
    dst: &mut [u8],
    cx: &ChunkCx<'_>,
) -> Result<bool, FilterError> {
    let (m, _) = parse(meta, "compression filter metadata", 0, compression)?;
    let data_len: u64 = m.data_parts.iter().map(|p| u64::from(p.original)).sum();
    if !m.metadata_parts.is_empty() || data_len != dst.len() as u64 {
        return Ok(false);
    }
    let mut d = DataParts::new(data, "compressed chunk data");
    let mut at = 0;
    for p in &m.data_parts {
        let input = d.take("compressed part", p.compressed.into())?;
        let orig = p.original as usize;
        decompress(f, input, &mut dst[at..at + orig], cx)?;
        at += orig;
    }
    Ok(true)
}

/// Decompresses `input` into exactly `out.len()` bytes.
fn decompress(
    f: &Filter,
    input: &[u8],
    out: &mut [u8],
    cx: &ChunkCx<'_>,
) -> Result<(), FilterError> {
    let n = name(f);
    let err = |m: String| FilterError::codec(n, cx.chunk, m);
    let expect = out.len();
    let got = match &f.kind {
        // libtiledb's GZip uses zlib's deflate (a zlib stream, not gzip framing).
        FilterKind::Gzip { .. } => Reuse::zlib_in(cx.reuse, |d| -> Result<usize, FilterError> {
            let status = d
                .decompress(input, out, flate2::FlushDecompress::Finish)
                .map_err(|e| err(e.to_string()))?;
            let got = d.total_out() as usize;
            match status {
                flate2::Status::StreamEnd if got == expect => Ok(expect),
                // Output full and the stream not ended: more bytes follow.
                _ if got == expect => Err(err(format!(
                    "stream holds more than the expected {expect} bytes"
                ))),
                _ => Err(err(format!(
                    "stream ends after {got} of the expected {expect} bytes"
                ))),
            }
        })?,
        // A decompression context reused: creating one per chunk costs as
        // much as decoding a 64 KiB chunk.
        FilterKind::Zstd { .. } => Reuse::zstd_in(cx.reuse, |d| d.decompress_to_buffer(input, out))
            .map_err(|e| err(e.to_string()))?,
        // A raw LZ4 block (no size prefix); its size is the part's.
        FilterKind::Lz4 { .. } => super::lz4_block::decompress(input, out).map_err(err)?,
        FilterKind::Bzip2 { .. } => {
            let mut dec = bzip2::read::BzDecoder::new(input);
            dec.read_exact(out).map_err(|e| err(e.to_string()))?;
            expect
        }
        FilterKind::Rle { .. } => super::rle::decompress(input, cx.cell_size, out).map_err(err)?,
        FilterKind::DoubleDelta { .. } => {
            super::double_delta::decompress(codec_type(f), input, out, cx.version).map_err(err)?
        }
        FilterKind::Delta { .. } => {
            super::delta::decompress(codec_type(f), input, out).map_err(err)?
        }
        _ => unreachable!("not a compression filter"),
    };
    if got != expect {
        return Err(err(format!("decompressed {got} bytes, expected {expect}")));
    }
    Ok(())
}

/// Runs a compression filter forward: each metadata part (one per earlier
/// filter that wrote metadata) and the data are compressed as separate parts.
pub(crate) fn forward(
    f: &Filter,
    meta: &[Vec<u8>],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let part = |bytes: &[u8], c: &[u8]| CompressedPart {
        original: bytes.len() as u32,
        compressed: c.len() as u32,
    };
    let mut metadata_parts = Vec::with_capacity(meta.len());
    let mut out_meta = Vec::new();
    for m in meta {
        let c = compress(f, m, cx)?;
        metadata_parts.push(part(m, &c));
        out_meta.extend_from_slice(&c);
    }
    let compressed = compress(f, data, cx)?;
    let m = CompressionMetadata {
        metadata_parts,
        data_parts: vec![part(data, &compressed)],
    };
    // The metadata parts come first; without any (the usual first filter)
    // the compressed data is the output as it is, not copied.
    let out_data = match out_meta.is_empty() {
        true => compressed,
        false => [out_meta, compressed].concat(),
    };
    Ok((m.encode(), out_data))
}

fn compress(f: &Filter, input: &[u8], cx: &ChunkCx<'_>) -> Result<Vec<u8>, FilterError> {
    use std::io::Write;
    let n = name(f);
    let err = |m: String| FilterError::codec(n, cx.chunk, m);
    Ok(match &f.kind {
        FilterKind::Gzip { level } => {
            let lvl = if (0..=9).contains(level) {
                *level as u32
            } else {
                6
            };
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(lvl));
            e.write_all(input).map_err(|e| err(e.to_string()))?;
            e.finish().map_err(|e| err(e.to_string()))?
        }
        // A compression context reused at its level: a new one per 64 KiB
        // chunk allocates and clears its tables each time.
        FilterKind::Zstd { level } => Reuse::zstd_out(cx.reuse, *level, |c| c.compress(input))
            .map_err(|e| err(e.to_string()))?,
        FilterKind::Lz4 { .. } => super::lz4_block::compress(input).map_err(err)?,
        FilterKind::Bzip2 { level } => {
            let lvl = (*level).clamp(1, 9) as u32;
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(lvl));
            e.write_all(input).map_err(|e| err(e.to_string()))?;
            e.finish().map_err(|e| err(e.to_string()))?
        }
        FilterKind::Rle { .. } => super::rle::compress(input, cx.cell_size).map_err(err)?,
        FilterKind::DoubleDelta { .. } => {
            super::double_delta::compress(codec_type(f), input, cx.writer).map_err(err)?
        }
        FilterKind::Delta { .. } => super::delta::compress(codec_type(f), input).map_err(err)?,
        _ => unreachable!("not a compression filter"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::LibtiledbRelease;
    use tessera_tile::FormatVersion;

    fn cx(reuse: Option<&Reuse>) -> ChunkCx<'_> {
        ChunkCx {
            version: FormatVersion::new(22),
            writer: LibtiledbRelease::LATEST,
            cell_size: 1,
            chunk: 3,
            max_alloc: 1 << 20,
            reuse,
        }
    }

    /// The zlib decoder a read reuses must check the stream's size both
    /// ways and start afresh after a failure.
    #[test]
    fn zlib_streams_must_hold_exactly_the_expected_bytes() {
        let reuse = Reuse::default();
        let cx = || cx(Some(&reuse));
        let gzip = Filter::new(FilterKind::Gzip { level: 6 }, Datatype::UInt8);
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let packed = compress(&gzip, &data, &cx()).unwrap();
        let mut out = vec![0u8; data.len()];
        decompress(&gzip, &packed, &mut out, &cx()).unwrap();
        assert_eq!(out, data);

        let mut short = vec![0u8; data.len() - 1];
        let e = decompress(&gzip, &packed, &mut short, &cx()).unwrap_err();
        assert!(
            e.to_string().contains("more than the expected 9999 bytes"),
            "{e}"
        );
        let mut long = vec![0u8; data.len() + 1];
        let e = decompress(&gzip, &packed, &mut long, &cx()).unwrap_err();
        assert!(
            e.to_string()
                .contains("ends after 10000 of the expected 10001"),
            "{e}"
        );
        let e = decompress(&gzip, &packed[..packed.len() / 2], &mut out, &cx()).unwrap_err();
        assert!(e.to_string().contains("of the expected 10000"), "{e}");
        assert!(decompress(&gzip, b"not zlib", &mut out, &cx()).is_err());

        // After the failures, the decoder kept works again.
        out.fill(0);
        decompress(&gzip, &packed, &mut out, &cx()).unwrap();
        assert_eq!(out, data);
        let mut empty = [];
        let nothing = compress(&gzip, &[], &cx()).unwrap();
        decompress(&gzip, &nothing, &mut empty, &cx()).unwrap();
    }
}
