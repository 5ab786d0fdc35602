//! XOR (`format_spec/filters/xor.md`): each value is XORed with the previous
//! one, in integers of the field's width. Metadata: a parts table.

use super::parts::{read_part_lengths, write_part_lengths};
use super::ChunkCx;
use crate::FilterError;
use tessera_tile::Datatype;

fn load(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(x)
}

fn width(t: Datatype, cx: &ChunkCx<'_>) -> Result<usize, FilterError> {
    match t.size() {
        w @ (1 | 2 | 4 | 8) => Ok(w as usize),
        _ => Err(FilterError::codec(
            "XOR",
            cx.chunk,
            format!("datatype {t} has no integer width"),
        )),
    }
}

/// Reverse.
pub(crate) fn reverse(
    t: Datatype,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let w = width(t, cx)?;
    let (lens, rest) = read_part_lengths(meta, data.len(), "xor filter metadata", cx)?;
    let mut out = Vec::with_capacity(data.len());
    let mut o = 0;
    for l in lens {
        let part = &data[o..o + l];
        let mut last = 0u64;
        for (i, v) in part.chunks_exact(w).enumerate() {
            last = if i == 0 { load(v) } else { last ^ load(v) };
            out.extend_from_slice(&last.to_le_bytes()[..w]);
        }
        out.extend_from_slice(&part[part.len() - part.len() % w..]);
        o += l;
    }
    Ok((rest.to_vec(), out))
}

/// Forward.
pub(crate) fn forward(
    t: Datatype,
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let w = width(t, cx)?;
    let mut out = Vec::with_capacity(data.len());
    let mut prev = 0u64;
    for (i, v) in data.chunks_exact(w).enumerate() {
        let x = load(v);
        out.extend_from_slice(&(if i == 0 { x } else { x ^ prev }).to_le_bytes()[..w]);
        prev = x;
    }
    out.extend_from_slice(&data[data.len() - data.len() % w..]);
    Ok((write_part_lengths(&[data.len()]), out))
}
