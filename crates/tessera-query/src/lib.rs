//! Reads of TileDB arrays with libtiledb's results.
//!
//! [`Query`] reads an [`OpenArray`](tessera_fragment::OpenArray): attributes,
//! ranges per dimension, a layout and a condition; it prunes fragments and
//! tiles (non-empty domains, the dense tile grid, R-trees) before any data is
//! read, then decodes the needed tiles in parallel with rayon and returns a
//! columnar [`ReadResult`].

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
mod prefetch;
mod prune;
mod read;
mod result;
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
pub use error::QueryError;
pub use read::Query;
pub use result::{CoordinateGrid, GridCursor, GridDimension, ReadResult};
pub use source::QuerySource;
/// The cell vocabulary a read takes and returns.
pub use tessera_cells::{
    Bounds, BoundsLookup, Column, Expr, FieldLookup, DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS,
    VERSION_TIMESTAMPS,
};
pub use tessera_schema::Value;
#[doc(hidden)]
pub use tuning::Tuning;
