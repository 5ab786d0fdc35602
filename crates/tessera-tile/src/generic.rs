//! The generic tile header (`format_spec/generic_tile.md`).
//!
//! A generic tile is a stand-alone tile: a header that carries its own
//! filter pipeline, then a chunked [tile](crate::tile). Schemas, fragment
//! metadata sections, array metadata and enumerations are generic tiles.

use crate::{FormatVersion, ParseError, Reader};
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
    /// Parses a header; the reader is left at the first byte of the tile data.
    pub fn parse(r: &mut Reader<'_>) -> Result<GenericTileHeader, ParseError> {
        let prev = r.set_structure("generic tile header");
        let version = FormatVersion::new(r.u32("version number")?);
        let persisted_size = r.u64("persisted size")?;
        let tile_size = r.u64("tile size")?;
        let datatype = r.u8("datatype")?;
        let cell_size = r.u64("cell size")?;
        let enc_at = r.position();
        let encryption = match r.u8("encryption type")? {
            0 => EncryptionType::None,
            1 => EncryptionType::Aes256Gcm,
            other => {
                return Err(r.invalid_at(
                    enc_at,
                    "encryption type",
                    format!("unknown encryption type {other}"),
                ))
            }
        };
        let fp_size = r.u32("filter pipeline size")?;
        let filter_pipeline = r.bytes("filter pipeline", fp_size as u64)?.to_vec();
        r.set_structure(prev);
        Ok(GenericTileHeader {
            version,
            persisted_size,
            tile_size,
            datatype,
            cell_size,
            encryption,
            filter_pipeline,
        })
    }

    /// Total header size in bytes.
    pub fn size(&self) -> u64 {
        BASE_SIZE + self.filter_pipeline.len() as u64
    }
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
        let h = GenericTileHeader::parse(&mut Reader::new(&b, "x")).unwrap();
        assert_eq!(h.version, FormatVersion::new(22));
        assert_eq!(h.size(), b.len() as u64);
        for cut in 0..b.len() {
            assert!(GenericTileHeader::parse(&mut Reader::new(&b[..cut], "x")).is_err());
        }
    }
}
