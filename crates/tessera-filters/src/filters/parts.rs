//! Shared framing: the "parts" tables several filters write in chunk metadata.

use super::ChunkCx;
use crate::chunk_metadata::{part_lengths, PartLengths};
use crate::FilterError;
use tessera_tile::parse::parse;

/// Reads `num parts: u32` then that many `u32` part lengths, and checks that
/// they cover exactly `data_len` bytes. Returns the lengths and the unread metadata.
pub(crate) fn read_part_lengths<'a>(
    meta: &'a [u8],
    data_len: usize,
    structure: &'static str,
    cx: &ChunkCx<'_>,
) -> Result<(Vec<usize>, &'a [u8]), FilterError> {
    let (PartLengths(lens), used) = parse(meta, structure, 0, part_lengths)?;
    let lens: Vec<usize> = lens.into_iter().map(|l| l as usize).collect();
    let total = lens.iter().fold(0usize, |t, l| t.saturating_add(*l));
    if total != data_len {
        return Err(FilterError::Size {
            chunk: cx.chunk,
            message: format!("{structure}: parts cover {total} bytes but the data has {data_len}"),
        });
    }
    Ok((lens, &meta[used..]))
}

/// Writes a parts table for `lens`.
pub(crate) fn write_part_lengths(lens: &[usize]) -> Vec<u8> {
    PartLengths(lens.iter().map(|&l| l as u32).collect()).encode()
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
