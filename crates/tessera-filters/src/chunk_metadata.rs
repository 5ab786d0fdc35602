//! Filter chunk metadata: what each filter writes before its output in a
//! chunk (`format_spec/tile.md`), as nom parsers with their encoders beside
//! them. The layouts have not changed with the format version: no field
//! here is gated (the filters' options in the pipeline are, in
//! [`crate::pipeline`]). Counts read off disk are checked against the
//! bytes left before anything is allocated.
//!
//! ```
//! use tessera_filters::chunk_metadata::{compression, CompressedPart, CompressionMetadata};
//! use tessera_tile::parse::parse;
//! let written = CompressionMetadata {
//!     metadata_parts: vec![],
//!     data_parts: vec![CompressedPart { original: 65536, compressed: 1200 }],
//! };
//! let bytes = written.encode();
//! let (read, used) = parse(&bytes, "compression filter metadata", 0, compression).unwrap();
//! assert_eq!((read, used), (written, bytes.len()));
//! ```

use tessera_tile::parse::{bytes, fits, parse, u32_le, u64_le, u8_le, FieldError, PResult};
use tessera_tile::ParseError;

/// `count` items of `item`, `count` checked first against the bytes left
/// at `min_size` bytes each (`count_field` names it in errors).
fn counted<'a, T>(
    i: &'a [u8],
    count_field: &'static str,
    count: u64,
    min_size: u64,
    item: impl Fn(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Vec<T>> {
    let n = fits(i, count_field, count, min_size)?;
    let mut out = Vec::with_capacity(n);
    let mut i = i;
    for _ in 0..n {
        let (rest, v) = item(i)?;
        out.push(v);
        i = rest;
    }
    Ok((i, out))
}

/// `value` as its `width` low bytes, little-endian.
fn put_low_bytes(out: &mut Vec<u8>, value: u64, width: usize) {
    out.extend_from_slice(&value.to_le_bytes()[..width]);
}

/// `width` (1 to 8) little-endian bytes as a `u64`, zero-extended.
fn low_bytes<'a>(field: &'static str, width: usize) -> impl Fn(&'a [u8]) -> PResult<'a, u64> {
    move |i| {
        let (rest, b) = bytes(field, width as u64)(i)?;
        let mut x = [0u8; 8];
        x[..b.len()].copy_from_slice(b);
        Ok((rest, u64::from_le_bytes(x)))
    }
}

/// The parts table of several filters (float scaling, WebP, the string
/// encodings): a count, then each part's length in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartLengths(pub Vec<u32>);

/// `num parts: u32`, then that many `part length: u32`.
pub fn part_lengths(i: &[u8]) -> PResult<'_, PartLengths> {
    let (i, n) = u32_le("number of parts")(i)?;
    let (i, lens) = counted(i, "number of parts", n.into(), 4, u32_le("part length"))?;
    Ok((i, PartLengths(lens)))
}

impl PartLengths {
    /// The bytes [`part_lengths`] reads.
    pub fn encode(&self) -> Vec<u8> {
        let mut m = Vec::with_capacity(4 + 4 * self.0.len());
        m.extend_from_slice(&(self.0.len() as u32).to_le_bytes());
        for l in &self.0 {
            m.extend_from_slice(&l.to_le_bytes());
        }
        m
    }
}

/// One compressed part: its length before and after compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressedPart {
    /// Bytes before compression.
    pub original: u32,
    /// Bytes after.
    pub compressed: u32,
}

/// A compression filter's metadata: the parts of the previous filter's
/// metadata, then those of its data, each compressed on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionMetadata {
    /// The previous filter's metadata, part by part.
    pub metadata_parts: Vec<CompressedPart>,
    /// The data (one part).
    pub data_parts: Vec<CompressedPart>,
}

