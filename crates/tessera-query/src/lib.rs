//! Reads of TileDB arrays with libtiledb's results.
//!
//! A read is data, then a session, then an executor. A [`ReadRequest`]
//! says what to read (attributes, ranges per dimension, a layout, a
//! condition, a memory budget); a [`ReadSession`] owns an opened
//! [`OpenArray`](tessera_fragment::OpenArray) with its storage and runs
//! requests, as [`Batches`] of [`ReadResult`]s. Each read prunes fragments
//! and tiles (non-empty domains, the dense tile grid, R-trees) before any
//! data is read, then the dense or sparse reader decodes the needed tiles
//! in parallel with rayon into columns.

mod aggregate;
#[cfg(feature = "arrow")]
pub mod arrow;
mod batch;
mod context;
mod decode;
mod dense;
mod enumeration;
mod error;
mod execute;
mod gates;
pub(crate) mod geometry;
pub mod partition;
mod prefetch;
mod prune;
pub mod push;
mod read;
mod request;
mod result;
mod session;
mod source;
mod sparse;
#[cfg(feature = "arrow")]
pub mod stream;
mod tuning;
mod unfiltered;

pub use aggregate::{Aggregate, AggregateValue, Aggregates, FieldBounds};
pub use batch::{extent, Batches};
pub use context::ReadContext;
/// The tile-level reads `tessera verify` and the tile metadata tests make:
/// a field of a fragment, and one of its tiles decoded.
pub use decode::{read_field_tile, FieldSpec, FieldTile};
pub use dense::{dense_tiles_may_match, TileTally};
pub use error::QueryError;
pub use request::ReadRequest;
pub use result::{CoordinateGrid, GridCursor, GridDimension, ReadResult};
pub use session::ReadSession;
pub use source::QuerySource;
/// The cell vocabulary a read takes and returns.
pub use tessera_cells::{
    Bounds, BoundsLookup, Column, Expr, FieldLookup, DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS,
    VERSION_TIMESTAMPS,
};
/// The comparisons an [`Expr`] makes.
pub use tessera_fragment::condition::CompareOp;
pub use tessera_schema::Value;
#[doc(hidden)]
pub use tuning::Tuning;
