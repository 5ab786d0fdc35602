//! The closed set of TileDB filters: one module per filter, decode and
//! encode side by side, each citing the spec section it implements.

use crate::{gates, FilterError};
use nom::combinator::map;
use serde::Serialize;
use tessera_tile::parse::{
    bytes, f32_le, f64_le, flag, i32_le, u16_le, u32_le, u64_le, u8_le, within, FieldError, PResult,
};
use tessera_tile::{Datatype, FormatVersion};

pub mod bit_width;
pub mod checksum;
pub mod compression;
pub mod delta;
pub mod dictionary;
pub mod double_delta;
pub mod encryption;
pub mod float_scale;
mod lz4_block;
mod parts;
pub mod positive_delta;
pub mod rle;
pub mod shuffle;
pub mod webp;
pub mod xor;

/// Filter type ids, as stored in a filter pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum FilterType {
    /// `TILEDB_FILTER_NONE` (0)
    None = 0,
    /// `TILEDB_FILTER_GZIP` (1)
    Gzip = 1,
    /// `TILEDB_FILTER_ZSTD` (2)
    Zstd = 2,
    /// `TILEDB_FILTER_LZ4` (3)
    Lz4 = 3,
    /// `TILEDB_FILTER_RLE` (4)
    Rle = 4,
    /// `TILEDB_FILTER_BZIP2` (5)
    Bzip2 = 5,
    /// `TILEDB_FILTER_DOUBLE_DELTA` (6)
    DoubleDelta = 6,
    /// `TILEDB_FILTER_BIT_WIDTH_REDUCTION` (7)
    BitWidthReduction = 7,
    /// `TILEDB_FILTER_BITSHUFFLE` (8)
    Bitshuffle = 8,
    /// `TILEDB_FILTER_BYTESHUFFLE` (9)
    Byteshuffle = 9,
    /// `TILEDB_FILTER_POSITIVE_DELTA` (10)
    PositiveDelta = 10,
    /// The internal AES-256-GCM encryption filter (11); never serialized in schemas.
    Aes256Gcm = 11,
    /// `TILEDB_FILTER_CHECKSUM_MD5` (12)
    ChecksumMd5 = 12,
    /// `TILEDB_FILTER_CHECKSUM_SHA256` (13)
    ChecksumSha256 = 13,
    /// `TILEDB_FILTER_DICTIONARY` (14)
    Dictionary = 14,
    /// `TILEDB_FILTER_SCALE_FLOAT` (15)
    ScaleFloat = 15,
    /// `TILEDB_FILTER_XOR` (16)
    Xor = 16,
    /// `TILEDB_FILTER_WEBP` (18)
    Webp = 18,
    /// `TILEDB_FILTER_DELTA` (19)
    Delta = 19,
}

impl FilterType {
    /// The filter type with this id; id 17 and unknown ids are errors.
    pub fn from_id(id: u8) -> Result<FilterType, FilterError> {
        use FilterType::*;
        Ok(match id {
            0 => None,
            1 => Gzip,
            2 => Zstd,
            3 => Lz4,
            4 => Rle,
            5 => Bzip2,
            6 => DoubleDelta,
            7 => BitWidthReduction,
            8 => Bitshuffle,
            9 => Byteshuffle,
            10 => PositiveDelta,
            11 => Aes256Gcm,
            12 => ChecksumMd5,
            13 => ChecksumSha256,
            14 => Dictionary,
            15 => ScaleFloat,
            16 => Xor,
            17 => return Err(FilterError::WithdrawnFilter),
            18 => Webp,
            19 => Delta,
            other => return Err(FilterError::UnknownFilter(other)),
        })
    }

    /// TileDB's name, without the `TILEDB_FILTER_` prefix.
    pub fn name(self) -> &'static str {
        use FilterType::*;
        match self {
            None => "NONE",
            Gzip => "GZIP",
            Zstd => "ZSTD",
            Lz4 => "LZ4",
            Rle => "RLE",
            Bzip2 => "BZIP2",
            DoubleDelta => "DOUBLE_DELTA",
            BitWidthReduction => "BIT_WIDTH_REDUCTION",
            Bitshuffle => "BITSHUFFLE",
            Byteshuffle => "BYTESHUFFLE",
            PositiveDelta => "POSITIVE_DELTA",
            Aes256Gcm => "AES_256_GCM",
            ChecksumMd5 => "CHECKSUM_MD5",
            ChecksumSha256 => "CHECKSUM_SHA256",
            Dictionary => "DICTIONARY",
            ScaleFloat => "SCALE_FLOAT",
            Xor => "XOR",
            Webp => "WEBP",
            Delta => "DELTA",
        }
    }
}

