//! The filter pipeline (`format_spec/filter_pipeline.md`) and the context
//! a tile is filtered in. [`TileDecoder`](crate::TileDecoder) runs it in
//! reverse, [`TileEncoder`](crate::TileEncoder) forward.

use crate::filters::{filter, ChunkCx, Filter, FilterKind, FilterType};
use crate::gates::{self, LibtiledbRelease};
use crate::reuse::Reuse;
use crate::{EncryptionKey, FilterError};
use serde::Serialize;
use std::sync::Arc;
use tessera_tile::parse::{fits, parse, u32_le, within, PResult};
use tessera_tile::{Datatype, FormatVersion};

/// An ordered list of filters and the maximum chunk size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilterPipeline {
    /// Maximum chunk size within a tile.
    pub max_chunk_size: u32,
    /// The filters, in the order they run when writing.
    pub filters: Vec<Filter>,
}

/// Default maximum chunk size (64 KiB).
pub const DEFAULT_MAX_CHUNK_SIZE: u32 = 64 * 1024;

impl FilterPipeline {
    /// A pipeline of `filters`.
    pub fn new(filters: Vec<Filter>, max_chunk_size: u32) -> FilterPipeline {
        FilterPipeline {
            max_chunk_size,
            filters,
        }
    }

    /// The empty pipeline.
    pub fn empty() -> FilterPipeline {
        FilterPipeline::new(Vec::new(), DEFAULT_MAX_CHUNK_SIZE)
    }

    /// Parses the pipeline at the start of `bytes`, which begin at byte
    /// `file_offset` of their file (for errors), as written at format
    /// `version` for a field of `datatype` (see [`pipeline`]); returns it
    /// and the bytes it took.
    pub fn parse(
        bytes: &[u8],
        file_offset: u64,
        version: FormatVersion,
        datatype: Datatype,
    ) -> Result<(FilterPipeline, usize), FilterError> {
        Ok(parse(
            bytes,
            "filter pipeline",
            file_offset,
            pipeline(version, datatype),
        )?)
    }

    /// Serializes the pipeline as libtiledb does. (Schemas never hold the
    /// internal encryption filter; generic tile headers of encrypted tiles do.)
    pub fn serialize(&self, out: &mut Vec<u8>, version: FormatVersion) {
        out.extend_from_slice(&self.max_chunk_size.to_le_bytes());
        out.extend_from_slice(&(self.filters.len() as u32).to_le_bytes());
        for f in &self.filters {
            f.serialize(out, version);
        }
    }

    /// This pipeline with the internal AES-256-GCM filter appended.
    pub fn with_encryption(&self, key: Option<EncryptionKey>) -> FilterPipeline {
        let mut p = self.clone();
        let t = self
            .filters
            .last()
            .map_or(Datatype::Any, |f| f.output_type(f.input_type));
        p.filters
            .push(Filter::new(FilterKind::Aes256Gcm { key }, t));
        p
    }

    /// True if a filter of this type is in the pipeline.
    pub fn has(&self, t: FilterType) -> bool {
        self.filters.iter().any(|f| f.filter_type() == t)
    }

    /// True when the cell offsets of a var-sized field of `field_type` are
    /// folded into its data tile (RLE or dictionary on strings), so the
    /// offsets tile is not filtered: ASCII from 12 (RLE) and 13 (dictionary),
    /// UTF-8 from 17. `schema_version` is the array schema's version.
    pub fn offsets_in_data(&self, field_type: Datatype, schema_version: FormatVersion) -> bool {
        let v = schema_version;
        let ascii = field_type == Datatype::StringAscii;
        let utf8 = field_type == Datatype::StringUtf8;
        let utf8_ok = utf8 && v.has(gates::UTF8_OFFSETS_IN_DATA);
        (self.has(FilterType::Rle)
            && ((ascii && v.has(gates::RLE_ASCII_OFFSETS_IN_DATA)) || utf8_ok))
            || (self.has(FilterType::Dictionary)
                && ((ascii && v.has(gates::DICTIONARY_ASCII_OFFSETS_IN_DATA)) || utf8_ok))
    }
}

/// What the pipeline needs to know about the tile it runs on.
#[derive(Debug, Clone)]
pub struct TileContext {
    /// Format version the tile was written with.
    pub version: FormatVersion,
    /// Size of one cell (used by numeric RLE): the datatype size times the
    /// number of values per cell for fixed-sized data, the datatype size for
    /// var-sized data, 8 for offsets and 1 for validity.
    pub cell_size: u64,
    /// The unfiltered size the tile must have, when known.
    pub expected_size: Option<u64>,
    /// Decode chunks in parallel when the tile has several.
    pub parallel: bool,
    /// Largest unfiltered tile accepted: chunk lengths come off disk and are
    /// checked against it before anything is allocated.
    pub max_tile_size: u64,
    /// Size the forward pipeline cuts tiles into (see [`WRITER_CHUNK_SIZE`]).
    pub writer_chunk_size: u64,
    /// The libtiledb release whose writer the forward pipeline matches
    /// byte for byte where writers of one format version differ.
    pub writer: LibtiledbRelease,
    /// Codec contexts and scratch buffers the chunks reuse (none: each
    /// chunk sets up its own).
    pub reuse: Option<Arc<Reuse>>,
}

