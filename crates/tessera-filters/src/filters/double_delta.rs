//! Double delta (`format_spec/filters/double_delta.md`).
//!
//! `bitsize: u8, n: u64, in_0, in_1`, then per value a sign bit and `bitsize`
//! magnitude bits of `(in_i - in_{i-1}) - (in_{i-1} - in_{i-2})`, packed
//! most significant bit first into little-endian `u64` words. When the
//! deltas would need `8 * sizeof(T) - 1` bits or more the values are stored raw.

use crate::chunk_metadata::{double_delta_header, DoubleDeltaHeader};
use crate::gates::{self, LibtiledbRelease};
use tessera_tile::parse::parse;
use tessera_tile::{datatype::Physical, Datatype, FormatVersion};

/// (byte width, signed) of the integer type the codec works in.
fn int_type(t: Datatype) -> Result<(usize, bool), String> {
    if t.is_datetime() || t.is_time() {
        return Ok((8, true));
    }
    match t.physical() {
        Physical::Int(w) => Ok((w as usize, true)),
        Physical::UInt(w) => Ok((w as usize, false)),
        Physical::Float(_) => Err(format!("double delta does not support {t}")),
        // Strings, blobs and ANY are taken byte by byte.
        Physical::Bytes => Ok((1, false)),
    }
}

fn load(b: &[u8], signed: bool) -> i64 {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    let v = u64::from_le_bytes(x);
    if signed && b.len() < 8 {
        let shift = 64 - 8 * b.len() as u32;
        ((v << shift) as i64) >> shift
    } else {
        v as i64
    }
}

fn store(v: i64, w: usize, out: &mut [u8]) {
    out.copy_from_slice(&v.to_le_bytes()[..w]);
}

struct BitReader<'a> {
    words: std::slice::ChunksExact<'a, u8>,
    word: u64,
    left: u32,
}

impl BitReader<'_> {
    fn bit(&mut self) -> Result<u64, String> {
        if self.left == 0 {
            let w = self.words.next().ok_or("bit stream ends early")?;
            self.word = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            self.left = 64;
        }
        self.left -= 1;
        Ok((self.word >> self.left) & 1)
    }
    fn bits(&mut self, n: u32) -> Result<u64, String> {
        let mut v = 0u64;
        for _ in 0..n {
            v = (v << 1) | self.bit()?;
        }
        Ok(v)
    }
}

/// Decodes into `out`; returns the bytes written.
pub(crate) fn decompress(
    t: Datatype,
    input: &[u8],
    out: &mut [u8],
    _version: FormatVersion,
) -> Result<usize, String> {
    let (w, signed) = int_type(t)?;
    let (header, used) =
        parse(input, "double delta header", 0, double_delta_header).map_err(|e| e.to_string())?;
    let (bitsize, n) = (u32::from(header.bitsize), header.values);
    let body = &input[used..];
    if bitsize >= (w as u32) * 8 - 1 {
        if body.len() > out.len() {
            return Err(format!(
                "{} raw bytes do not fit the expected {}",
                body.len(),
                out.len()
            ));
        }
        out[..body.len()].copy_from_slice(body);
        return Ok(body.len());
    }
    if n.checked_mul(w as u64).is_none_or(|b| b > out.len() as u64) {
        return Err(format!(
            "{n} values do not fit the expected {} bytes",
            out.len()
        ));
    }
    let n = n as usize;
    let head = n.min(2) * w;
    if body.len() < head {
        return Err("first values truncated".into());
    }
    out[..head].copy_from_slice(&body[..head]);
    if n <= 2 {
        return Ok(head);
    }
    let rest = &body[head..];
    let mut br = BitReader {
        words: rest.chunks_exact(8),
        word: 0,
        left: 0,
    };
    let mut prev2 = load(&out[..w], signed);
    let mut prev1 = load(&out[w..2 * w], signed);
    for i in 2..n {
        let neg = br.bit()? == 1;
        let mag = br.bits(bitsize)? as i64;
        let dd = if neg { mag.wrapping_neg() } else { mag };
        let v = dd.wrapping_add(prev1.wrapping_mul(2)).wrapping_sub(prev2);
        store(v, w, &mut out[i * w..(i + 1) * w]);
        prev2 = prev1;
        prev1 = load(&out[i * w..(i + 1) * w], signed);
    }
    Ok(n * w)
}

