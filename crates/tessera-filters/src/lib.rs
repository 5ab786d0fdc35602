//! TileDB filter pipelines (`format_spec/filter_pipeline.md`, `format_spec/tile.md`,
//! `format_spec/filters/*`).
//!
//! A [`FilterPipeline`] is parsed from a schema or generic tile header with
//! [`FilterPipeline::parse`], which applies the version gates of
//! [`gates`]. [`unfilter_tile`] reverses the pipeline on every chunk of a
//! tile (chunks decode in parallel when there are several), and
//! [`filter_tile`] runs it forward, producing the bytes libtiledb writes.
//! [`read_generic_tile`] decodes a whole generic tile.
//!
//! ```
//! use tessera_filters::{filter_tile, unfilter_tile, Filter, FilterKind, FilterPipeline, TileContext};
//! use tessera_tile::{Datatype, FormatVersion};
//! let pipeline = FilterPipeline::new(
//!     vec![Filter::new(FilterKind::Byteshuffle, Datatype::Int32), Filter::new(FilterKind::Zstd { level: 3 }, Datatype::Int32)],
//!     65536,
//! );
//! let cells: Vec<u8> = (0..1000i32).flat_map(|v| v.to_le_bytes()).collect();
//! let ctx = TileContext::new(FormatVersion(22), 4);
//! let tile = filter_tile(&pipeline, &cells, &ctx).unwrap();
//! assert!(tile.len() < cells.len());
//! assert_eq!(unfilter_tile(&pipeline, &tile, &ctx).unwrap(), cells);
//! ```

#![cfg_attr(not(test), forbid(unsafe_code))]

pub mod error;
pub mod filters;
pub mod gates;
pub mod generic;
pub mod pipeline;

pub use error::FilterError;
pub use filters::{Filter, FilterKind, FilterType};
pub use generic::{read_generic_tile, write_generic_tile};
pub use pipeline::{
    filter_tile, filter_var_string_tile, unfilter_tile, unfilter_var_string_tile, FilterPipeline,
    TileContext,
};

/// An AES-256-GCM key, as given to libtiledb.
pub type EncryptionKey = [u8; 32];