/// libtiledb's writer cuts tiles into chunks of this size (its constant
/// `max_tile_chunk_size`), floored to whole cells, whatever the pipeline's
/// own max chunk size says: that value only turns chunking off when 0.
/// (Fact from `WriterTile::compute_chunk_size`, libtiledb 2.13 to 2.30;
/// checked by `tessera-query/tests/forward_exact.rs` on every fixture.)
pub const WRITER_CHUNK_SIZE: u64 = 64 * 1024;

/// Default for [`TileContext::max_tile_size`]: 1 GiB. libtiledb's tiles are
/// typically a few megabytes; a larger claim is almost surely corruption.
pub const DEFAULT_MAX_TILE_SIZE: u64 = 1 << 30;

impl TileContext {
    /// A context for a tile of `version` with cells of `cell_size` bytes.
    pub fn new(version: FormatVersion, cell_size: u64) -> TileContext {
        TileContext {
            version,
            cell_size,
            expected_size: None,
            parallel: true,
            max_tile_size: DEFAULT_MAX_TILE_SIZE,
            writer_chunk_size: WRITER_CHUNK_SIZE,
            writer: LibtiledbRelease::LATEST,
            reuse: None,
        }
    }

    /// Has the chunks reuse the codec contexts and scratch buffers of
    /// `reuse`, which its holder (a read, a write) keeps between tiles.
    pub fn reusing(mut self, reuse: Arc<Reuse>) -> TileContext {
        self.reuse = Some(reuse);
        self
    }

    /// Filters forward as libtiledb `release` wrote (default:
    /// [`LibtiledbRelease::LATEST`]).
    pub fn writer(mut self, release: LibtiledbRelease) -> TileContext {
        self.writer = release;
        self
    }

    /// Cuts forward-filtered tiles at `size` bytes instead of
    /// [`WRITER_CHUNK_SIZE`] (libtiledb's tests do the same to get several
    /// chunks out of small tiles).
    pub fn writer_chunk_size(mut self, size: u64) -> TileContext {
        self.writer_chunk_size = size.max(1);
        self
    }

    /// The chunk size libtiledb's writer uses for a tile of `tile` bytes.
    pub(crate) fn forward_chunk_size(&self, tile: u64) -> u64 {
        let cell = self.cell_size.max(1);
        (self.writer_chunk_size.min(tile) / cell * cell).max(cell)
    }

    /// Requires the unfiltered tile to have `size` bytes.
    pub fn expect_size(mut self, size: u64) -> TileContext {
        self.expected_size = Some(size);
        self
    }

    pub(crate) fn chunk(&self, chunk: usize, original_len: u32) -> ChunkCx<'_> {
        ChunkCx {
            version: self.version,
            writer: self.writer,
            cell_size: self.cell_size.max(1),
            chunk,
            // Intermediate buffers never exceed the chunk's final size by more
            // than the filters' own metadata.
            max_alloc: original_len as u64 + (1 << 20),
            reuse: self.reuse.as_deref(),
        }
    }
}
/// A filter pipeline of format `version` for fields of `datatype`, as a
/// nom parser: the max chunk size, the `u32` number of filters, the
/// filters. From version 20 each filter receives the previous filter's
/// output type.
pub fn pipeline<'a>(
    version: FormatVersion,
    datatype: Datatype,
) -> impl Fn(&'a [u8]) -> PResult<'a, FilterPipeline> {
    within("filter pipeline", move |i| filters(i, version, datatype))
}

fn filters(i: &[u8], version: FormatVersion, datatype: Datatype) -> PResult<'_, FilterPipeline> {
    let (i, max_chunk_size) = u32_le("max chunk size")(i)?;
    let (mut i, n) = u32_le("number of filters")(i)?;
    // Each filter takes at least 5 bytes: an absurd count fails here.
    let n = fits(i, "number of filters", n as u64, 5)?;
    let mut filters = Vec::with_capacity(n);
    let mut t = datatype;
    for _ in 0..n {
        let (rest, f) = filter(i, version, t)?;
        if version.has(gates::FILTER_DATATYPE_CHAINING) {
            t = f.output_type(t);
        }
        filters.push(f);
        i = rest;
    }
    let p = FilterPipeline {
        max_chunk_size,
        filters,
    };
    Ok((i, p))
}
