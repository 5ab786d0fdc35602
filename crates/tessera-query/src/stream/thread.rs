//! A streamed read on a thread of its own: the query runs batch by batch
//! and hands each record batch through a channel of one slot, so at most
//! two batches wait beside the one the caller holds; a dropped receiver
//! stops it.

use super::{AsyncBatchStream, Conversion};
use crate::{QueryError, ReadRequest, ReadSession};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::channel::mpsc::{channel, Receiver, Sender};
use futures::{SinkExt, StreamExt};
use tessera_storage::{is_missing_file, pause_before_reopen, REOPENS};

/// What the read thread sends: the schema first, then batches.
enum Message {
    Schema(SchemaRef),
    Batch(RecordBatch),
    Failed(QueryError),
}

/// `request` read on a thread of its own, its batches waited for.
pub(super) fn iterated(
    session: ReadSession,
    request: ReadRequest,
) -> Result<BatchStream, QueryError> {
    let mut rx = start(session, request)?;
    let first = futures::executor::block_on(rx.next());
    let (schema, rx) = after(first, rx)?;
    Ok(BatchStream { schema, rx })
}

/// `request` read on a thread of its own, its batches awaited.
pub(super) async fn awaited(
    session: ReadSession,
    request: ReadRequest,
) -> Result<AsyncBatchStream, QueryError> {
    let mut rx = start(session, request)?;
    let first = rx.next().await;
    let (schema, rx) = after(first, rx)?;
    Ok(AsyncBatchStream {
        schema,
        batches: rx.map(given).boxed(),
    })
}

/// Starts the read thread; its messages come through the receiver.
fn start(session: ReadSession, request: ReadRequest) -> Result<Receiver<Message>, QueryError> {
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

/// The schema the read thread sent first, or the error that ended it
/// before.
fn after(
    first: Option<Message>,
    rx: Receiver<Message>,
) -> Result<(SchemaRef, Receiver<Message>), QueryError> {
    match first {
        Some(Message::Schema(schema)) => Ok((schema, rx)),
        Some(Message::Failed(e)) => Err(e),
        Some(Message::Batch(_)) | None => Err(QueryError::Invalid(
            "internal error: the read thread ended before its first batch".into(),
        )),
    }
}

/// What a message from the read thread gives the caller.
fn given(message: Message) -> Result<RecordBatch, QueryError> {
    match message {
        Message::Batch(b) => Ok(b),
        Message::Failed(e) => Err(e),
        Message::Schema(_) => Err(QueryError::Invalid(
            "internal error: a second schema".into(),
        )),
    }
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
        let conversion = Conversion::new(session, request)?;
        if self.schema.is_none() {
            self.schema = Some(conversion.schema.clone());
            if !self.send(Message::Schema(conversion.schema.clone())) {
                return Ok(());
            }
        }
        // Checked by the conversion.
        for b in session.checked_batches(request)? {
            let batch = conversion.batch(b?)?;
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
        futures::executor::block_on(self.rx.next()).map(given)
    }
}
