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

pub mod decoder;
pub mod encoder;
pub mod error;
pub mod filters;
pub mod gates;
pub mod generic;
pub mod pipeline;

pub use decoder::{ChunkFilter, ChunkTarget, TileDecoder};
pub use encoder::TileEncoder;
pub use error::FilterError;
pub use filters::{Filter, FilterKind, FilterType};
pub use generic::{read_generic_tile, write_generic_tile};
pub use pipeline::{FilterPipeline, TileContext};

/// An AES-256-GCM key, as given to libtiledb. Its `Debug` form never
/// shows the key.
///
/// ```
/// use tessera_filters::EncryptionKey;
/// let key = EncryptionKey::new(*b"0123456789abcdeF0123456789abcdeF");
/// assert_eq!(format!("{key:?}"), "EncryptionKey(<redacted>)");
/// assert_eq!(&key.as_bytes()[..4], b"0123");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EncryptionKey([u8; 32]);

impl EncryptionKey {
    /// The key of these 32 bytes.
    pub const fn new(bytes: [u8; 32]) -> EncryptionKey {
        EncryptionKey(bytes)
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key from its text form: 64 hex digits, or the 32 bytes of the
    /// key themselves (as TileDB-Py's `sm.encryption_key` takes it). The
    /// error says which form was expected, never the text given.
    ///
    /// ```
    /// use tessera_filters::EncryptionKey;
    /// let k = EncryptionKey::parse(&"00".repeat(31).chars().chain("ff".chars()).collect::<String>()).unwrap();
    /// assert_eq!(k.as_bytes()[31], 0xff);
    /// assert_eq!(EncryptionKey::parse("0123456789abcdeF0123456789abcdef").unwrap().as_bytes()[0], b'0');
    /// assert!(EncryptionKey::parse("short").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<EncryptionKey, String> {
        let mut out = [0u8; 32];
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            for (i, byte) in out.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16)
                    .map_err(|_| "key: not hex digits".to_string())?;
            }
        } else if text.len() == 32 {
            out.copy_from_slice(text.as_bytes());
        } else {
            return Err(format!(
                "key: expected 64 hex digits (32 bytes), got {} characters",
                text.chars().count()
            ));
        }
        Ok(EncryptionKey(out))
    }
}

impl From<[u8; 32]> for EncryptionKey {
    fn from(bytes: [u8; 32]) -> Self {
        EncryptionKey(bytes)
    }
}

impl std::fmt::Debug for EncryptionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EncryptionKey(<redacted>)")
    }
}

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
