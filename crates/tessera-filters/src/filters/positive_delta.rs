//! Positive delta (`format_spec/tile.md#positive-delta-encoding-filter`).
//!
//! Metadata: `num windows: u32`, then per window `first value: T, window
//! length: u32`; each window stores the deltas from the previous value.
//! Integer types (byte-sized ones included) are encoded; datetimes and times
//! from version 20; everything else passes through.

use super::{integer_width, ChunkCx};
use crate::chunk_metadata::{positive_delta, DataParts, DeltaWindow, PositiveDeltaMetadata};
use crate::FilterError;
use tessera_tile::parse::parse;
use tessera_tile::Datatype;

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
    let structure = "positive delta filter metadata";
    let (m, used) = parse(meta, structure, 0, positive_delta(w))?;
    let mut out = Vec::with_capacity(data.len());
    let mut d = DataParts::new(data, "positive delta window data");
    for win in &m.windows {
        let mut prev = win.first;
        let nbytes = u64::from(win.length);
        let src = d.take("window", nbytes)?;
        if !nbytes.is_multiple_of(w as u64) {
            out.extend_from_slice(src);
            continue;
        }
        for v in src.chunks_exact(w) {
            prev = prev.wrapping_add(load(v));
            out.extend_from_slice(&prev.to_le_bytes()[..w]);
        }
    }
    if !d.rest().is_empty() {
        return Err(FilterError::Size {
            chunk: cx.chunk,
            message: format!("positive delta left {} bytes undecoded", d.rest().len()),
        });
    }
    Ok((meta[used..].to_vec(), out))
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
    let mut windows = Vec::new();
    let mut out = Vec::with_capacity(data.len());
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
        windows.push(DeltaWindow {
            first: load(first),
            length: win.len() as u32,
        });
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
    }
    if whole < data.len() {
        windows.push(DeltaWindow {
            first: 0,
            length: (data.len() - whole) as u32,
        });
        out.extend_from_slice(&data[whole..]);
    }
    Ok((PositiveDeltaMetadata { windows }.encode(w), out))
}
