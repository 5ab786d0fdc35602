//! The query crate's [`CellSource`]: what a fragment consolidation in
//! `tessera-write` reads the cells it rewrites with.

use crate::request::ReadRequest;
use crate::session::ReadSession;
use std::sync::Arc;
use tessera_cells::{CellBatches, CellSource, Column, SourceError, SparseCells};
use tessera_fragment::OpenArray;
use tessera_schema::Value;
use tessera_storage::Storage;
use tessera_tile::Layout;

/// Reads an array's cells with a [`ReadSession`] for a writer that
/// rewrites them.
///
/// ```
/// use std::sync::Arc;
/// use tessera_query::{QuerySource, ReadRequest, ReadSession};
/// use tessera_storage::LocalFs;
/// use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};
/// # let dir = std::env::temp_dir().join(format!("tessera-doc-source-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&dir);
/// # std::process::Command::new("cp").arg("-r").arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/random_sparse/array")).arg(&dir).status().unwrap();
/// let cells = |dir: &std::path::Path| {
///     let session = ReadSession::open(Arc::new(LocalFs), dir, None).unwrap();
///     let cells = session.execute(&ReadRequest::new()).unwrap().cell_count;
///     (session.array().fragments.len(), cells)
/// };
/// let (fragments, before) = cells(&dir);
/// let done = consolidate_fragments(&dir, &ConsolidateOptions::default(), &QuerySource, &mut |_| {})
///     .unwrap()
///     .unwrap();
/// assert_eq!(done.replaced.len(), fragments);
/// assert_eq!(vacuum_fragments(&dir, None, &mut |_| {}).unwrap(), fragments);
/// assert_eq!(cells(&dir), (1, before));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct QuerySource;

impl CellSource for QuerySource {
    fn global_order(
        &self,
        storage: Arc<dyn Storage>,
        array: Arc<OpenArray>,
        which: SparseCells,
    ) -> Result<CellBatches, SourceError> {
        let request = ReadRequest::new()
            .versions(which.versions)
            .delete_metadata(which.delete_metadata)
            .layout(Layout::GlobalOrder)
            .budget(which.budget);
        let batches = ReadSession::new(storage, array).batches(&request)?;
        Ok(Box::new(
            batches.map(|b| b.map(|r| r.columns).map_err(SourceError::from)),
        ))
    }

    fn dense_box(
        &self,
        storage: Arc<dyn Storage>,
        array: Arc<OpenArray>,
        bounds: &[(i128, i128)],
    ) -> Result<Vec<Column>, SourceError> {
        let dims = &array.schema.dimensions;
        let request = ReadRequest::new()
            .layout(Layout::RowMajor)
            .dimensions(false);
        let request = bounds.iter().zip(dims).fold(request, |r, (&(lo, hi), d)| {
            r.range(&d.name, Value::Int(lo), Value::Int(hi))
        });
        Ok(ReadSession::new(storage, array.clone())
            .execute(&request)?
            .columns)
    }
}
