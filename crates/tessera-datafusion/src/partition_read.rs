//! One partition's read: tessera's batches awaited on DataFusion's runtime
//! (`tessera_query::push::PushDecoder` driven by the table's storage
//! awaited: an object store's requests on the runtime, local files read on
//! its blocking threads; decoding on the task that polls, one batch's
//! bytes fetched ahead), projected to the scan's columns, cut at its limit
//! and sliced to DataFusion's batch size (its operators work a cache-sized
//! batch at a time).

use crate::error::external;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::Result;
use futures::stream::BoxStream;
use futures::StreamExt;
use std::sync::Arc;
use tessera::fragment::OpenArray;
use tessera::query::arrow::Dictionaries;
use tessera::query::push::PushDecoder;
use tessera::query::stream::record_batch;
use tessera::query::{ReadContext, ReadRequest};
use tessera::tile::storage::AsyncStorage;

/// Buffers a partition's read keeps for its next batches, in batch
/// budgets: the result buffers of batches DataFusion has dropped (half of
/// it), which the read fills again instead of fresh memory the kernel must
/// clear first.
const POOLED_BATCHES: u64 = 4;

/// What one partition reads, and how its batches are handed on.
pub(crate) struct PartitionRead {
    pub answers: Arc<dyn AsyncStorage>,
    pub array: Arc<OpenArray>,
    /// The table's dictionaries, put over enumerated attributes' keys.
    pub dictionaries: Arc<Dictionaries>,
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
        let request = self.plan.return_buffers(true);
        let dictionaries = (!request.reads_enumeration_values()).then_some(self.dictionaries);
        PushDecoder::for_array(self.array, request.clone())
            .context(context)
            .stream_from(self.answers)
            .map(move |batch| {
                let batch = batch.and_then(|b| record_batch(b, &request, dictionaries.as_deref()));
                batch.map_err(external)
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
