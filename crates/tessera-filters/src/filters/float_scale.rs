//! Float scaling (`format_spec/filters/float_scale.md`).
//!
//! Metadata: `num parts: u32` and a `u32` length per part. Each part holds
//! signed integers of `byte width` bytes, `round((x - offset) / scale)`;
//! decoding computes `scale * stored + offset` in double precision and
//! narrows to the field type.

use super::parts::{check_alloc, read_part_lengths, write_part_lengths};
use super::ChunkCx;
use crate::FilterError;
use tessera_tile::Datatype;

fn load_int(b: &[u8]) -> i64 {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    let sh = 64 - 8 * b.len() as u32;
    ((u64::from_le_bytes(x) << sh) as i64) >> sh
}

/// Reverse.
pub(crate) fn reverse(
    t: Datatype,
    scale: f64,
    offset: f64,
    width: u64,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    if !t.is_float() {
        return Ok((meta.to_vec(), data.to_vec()));
    }
    let (lens, rest) = read_part_lengths(meta, data.len(), "float scale filter metadata", cx)?;
    let w = width as usize;
    let fw = t.size() as usize;
    let mut out = Vec::with_capacity(check_alloc(
        (data.len() / w * fw) as u64,
        cx,
        "float scale output",
    )?);
    let mut o = 0;
    for l in lens {
        for v in data[o..o + l].chunks_exact(w) {
            let i = load_int(v);
            if fw == 4 {
                // float32: the stored integer becomes a float first, as in the reference.
                out.extend_from_slice(&((scale * (i as f32) as f64 + offset) as f32).to_le_bytes());
            } else {
                out.extend_from_slice(&(scale * i as f64 + offset).to_le_bytes());
            }
        }
        o += l;
    }
    Ok((rest.to_vec(), out))
}

/// Forward.
pub(crate) fn forward(
    t: Datatype,
    scale: f64,
    offset: f64,
    width: u64,
    data: &[u8],
    _cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    if !t.is_float() {
        return Ok((Vec::new(), data.to_vec()));
    }
    let fw = t.size() as usize;
    let w = width as usize;
    let mut out = Vec::with_capacity(data.len() / fw * w);
    for v in data.chunks_exact(fw) {
        let x = if fw == 4 {
            f32::from_le_bytes(v.try_into().expect("4")) as f64
        } else {
            f64::from_le_bytes(v.try_into().expect("8"))
        };
        let i = ((x - offset) / scale).round() as i64;
        out.extend_from_slice(&i.to_le_bytes()[..w]);
    }
    Ok((write_part_lengths(&[out.len()]), out))
}