/// `num metadata parts: u32, num data parts: u32`, then per part
/// `original length: u32, compressed length: u32`.
pub fn compression(i: &[u8]) -> PResult<'_, CompressionMetadata> {
    let (i, n_meta) = u32_le("number of metadata parts")(i)?;
    let (i, n_data) = u32_le("number of data parts")(i)?;
    fits(
        i,
        "number of parts",
        u64::from(n_meta) + u64::from(n_data),
        8,
    )?;
    let part = |i| {
        let (i, original) = u32_le("part original length")(i)?;
        let (i, compressed) = u32_le("part compressed length")(i)?;
        Ok((
            i,
            CompressedPart {
                original,
                compressed,
            },
        ))
    };
    let (i, metadata_parts) = counted(i, "number of parts", n_meta.into(), 8, part)?;
    let (i, data_parts) = counted(i, "number of parts", n_data.into(), 8, part)?;
    let m = CompressionMetadata {
        metadata_parts,
        data_parts,
    };
    Ok((i, m))
}

impl CompressionMetadata {
    /// The bytes [`compression`] reads.
    pub fn encode(&self) -> Vec<u8> {
        let parts = self.metadata_parts.iter().chain(&self.data_parts);
        let mut m = Vec::with_capacity(8 + 8 * parts.clone().count());
        m.extend_from_slice(&(self.metadata_parts.len() as u32).to_le_bytes());
        m.extend_from_slice(&(self.data_parts.len() as u32).to_le_bytes());
        for p in parts {
            m.extend_from_slice(&p.original.to_le_bytes());
            m.extend_from_slice(&p.compressed.to_le_bytes());
        }
        m
    }
}

/// One AES-256-GCM encrypted part: its lengths, IV and tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncryptedPart {
    /// Bytes before encryption.
    pub plaintext: u32,
    /// Bytes after.
    pub encrypted: u32,
    /// The initialization vector.
    pub iv: [u8; 12],
    /// The authentication tag.
    pub tag: [u8; 16],
}

/// The encryption filter's metadata: the metadata parts, then the data
/// parts, each encrypted on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncryptionMetadata {
    /// The previous filter's metadata, part by part.
    pub metadata_parts: Vec<EncryptedPart>,
    /// The data (one part).
    pub data_parts: Vec<EncryptedPart>,
}

/// `num metadata parts: u32, num data parts: u32`, then per part
/// `plaintext length: u32, encrypted length: u32, IV: 12 bytes, tag: 16 bytes`.
pub fn encryption(i: &[u8]) -> PResult<'_, EncryptionMetadata> {
    let (i, n_meta) = u32_le("number of metadata parts")(i)?;
    let (i, n_data) = u32_le("number of data parts")(i)?;
    fits(
        i,
        "number of parts",
        u64::from(n_meta) + u64::from(n_data),
        36,
    )?;
    let part = |i| {
        let (i, plaintext) = u32_le("plaintext length")(i)?;
        let (i, encrypted) = u32_le("encrypted length")(i)?;
        let (i, iv) = bytes("IV", 12)(i)?;
        let (i, tag) = bytes("tag", 16)(i)?;
        let part = EncryptedPart {
            plaintext,
            encrypted,
            iv: iv.try_into().expect("12 bytes"),
            tag: tag.try_into().expect("16 bytes"),
        };
        Ok((i, part))
    };
    let (i, metadata_parts) = counted(i, "number of parts", n_meta.into(), 36, part)?;
    let (i, data_parts) = counted(i, "number of parts", n_data.into(), 36, part)?;
    let m = EncryptionMetadata {
        metadata_parts,
        data_parts,
    };
    Ok((i, m))
}

impl EncryptionMetadata {
    /// The bytes [`encryption`] reads.
    pub fn encode(&self) -> Vec<u8> {
        let parts = self.metadata_parts.iter().chain(&self.data_parts);
        let mut m = Vec::with_capacity(8 + 36 * parts.clone().count());
        m.extend_from_slice(&(self.metadata_parts.len() as u32).to_le_bytes());
        m.extend_from_slice(&(self.data_parts.len() as u32).to_le_bytes());
        for p in parts {
            m.extend_from_slice(&p.plaintext.to_le_bytes());
            m.extend_from_slice(&p.encrypted.to_le_bytes());
            m.extend_from_slice(&p.iv);
            m.extend_from_slice(&p.tag);
        }
        m
    }
}

/// One checksum: the bytes it covers and their digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checksum {
    /// How many bytes the digest covers.
    pub covered: u64,
    /// Their digest.
    pub digest: Vec<u8>,
}