/// Encodes as libtiledb `writer` does.
pub(crate) fn compress(
    t: Datatype,
    input: &[u8],
    writer: LibtiledbRelease,
) -> Result<Vec<u8>, String> {
    let first_delta_counts = writer >= gates::DOUBLE_DELTA_BITSIZE_COVERS_FIRST_DELTA;
    let (w, signed) = int_type(t)?;
    if !input.len().is_multiple_of(w) {
        return Err(format!(
            "{} bytes is not a whole number of {w}-byte values",
            input.len()
        ));
    }
    let vals: Vec<i64> = input.chunks_exact(w).map(|b| load(b, signed)).collect();
    let n = vals.len();
    let delta = |a: i64, b: i64| -> i128 {
        if signed {
            a as i128 - b as i128
        } else {
            a as u64 as i128 - b as u64 as i128
        }
    };
    let mut bitsize = 0u32;
    if n > 2 {
        let mut max = 0u128;
        let mut prev: Option<i128> = None;
        for i in 1..n {
            let cur = delta(vals[i], vals[i - 1]);
            if cur < i64::MIN as i128 || cur > i64::MAX as i128 {
                return Err("delta exceeds the range of int64".into());
            }
            max = match prev {
                Some(p) => max.max((cur - p).unsigned_abs()),
                None if first_delta_counts => cur.unsigned_abs(),
                None => 0,
            };
            prev = Some(cur);
        }
        loop {
            bitsize += 1;
            max >>= 1;
            if max == 0 {
                break;
            }
        }
    }
    let header = DoubleDeltaHeader {
        bitsize: bitsize as u8,
        values: n as u64,
    };
    let mut out = header.encode();
    if bitsize >= (w as u32) * 8 - 1 {
        out.extend_from_slice(input);
        return Ok(out);
    }
    out.extend_from_slice(&input[..n.min(2) * w]);
    if n <= 2 {
        return Ok(out);
    }
    let mut word = 0u64;
    let mut used = 0u32;
    let mut put = |bit: u64, out: &mut Vec<u8>| {
        word |= bit << (63 - used);
        used += 1;
        if used == 64 {
            out.extend_from_slice(&word.to_le_bytes());
            word = 0;
            used = 0;
        }
    };
    let mut prev_delta = vals[1].wrapping_sub(vals[0]);
    for i in 2..n {
        let cur = vals[i].wrapping_sub(vals[i - 1]);
        let dd = cur.wrapping_sub(prev_delta);
        put((dd < 0) as u64, &mut out);
        let mag = dd.unsigned_abs();
        for b in (0..bitsize).rev() {
            put((mag >> b) & 1, &mut out);
        }
        prev_delta = cur;
    }
    if used > 0 {
        out.extend_from_slice(&word.to_le_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for vals in [
            vec![5i64, 7, 9, 30, -4, -4, 100, 1 << 40],
            vec![1],
            vec![1, 2],
            vec![],
        ] {
            let b: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
            let c = compress(Datatype::Int64, &b, LibtiledbRelease::LATEST).unwrap();
            let mut out = vec![0; b.len()];
            assert_eq!(
                decompress(Datatype::Int64, &c, &mut out, FormatVersion::new(22)).unwrap(),
                b.len()
            );
            assert_eq!(out, b);
        }
    }

    #[test]
    fn bit_size_covers_the_first_delta_from_libtiledb_2_29() {
        // Deltas 3, 3, 3: no double delta needs a bit, the first delta two.
        let b: Vec<u8> = [1i32, 4, 7, 10]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let old = compress(Datatype::Int32, &b, LibtiledbRelease::new(2, 28)).unwrap();
        let new = compress(Datatype::Int32, &b, LibtiledbRelease::new(2, 29)).unwrap();
        assert_eq!((old[0], new[0]), (1, 2));
        for c in [old, new] {
            let mut out = vec![0; b.len()];
            decompress(Datatype::Int32, &c, &mut out, FormatVersion::new(22)).unwrap();
            assert_eq!(out, b);
        }
    }
}
