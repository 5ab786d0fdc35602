//! Delta (`format_spec/filters/delta.md`): `n: u64, in_0`, then `in_i - in_{i-1}`
//! as values of the input type.

use crate::chunk_metadata::{delta_header, DeltaHeader};
use tessera_tile::parse::parse;
use tessera_tile::{datatype::Physical, Datatype};

fn width(t: Datatype) -> Result<usize, String> {
    match t.physical() {
        Physical::Int(w) | Physical::UInt(w) => Ok(w as usize),
        Physical::Float(_) => Err(format!("delta does not support {t}")),
        Physical::Bytes => Ok(1),
    }
}

fn load(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(x)
}

/// Decodes into `out`; returns the bytes written.
pub(crate) fn decompress(t: Datatype, input: &[u8], out: &mut [u8]) -> Result<usize, String> {
    let w = width(t)?;
    let (DeltaHeader { values: n }, used) =
        parse(input, "delta header", 0, delta_header).map_err(|e| e.to_string())?;
    let body = &input[used..];
    if n.checked_mul(w as u64)
        .is_none_or(|b| b > out.len() as u64 || b > body.len() as u64)
    {
        return Err(format!(
            "{n} values do not fit the input or the expected {} bytes",
            out.len()
        ));
    }
    let n = n as usize;
    // Wrapping addition in 64 bits, truncated to the width, is what the
    // reference's int64 arithmetic followed by a cast does.
    let mut last = 0u64;
    for i in 0..n {
        let d = load(&body[i * w..(i + 1) * w]);
        last = if i == 0 { d } else { last.wrapping_add(d) };
        out[i * w..(i + 1) * w].copy_from_slice(&last.to_le_bytes()[..w]);
    }
    Ok(n * w)
}

/// Encodes.
pub(crate) fn compress(t: Datatype, input: &[u8]) -> Result<Vec<u8>, String> {
    let w = width(t)?;
    if !input.len().is_multiple_of(w) {
        return Err(format!(
            "{} bytes is not a whole number of {w}-byte values",
            input.len()
        ));
    }
    let n = input.len() / w;
    let mut out = Vec::with_capacity(8 + input.len());
    out.extend_from_slice(&DeltaHeader { values: n as u64 }.encode());
    let mut prev = 0u64;
    for (i, b) in input.chunks_exact(w).enumerate() {
        let v = load(b);
        let d = if i == 0 { v } else { v.wrapping_sub(prev) };
        out.extend_from_slice(&d.to_le_bytes()[..w]);
        prev = v;
    }
    Ok(out)
}