/// A checksum filter's metadata (the previous filter's metadata follows
/// it, passed through): checksums of the metadata, then of the data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksumMetadata {
    /// One per part of the previous filter's metadata.
    pub metadata_sums: Vec<Checksum>,
    /// One over the data.
    pub data_sums: Vec<Checksum>,
}

/// `num metadata checksums: u32, num data checksums: u32`, then per
/// checksum `bytes covered: u64, digest` (`digest_len` bytes: 16 for MD5,
/// 32 for SHA-256).
pub fn checksum<'a>(digest_len: u64) -> impl Fn(&'a [u8]) -> PResult<'a, ChecksumMetadata> {
    move |i| {
        let (i, n_meta) = u32_le("number of metadata checksums")(i)?;
        let (i, n_data) = u32_le("number of data checksums")(i)?;
        let total = u64::from(n_meta) + u64::from(n_data);
        fits(i, "number of checksums", total, 8 + digest_len)?;
        let sum = |i| {
            let (i, covered) = u64_le("bytes covered by checksum")(i)?;
            let (i, digest) = bytes("checksum", digest_len)(i)?;
            let digest = digest.to_vec();
            Ok((i, Checksum { covered, digest }))
        };
        let size = 8 + digest_len;
        let (i, metadata_sums) = counted(i, "number of checksums", n_meta.into(), size, sum)?;
        let (i, data_sums) = counted(i, "number of checksums", n_data.into(), size, sum)?;
        let m = ChecksumMetadata {
            metadata_sums,
            data_sums,
        };
        Ok((i, m))
    }
}

impl ChecksumMetadata {
    /// The bytes [`checksum`] reads.
    pub fn encode(&self) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&(self.metadata_sums.len() as u32).to_le_bytes());
        m.extend_from_slice(&(self.data_sums.len() as u32).to_le_bytes());
        for s in self.metadata_sums.iter().chain(&self.data_sums) {
            m.extend_from_slice(&s.covered.to_le_bytes());
            m.extend_from_slice(&s.digest);
        }
        m
    }
}

/// One window of bit-width reduction: the value subtracted from its values
/// (the type's width in bytes, zero-extended here), the width they are
/// stored in, and the window's length before reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReducedWindow {
    /// Subtracted from every value of the window.
    pub offset: u64,
    /// Bits a value is stored in.
    pub bits: u8,
    /// The window's bytes before reduction.
    pub length: u32,
}

impl ReducedWindow {
    /// Whether the window is stored as it was (its width is the type's, or
    /// its length is not whole values): those hold any bit width.
    pub fn is_stored_whole(&self, value_width: usize) -> bool {
        self.bits as usize >= value_width * 8 || !(self.length as usize).is_multiple_of(value_width)
    }
}

/// Bit-width reduction's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitWidthMetadata {
    /// The bytes before reduction.
    pub input_length: u32,
    /// The windows, in order.
    pub windows: Vec<ReducedWindow>,
}

/// `input length: u32, num windows: u32`, then per window `offset: T, bit
/// width: u8, window length: u32` (`T` of `value_width` bytes). A reduced
/// window's width is 8, 16 or 32 bits.
pub fn bit_width<'a>(value_width: usize) -> impl Fn(&'a [u8]) -> PResult<'a, BitWidthMetadata> {
    move |i| {
        let (i, input_length) = u32_le("length of input")(i)?;
        let (i, n) = u32_le("number of windows")(i)?;
        let window = |i| {
            let (i, offset) = low_bytes("window value offset", value_width)(i)?;
            let (rest, bits) = u8_le("bit width of reduced type")(i)?;
            let (rest, length) = u32_le("window length")(rest)?;
            let w = ReducedWindow {
                offset,
                bits,
                length,
            };
            if !w.is_stored_whole(value_width) && ![8, 16, 32].contains(&bits) {
                return Err(FieldError::invalid(
                    i,
                    "bit width of reduced type",
                    format!("{bits} bits"),
                ));
            }
            Ok((rest, w))
        };
        let size = value_width as u64 + 5;
        let (i, windows) = counted(i, "number of windows", n.into(), size, window)?;
        let m = BitWidthMetadata {
            input_length,
            windows,
        };
        Ok((i, m))
    }
}