/// A filter with its options (`format_spec/filter_pipeline.md#filter-options`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum FilterKind {
    /// No-op.
    None,
    /// Gzip (zlib stream) at a level.
    Gzip {
        /// Compression level.
        level: i32,
    },
    /// Zstandard frames.
    Zstd {
        /// Compression level.
        level: i32,
    },
    /// LZ4 block format.
    Lz4 {
        /// Compression level (ignored).
        level: i32,
    },
    /// Run-length encoding (numeric, or the string variant for var strings).
    Rle {
        /// Compression level (ignored).
        level: i32,
    },
    /// Bzip2.
    Bzip2 {
        /// Compression level.
        level: i32,
    },
    /// Double delta.
    DoubleDelta {
        /// Compression level (ignored).
        level: i32,
        /// Type to reinterpret the input as (from version 20).
        reinterpret: Option<Datatype>,
    },
    /// Bit-width reduction.
    BitWidthReduction {
        /// Maximum window size in bytes.
        max_window: u32,
    },
    /// Bitshuffle.
    Bitshuffle,
    /// Byteshuffle.
    Byteshuffle,
    /// Positive delta.
    PositiveDelta {
        /// Maximum window size in bytes.
        max_window: u32,
    },
    /// MD5 checksum.
    ChecksumMd5,
    /// SHA-256 checksum.
    ChecksumSha256,
    /// Dictionary encoding of strings.
    Dictionary {
        /// Compression level (ignored).
        level: i32,
    },
    /// Float scaling into integers.
    ScaleFloat {
        /// Scale.
        scale: f64,
        /// Offset.
        offset: f64,
        /// Width of the stored integers in bytes (1, 2, 4 or 8).
        byte_width: u64,
    },
    /// XOR with the previous value.
    Xor,
    /// WebP image compression.
    Webp {
        /// Quality.
        quality: f32,
        /// Input colour format (1 RGB, 2 BGR, 3 RGBA, 4 BGRA).
        format: u8,
        /// Lossless.
        lossless: bool,
        /// Tile extent of dimension 0.
        y_extent: u16,
        /// Tile extent of dimension 1.
        x_extent: u16,
    },
    /// Delta.
    Delta {
        /// Compression level (ignored).
        level: i32,
        /// Type to reinterpret the input as (from version 19).
        reinterpret: Option<Datatype>,
    },
    /// AES-256-GCM, the internal encryption filter appended for encrypted arrays.
    Aes256Gcm {
        /// The key.
        #[serde(skip)]
        key: Option<crate::EncryptionKey>,
    },
}

/// One filter of a pipeline and the datatype it receives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Filter {
    /// The filter and its options.
    pub kind: FilterKind,
    /// The datatype this filter's input has.
    pub input_type: Datatype,
}

impl Filter {
    /// A filter receiving `input_type`.
    pub fn new(kind: FilterKind, input_type: Datatype) -> Filter {
        Filter { kind, input_type }
    }

    /// The filter's type id.
    pub fn filter_type(&self) -> FilterType {
        use FilterKind as K;
        match &self.kind {
            K::None => FilterType::None,
            K::Gzip { .. } => FilterType::Gzip,
            K::Zstd { .. } => FilterType::Zstd,
            K::Lz4 { .. } => FilterType::Lz4,
            K::Rle { .. } => FilterType::Rle,
            K::Bzip2 { .. } => FilterType::Bzip2,
            K::DoubleDelta { .. } => FilterType::DoubleDelta,
            K::BitWidthReduction { .. } => FilterType::BitWidthReduction,
            K::Bitshuffle => FilterType::Bitshuffle,
            K::Byteshuffle => FilterType::Byteshuffle,
            K::PositiveDelta { .. } => FilterType::PositiveDelta,
            K::ChecksumMd5 => FilterType::ChecksumMd5,
            K::ChecksumSha256 => FilterType::ChecksumSha256,
            K::Dictionary { .. } => FilterType::Dictionary,
            K::ScaleFloat { .. } => FilterType::ScaleFloat,
            K::Xor => FilterType::Xor,
            K::Webp { .. } => FilterType::Webp,
            K::Delta { .. } => FilterType::Delta,
            K::Aes256Gcm { .. } => FilterType::Aes256Gcm,
        }
    }

