//! Shared framing: the "parts" tables several filters write in chunk metadata.

use super::ChunkCx;
use crate::FilterError;
use tessera_tile::Reader;

/// Reads `num parts: u32` then that many `u32` part lengths, and checks that
/// they cover exactly `data_len` bytes. Returns the lengths and the unread metadata.
pub(crate) fn read_part_lengths<'a>(
    meta: &'a [u8],
    data_len: usize,
    structure: &'static str,
    cx: &ChunkCx<'_>,
) -> Result<(Vec<usize>, &'a [u8]), FilterError> {
    let mut r = Reader::new(meta, structure);
    let n = r.u32("number of parts")?;
    let n = r.check_count("number of parts", n as u64, 4)?;
    let mut lens = Vec::with_capacity(n);
    let mut total = 0usize;
    for _ in 0..n {
        let l = r.u32("part length")? as usize;
        total = total.saturating_add(l);
        lens.push(l);
    }
    if total != data_len {
        return Err(FilterError::Size {
            chunk: cx.chunk,
            message: format!("{structure}: parts cover {total} bytes but the data has {data_len}"),
        });
    }
    Ok((lens, r.rest()))
}

/// Writes a parts table for `lens`.
pub(crate) fn write_part_lengths(lens: &[usize]) -> Vec<u8> {
    let mut m = Vec::with_capacity(4 + 4 * lens.len());
    m.extend_from_slice(&(lens.len() as u32).to_le_bytes());
    for l in lens {
        m.extend_from_slice(&(*l as u32).to_le_bytes());
    }
    m
}

/// Checks an allocation size derived from disk against the chunk's budget.
pub(crate) fn check_alloc(size: u64, cx: &ChunkCx<'_>, what: &str) -> Result<usize, FilterError> {
    if size > cx.max_alloc {
        return Err(FilterError::Size {
            chunk: cx.chunk,
            message: format!(
                "{what} claims {size} bytes, more than this chunk can hold ({} bytes)",
                cx.max_alloc
            ),
        });
    }
    Ok(size as usize)
}
