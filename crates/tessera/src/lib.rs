//! Tessera reads TileDB arrays (every format version libtiledb wrote) in pure Rust.
//!
//! This facade re-exports the layered crates:
//!
//! | crate | what it knows |
//! |---|---|
//! | [`tile`] | datatypes, format versions, bounded parsing, tile and chunk framing, storage |
//! | [`filters`] | filter pipelines, every filter, generic tiles |
//! | [`schema`] | array schemas, enumerations |
//! | [`fragment`] | array folders, fragments, R-trees, commits, array metadata |
//! | [`query`] | dense and sparse reads |
//!
//! ```no_run
//! use tessera::{open, Query};
//! let array = open("my_array", None).unwrap();
//! let result = Query::new(&tessera::LocalFs, &array).execute().unwrap();
//! for c in &result.columns {
//!     println!("{}: {} bytes", c.name, c.data.len());
//! }
//! ```

pub use tessera_filters as filters;
pub use tessera_fragment as fragment;
pub use tessera_query as query;
pub use tessera_schema as schema;
pub use tessera_tile as tile;

pub use tessera_fragment::OpenArray;
pub use tessera_query::{Column, Expr, Key, Query, QueryError, ReadResult};
pub use tessera_tile::storage::LocalFs;

/// Opens the array at `path` on the local filesystem, at the latest timestamp.
pub fn open(
    path: impl AsRef<std::path::Path>,
    key: Option<[u8; 32]>,
) -> Result<OpenArray, tessera_fragment::FragmentError> {
    OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, key)
}
