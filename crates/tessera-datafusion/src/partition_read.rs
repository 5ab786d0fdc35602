//! One partition's read: tessera's batches awaited on DataFusion's runtime
//! (`tessera_query::stream::stream_async`, which none of its threads waits
//! for: tiles decode on rayon's pool, an object store's requests are
//! awaited on the runtime, a dense read's next batches' tiles fetched
//! while one decodes), projected to
//! the scan's columns, cut at its limit and sliced to DataFusion's batch
//! size (its operators work a cache-sized batch at a time).

use crate::error::external;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::Result;
use futures::stream::BoxStream;
use futures::StreamExt;
use std::sync::Arc;
use tessera::fragment::OpenArray;
use tessera::query::stream::stream_async;
use tessera::query::{ReadContext, ReadRequest, ReadSession};
use tessera::storage::{AsyncStorage, Storage};

/// Buffers a partition's read keeps for its next batches, in batch
/// budgets: the result buffers of batches DataFusion has dropped (half of
/// it), which the read fills again instead of fresh memory the kernel must
/// clear first.
const POOLED_BATCHES: u64 = 4;

/// What one partition reads, and how its batches are handed on.
pub(crate) struct PartitionRead {
    pub storage: Arc<dyn Storage>,
    /// The object store awaited, if the array is in one.
    pub awaited: Option<Arc<dyn AsyncStorage>>,
    pub array: Arc<OpenArray>,
    /// The scan's columns.
    pub schema: SchemaRef,
    pub plan: ReadRequest,
    pub limit: Option<usize>,
    /// Rows of the batches handed on.
    pub rows: usize,
}

impl PartitionRead {
    /// The partition's batches, in order; the read stops at the limit or
    /// when the stream is dropped.
    pub(crate) fn batches(self) -> BoxStream<'static, Result<RecordBatch>> {
        let (schema, rows) = (self.schema.clone(), self.rows);
        let left = self.limit.unwrap_or(usize::MAX);
        let read = self.read();
        // `left` rows still wanted; none: the stream ends without polling
        // the read again.
        futures::stream::unfold((read, left), move |(mut read, left)| {
            let schema = schema.clone();
            async move {
                if left == 0 {
                    return None;
                }
                let batch = read.next().await?;
                let batch = match batch.and_then(|b| project(&schema, b)) {
                    Ok(b) => b,
                    Err(e) => return Some((vec![Err(e)], (read, 0))),
                };
                let n = batch.num_rows().min(left);
                let slices = (0..n)
                    .step_by(rows)
                    .map(|start| Ok(batch.slice(start, rows.min(n - start))))
                    .collect::<Vec<_>>();
                Some((slices, (read, left - n)))
            }
        })
        .flat_map(futures::stream::iter)
        .boxed()
    }

    /// tessera's batches of the partition, as they come.
    fn read(self) -> BoxStream<'static, Result<RecordBatch>> {
        // A context of the partition's own: its pool goes with the read.
        let context = Arc::new(ReadContext::with_budget(
            POOLED_BATCHES * self.plan.batch_budget().unwrap_or(0),
        ));
        let session = ReadSession::new(self.storage, self.array).context(context);
        let session = match self.awaited {
            Some(store) => session.awaiting(store),
            None => session,
        };
        let request = self.plan.return_buffers(true);
        futures::stream::once(stream_async(session, request))
            .flat_map(|started| match started {
                Ok(batches) => batches.map(|b| b.map_err(external)).left_stream(),
                Err(e) => futures::stream::once(async move { Err(external(e)) }).right_stream(),
            })
            .boxed()
    }
}

/// The batch's columns the scan returns (`schema`), in its order.
fn project(schema: &SchemaRef, batch: RecordBatch) -> Result<RecordBatch> {
    let columns = schema
        .fields()
        .iter()
        .map(|f| Ok(batch.column(batch.schema().index_of(f.name())?).clone()))
        .collect::<Result<Vec<_>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}
