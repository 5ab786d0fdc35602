//! Positive delta (`format_spec/tile.md#positive-delta-encoding-filter`).
//!
//! Metadata: `num windows: u32`, then per window `first value: T, window
//! length: u32`; each window stores the deltas from the previous value.
//! Integer types (byte-sized ones included) are encoded; datetimes and times
//! from version 20; everything else passes through.

use super::{integer_width, ChunkCx};
use crate::FilterError;
use tessera_tile::{Datatype, Reader};

fn width(t: Datatype, cx: &ChunkCx<'_>) -> Option<usize> {
    if t.is_blob() || t == Datatype::Bool {
        return Some(1);
    }
    integer_width(t, cx.version).map(|(w, _)| w as usize)
}

fn load(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(x)
}

/// Reverse.
pub(crate) fn reverse(
    t: Datatype,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let Some(w) = width(t, cx) else {
        return Ok((Vec::new(), data.to_vec()));
    };
    let mut m = Reader::new(meta, "positive delta filter metadata");
    let windows = m.u32("number of windows")?;
    m.check_count("number of windows", windows as u64, w as u64 + 4)?;
    let mut out = Vec::with_capacity(data.len());
    let mut d = Reader::new(data, "positive delta window data");
    for _ in 0..windows {
        let mut prev = load(m.bytes("window value delta offset", w as u64)?);
        let nbytes = m.u32("window length")? as u64;
        let src = d.bytes("window", nbytes)?;
        if !nbytes.is_multiple_of(w as u64) {
            out.extend_from_slice(src);
            continue;
        }
        for v in src.chunks_exact(w) {
            prev = prev.wrapping_add(load(v));
            out.extend_from_slice(&prev.to_le_bytes()[..w]);
        }
    }
    if !d.is_empty() {
        return Err(FilterError::Size {
            chunk: cx.chunk,
            message: format!("positive delta left {} bytes undecoded", d.remaining()),
        });
    }
    Ok((m.rest().to_vec(), out))
}

/// Forward; fails, as libtiledb does, when values decrease.
pub(crate) fn forward(
    t: Datatype,
    max_window: u32,
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let Some(w) = width(t, cx) else {
        return Ok((Vec::new(), data.to_vec()));
    };
    let signed = matches!(t.physical(), tessera_tile::datatype::Physical::Int(_));
    let per_window = ((max_window as usize / w).max(1)) * w;
    let whole = data.len() - data.len() % w;
    let mut head = Vec::new();
    let mut out = Vec::with_capacity(data.len());
    let mut windows = 0u32;
    let key = |b: &[u8]| -> i128 {
        let v = load(b);
        if signed && w < 8 {
            let sh = 64 - 8 * w as u32;
            (((v << sh) as i64) >> sh) as i128
        } else if signed {
            v as i64 as i128
        } else {
            v as i128
        }
    };
    for win in data[..whole].chunks(per_window) {
        let first = &win[..w];
        head.extend_from_slice(first);
        head.extend_from_slice(&(win.len() as u32).to_le_bytes());
        let mut prev = load(first);
        let mut prev_key = key(first);
        for v in win.chunks_exact(w) {
            if key(v) < prev_key {
                return Err(FilterError::codec(
                    "POSITIVE_DELTA",
                    cx.chunk,
                    "delta is not positive",
                ));
            }
            out.extend_from_slice(&load(v).wrapping_sub(prev).to_le_bytes()[..w]);
            prev = load(v);
            prev_key = key(v);
        }
        windows += 1;
    }
    if whole < data.len() {
        head.extend_from_slice(&[0u8; 8][..w]);
        head.extend_from_slice(&((data.len() - whole) as u32).to_le_bytes());
        out.extend_from_slice(&data[whole..]);
        windows += 1;
    }
    let mut m = (windows).to_le_bytes().to_vec();
    m.extend_from_slice(&head);
    Ok((m, out))
}
