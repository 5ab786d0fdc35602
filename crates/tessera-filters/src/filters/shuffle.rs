//! Byteshuffle and bitshuffle (`format_spec/tile.md#byteshuffle-filter`,
//! `#bitshuffle-filter`).
//!
//! Both write `num parts: u32` and a `u32` length per part in the chunk
//! metadata, and shuffle each part independently.
//!
//! Bitshuffle processes a part in blocks of 8192 bytes. A block of `n`
//! elements of `s` bytes (only the first `n - n % 8` elements; the rest and
//! any bytes that do not make a whole element are copied as they are) is laid
//! out as: for each byte `j` of the element, for each bit `b`, `n / 8` bytes
//! whose bit `m` of byte `k` is bit `b` of byte `j` of element `8k + m`. This
//! is the layout of the bitshuffle library libtiledb used before 2.28 and of
//! the blosc2 bitshuffle it calls since; both give identical bytes.
//! Parts whose length is not a multiple of 8 and of the element size are
//! stored unshuffled.

use super::parts::{read_part_lengths, write_part_lengths};
use super::ChunkCx;
use crate::FilterError;
use tessera_tile::Datatype;

/// Bitshuffle's block size in bytes.
pub const BITSHUFFLE_BLOCK: usize = 8192;

/// Transposes an 8x8 bit matrix held in a `u64` (byte = row, bit = column).
#[inline]
fn transpose8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// Un-bitshuffles one block of whole-8-element groups.
fn bit_unshuffle_block(input: &[u8], out: &mut [u8], s: usize) {
    let n = input.len() / s;
    let n8 = n - n % 8;
    let row = n8 / 8;
    for j in 0..s {
        let base = j * 8 * row;
        for g in 0..row {
            let mut x = 0u64;
            for b in 0..8 {
                x |= (input[base + b * row + g] as u64) << (8 * b);
            }
            let y = transpose8(x).to_le_bytes();
            for (m, byte) in y.iter().enumerate() {
                out[(8 * g + m) * s + j] = *byte;
            }
        }
    }
    let done = n8 * s;
    out[done..].copy_from_slice(&input[done..]);
}

fn bit_shuffle_block(input: &[u8], out: &mut [u8], s: usize) {
    let n = input.len() / s;
    let n8 = n - n % 8;
    let row = n8 / 8;
    for j in 0..s {
        let base = j * 8 * row;
        for g in 0..row {
            let mut x = 0u64;
            for m in 0..8 {
                x |= (input[(8 * g + m) * s + j] as u64) << (8 * m);
            }
            let y = transpose8(x).to_le_bytes();
            for (b, byte) in y.iter().enumerate() {
                out[base + b * row + g] = *byte;
            }
        }
    }
    let done = n8 * s;
    out[done..].copy_from_slice(&input[done..]);
}

fn bit_part(part: &[u8], out: &mut [u8], s: usize, invert: bool) {
    if !part.len().is_multiple_of(s) || !part.len().is_multiple_of(8) {
        out.copy_from_slice(part);
        return;
    }
    for (i, o) in part
        .chunks(BITSHUFFLE_BLOCK)
        .zip(out.chunks_mut(BITSHUFFLE_BLOCK))
    {
        if invert {
            bit_unshuffle_block(i, o, s)
        } else {
            bit_shuffle_block(i, o, s)
        }
    }
}

/// Bitshuffle, reverse.
pub(crate) fn bit_reverse(
    t: Datatype,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let (lens, rest) = read_part_lengths(meta, data.len(), "bitshuffle filter metadata", cx)?;
    let s = t.size() as usize;
    let mut out = vec![0u8; data.len()];
    let mut o = 0;
    for l in lens {
        bit_part(&data[o..o + l], &mut out[o..o + l], s, true);
        o += l;
    }
    Ok((rest.to_vec(), out))
}

/// Bitshuffle, forward: a part whose length is not a multiple of 8 is split
/// in two, the first a multiple of 8, as libtiledb does.
pub(crate) fn bit_forward(t: Datatype, data: &[u8]) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let s = t.size() as usize;
    let rem = data.len() % 8;
    let lens: Vec<usize> = if rem == 0 || data.len() < 8 {
        vec![data.len()]
    } else {
        vec![data.len() - rem, rem]
    };
    let mut out = vec![0u8; data.len()];
    let mut o = 0;
    for l in &lens {
        bit_part(&data[o..o + l], &mut out[o..o + l], s, false);
        o += l;
    }
    Ok((write_part_lengths(&lens), out))
}

fn byte_part(part: &[u8], out: &mut [u8], s: usize, invert: bool) {
    let n = part.len() / s;
    if s <= 1 || n == 0 {
        out.copy_from_slice(part);
        return;
    }
    for i in 0..n {
        for j in 0..s {
            if invert {
                out[i * s + j] = part[j * n + i];
            } else {
                out[j * n + i] = part[i * s + j];
            }
        }
    }
    out[n * s..].copy_from_slice(&part[n * s..]);
}

/// Byteshuffle, reverse.
pub(crate) fn byte_reverse(
    t: Datatype,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let (lens, rest) = read_part_lengths(meta, data.len(), "byteshuffle filter metadata", cx)?;
    let s = t.size() as usize;
    let mut out = vec![0u8; data.len()];
    let mut o = 0;
    for l in lens {
        byte_part(&data[o..o + l], &mut out[o..o + l], s, true);
        o += l;
    }
    Ok((rest.to_vec(), out))
}

/// Byteshuffle, forward.
pub(crate) fn byte_forward(t: Datatype, data: &[u8]) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let mut out = vec![0u8; data.len()];
    byte_part(data, &mut out, t.size() as usize, false);
    Ok((write_part_lengths(&[data.len()]), out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_bitshuffle(input: &[u8], s: usize) -> Vec<u8> {
        // Bit by bit, straight from the layout description.
        let n = input.len() / s;
        let n8 = n - n % 8;
        let mut out = input.to_vec();
        out[..n8 * s].fill(0);
        for i in 0..n8 {
            for j in 0..s {
                for b in 0..8 {
                    let bit = (input[i * s + j] >> b) & 1;
                    let pos = (j * 8 + b) * (n8 / 8) + i / 8;
                    out[pos] |= bit << (i % 8);
                }
            }
        }
        out
    }

    #[test]
    fn bitshuffle_matches_the_layout_and_inverts() {
        for s in [1usize, 2, 4, 8] {
            for n in [8usize, 16, 24, 64, 120] {
                let input: Vec<u8> = (0..n * s).map(|i| (i * 37 + 11) as u8).collect();
                let mut out = vec![0; input.len()];
                bit_shuffle_block(&input, &mut out, s);
                assert_eq!(out, naive_bitshuffle(&input, s), "s={s} n={n}");
                let mut back = vec![0; input.len()];
                bit_unshuffle_block(&out, &mut back, s);
                assert_eq!(back, input);
            }
        }
    }
}
