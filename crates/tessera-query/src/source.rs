//! The query crate's [`CellSource`]: what a fragment consolidation in
//! `tessera-write` reads the cells it rewrites with.

use crate::read::Query;
use tessera_cells::{CellBatches, CellSource, Column, SourceError, SparseCells};
use tessera_fragment::OpenArray;
use tessera_schema::Value;
use tessera_tile::storage::Storage;
use tessera_tile::Layout;

/// Reads an array's cells with [`Query`] for a writer that rewrites them.
///
/// ```
/// use tessera_query::{Query, QuerySource};
/// use tessera_fragment::OpenArray;
/// use tessera_tile::storage::LocalFs;
/// use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};
/// # let dir = std::env::temp_dir().join(format!("tessera-doc-source-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&dir);
/// # std::process::Command::new("cp").arg("-r").arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/random_sparse/array")).arg(&dir).status().unwrap();
/// let cells = |dir: &std::path::Path| {
///     let a = OpenArray::open(&LocalFs, dir, 0, u64::MAX, None).unwrap();
///     (a.fragments.len(), Query::new(&LocalFs, &a).execute().unwrap().cell_count)
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
    fn global_order<'a>(
        &self,
        storage: &'a dyn Storage,
        array: &'a OpenArray,
        which: SparseCells,
    ) -> Result<CellBatches<'a>, SourceError> {
        let batches = Query::new(storage, array)
            .versions(which.versions)
            .delete_metadata(which.delete_metadata)
            .layout(Layout::GlobalOrder)
            .batches(which.budget)?;
        Ok(Box::new(
            batches.map(|b| b.map(|r| r.columns).map_err(SourceError::from)),
        ))
    }

    fn dense_box(
        &self,
        storage: &dyn Storage,
        array: &OpenArray,
        bounds: &[(i128, i128)],
    ) -> Result<Vec<Column>, SourceError> {
        let query = Query::new(storage, array)
            .layout(Layout::RowMajor)
            .dimensions(false);
        let dims = &array.schema.dimensions;
        let query = bounds.iter().zip(dims).fold(query, |q, (&(lo, hi), d)| {
            q.range(&d.name, Value::Int(lo), Value::Int(hi))
        });
        Ok(query.execute()?.columns)
    }
}
