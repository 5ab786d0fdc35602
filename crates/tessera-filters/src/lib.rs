//! TileDB filter pipelines (`format_spec/filter_pipeline.md`, `format_spec/tile.md`,
//! `format_spec/filters/*`).
//!
//! A [`FilterPipeline`] is parsed from a schema or generic tile header with
//! [`FilterPipeline::parse`], which applies the version gates of
//! [`gates`]. A [`TileDecoder`] reverses the pipeline on a tile (whole,
//! into a buffer, or only the chunks a reader needs; chunks decode in
//! parallel when there are several), and a [`TileEncoder`] runs it
//! forward, producing the bytes libtiledb writes. [`read_generic_tile`]
//! decodes a whole generic tile.
//!
//! ```
//! use tessera_filters::{Filter, FilterKind, FilterPipeline, TileContext, TileDecoder, TileEncoder};
//! use tessera_tile::{Datatype, FormatVersion};
//! let pipeline = FilterPipeline::new(
//!     vec![Filter::new(FilterKind::Byteshuffle, Datatype::Int32), Filter::new(FilterKind::Zstd { level: 3 }, Datatype::Int32)],
//!     65536,
//! );
//! let cells: Vec<u8> = (0..1000i32).flat_map(|v| v.to_le_bytes()).collect();
//! let ctx = TileContext::new(FormatVersion::new(22), 4);
//! let tile = TileEncoder::new(&pipeline, &ctx).encode(&cells).unwrap();
//! assert!(tile.len() < cells.len());
//! let decoder = TileDecoder::new(&pipeline, &tile, &ctx).unwrap();
//! assert_eq!(decoder.decode().unwrap(), cells);
//! ```

#![cfg_attr(not(test), forbid(unsafe_code))]

pub mod chunk_metadata;
pub mod decoder;
pub mod encoder;
pub mod error;
pub mod filters;
pub mod gates;
pub mod generic;
mod key;
pub mod pipeline;
mod reuse;

pub use decoder::{ChunkFilter, ChunkTarget, TileDecoder};
pub use encoder::{TileBytes, TileEncoder};
pub use error::FilterError;
pub use filters::{Filter, FilterKind, FilterType};
pub use generic::{read_generic_tile, write_generic_tile};
pub use key::EncryptionKey;
pub use pipeline::{FilterPipeline, TileContext};
pub use reuse::Reuse;

/// Helpers shared by the fuzz targets and the known-bad-input tests.
#[doc(hidden)]
pub mod fuzzing {
    use crate::{Filter, FilterKind, FilterPipeline, TileContext};
    use tessera_tile::{Datatype, FormatVersion};

    /// Reads `version, datatype, filter, filter` selector bytes from the
    /// front of `data`; returns the pipeline, its context and the rest.
    pub fn pipeline_from_selectors(data: &[u8]) -> Option<(FilterPipeline, TileContext, &[u8])> {
        if data.len() < 4 {
            return None;
        }
        let version = FormatVersion::new(1 + data[0] as u32 % 23);
        let dt = Datatype::from_id(data[1] % 44).unwrap_or(Datatype::Int32);
        let kind = |b: u8| match b % 19 {
            0 => FilterKind::Gzip { level: 1 },
            1 => FilterKind::Zstd { level: 1 },
            2 => FilterKind::Lz4 { level: 1 },
            3 => FilterKind::Rle { level: 1 },
            4 => FilterKind::Bzip2 { level: 1 },
            5 => FilterKind::DoubleDelta {
                level: 0,
                reinterpret: None,
            },
            6 => FilterKind::BitWidthReduction { max_window: 256 },
            7 => FilterKind::Bitshuffle,
            8 => FilterKind::Byteshuffle,
            9 => FilterKind::PositiveDelta { max_window: 256 },
            10 => FilterKind::ChecksumMd5,
            11 => FilterKind::ChecksumSha256,
            12 => FilterKind::Dictionary { level: 0 },
            13 => FilterKind::ScaleFloat {
                scale: 0.5,
                offset: 1.0,
                byte_width: 1 << (b % 4),
            },
            14 => FilterKind::Xor,
            15 => FilterKind::Delta {
                level: 0,
                reinterpret: None,
            },
            16 => FilterKind::Aes256Gcm {
                key: Some(crate::EncryptionKey::new([1; 32])),
            },
            17 => FilterKind::Webp {
                quality: 50.0,
                format: 1,
                lossless: true,
                y_extent: 4,
                x_extent: 4,
            },
            _ => FilterKind::None,
        };
        let p = FilterPipeline::new(
            vec![
                Filter::new(kind(data[2]), dt),
                Filter::new(kind(data[3]), dt),
            ],
            65536,
        );
        Some((p, TileContext::new(version, dt.size()), &data[4..]))
    }
}
