//! MD5 and SHA-256 checksums (`format_spec/tile.md#checksum-filters`).
//!
//! Metadata: `num metadata checksums: u32, num data checksums: u32`, then
//! per checksum `bytes covered: u64` and the digest, then the input metadata
//! unchanged. The data passes through; every checksum is verified on read.

use super::ChunkCx;
use crate::FilterError;
use md5::Digest as _;
use tessera_tile::Reader;

/// Which digest.
#[derive(Debug, Clone, Copy)]
pub enum Algorithm {
    /// MD5 (16 bytes).
    Md5,
    /// SHA-256 (32 bytes).
    Sha256,
}

impl Algorithm {
    fn len(self) -> usize {
        match self {
            Algorithm::Md5 => 16,
            Algorithm::Sha256 => 32,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Algorithm::Md5 => "MD5",
            Algorithm::Sha256 => "SHA-256",
        }
    }
    fn digest(self, b: &[u8]) -> Vec<u8> {
        match self {
            Algorithm::Md5 => md5::Md5::digest(b).to_vec(),
            Algorithm::Sha256 => sha2::Sha256::digest(b).to_vec(),
        }
    }
}

/// Reverse: verify, pass the data through.
pub(crate) fn reverse(
    a: Algorithm,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let mut m = Reader::new(meta, "checksum filter metadata");
    let n_meta = m.u32("number of metadata checksums")? as u64;
    let n_data = m.u32("number of data checksums")? as u64;
    m.check_count("number of checksums", n_meta + n_data, 8 + a.len() as u64)?;
    let mut sums = Vec::new();
    for _ in 0..n_meta + n_data {
        let covered = m.u64("bytes covered by checksum")?;
        sums.push((covered, m.bytes("checksum", a.len() as u64)?));
    }
    let rest = m.rest();
    let (meta_sums, data_sums) = sums.split_at(n_meta as usize);
    for (part, sums, bytes) in [("metadata", meta_sums, rest), ("data", data_sums, data)] {
        let mut r = Reader::new(bytes, "checksummed bytes");
        for (i, (covered, expected)) in sums.iter().enumerate() {
            let b = r.bytes("checksummed part", *covered)?;
            if a.digest(b) != *expected {
                return Err(FilterError::ChecksumMismatch {
                    algorithm: a.name(),
                    chunk: cx.chunk,
                    part,
                    index: i,
                });
            }
        }
    }
    Ok((rest.to_vec(), data.to_vec()))
}

/// Forward: one checksum per metadata part (each earlier filter's metadata
/// is its own part, as libtiledb's writer keeps them) and one over the data.
/// Returns this filter's own metadata; the data passes through.
pub(crate) fn forward(a: Algorithm, meta: &[Vec<u8>], data: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    m.extend_from_slice(&1u32.to_le_bytes());
    for part in meta.iter().map(Vec::as_slice).chain([data]) {
        m.extend_from_slice(&(part.len() as u64).to_le_bytes());
        m.extend_from_slice(&a.digest(part));
    }
    m
}
