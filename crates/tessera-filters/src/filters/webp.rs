//! WebP (`format_spec/filters/webp.md`): each part of the chunk is a WebP
//! image of the tile (rows of RGB, BGR, RGBA or BGRA pixels). Metadata:
//! `num parts: u32`, then the encoded size of each part as `u32`. Decoded
//! with the pure-Rust `image-webp` decoder; tessera does not encode WebP.

use super::parts::check_alloc;
use super::ChunkCx;
use crate::FilterError;
use tessera_tile::Reader;

/// Reverse: decode every part into pixels of the filter's colour format
/// (1 RGB, 2 BGR, 3 RGBA, 4 BGRA).
pub(crate) fn reverse(
    format: u8,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let err = |m: String| FilterError::codec("WEBP", cx.chunk, m);
    let (channels, bgr) = match format {
        1 => (3usize, false),
        2 => (3, true),
        3 => (4, false),
        4 => (4, true),
        f => return Err(err(format!("unknown input format {f}"))),
    };
    let mut m = Reader::new(meta, "webp filter metadata");
    let n = m.u32("number of parts")?;
    m.check_count("number of parts", n as u64, 4)?;
    let mut d = Reader::new(data, "webp filter data");
    let mut out = Vec::new();
    for _ in 0..n {
        let size = m.u32("encoded part size")? as u64;
        let part = d.bytes("encoded part", size)?;
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
    Ok((m.rest().to_vec(), out))
}