    /// The datatype this filter outputs, given its input type.
    pub fn output_type(&self, input: Datatype) -> Datatype {
        match &self.kind {
            FilterKind::ScaleFloat { byte_width, .. } => match byte_width {
                1 => Datatype::Int8,
                2 => Datatype::Int16,
                4 => Datatype::Int32,
                _ => Datatype::Int64,
            },
            FilterKind::Delta {
                reinterpret: Some(t),
                ..
            }
            | FilterKind::DoubleDelta {
                reinterpret: Some(t),
                ..
            } => *t,
            _ => input,
        }
    }

    /// Serializes the filter as libtiledb does.
    pub fn serialize(&self, out: &mut Vec<u8>, version: FormatVersion) {
        let mut opts = Vec::new();
        let compressor = |opts: &mut Vec<u8>, c: u8, level: i32| {
            opts.push(c);
            opts.extend_from_slice(&level.to_le_bytes());
        };
        match &self.kind {
            FilterKind::Gzip { level } => compressor(&mut opts, 1, *level),
            FilterKind::Zstd { level } => compressor(&mut opts, 2, *level),
            FilterKind::Lz4 { level } => compressor(&mut opts, 3, *level),
            FilterKind::Rle { level } => compressor(&mut opts, 4, *level),
            FilterKind::Bzip2 { level } => compressor(&mut opts, 5, *level),
            FilterKind::DoubleDelta { level, reinterpret } => {
                compressor(&mut opts, 6, *level);
                if version.has(gates::DOUBLE_DELTA_REINTERPRET_DATATYPE) {
                    opts.push(reinterpret.map_or(Datatype::Any as u8, |t| t as u8));
                }
            }
            FilterKind::Dictionary { level } => compressor(&mut opts, 7, *level),
            FilterKind::Delta { level, reinterpret } => {
                compressor(&mut opts, 8, *level);
                if version.has(gates::DELTA_REINTERPRET_DATATYPE) {
                    opts.push(reinterpret.map_or(Datatype::Any as u8, |t| t as u8));
                }
            }
            FilterKind::BitWidthReduction { max_window }
            | FilterKind::PositiveDelta { max_window } => {
                opts.extend_from_slice(&max_window.to_le_bytes())
            }
            FilterKind::ScaleFloat {
                scale,
                offset,
                byte_width,
            } => {
                opts.extend_from_slice(&scale.to_le_bytes());
                opts.extend_from_slice(&offset.to_le_bytes());
                opts.extend_from_slice(&byte_width.to_le_bytes());
            }
            FilterKind::Webp {
                quality,
                format,
                lossless,
                y_extent,
                x_extent,
            } => {
                opts.extend_from_slice(&quality.to_le_bytes());
                opts.push(*format);
                opts.push(*lossless as u8);
                opts.extend_from_slice(&y_extent.to_le_bytes());
                opts.extend_from_slice(&x_extent.to_le_bytes());
                // libtiledb writes its options struct whole: 10 bytes of
                // fields and 2 of padding (every WebP fixture, 2.13 to 2.30).
                opts.extend_from_slice(&[0, 0]);
            }
            _ => {}
        }
        out.push(self.filter_type() as u8);
        out.extend_from_slice(&(opts.len() as u32).to_le_bytes());
        out.extend_from_slice(&opts);
    }

