//! The query crate's [`CellSource`] and [`AsyncCellSource`]: what a
//! fragment consolidation in `tessera-write` reads the cells it rewrites
//! with, waiting for its storage or awaiting it.

use crate::push::{decoded_on_pool, PushDecoder};
use crate::request::ReadRequest;
use crate::result::ReadResult;
use crate::session::ReadSession;
use futures::StreamExt;
use std::sync::Arc;
use tessera_cells::{
    AsyncCellBatches, AsyncCellSource, AsyncColumns, CellBatches, CellSource, Column, SourceError,
    SparseCells,
};
use tessera_fragment::OpenArray;
use tessera_schema::Value;
use tessera_storage::{AsyncStorage, Storage};
use tessera_tile::Layout;

/// Reads an array's cells with a [`ReadSession`] for a writer that
/// rewrites them; awaited ([`AsyncCellSource`]), with a [`PushDecoder`]
/// whose steps decode on rayon's pool ([`decoded_on_pool`]).
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
///
/// Awaited, as on an object store (here local files answered as one
/// would answer them), the same consolidation:
///
/// ```
/// use std::sync::Arc;
/// use tessera_query::QuerySource;
/// use tessera_storage::{answer, AnswersFuture, AsyncLocation, AsyncStorage, LocalFs, Need};
/// use tessera_write::consolidate::ConsolidateOptions;
/// use tessera_write::maintain_async::{consolidate_fragments, vacuum_fragments};
/// # let dir = std::env::temp_dir().join(format!("tessera-doc-source-async-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&dir);
/// # std::process::Command::new("cp").arg("-r").arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/random_sparse/array")).arg(&dir).status().unwrap();
/// struct Local;
/// impl AsyncStorage for Local {
///     fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
///         Box::pin(std::future::ready(answer(&LocalFs, needs)))
///     }
/// }
/// let at = AsyncLocation::read_and_written(Arc::new(Local), Arc::new(LocalFs), &dir);
/// let (done, removed) = futures::executor::block_on(async {
///     let options = ConsolidateOptions::default();
///     let done = consolidate_fragments(&at, &options, &QuerySource).await?.unwrap();
///     let removed = vacuum_fragments(&at, None, None).await?;
///     Ok::<_, tessera_write::WriteError>((done, removed))
/// })
/// .unwrap();
/// assert_eq!(removed, done.replaced.len());
/// let fragments = std::fs::read_dir(dir.join("__fragments")).unwrap().count();
/// assert_eq!(fragments, 1);
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
        let batches = ReadSession::new(storage, array).batches(&global_order(which))?;
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
        let request = dense_box(&array, bounds);
        Ok(ReadSession::new(storage, array).execute(&request)?.columns)
    }
}

impl AsyncCellSource for QuerySource {
    fn global_order(
        &self,
        storage: Arc<dyn AsyncStorage>,
        array: Arc<OpenArray>,
        which: SparseCells,
    ) -> AsyncCellBatches {
        let decoder = PushDecoder::for_array(array, global_order(which));
        let batches = decoded_on_pool(decoder, Some(storage), Arc::new(|b| Ok(b.columns)));
        Box::pin(batches.map(|b| b.map_err(SourceError::from)))
    }

    fn dense_box(
        &self,
        storage: Arc<dyn AsyncStorage>,
        array: Arc<OpenArray>,
        bounds: Vec<(i128, i128)>,
    ) -> AsyncColumns {
        let decoder = PushDecoder::for_array(array.clone(), dense_box(&array, &bounds));
        let batches = decoded_on_pool(decoder, Some(storage), Arc::new(Ok));
        Box::pin(async move {
            // The box's batches joined, as the synchronous read gives it.
            let mut batches = std::pin::pin!(batches);
            let mut whole: Option<ReadResult> = None;
            while let Some(batch) = batches.next().await {
                match (&mut whole, batch?) {
                    (Some(w), b) => w.append(b),
                    (None, b) => whole = Some(b),
                }
            }
            Ok(whole.map(|w| w.columns).unwrap_or_default())
        })
    }
}

/// The read of a sparse array's cells in global order, as `which` says.
fn global_order(which: SparseCells) -> ReadRequest {
    ReadRequest::new()
        .versions(which.versions)
        .delete_metadata(which.delete_metadata)
        .layout(Layout::GlobalOrder)
        .budget(which.budget)
}

/// The read of a dense array's box `bounds`, row-major, attributes only.
fn dense_box(array: &OpenArray, bounds: &[(i128, i128)]) -> ReadRequest {
    let dims = &array.schema.dimensions;
    let request = ReadRequest::new()
        .layout(Layout::RowMajor)
        .dimensions(false);
    bounds.iter().zip(dims).fold(request, |r, (&(lo, hi), d)| {
        r.range(&d.name, Value::Int(lo), Value::Int(hi))
    })
}
