//! MD5 and SHA-256 checksums (`format_spec/tile.md#checksum-filters`).
//!
//! Metadata: `num metadata checksums: u32, num data checksums: u32`, then
//! per checksum `bytes covered: u64` and the digest, then the input metadata
//! unchanged. The data passes through; every checksum is verified on read.

use super::ChunkCx;
use crate::chunk_metadata::{checksum, Checksum, ChecksumMetadata, DataParts};
use crate::FilterError;
use md5::Digest as _;
use tessera_tile::parse::parse;

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
    let (m, used) = parse(
        meta,
        "checksum filter metadata",
        0,
        checksum(a.len() as u64),
    )?;
    let rest = &meta[used..];
    for (part, sums, bytes) in [
        ("metadata", &m.metadata_sums, rest),
        ("data", &m.data_sums, data),
    ] {
        let mut parts = DataParts::new(bytes, "checksummed bytes");
        for (i, sum) in sums.iter().enumerate() {
            let b = parts.take("checksummed part", sum.covered)?;
            if a.digest(b) != sum.digest {
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
    let sum = |part: &[u8]| Checksum {
        covered: part.len() as u64,
        digest: a.digest(part),
    };
    ChecksumMetadata {
        metadata_sums: meta.iter().map(|m| sum(m)).collect(),
        data_sums: vec![sum(data)],
    }
    .encode()
}
