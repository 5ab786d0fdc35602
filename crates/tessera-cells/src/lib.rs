//! The cells of TileDB arrays, as readers and writers both see them: a
//! [`Column`] of one field's cells, the [`order::GlobalOrder`] a sparse
//! fragment keeps its cells in (with [`hilbert`] values for a Hilbert cell
//! order), conditions on cells ([`Expr`]: query conditions given as
//! text and the delete conditions stored in an array), and the
//! [`CellSource`] a writer rewriting an array's cells reads them from.
//! Values are
//! [`tessera_schema::Value`]s.
//!
//! ```
//! use tessera_cells::Column;
//! use tessera_schema::CellValNum;
//! use tessera_tile::Datatype;
//! let c = Column {
//!     name: "a".into(), is_dimension: false, datatype: Datatype::Int32,
//!     cell_val_num: CellValNum::Fixed(1), data: [1i32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect(),
//!     offsets: None, validity: None,
//! };
//! assert_eq!(c.cell_count(), 3);
//! assert_eq!(c.value(2), 3i32.to_le_bytes());
//! ```

mod column;
mod condition;
mod error;
mod fields;
mod grammar;
pub mod hilbert;
pub mod order;
mod source;

pub use column::Column;
pub use condition::{Bounds, BoundsLookup, Compiled, Expr, FieldCells, FieldLookup, NumberTest};
pub use error::CellError;
pub use fields::{DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS, VERSION_TIMESTAMPS};
pub use source::{
    AsyncCellBatches, AsyncCellSource, AsyncColumns, CellBatches, CellSource, SourceError,
    SparseCells,
};
