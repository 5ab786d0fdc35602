//! Run-length encoding (`format_spec/tile.md#compression-filters`).
//!
//! Numeric form: runs of `(value: cell_size bytes, run length: u16 big-endian)`,
//! runs at most 65535 long. String form (var-sized ASCII from version 12,
//! UTF-8 from 17): runs of `(run length, string length, string)` with the two
//! lengths big-endian integers whose widths the chunk metadata gives; the
//! cell offsets are rebuilt from it.

/// Decodes numeric runs into `out`; returns the bytes written.
pub(crate) fn decompress(input: &[u8], value_size: u64, out: &mut [u8]) -> Result<usize, String> {
    let vs = value_size as usize;
    if vs == 0 {
        return Err("cell size 0".into());
    }
    let run = vs
        .checked_add(2)
        .ok_or_else(|| format!("cell size {value_size} is too large"))?;
    if !input.len().is_multiple_of(run) {
        return Err(format!(
            "{} bytes is not a whole number of {run}-byte runs",
            input.len()
        ));
    }
    let mut o = 0usize;
    for r in input.chunks_exact(run) {
        let len = u16::from_be_bytes([r[vs], r[vs + 1]]) as usize;
        let end = len
            .checked_mul(vs)
            .and_then(|n| n.checked_add(o))
            .filter(|&e| e <= out.len());
        let Some(end) = end else {
            return Err(format!("runs expand past the expected {} bytes", out.len()));
        };
        if vs == 1 {
            out[o..end].fill(r[0]);
        } else {
            for dst in out[o..end].chunks_exact_mut(vs) {
                dst.copy_from_slice(&r[..vs]);
            }
        }
        o = end;
    }
    Ok(o)
}

/// Encodes values of `value_size` bytes as runs.
pub(crate) fn compress(input: &[u8], value_size: u64) -> Result<Vec<u8>, String> {
    let vs = value_size as usize;
    if vs == 0 || !input.len().is_multiple_of(vs) {
        return Err(format!(
            "{} bytes is not a whole number of {vs}-byte values",
            input.len()
        ));
    }
    let mut out = Vec::new();
    let mut values = input.chunks_exact(vs);
    let Some(mut prev) = values.next() else {
        return Ok(out);
    };
    let mut len: u16 = 1;
    for v in values {
        if v == prev && len < u16::MAX {
            len += 1;
        } else {
            out.extend_from_slice(prev);
            out.extend_from_slice(&len.to_be_bytes());
            prev = v;
            len = 1;
        }
    }
    out.extend_from_slice(prev);
    out.extend_from_slice(&len.to_be_bytes());
    Ok(out)
}

pub(crate) fn read_be(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64)
}

pub(crate) fn write_be(v: u64, width: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&v.to_be_bytes()[8 - width..]);
}

/// Smallest of 1, 2, 4, 8 bytes that holds `v`.
pub(crate) fn byte_width(v: u64) -> u8 {
    if v <= u8::MAX as u64 {
        1
    } else if v <= u16::MAX as u64 {
        2
    } else if v <= u32::MAX as u64 {
        4
    } else {
        8
    }
}

fn width(w: u8) -> Result<usize, String> {
    match w {
        1 | 2 | 4 | 8 => Ok(w as usize),
        _ => Err(format!("invalid integer width {w}")),
    }
}

/// Decodes string runs into `out` (exactly `out_len` bytes) and the offsets of each cell.
pub(crate) fn decompress_strings(
    input: &[u8],
    run_w: u8,
    len_w: u8,
    out_len: usize,
) -> Result<(Vec<u8>, Vec<u64>), String> {
    let (rw, lw) = (width(run_w)?, width(len_w)?);
    let mut out = Vec::with_capacity(out_len);
    let mut offsets = Vec::new();
    let mut i = 0usize;
    while i < input.len() {
        if i + rw + lw > input.len() {
            return Err("truncated run header".into());
        }
        let run = read_be(&input[i..i + rw]);
        let slen = read_be(&input[i + rw..i + rw + lw]) as usize;
        i += rw + lw;
        if slen > input.len() - i {
            return Err("truncated string".into());
        }
        let s = &input[i..i + slen];
        i += slen;
        if run.saturating_mul(slen as u64) > (out_len - out.len()) as u64
            || (slen == 0 && run > out_len as u64 + 1_000_000)
        {
            return Err(format!("runs expand past the expected {out_len} bytes"));
        }
        for _ in 0..run {
            offsets.push(out.len() as u64);
            out.extend_from_slice(s);
        }
    }
    if out.len() != out_len {
        return Err(format!("decoded {} bytes, expected {out_len}", out.len()));
    }
    Ok((out, offsets))
}

/// Encodes strings as runs; returns the runs and the two widths used.
pub(crate) fn compress_strings(strings: &[&[u8]]) -> (Vec<u8>, u8, u8) {
    let mut runs: Vec<(&[u8], u64)> = Vec::new();
    for s in strings {
        match runs.last_mut() {
            Some((p, n)) if p == s => *n += 1,
            _ => runs.push((s, 1)),
        }
    }
    let max_run = runs.iter().map(|r| r.1).max().unwrap_or(1);
    let max_len = strings.iter().map(|s| s.len() as u64).max().unwrap_or(0);
    let (rw, lw) = (byte_width(max_run), byte_width(max_len));
    let mut out = Vec::new();
    for (s, n) in runs {
        write_be(n, rw as usize, &mut out);
        write_be(s.len() as u64, lw as usize, &mut out);
        out.extend_from_slice(s);
    }
    (out, rw, lw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_round_trip() {
        let v: Vec<u8> = [1u32, 1, 1, 2, 3, 3]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let c = compress(&v, 4).unwrap();
        assert_eq!(c.len(), 3 * 6);
        let mut out = vec![0; v.len()];
        assert_eq!(decompress(&c, 4, &mut out).unwrap(), v.len());
        assert_eq!(out, v);
    }

    #[test]
    fn strings_round_trip() {
        let s: Vec<&[u8]> = vec![b"a", b"a", b"", b"bcd", b"bcd"];
        let (c, rw, lw) = compress_strings(&s);
        let (data, offs) = decompress_strings(&c, rw, lw, 8).unwrap();
        assert_eq!(data, b"aabcdbcd");
        assert_eq!(offs, vec![0, 1, 2, 2, 5]);
    }
}
