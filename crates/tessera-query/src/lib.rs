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
mod condition;
mod context;
mod decode;
mod dense;
mod enumeration;
mod error;
mod execute;
mod gates;
pub(crate) mod geometry;
mod grammar;
pub mod hilbert;
mod key;
pub mod order;
mod prefetch;
mod prune;
mod read;
mod result;
mod sparse;
#[cfg(feature = "arrow")]
pub mod stream;
mod tuning;
mod unfiltered;

pub use aggregate::{Aggregate, AggregateValue, Aggregates, FieldBounds};
pub use batch::{extent, Batches};
pub use condition::{Bounds, BoundsLookup, Expr, FieldLookup};
pub use context::ReadContext;
/// The tile-level reads `tessera verify` and the tile metadata tests make:
/// a field of a fragment, and one of its tiles decoded.
pub use decode::{read_field_tile, FieldSpec, FieldTile};
pub use error::QueryError;
pub use key::Key;
pub use read::{Query, DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS, VERSION_TIMESTAMPS};
pub use result::{Column, CoordinateGrid, GridCursor, GridDimension, ReadResult};
#[doc(hidden)]
pub use tuning::Tuning;
