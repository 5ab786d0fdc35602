//! A read streamed as Arrow record batches from a thread of its own, for
//! callers that must not block on it (Python with its GIL, async SQL
//! engines): the query runs batch by batch within its budget and hands
//! each record batch through a channel of one slot, so at most two batches
//! wait beside the one the caller holds, and the read stops when the
//! caller drops the stream.

use crate::arrow::Dictionaries;
use crate::{Expr, Query, QueryError, ReadResult, Value};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_tile::storage::Storage;
use tessera_tile::Layout;

/// What a streamed read returns: plain data, so it can be built far from
/// the array (a Python call, a SQL plan) and sent where the read runs.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    /// Attributes, in output order (`None`: all).
    pub attributes: Option<Vec<String>>,
    /// Inclusive ranges, by dimension name (several per dimension: their union).
    pub ranges: Vec<(String, Value, Value)>,
    /// Only cells satisfying this.
    pub condition: Option<Expr>,
    /// The result order (`None`: row-major for dense, unordered for sparse).
    pub layout: Option<Layout>,
    /// Whether to return the dimensions.
    pub dimensions: bool,
    /// Memory for the read, in bytes ([`Query::batches`]).
    pub budget: u64,
    /// Enumerated attributes as their values; otherwise as dictionary
    /// columns over their stored keys ([`Dictionaries`]).
    pub enumeration_values: bool,
}

impl Default for ReadPlan {
    fn default() -> Self {
        ReadPlan {
            attributes: None,
            ranges: Vec::new(),
            condition: None,
            layout: None,
            dimensions: true,
            budget: 1 << 30,
            enumeration_values: false,
        }
    }
}

impl ReadPlan {
    /// The query of `array` this plan describes.
    pub fn query<'a>(&self, storage: &'a dyn Storage, array: &'a OpenArray) -> Query<'a> {
        let mut q = Query::new(storage, array)
            .dimensions(self.dimensions)
            .enumeration_values(self.enumeration_values);
        if let Some(a) = &self.attributes {
            q = q.attributes(a.clone());
        }
        for (dim, lo, hi) in &self.ranges {
            q = q.range(dim, lo.clone(), hi.clone());
        }
        if let Some(l) = self.layout {
            q = q.layout(l);
        }
        if let Some(c) = &self.condition {
            q = q.condition(c.clone());
        }
        q
    }
}

/// What the read thread sends: the schema first, then batches.
enum Message {
    Schema(SchemaRef),
    Batch(RecordBatch),
    Failed(QueryError),
}

/// Starts the read `plan` of `array` on a thread of its own; returns once
/// the result's schema is known, or with the error that ended the read
/// before its first batch (an unknown field, a range outside the domain).
///
/// ```
/// use std::sync::Arc;
/// use tessera_fragment::OpenArray;
/// use tessera_query::stream::{stream, ReadPlan};
/// use tessera_tile::storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let array = Arc::new(OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap());
/// let plan = ReadPlan { attributes: Some(vec!["i".into()]), budget: 4 << 10, ..Default::default() };
/// let batches = stream(Arc::new(LocalFs), array, plan).unwrap();
/// assert_eq!(batches.schema().fields().len(), 3); // x, y, i
/// let cells: usize = batches.map(|b| b.unwrap().num_rows()).sum();
/// assert!(cells > 0);
/// ```
pub fn stream(
    storage: Arc<dyn Storage>,
    array: Arc<OpenArray>,
    plan: ReadPlan,
) -> Result<BatchStream, QueryError> {
    let (tx, rx) = sync_channel(1);
    std::thread::Builder::new()
        .name("tessera-read".into())
        .spawn(move || {
            let worker = Worker {
                tx: &tx,
                sent_schema: false,
            };
            worker.run(&*storage, &array, &plan);
        })
        .map_err(|e| QueryError::Invalid(format!("starting the read thread: {e}")))?;
    match rx.recv() {
        Ok(Message::Schema(schema)) => Ok(BatchStream { schema, rx }),
        Ok(Message::Failed(e)) => Err(e),
        Ok(Message::Batch(_)) | Err(_) => Err(QueryError::Invalid(
            "internal error: the read thread ended before its first batch".into(),
        )),
    }
}

/// The read thread's side of the channel.
struct Worker<'a> {
    tx: &'a SyncSender<Message>,
    sent_schema: bool,
}

impl Worker<'_> {
    /// Runs the read, sending every batch; a failure (or a panic, which
    /// would otherwise end the stream as if it were complete) is sent as
    /// an error.
    fn run(mut self, storage: &dyn Storage, array: &OpenArray, plan: &ReadPlan) {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.batches(storage, array, plan)
        }));
        let failure = match outcome {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e,
            Err(_) => QueryError::Invalid("internal error: the read thread panicked".into()),
        };
        let _ = self.tx.send(Message::Failed(failure));
    }

    fn batches(
        &mut self,
        storage: &dyn Storage,
        array: &OpenArray,
        plan: &ReadPlan,
    ) -> Result<(), QueryError> {
        let query = plan.query(storage, array);
        // Keys are put over their enumeration's values; values read as
        // values are plain columns.
        let dictionaries = match plan.enumeration_values {
            true => None,
            false => Some(Dictionaries::new(array, array.enumerations(storage)?)?),
        };
        let convert = |r: ReadResult| {
            let batch = r.into_record_batch()?;
            match &dictionaries {
                Some(d) => d.apply(batch),
                None => Ok(batch),
            }
        };
        let mut batches = query.clone().batches(plan.budget.max(1))?;
        let first = match batches.next() {
            Some(b) => convert(b?)?,
            // No batch at all: the (empty) result's fields all the same.
            None => convert(query.execute()?)?,
        };
        if !self.send(first) {
            return Ok(());
        }
        for b in batches {
            if !self.send(convert(b?)?) {
                break;
            }
        }
        Ok(())
    }

    /// Sends a batch (after the schema, the first time); `false` once the
    /// stream is dropped.
    fn send(&mut self, batch: RecordBatch) -> bool {
        if !self.sent_schema {
            self.sent_schema = true;
            if self.tx.send(Message::Schema(batch.schema())).is_err() {
                return false;
            }
        }
        self.tx.send(Message::Batch(batch)).is_ok()
    }
}

/// The batches of a streamed read, in order; dropping it stops the read.
pub struct BatchStream {
    schema: SchemaRef,
    rx: Receiver<Message>,
}

impl BatchStream {
    /// The schema every batch has.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Iterator for BatchStream {
    type Item = Result<RecordBatch, QueryError>;

    /// The next batch, waiting for the read thread.
    fn next(&mut self) -> Option<Self::Item> {
        match self.rx.recv() {
            Ok(Message::Batch(b)) => Some(Ok(b)),
            Ok(Message::Failed(e)) => Some(Err(e)),
            Ok(Message::Schema(_)) => Some(Err(QueryError::Invalid(
                "internal error: a second schema".into(),
            ))),
            Err(_) => None,
        }
    }
}
