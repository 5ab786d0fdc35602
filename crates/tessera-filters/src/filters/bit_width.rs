//! Bit-width reduction (`format_spec/tile.md#bit-width-reduction-filter`).
//!
//! Metadata: `input length: u32, num windows: u32`, then per window
//! `offset: T, bit width: u8, window length: u32`. Each window stores its
//! values minus the offset in 8, 16, 32 or 64 bits (sign-extended for
//! signed types). INT8/UINT8, floats and strings pass through unchanged, as
//! do datetimes and times before version 20.

use super::parts::check_alloc;
use super::{integer_width, ChunkCx};
use crate::chunk_metadata::{bit_width, BitWidthMetadata, DataParts, ReducedWindow};
use crate::FilterError;
use tessera_tile::parse::parse;
use tessera_tile::Datatype;

fn load(b: &[u8], signed: bool) -> u64 {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    let v = u64::from_le_bytes(x);
    if signed && b.len() < 8 {
        let sh = 64 - 8 * b.len() as u32;
        (((v << sh) as i64) >> sh) as u64
    } else {
        v
    }
}

fn supported(t: Datatype, cx: &ChunkCx<'_>) -> Option<(usize, bool)> {
    match integer_width(t, cx.version) {
        Some((w, s)) if w >= 2 => Some((w as usize, s)),
        _ => None,
    }
}

/// Reverse.
pub(crate) fn reverse(
    t: Datatype,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let Some((w, signed)) = supported(t, cx) else {
        return Ok((Vec::new(), data.to_vec()));
    };
    let structure = "bit width reduction filter metadata";
    let (m, used) = parse(meta, structure, 0, bit_width(w))?;
    let orig_len = u64::from(m.input_length);
    let mut out = Vec::with_capacity(check_alloc(
        orig_len,
        cx,
        "bit width reduction input length",
    )?);
    let mut d = DataParts::new(data, "bit width reduction window data");
    for win in &m.windows {
        let nbytes = u64::from(win.length);
        if win.is_stored_whole(w) {
            out.extend_from_slice(d.take("window", nbytes)?);
            continue;
        }
        let offset = load(&win.offset.to_le_bytes()[..w], signed);
        let rw = win.bits as usize / 8;
        let count = nbytes / w as u64;
        let src = d.take("window", count * rw as u64)?;
        for v in src.chunks_exact(rw) {
            let x = load(v, signed).wrapping_add(offset);
            out.extend_from_slice(&x.to_le_bytes()[..w]);
        }
    }
    if out.len() as u64 != orig_len {
        return Err(FilterError::Size {
            chunk: cx.chunk,
            message: format!(
                "bit width reduction produced {} bytes, metadata says {orig_len}",
                out.len()
            ),
        });
    }
    Ok((meta[used..].to_vec(), out))
}

/// Forward.
pub(crate) fn forward(
    t: Datatype,
    max_window: u32,
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let Some((w, signed)) = supported(t, cx) else {
        return Ok((Vec::new(), data.to_vec()));
    };
    let per_window = ((max_window as usize / w).max(1)) * w;
    let whole = data.len() - data.len() % w;
    let mut windows = Vec::new();
    let mut out = Vec::new();
    let as_i128 = |b: &[u8]| -> i128 {
        if signed {
            load(b, true) as i64 as i128
        } else {
            load(b, false) as i128
        }
    };
    for win in data[..whole].chunks(per_window) {
        let vals: Vec<i128> = win.chunks_exact(w).map(as_i128).collect();
        let (min, max) = (
            vals.iter().copied().min().unwrap_or(0),
            vals.iter().copied().max().unwrap_or(0),
        );
        // libtiledb sizes `range + 1` as a value of the field's own
        // signedness: reduced values of signed fields are read back
        // sign-extended, so they must fit the signed type of that width.
        let range = (max - min) as u128 + 1;
        let bits = if signed {
            match range {
                0..=0x7f => 8,
                0x80..=0x7fff => 16,
                0x8000..=0x7fff_ffff => 32,
                _ => 64,
            }
        } else {
            match 128 - range.leading_zeros() {
                0..=8 => 8,
                9..=16 => 16,
                17..=32 => 32,
                _ => 64,
            }
        };
        let bits = bits.min(w * 8);
        windows.push(ReducedWindow {
            offset: min as u64,
            bits: bits as u8,
            length: win.len() as u32,
        });
        if bits == w * 8 {
            out.extend_from_slice(win);
        } else {
            for v in vals {
                out.extend_from_slice(&((v - min) as u64).to_le_bytes()[..bits / 8]);
            }
        }
    }
    if whole < data.len() {
        windows.push(ReducedWindow {
            offset: 0,
            bits: (w * 8) as u8,
            length: (data.len() - whole) as u32,
        });
        out.extend_from_slice(&data[whole..]);
    }
    let m = BitWidthMetadata {
        input_length: data.len() as u32,
        windows,
    };
    Ok((m.encode(w), out))
}
