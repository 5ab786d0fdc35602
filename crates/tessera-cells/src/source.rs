//! Where a writer gets an array's own cells when it rewrites them (a
//! fragment consolidation): a reader of the array's fragments. The query
//! crate's `tessera_query::QuerySource` is one; the write crate asks it
//! for cells and writes what it gets.

use crate::column::Column;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_storage::Storage;

/// Why a [`CellSource`] could not give cells (the reader's own error).
pub type SourceError = Box<dyn std::error::Error + Send + Sync>;

/// Batches of cells, a column per field each, as a reader gives them.
pub type CellBatches = Box<dyn Iterator<Item = Result<Vec<Column>, SourceError>> + Send>;

/// Which cells of a sparse array's fragments [`CellSource::global_order`]
/// gives, and in what memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SparseCells {
    /// Every version of each cell, with its timestamp in a last column
    /// [`VERSION_TIMESTAMPS`](crate::VERSION_TIMESTAMPS); else the newest.
    pub versions: bool,
    /// The versions delete commits delete too, marked in two more columns
    /// ([`DELETE_TIMESTAMPS`](crate::DELETE_TIMESTAMPS),
    /// [`DELETE_CONDITION_INDEX`](crate::DELETE_CONDITION_INDEX)).
    pub delete_metadata: bool,
    /// About how many bytes a batch holds.
    pub budget: u64,
}

/// A reader of an opened array's cells, for writers that rewrite them.
pub trait CellSource: Sync {
    /// The cells of `array`'s fragments (a sparse array) in global order,
    /// in batches, dimensions first then attributes, as `which` says.
    fn global_order(
        &self,
        storage: Arc<dyn Storage>,
        array: Arc<OpenArray>,
        which: SparseCells,
    ) -> Result<CellBatches, SourceError>;

    /// The cells of `array` (a dense array) in the box `bounds` (first and
    /// last coordinate per dimension), row-major, attributes only.
    fn dense_box(
        &self,
        storage: Arc<dyn Storage>,
        array: Arc<OpenArray>,
        bounds: &[(i128, i128)],
    ) -> Result<Vec<Column>, SourceError>;
}
