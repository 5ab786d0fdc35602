//! Where a writer gets an array's own cells when it rewrites them (a
//! fragment consolidation): a reader of the array's fragments, waited on
//! ([`CellSource`]) or awaited ([`AsyncCellSource`]). The query crate's
//! `tessera_query::QuerySource` is both; the write crate asks it for cells
//! and writes what it gets.

use crate::column::Column;
use futures_core::Stream;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_storage::{AsyncStorage, Storage};

/// Why a [`CellSource`] could not give cells (the reader's own error).
pub type SourceError = Box<dyn std::error::Error + Send + Sync>;

/// Batches of cells, a column per field each, as a reader gives them.
pub type CellBatches = Box<dyn Iterator<Item = Result<Vec<Column>, SourceError>> + Send>;

/// [`CellBatches`] awaited: a stream of batches.
pub type AsyncCellBatches = Pin<Box<dyn Stream<Item = Result<Vec<Column>, SourceError>> + Send>>;

/// The cells of a box, awaited.
pub type AsyncColumns = Pin<Box<dyn Future<Output = Result<Vec<Column>, SourceError>> + Send>>;

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

/// [`CellSource`] over an [`AsyncStorage`]: the same cells, its requests
/// awaited by the caller's task (an object store on the caller's runtime)
/// rather than waited on by a thread.
pub trait AsyncCellSource: Sync {
    /// [`CellSource::global_order`], its batches awaited; a read that
    /// cannot start fails at the first batch.
    fn global_order(
        &self,
        storage: Arc<dyn AsyncStorage>,
        array: Arc<OpenArray>,
        which: SparseCells,
    ) -> AsyncCellBatches;

    /// [`CellSource::dense_box`], awaited.
    fn dense_box(
        &self,
        storage: Arc<dyn AsyncStorage>,
        array: Arc<OpenArray>,
        bounds: Vec<(i128, i128)>,
    ) -> AsyncColumns;
}