    /// Reverses this filter on one chunk: metadata and data in, metadata and data out.
    pub(crate) fn reverse(
        &self,
        meta: &[u8],
        data: &[u8],
        cx: &ChunkCx<'_>,
    ) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
        use FilterKind as K;
        let t = self.input_type;
        match &self.kind {
            K::None => Ok((meta.to_vec(), data.to_vec())),
            K::Gzip { .. }
            | K::Zstd { .. }
            | K::Lz4 { .. }
            | K::Bzip2 { .. }
            | K::Rle { .. }
            | K::DoubleDelta { .. }
            | K::Delta { .. } => compression::reverse(self, meta, data, cx),
            K::Dictionary { .. } => Err(FilterError::codec(
                "DICTIONARY",
                cx.chunk,
                "dictionary encoding only applies to var-sized strings",
            )),
            K::BitWidthReduction { .. } => bit_width::reverse(t, meta, data, cx),
            K::Bitshuffle => shuffle::bit_reverse(t, meta, data, cx),
            K::Byteshuffle => shuffle::byte_reverse(t, meta, data, cx),
            K::PositiveDelta { .. } => positive_delta::reverse(t, meta, data, cx),
            K::ChecksumMd5 => checksum::reverse(checksum::Algorithm::Md5, meta, data, cx),
            K::ChecksumSha256 => checksum::reverse(checksum::Algorithm::Sha256, meta, data, cx),
            K::ScaleFloat {
                scale,
                offset,
                byte_width,
            } => float_scale::reverse(t, *scale, *offset, *byte_width, meta, data, cx),
            K::Xor => xor::reverse(t, meta, data, cx),
            K::Webp { format, .. } => webp::reverse(*format, meta, data, cx),
            K::Aes256Gcm { key } => encryption::reverse(key.as_ref(), meta, data, cx),
        }
    }

    /// Runs this filter forward on one chunk. The chunk metadata is a list
    /// of parts, newest first, as libtiledb's writer keeps it: most filters
    /// put their own metadata in front, while compression and encryption
    /// take every part in and write one, and checksums cover each part.
    /// The part boundaries reach the disk through those filters.
    pub(crate) fn forward(
        &self,
        meta: &[Vec<u8>],
        data: &[u8],
        cx: &ChunkCx<'_>,
    ) -> Result<(Vec<Vec<u8>>, Vec<u8>), FilterError> {
        use FilterKind as K;
        let t = self.input_type;
        let (own, out) = match &self.kind {
            K::None => return Ok((meta.to_vec(), data.to_vec())),
            K::Gzip { .. }
            | K::Zstd { .. }
            | K::Lz4 { .. }
            | K::Bzip2 { .. }
            | K::Rle { .. }
            | K::DoubleDelta { .. }
            | K::Delta { .. } => {
                let (m, d) = compression::forward(self, meta, data, cx)?;
                return Ok((vec![m], d));
            }
            K::Aes256Gcm { key } => {
                let (m, d) = encryption::forward(key.as_ref(), meta, data)?;
                return Ok((vec![m], d));
            }
            K::Dictionary { .. } => Err(FilterError::Unsupported(
                "dictionary encoding applies to var-sized string tiles only".into(),
            )),
            K::BitWidthReduction { max_window } => bit_width::forward(t, *max_window, data, cx),
            K::Bitshuffle => shuffle::bit_forward(t, data),
            K::Byteshuffle => shuffle::byte_forward(t, data),
            K::PositiveDelta { max_window } => positive_delta::forward(t, *max_window, data, cx),
            K::ChecksumMd5 => Ok((
                checksum::forward(checksum::Algorithm::Md5, meta, data),
                data.to_vec(),
            )),
            K::ChecksumSha256 => Ok((
                checksum::forward(checksum::Algorithm::Sha256, meta, data),
                data.to_vec(),
            )),
            K::ScaleFloat {
                scale,
                offset,
                byte_width,
            } => float_scale::forward(t, *scale, *offset, *byte_width, data, cx),
            K::Xor => xor::forward(t, data, cx),
            K::Webp {
                format,
                y_extent,
                x_extent,
                ..
            } => webp::forward(*format, (*y_extent, *x_extent), data, cx),
        }?;
        // A filter that passed the chunk through wrote no metadata part.
        let own = (!own.is_empty()).then_some(own);
        Ok((own.into_iter().chain(meta.iter().cloned()).collect(), out))
    }
}

/// One filter of format `version` whose input is of `input_type`, as a
/// nom parser: its type, then its options (after a `u32` size).
pub(crate) fn filter(
    i: &[u8],
    version: FormatVersion,
    input_type: Datatype,
) -> PResult<'_, Filter> {
    let (rest, id) = u8_le("filter type")(i)?;
    let ty = FilterType::from_id(id)
        .map_err(|e| FieldError::invalid(i, "filter type", e.to_string()))?;
    let (rest, len) = u32_le("filter options size")(rest)?;
    let (rest, opts) = bytes("filter options", len as u64)(rest)?;
    // Options may be followed by padding (WebP's): what is left is ignored.
    let (_, kind) = within("filter options", |o| options(o, ty, version))(opts)?;
    Ok((rest, Filter { kind, input_type }))
}

/// A delta filter's reinterpret datatype (`ANY`: none), when the version's
/// gate is `open` and the options hold it.
fn reinterpret_type(i: &[u8], open: bool) -> PResult<'_, Option<Datatype>> {
    if !open || i.is_empty() {
        return Ok((i, None));
    }
    let (rest, id) = u8_le("reinterpret datatype")(i)?;
    match Datatype::from_id(id) {
        Some(Datatype::Any) => Ok((rest, None)),
        Some(t) => Ok((rest, Some(t))),
        None => {
            let why = format!("unknown datatype id {id}");
            Err(FieldError::invalid(i, "reinterpret datatype", why))
        }
    }
}

