//! Generic tiles (`format_spec/generic_tile.md`): header, pipeline, tile.

use crate::pipeline::pipeline;
use crate::{EncryptionKey, FilterError, FilterPipeline, TileContext};
use tessera_tile::generic::header;
use tessera_tile::generic::{EncryptionType, GenericTileHeader};
use tessera_tile::parse::parse;
use tessera_tile::{Datatype, FormatVersion};

/// A decoded generic tile.
#[derive(Debug, Clone)]
pub struct GenericTile {
    /// Its header.
    pub header: GenericTileHeader,
    /// The unfiltered payload.
    pub data: Vec<u8>,
    /// Bytes the tile occupies in its file (header plus persisted data).
    pub stored_size: u64,
}

/// Decodes the generic tile at the start of `bytes`; `key` is needed when the
/// tile is encrypted. `file_offset` is the tile's offset in its file, used in
/// error messages.
pub fn read_generic_tile(
    bytes: &[u8],
    key: Option<&EncryptionKey>,
    file_offset: u64,
) -> Result<GenericTile, FilterError> {
    let (header, at) = parse(bytes, "generic tile header", file_offset, header)?;
    let dt = Datatype::from_id(header.datatype).unwrap_or(Datatype::Any);
    let (mut pipeline, _) = parse(
        &header.filter_pipeline,
        "generic tile filter pipeline",
        file_offset + tessera_tile::generic::BASE_SIZE,
        pipeline(header.version, dt),
    )?;
    if header.encryption == EncryptionType::Aes256Gcm {
        // The header's pipeline carries the encryption filter itself; give it the key.
        let key = *key.ok_or(FilterError::MissingKey)?;
        let mut keyed = false;
        for f in &mut pipeline.filters {
            if let crate::FilterKind::Aes256Gcm { key: k } = &mut f.kind {
                *k = Some(key);
                keyed = true;
            }
        }
        if !keyed {
            pipeline = pipeline.with_encryption(Some(key));
        }
    }
    let (tile, _) = parse(
        &bytes[at..],
        "generic tile",
        file_offset + at as u64,
        tessera_tile::parse::bytes("tile data", header.persisted_size),
    )?;
    // The tile's chunks share codec contexts; nothing outlives the call.
    let ctx = TileContext::new(header.version, header.cell_size)
        .expect_size(header.tile_size)
        .reusing(Default::default());
    let data = crate::TileDecoder::new(&pipeline, tile, &ctx)?.decode()?;
    Ok(GenericTile {
        stored_size: header.size() + header.persisted_size,
        header,
        data,
    })
}

/// Encodes `data` as a generic tile with `pipeline` (for tests and writers).
pub fn write_generic_tile(
    data: &[u8],
    pipeline: &FilterPipeline,
    version: FormatVersion,
    key: Option<EncryptionKey>,
) -> Result<Vec<u8>, FilterError> {
    let run = if key.is_some() {
        pipeline.with_encryption(key)
    } else {
        pipeline.clone()
    };
    let ctx = TileContext::new(version, 1).reusing(Default::default());
    let tile = crate::TileEncoder::new(&run, &ctx).encode(data)?;
    let mut fp = Vec::new();
    run.serialize(&mut fp, version);
    let mut out = Vec::new();
    out.extend_from_slice(&version.number().to_le_bytes());
    out.extend_from_slice(&(tile.len() as u64).to_le_bytes());
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.push(Datatype::Char as u8);
    out.extend_from_slice(&1u64.to_le_bytes());
    out.push(key.is_some() as u8);
    out.extend_from_slice(&(fp.len() as u32).to_le_bytes());
    out.extend_from_slice(&fp);
    out.extend_from_slice(&tile);
    Ok(out)
}
