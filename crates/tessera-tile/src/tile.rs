//! The chunk framing of a tile (`format_spec/tile.md`).
//!
//! A tile is `num chunks: u64` followed by that many chunks, each
//! `original length: u32, filtered length: u32, metadata length: u32`,
//! then the metadata and the filtered bytes.

use crate::parse::{bytes, fits, parse, u32_le, u64_le, PResult};
use crate::ParseError;
use serde::Serialize;
use std::ops::Range;

/// One chunk of a tile, located inside the tile's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chunk {
    /// Length of the chunk once every filter is reversed.
    pub original_len: u32,
    /// Where the chunk metadata lies, relative to the start of the tile.
    pub metadata: Range<usize>,
    /// Where the filtered chunk data lies, relative to the start of the tile.
    pub data: Range<usize>,
}

/// The chunks of one tile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkList {
    /// The chunks, in order.
    pub chunks: Vec<Chunk>,
    /// Bytes of the tile the framing covered.
    pub framed_len: usize,
}

/// Smallest encoded chunk: three `u32` lengths.
const CHUNK_HEADER: u64 = 12;

impl ChunkList {
    /// Parses the framing of the tile at the start of `data`, which is
    /// byte `base` of its file (errors give offsets in the file); the tile
    /// takes `framed_len` bytes (see [`chunk_list`]).
    pub fn parse(data: &[u8], base: u64) -> Result<ChunkList, ParseError> {
        parse(data, "tile chunk list", base, chunk_list).map(|(list, _)| list)
    }

    /// Sum of the original lengths: the size of the unfiltered tile.
    pub fn original_size(&self) -> u64 {
        self.chunks.iter().map(|c| c.original_len as u64).sum()
    }
}

/// A tile's chunk framing as a nom parser: the `u64` number of chunks
/// (checked against the bytes present), then per chunk its original,
/// filtered and metadata lengths (`u32` each), its metadata and its
/// filtered data. Positions are relative to the start of the tile.
pub fn chunk_list(start: &[u8]) -> PResult<'_, ChunkList> {
    let at = |i: &[u8]| start.len() - i.len();
    let (mut i, count) = u64_le("number of chunks")(start)?;
    let n = fits(i, "number of chunks", count, CHUNK_HEADER)?;
    let mut chunks = Vec::with_capacity(n);
    for _ in 0..n {
        let (j, original_len) = u32_le("original length of chunk")(i)?;
        let (j, filtered_len) = u32_le("filtered chunk length")(j)?;
        let (j, metadata_len) = u32_le("chunk metadata length")(j)?;
        let (j, metadata) = bytes("chunk metadata", metadata_len as u64)(j)?;
        let (j, data) = bytes("chunk filtered data", filtered_len as u64)(j)?;
        let (m0, d0) = (at(j) - data.len() - metadata.len(), at(j) - data.len());
        chunks.push(Chunk {
            original_len,
            metadata: m0..m0 + metadata.len(),
            data: d0..d0 + data.len(),
        });
        i = j;
    }
    let framed_len = at(i);
    Ok((i, ChunkList { chunks, framed_len }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(chunks: &[(&[u8], &[u8], u32)]) -> Vec<u8> {
        let mut v = (chunks.len() as u64).to_le_bytes().to_vec();
        for (meta, data, orig) in chunks {
            v.extend_from_slice(&orig.to_le_bytes());
            v.extend_from_slice(&(data.len() as u32).to_le_bytes());
            v.extend_from_slice(&(meta.len() as u32).to_le_bytes());
            v.extend_from_slice(meta);
            v.extend_from_slice(data);
        }
        v
    }

    #[test]
    fn parses_chunks() {
        let t = tile(&[(b"mm", b"abc", 3), (b"", b"de", 2)]);
        let l = ChunkList::parse(&t, 0).unwrap();
        assert_eq!(l.chunks.len(), 2);
        assert_eq!(&t[l.chunks[0].metadata.clone()], b"mm");
        assert_eq!(&t[l.chunks[1].data.clone()], b"de");
        assert_eq!(l.original_size(), 5);
        assert_eq!(l.framed_len, t.len());
    }

    #[test]
    fn every_truncation_is_an_error() {
        let t = tile(&[(b"mm", b"abc", 3), (b"", b"de", 2)]);
        for cut in 0..t.len() {
            assert!(ChunkList::parse(&t[..cut], 0).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn absurd_chunk_count_is_rejected() {
        let mut t = u64::MAX.to_le_bytes().to_vec();
        t.extend_from_slice(&[0; 12]);
        let e = ChunkList::parse(&t, 0).unwrap_err();
        assert_eq!(e.field, "number of chunks");
    }
}