/// The options of a filter of type `ty` (they are gated by version).
fn options(o: &[u8], ty: FilterType, version: FormatVersion) -> PResult<'_, FilterKind> {
    use FilterType as T;
    // The compressors store (compressor type u8, level i32); the compressor
    // type repeats what the filter type says, so only the level is kept.
    let level = |o| {
        let (o, _) = u8_le("compressor type")(o)?;
        i32_le("compression level")(o)
    };
    let (o, kind) = match ty {
        // A compression filter with no compressor may be serialized as NONE
        // with or without options.
        T::None => (o, FilterKind::None),
        T::Gzip => map(level, |level| FilterKind::Gzip { level })(o)?,
        T::Zstd => map(level, |level| FilterKind::Zstd { level })(o)?,
        T::Lz4 => map(level, |level| FilterKind::Lz4 { level })(o)?,
        T::Rle => map(level, |level| FilterKind::Rle { level })(o)?,
        T::Bzip2 => map(level, |level| FilterKind::Bzip2 { level })(o)?,
        T::Dictionary => map(level, |level| FilterKind::Dictionary { level })(o)?,
        T::DoubleDelta => {
            let (o, level) = level(o)?;
            let gate = version.has(gates::DOUBLE_DELTA_REINTERPRET_DATATYPE);
            let (o, reinterpret) = reinterpret_type(o, gate)?;
            (o, FilterKind::DoubleDelta { level, reinterpret })
        }
        T::Delta => {
            let (o, level) = level(o)?;
            let gate = version.has(gates::DELTA_REINTERPRET_DATATYPE);
            let (o, reinterpret) = reinterpret_type(o, gate)?;
            (o, FilterKind::Delta { level, reinterpret })
        }
        T::BitWidthReduction => map(u32_le("max window size"), |max_window| {
            FilterKind::BitWidthReduction { max_window }
        })(o)?,
        T::PositiveDelta => map(u32_le("max window size"), |max_window| {
            FilterKind::PositiveDelta { max_window }
        })(o)?,
        T::Bitshuffle => (o, FilterKind::Bitshuffle),
        T::Byteshuffle => (o, FilterKind::Byteshuffle),
        T::ChecksumMd5 => (o, FilterKind::ChecksumMd5),
        T::ChecksumSha256 => (o, FilterKind::ChecksumSha256),
        T::Xor => (o, FilterKind::Xor),
        T::Aes256Gcm => (o, FilterKind::Aes256Gcm { key: None }),
        T::ScaleFloat => {
            let (o, scale) = f64_le("scale")(o)?;
            let (at, offset) = f64_le("offset")(o)?;
            let (o, byte_width) = u64_le("byte width")(at)?;
            if ![1, 2, 4, 8].contains(&byte_width) {
                let why = format!("{byte_width} is not 1, 2, 4 or 8");
                return Err(FieldError::invalid(at, "byte width", why));
            }
            let kind = FilterKind::ScaleFloat {
                scale,
                offset,
                byte_width,
            };
            (o, kind)
        }
        T::Webp => {
            let (o, quality) = f32_le("quality")(o)?;
            let (o, format) = u8_le("input format")(o)?;
            let (o, lossless) = flag("lossless")(o)?;
            let (o, y_extent) = u16_le("y extent")(o)?;
            let (o, x_extent) = u16_le("x extent")(o)?;
            let kind = FilterKind::Webp {
                quality,
                format,
                lossless,
                y_extent,
                x_extent,
            };
            (o, kind)
        }
    };
    Ok((o, kind))
}

/// What a filter needs to know about the chunk it works on.
#[derive(Debug, Clone)]
pub(crate) struct ChunkCx<'a> {
    /// Format version of the tile (fragment or generic tile).
    pub version: FormatVersion,
    /// The libtiledb release the forward pipeline writes as.
    pub writer: crate::gates::LibtiledbRelease,
    /// Cell size of the tile, used by numeric RLE.
    pub cell_size: u64,
    /// Index of the chunk in its tile (for errors).
    pub chunk: usize,
    /// Largest buffer a filter may allocate for this chunk: sizes read off
    /// disk are checked against it before allocating.
    pub max_alloc: u64,
    /// What the chunk's codecs reuse, where the caller keeps it.
    pub reuse: Option<&'a crate::reuse::Reuse>,
}

/// Helper: numeric datatypes the delta-like filters accept, with the datetime gate.
pub(crate) fn integer_width(t: Datatype, version: FormatVersion) -> Option<(u8, bool)> {
    use tessera_tile::datatype::Physical;
    if (t.is_datetime() || t.is_time()) && !version.has(gates::REDUCTION_ON_DATETIMES) {
        return None;
    }
    match t.physical() {
        Physical::Int(w) => Some((w, true)),
        Physical::UInt(w) if t != Datatype::Bool => Some((w, false)),
        _ => None,
    }
}
