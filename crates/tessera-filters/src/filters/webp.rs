//! WebP (`format_spec/filters/webp.md`): each part of the chunk is a WebP
//! image of the tile (rows of RGB, BGR, RGBA or BGRA pixels). Metadata:
//! `num parts: u32`, then the encoded size of each part as `u32`. Decoded
//! and encoded with the pure-Rust `image-webp` crate. Its encoder is
//! lossless only: a pipeline asking for lossy WebP gets lossless images,
//! which every WebP decoder (libtiledb's libwebp included) reads; the bytes
//! differ from libwebp's, as any two WebP encoders' do.

use super::parts::check_alloc;
use super::ChunkCx;
use crate::chunk_metadata::{part_lengths, DataParts, PartLengths};
use crate::FilterError;
use tessera_tile::parse::parse;

/// Pixel depth and channel order of the filter's colour format.
fn layout(format: u8) -> Option<(usize, bool)> {
    match format {
        1 => Some((3, false)),
        2 => Some((3, true)),
        3 => Some((4, false)),
        4 => Some((4, true)),
        _ => None,
    }
}

/// Forward: the chunk (the whole tile: pipelines with WebP are not chunked)
/// is one image of `y_extent` rows of `x_extent` bytes (`x_extent / depth`
/// pixels), encoded as one part.
pub(crate) fn forward(
    format: u8,
    (y_extent, x_extent): (u16, u16),
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let err = |m: String| FilterError::codec("WEBP", cx.chunk, m);
    let (depth, bgr) =
        layout(format).ok_or_else(|| err(format!("unknown input format {format}")))?;
    let (h, row) = (y_extent as usize, x_extent as usize);
    if row % depth != 0 || h * row != data.len() || data.is_empty() {
        return Err(err(format!(
            "a {}-byte tile is not an image of {h} rows of {row} bytes ({depth} bytes a pixel)",
            data.len()
        )));
    }
    let mut pixels = data.to_vec();
    if bgr {
        for px in pixels.chunks_exact_mut(depth) {
            px.swap(0, 2);
        }
    }
    let color = if depth == 4 {
        image_webp::ColorType::Rgba8
    } else {
        image_webp::ColorType::Rgb8
    };
    let mut encoded = Vec::new();
    image_webp::WebPEncoder::new(&mut encoded)
        .encode(&pixels, (row / depth) as u32, h as u32, color)
        .map_err(|e| err(e.to_string()))?;
    let m = PartLengths(vec![encoded.len() as u32]);
    Ok((m.encode(), encoded))
}

/// Reverse: decode every part into pixels of the filter's colour format
/// (1 RGB, 2 BGR, 3 RGBA, 4 BGRA).
pub(crate) fn reverse(
    format: u8,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let err = |m: String| FilterError::codec("WEBP", cx.chunk, m);
    let (channels, bgr) =
        layout(format).ok_or_else(|| err(format!("unknown input format {format}")))?;
    let (sizes, used) = parse(meta, "webp filter metadata", 0, part_lengths)?;
    let mut d = DataParts::new(data, "webp filter data");
    let mut out = Vec::new();
    for size in sizes.0 {
        let part = d.take("encoded part", size.into())?;
        let mut dec = image_webp::WebPDecoder::new(std::io::Cursor::new(part))
            .map_err(|e| err(e.to_string()))?;
        let (w, h) = dec.dimensions();
        let alpha = dec.has_alpha();
        let mut buf = vec![
            0u8;
            check_alloc(
                dec.output_buffer_size()
                    .ok_or_else(|| err("image too large".into()))? as u64,
                cx,
                "decoded image"
            )?
        ];
        dec.read_image(&mut buf).map_err(|e| err(e.to_string()))?;
        let src = if alpha { 4 } else { 3 };
        out.reserve(w as usize * h as usize * channels);
        for px in buf.chunks_exact(src) {
            let (r, g, b) = (px[0], px[1], px[2]);
            let a = if alpha { px[3] } else { 255 };
            if bgr {
                out.extend_from_slice(&[b, g, r]);
            } else {
                out.extend_from_slice(&[r, g, b]);
            }
            if channels == 4 {
                out.push(a);
            }
        }
    }
    Ok((meta[used..].to_vec(), out))
}
