//! A read streamed as Arrow record batches from a thread of its own, for
//! callers that must not block on it (Python with its GIL, async SQL
//! engines): the query runs batch by batch within its budget and hands
//! each record batch through a channel of one slot, so at most two batches
//! wait beside the one the caller holds, and the read stops when the
//! caller drops the stream. The batches are an [`Iterator`] for
//! synchronous callers ([`stream`], [`BatchStream`]) and a
//! [`futures::Stream`] for asynchronous ones ([`stream_async`],
//! [`AsyncBatchStream`]): an async caller awaits them and
//! never blocks its runtime's threads, and a storage that runs its
//! requests on the caller's runtime (`ObjectStorage::on_runtime` in
//! `tessera-object-store`) needs no runtime of its own.

use crate::arrow::{output_schema, Dictionaries};
use crate::{QueryError, ReadRequest, ReadResult, ReadSession};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::channel::mpsc::{channel, Receiver, Sender};
use futures::{SinkExt, StreamExt};
use std::pin::Pin;
use std::task::{Context, Poll};
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
/// ([`output_schema`], known before any tile
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
    let mut rx = start(session, request)?;
    let first = futures::executor::block_on(rx.next());
    Channel::after(first, rx).map(BatchStream)
}

/// [`stream`] for asynchronous callers: the read starts on a thread of its
/// own and this waits for its schema without blocking the caller's
/// thread; its batches are then awaited ([`AsyncBatchStream`], a
/// [`futures::Stream`]).
///
/// ```
/// use futures::StreamExt;
/// use std::sync::Arc;
/// use tessera_query::stream::stream_async;
/// use tessera_query::{ReadRequest, ReadSession};
/// use tessera_tile::storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
/// let request = ReadRequest::new().attributes(["i"]).budget(4 << 10);
/// let cells = futures::executor::block_on(async {
///     let batches = stream_async(session, request).await.unwrap();
///     assert_eq!(batches.schema().fields().len(), 3);
///     batches.map(|b| b.unwrap().num_rows()).fold(0, |a, n| async move { a + n }).await
/// });
/// assert!(cells > 0);
/// ```
pub async fn stream_async(
    session: ReadSession,
    request: ReadRequest,
) -> Result<AsyncBatchStream, QueryError> {
    let mut rx = start(session, request)?;
    let first = rx.next().await;
    Channel::after(first, rx).map(AsyncBatchStream)
}

/// Starts the read thread; its messages come through the receiver.
fn start(session: ReadSession, request: ReadRequest) -> Result<Receiver<Message>, QueryError> {
    let request = match request.budget {
        Some(_) => request,
        None => request.budget(DEFAULT_BUDGET),
    };
    // One slot: the sender's own (buffer 0).
    let (tx, rx) = channel(0);
    std::thread::Builder::new()
        .name("tessera-read".into())
        .spawn(move || {
            let worker = Worker {
                tx,
                schema: None,
                sent_batch: false,
            };
            worker.run(&session, &request);
        })
        .map_err(|e| QueryError::Invalid(format!("starting the read thread: {e}")))?;
    Ok(rx)
}

/// The read thread's side of the channel.
struct Worker {
    tx: Sender<Message>,
    /// The schema sent, once it is.
    schema: Option<SchemaRef>,
    /// Whether a batch was sent (the read cannot start again after).
    sent_batch: bool,
}

impl Worker {
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
        self.send(Message::Failed(failure));
    }

    /// Sends `message`, waiting for the slot; false once the stream was
    /// dropped.
    fn send(&mut self, message: Message) -> bool {
        futures::executor::block_on(self.tx.send(message)).is_ok()
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
                if !self.send(Message::Schema(s.clone())) {
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
            if !self.send(Message::Batch(batch)) {
                break;
            }
        }
        Ok(())
    }
}

/// The batches of a streamed read, in order, each waited for; dropping it
/// stops the read.
pub struct BatchStream(Channel);

/// The batches of a streamed read, in order, each awaited; dropping it
/// stops the read.
pub struct AsyncBatchStream(Channel);

/// The receiving end of a read thread's channel, past its schema.
struct Channel {
    schema: SchemaRef,
    rx: Receiver<Message>,
}

impl Channel {
    /// The channel whose read sent `first`: its schema, or the error that
    /// ended it before.
    fn after(first: Option<Message>, rx: Receiver<Message>) -> Result<Channel, QueryError> {
        match first {
            Some(Message::Schema(schema)) => Ok(Channel { schema, rx }),
            Some(Message::Failed(e)) => Err(e),
            Some(Message::Batch(_)) | None => Err(QueryError::Invalid(
                "internal error: the read thread ended before its first batch".into(),
            )),
        }
    }

    /// What a message from the read thread gives the caller.
    fn given(message: Option<Message>) -> Option<Result<RecordBatch, QueryError>> {
        match message? {
            Message::Batch(b) => Some(Ok(b)),
            Message::Failed(e) => Some(Err(e)),
            Message::Schema(_) => Some(Err(QueryError::Invalid(
                "internal error: a second schema".into(),
            ))),
        }
    }
}

impl BatchStream {
    /// The schema every batch has.
    pub fn schema(&self) -> SchemaRef {
        self.0.schema.clone()
    }
}

impl Iterator for BatchStream {
    type Item = Result<RecordBatch, QueryError>;

    /// The next batch, waiting for the read thread.
    fn next(&mut self) -> Option<Self::Item> {
        Channel::given(futures::executor::block_on(self.0.rx.next()))
    }
}

impl AsyncBatchStream {
    /// The schema every batch has.
    pub fn schema(&self) -> SchemaRef {
        self.0.schema.clone()
    }
}

impl futures::Stream for AsyncBatchStream {
    type Item = Result<RecordBatch, QueryError>;

    /// The next batch, once the read thread sent it.
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.rx.poll_next_unpin(cx).map(Channel::given)
    }
}