impl BitWidthMetadata {
    /// The bytes [`bit_width`] reads for values of `value_width` bytes.
    pub fn encode(&self, value_width: usize) -> Vec<u8> {
        let mut m = Vec::with_capacity(8 + (value_width + 5) * self.windows.len());
        m.extend_from_slice(&self.input_length.to_le_bytes());
        m.extend_from_slice(&(self.windows.len() as u32).to_le_bytes());
        for w in &self.windows {
            put_low_bytes(&mut m, w.offset, value_width);
            m.push(w.bits);
            m.extend_from_slice(&w.length.to_le_bytes());
        }
        m
    }
}

/// One window of positive delta encoding: the value its deltas start from
/// (the type's width in bytes, zero-extended here) and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaWindow {
    /// The value the first delta is taken from.
    pub first: u64,
    /// The window's bytes.
    pub length: u32,
}

/// Positive delta's metadata (the previous filter's metadata follows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PositiveDeltaMetadata {
    /// The windows, in order.
    pub windows: Vec<DeltaWindow>,
}

/// `num windows: u32`, then per window `first value: T, window length:
/// u32` (`T` of `value_width` bytes).
pub fn positive_delta<'a>(
    value_width: usize,
) -> impl Fn(&'a [u8]) -> PResult<'a, PositiveDeltaMetadata> {
    move |i| {
        let (i, n) = u32_le("number of windows")(i)?;
        let window = |i| {
            let (i, first) = low_bytes("window value delta offset", value_width)(i)?;
            let (i, length) = u32_le("window length")(i)?;
            Ok((i, DeltaWindow { first, length }))
        };
        let size = value_width as u64 + 4;
        let (i, windows) = counted(i, "number of windows", n.into(), size, window)?;
        Ok((i, PositiveDeltaMetadata { windows }))
    }
}

impl PositiveDeltaMetadata {
    /// The bytes [`positive_delta`] reads for values of `value_width` bytes.
    pub fn encode(&self, value_width: usize) -> Vec<u8> {
        let mut m = Vec::with_capacity(4 + (value_width + 4) * self.windows.len());
        m.extend_from_slice(&(self.windows.len() as u32).to_le_bytes());
        for w in &self.windows {
            put_low_bytes(&mut m, w.first, value_width);
            m.extend_from_slice(&w.length.to_le_bytes());
        }
        m
    }
}

/// How a string encoding's strings are coded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StringCodes<'a> {
    /// RLE: each run's length and each string's length in so many bytes.
    Rle {
        /// Bytes a run length takes.
        run_length_width: u8,
        /// Bytes a string length takes.
        string_length_width: u8,
    },
    /// Dictionary encoding: ids into the dictionary of distinct strings.
    Dictionary {
        /// Bytes an id takes.
        id_width: u8,
        /// Bytes a string length takes in the dictionary.
        string_length_width: u8,
        /// The dictionary, serialized.
        dictionary: &'a [u8],
    },
}

/// The header a string encoding (RLE or dictionary, the first filter of a
/// pipeline whose offsets are folded into the data) puts before its
/// encoded strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringEncodingMetadata<'a> {
    /// Metadata parts (0).
    pub metadata_parts: u32,
    /// Data parts (1).
    pub data_parts: u32,
    /// Bytes of the strings decoded.
    pub decoded: u32,
    /// Bytes of the strings encoded.
    pub encoded: u32,
    /// Bytes of the cell offsets.
    pub offsets: u32,
    /// How the strings are coded.
    pub codes: StringCodes<'a>,
}

