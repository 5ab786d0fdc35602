//! A read streamed as Arrow record batches from a thread of its own, for
//! callers that must not block on it (Python with its GIL, async SQL
//! engines): the query runs batch by batch within its budget and hands
//! each record batch through a channel of one slot, so at most two batches
//! wait beside the one the caller holds, and the read stops when the
//! caller drops the stream.

use crate::arrow::{output_schema, Dictionaries};
use crate::{QueryError, ReadRequest, ReadResult, ReadSession};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use tessera_tile::storage::{is_missing_file, pause_before_reopen, REOPENS};

/// The memory of a streamed read whose request sets none.
pub const DEFAULT_BUDGET: u64 = 1 << 30;

/// What the read thread sends: the schema first, then batches.
enum Message {
    Schema(SchemaRef),
    Batch(RecordBatch),
    Failed(QueryError),
}

/// Starts `request` (in batches of its budget, by default 1 GiB) on a
/// thread of its own; returns with the result's schema
/// ([`output_schema`](crate::arrow::output_schema), known before any tile
/// is read), or with the error that ended the read before its first batch
/// (an unknown field, a range outside the domain). A read of no cells has
/// its schema and no batch.
///
/// ```
/// use std::sync::Arc;
/// use tessera_query::stream::stream;
/// use tessera_query::{ReadRequest, ReadSession};
/// use tessera_tile::storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
/// let request = ReadRequest::new().attributes(["i"]).budget(4 << 10);
/// let batches = stream(session, request).unwrap();
/// assert_eq!(batches.schema().fields().len(), 3); // x, y, i
/// let cells: usize = batches.map(|b| b.unwrap().num_rows()).sum();
/// assert!(cells > 0);
/// ```
pub fn stream(session: ReadSession, request: ReadRequest) -> Result<BatchStream, QueryError> {
    let request = match request.budget {
        Some(_) => request,
        None => request.budget(DEFAULT_BUDGET),
    };
    let (tx, rx) = sync_channel(1);
    std::thread::Builder::new()
        .name("tessera-read".into())
        .spawn(move || {
            let worker = Worker {
                tx: &tx,
                schema: None,
                sent_batch: false,
            };
            worker.run(&session, &request);
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
    /// The schema sent, once it is.
    schema: Option<SchemaRef>,
    /// Whether a batch was sent (the read cannot start again after).
    sent_batch: bool,
}

impl Worker<'_> {
    /// Runs the read, sending every batch; a failure (or a panic, which
    /// would otherwise end the stream as if it were complete) is sent as
    /// an error.
    ///
    /// A fragment found gone before the first batch was sent (a vacuum
    /// removed it after the array was opened) has the read start again on
    /// the array opened anew, up to [`REOPENS`] times; after batches were
    /// sent it is an error, as the cells sent cannot be taken back.
    fn run(mut self, session: &ReadSession, request: &ReadRequest) {
        let mut reopened: Option<ReadSession> = None;
        let mut tries = 0;
        let failure = loop {
            let at = reopened.as_ref().unwrap_or(session);
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.batches(at, request)
            }));
            let failure = match outcome {
                Ok(Ok(())) => return,
                Ok(Err(e)) => e,
                Err(_) => QueryError::Invalid("internal error: the read thread panicked".into()),
            };
            if self.sent_batch || tries == REOPENS || !is_missing_file(&failure) {
                break failure;
            }
            tries += 1;
            pause_before_reopen(tries);
            match session.reopened() {
                Ok(s) => reopened = Some(s),
                Err(e) => break e,
            }
        };
        let _ = self.tx.send(Message::Failed(failure));
    }

    fn batches(&mut self, session: &ReadSession, request: &ReadRequest) -> Result<(), QueryError> {
        let array = session.array();
        let enumerations = array.enumerations(&**session.storage())?;
        // Keys are put over their enumeration's values; values read as
        // values are plain columns.
        let dictionaries = match request.enumeration_values {
            true => None,
            false => Some(Dictionaries::new(array, enumerations)?),
        };
        let schema = match &self.schema {
            Some(s) => s.clone(),
            None => {
                let s = SchemaRef::new(output_schema(array, request, enumerations)?);
                self.schema = Some(s.clone());
                if self.tx.send(Message::Schema(s.clone())).is_err() {
                    return Ok(());
                }
                s
            }
        };
        let convert = |r: ReadResult| {
            let batch = match request.return_buffers {
                true => r.into_record_batch_returning()?,
                false => r.into_record_batch()?,
            };
            let batch = match &dictionaries {
                Some(d) => d.apply(batch)?,
                None => batch,
            };
            if batch.schema() != schema {
                return Err(QueryError::Invalid(format!(
                    "internal error: a batch of schema {:?}, not the read's {schema:?}",
                    batch.schema()
                )));
            }
            Ok(batch)
        };
        for b in session.batches(request)? {
            let batch = convert(b?)?;
            self.sent_batch = true;
            if self.tx.send(Message::Batch(batch)).is_err() {
                break;
            }
        }
        Ok(())
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
