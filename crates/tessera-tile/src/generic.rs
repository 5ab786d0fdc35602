//! The generic tile header (`format_spec/generic_tile.md`).
//!
//! A generic tile is a stand-alone tile: a header that carries its own
//! filter pipeline, then a chunked [tile](crate::tile). Schemas, fragment
//! metadata sections, array metadata and enumerations are generic tiles.

use crate::parse::{bytes, parse, u32_le, u64_le, u8_le, FieldError, PResult};
use crate::{FormatVersion, ParseError};
use serde::Serialize;

/// Size of the fixed part of the header.
pub const BASE_SIZE: u64 = 4 + 8 + 8 + 1 + 8 + 1 + 4;

/// `EncryptionType` as stored in a generic tile header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EncryptionType {
    /// `NO_ENCRYPTION` (0).
    None,
    /// `AES_256_GCM` (1).
    Aes256Gcm,
}

/// The header of a generic tile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GenericTileHeader {
    /// Format version the tile was written with.
    pub version: FormatVersion,
    /// Bytes of the filtered tile that follow the header.
    pub persisted_size: u64,
    /// Bytes of the tile once unfiltered.
    pub tile_size: u64,
    /// Datatype id of the tile's cells (kept raw: generic tiles use CHAR/UINT8 mostly).
    pub datatype: u8,
    /// Cell size in bytes.
    pub cell_size: u64,
    /// Whether the tile is encrypted.
    pub encryption: EncryptionType,
    /// The serialized filter pipeline (decoded by `tessera-filters`).
    pub filter_pipeline: Vec<u8>,
}

impl GenericTileHeader {
    /// Parses the header at the start of `data`, which is byte `base` of
    /// its file (errors give offsets in the file); the tile data starts
    /// [`size`](Self::size) bytes in (see [`header`]).
    pub fn parse(data: &[u8], base: u64) -> Result<GenericTileHeader, ParseError> {
        parse(data, "generic tile header", base, header).map(|(h, _)| h)
    }

    /// Total header size in bytes.
    pub fn size(&self) -> u64 {
        BASE_SIZE + self.filter_pipeline.len() as u64
    }
}

/// A generic tile header as a nom parser: the format version, persisted
/// size, tile size, datatype, cell size, encryption type (0 none, 1
/// AES-256-GCM) and the filter pipeline's bytes (after a `u32` size).
pub fn header(i: &[u8]) -> PResult<'_, GenericTileHeader> {
    let (i, version) = u32_le("version number")(i)?;
    let (i, persisted_size) = u64_le("persisted size")(i)?;
    let (i, tile_size) = u64_le("tile size")(i)?;
    let (i, datatype) = u8_le("datatype")(i)?;
    let (i, cell_size) = u64_le("cell size")(i)?;
    let (rest, encryption) = u8_le("encryption type")(i)?;
    let encryption = match encryption {
        0 => EncryptionType::None,
        1 => EncryptionType::Aes256Gcm,
        other => {
            let why = format!("unknown encryption type {other}");
            return Err(FieldError::invalid(i, "encryption type", why));
        }
    };
    let (i, size) = u32_le("filter pipeline size")(rest)?;
    let (i, filter_pipeline) = bytes("filter pipeline", size as u64)(i)?;
    let h = GenericTileHeader {
        version: FormatVersion::new(version),
        persisted_size,
        tile_size,
        datatype,
        cell_size,
        encryption,
        filter_pipeline: filter_pipeline.to_vec(),
    };
    Ok((i, h))
}

/// The sizes a generic tile's extent follows from, read off its header's
/// fixed part: the persisted size and the filter pipeline's size (the
/// tile runs [`BASE_SIZE`] + pipeline + persisted bytes).
pub fn header_sizes(i: &[u8]) -> PResult<'_, (u64, u32)> {
    let (i, _) = u32_le("version number")(i)?;
    let (i, persisted_size) = u64_le("persisted size")(i)?;
    let (i, _) = bytes(
        "tile size, datatype, cell size, encryption type",
        8 + 1 + 8 + 1,
    )(i)?;
    let (i, pipeline_size) = u32_le("filter pipeline size")(i)?;
    Ok((i, (persisted_size, pipeline_size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_truncations() {
        let mut b = Vec::new();
        b.extend_from_slice(&22u32.to_le_bytes());
        b.extend_from_slice(&10u64.to_le_bytes());
        b.extend_from_slice(&20u64.to_le_bytes());
        b.push(6);
        b.extend_from_slice(&1u64.to_le_bytes());
        b.push(0);
        b.extend_from_slice(&8u32.to_le_bytes());
        b.extend_from_slice(&[0u8; 8]);
        let h = GenericTileHeader::parse(&b, 0).unwrap();
        assert_eq!(h.version, FormatVersion::new(22));
        assert_eq!(h.size(), b.len() as u64);
        for cut in 0..b.len() {
            assert!(GenericTileHeader::parse(&b[..cut], 0).is_err());
        }
    }
}