/// `num metadata parts: u32, num data parts: u32, uncompressed length:
/// u32, compressed length: u32, offsets length: u32`, then for RLE `run
/// length width: u8, string length width: u8`, for a dictionary `id
/// width: u8, string length width: u8, dictionary size: u32, dictionary`.
pub fn string_encoding<'a>(
    dictionary: bool,
) -> impl Fn(&'a [u8]) -> PResult<'a, StringEncodingMetadata<'a>> {
    move |i| {
        let (i, metadata_parts) = u32_le("number of metadata parts")(i)?;
        let (i, data_parts) = u32_le("number of data parts")(i)?;
        let (i, decoded) = u32_le("uncompressed length")(i)?;
        let (i, encoded) = u32_le("compressed length")(i)?;
        let (i, offsets) = u32_le("offsets length")(i)?;
        let (i, codes) = match dictionary {
            false => {
                let (i, run_length_width) = u8_le("run length width")(i)?;
                let (i, string_length_width) = u8_le("string length width")(i)?;
                let codes = StringCodes::Rle {
                    run_length_width,
                    string_length_width,
                };
                (i, codes)
            }
            true => {
                let (i, id_width) = u8_le("id width")(i)?;
                let (i, string_length_width) = u8_le("string length width")(i)?;
                let (i, size) = u32_le("dictionary size")(i)?;
                let (i, dictionary) = bytes("dictionary", size.into())(i)?;
                let codes = StringCodes::Dictionary {
                    id_width,
                    string_length_width,
                    dictionary,
                };
                (i, codes)
            }
        };
        let m = StringEncodingMetadata {
            metadata_parts,
            data_parts,
            decoded,
            encoded,
            offsets,
            codes,
        };
        Ok((i, m))
    }
}

impl StringEncodingMetadata<'_> {
    /// The bytes [`string_encoding`] reads.
    pub fn encode(&self) -> Vec<u8> {
        let mut m = Vec::new();
        for v in [
            self.metadata_parts,
            self.data_parts,
            self.decoded,
            self.encoded,
            self.offsets,
        ] {
            m.extend_from_slice(&v.to_le_bytes());
        }
        match &self.codes {
            StringCodes::Rle {
                run_length_width,
                string_length_width,
            } => m.extend_from_slice(&[*run_length_width, *string_length_width]),
            StringCodes::Dictionary {
                id_width,
                string_length_width,
                dictionary,
            } => {
                m.extend_from_slice(&[*id_width, *string_length_width]);
                m.extend_from_slice(&(dictionary.len() as u32).to_le_bytes());
                m.extend_from_slice(dictionary);
            }
        }
        m
    }
}

/// The header delta encoding puts before its values: how many there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaHeader {
    /// Values encoded.
    pub values: u64,
}

/// `n: u64`.
pub fn delta_header(i: &[u8]) -> PResult<'_, DeltaHeader> {
    let (i, values) = u64_le("number of values")(i)?;
    Ok((i, DeltaHeader { values }))
}

impl DeltaHeader {
    /// The bytes [`delta_header`] reads.
    pub fn encode(&self) -> Vec<u8> {
        self.values.to_le_bytes().to_vec()
    }
}

/// The header double delta encoding puts before its values: the bits of a
/// double delta's magnitude, and how many values there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoubleDeltaHeader {
    /// Magnitude bits per double delta (the values are stored as they are
    /// when this is the type's width less one or more).
    pub bitsize: u8,
    /// Values encoded.
    pub values: u64,
}

/// `bitsize: u8, n: u64`.
pub fn double_delta_header(i: &[u8]) -> PResult<'_, DoubleDeltaHeader> {
    let (i, bitsize) = u8_le("bit size")(i)?;
    let (i, values) = u64_le("number of values")(i)?;
    Ok((i, DoubleDeltaHeader { bitsize, values }))
}

impl DoubleDeltaHeader {
    /// The bytes [`double_delta_header`] reads.
    pub fn encode(&self) -> Vec<u8> {
        let mut m = vec![self.bitsize];
        m.extend_from_slice(&self.values.to_le_bytes());
        m
    }
}

/// A filter's data cut into the parts its metadata lists, in order; a part
/// past the end is an error naming `structure`, the part and its offset.
pub struct DataParts<'a> {
    data: &'a [u8],
    at: usize,
    structure: &'static str,
}

impl<'a> DataParts<'a> {
    /// The parts of `data`, the bytes of `structure`.
    pub fn new(data: &'a [u8], structure: &'static str) -> Self {
        DataParts {
            data,
            at: 0,
            structure,
        }
    }

    /// The next `len` bytes.
    pub fn take(&mut self, part: &'static str, len: u64) -> Result<&'a [u8], ParseError> {
        let rest = &self.data[self.at..];
        let (b, used) = parse(rest, self.structure, self.at as u64, bytes(part, len))?;
        self.at += used;
        Ok(b)
    }

    /// The bytes no part took.
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.at..]
    }
}
