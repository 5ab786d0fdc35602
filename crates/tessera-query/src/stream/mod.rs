//! A read streamed as Arrow record batches, for callers that must not
//! block on it (Python with its GIL, async SQL engines): the query runs
//! batch by batch within its budget while the caller works on the batch
//! before, and the read stops when the caller drops the stream. The
//! batches are an [`Iterator`] for synchronous callers ([`stream`],
//! [`BatchStream`]) and a [`futures::Stream`] for asynchronous ones
//! ([`stream_async`], [`AsyncBatchStream`]).
//!
//! An iterated read runs on a thread of its own and hands each batch
//! through a channel of one slot, so at most two batches wait beside the
//! one the caller holds. An awaited read of local files, or of a store the
//! session awaits ([`ReadSession::awaiting`]: an object store's requests
//! on the caller's runtime), starts no thread: each step of a push decoder
//! runs on rayon's pool ([`decoded_on_pool`]), the store's answers are
//! awaited by the caller's task, and one batch waits beside the one the
//! caller holds. Neither blocks the caller's runtime.

mod thread;

pub use thread::BatchStream;

use crate::arrow::{schema_and_dictionaries, Dictionaries};
use crate::push::{decoded_on_pool, PushDecoder};
use crate::{QueryError, ReadRequest, ReadResult, ReadSession};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;
use futures::StreamExt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tessera_storage::AsyncStorage;

/// The memory of a streamed read whose request sets none.
pub const DEFAULT_BUDGET: u64 = 1 << 30;

/// Starts `request` (in batches of its budget, by default 1 GiB) on a
/// thread of its own; returns with the result's schema
/// ([`output_schema`](crate::arrow::output_schema), known before any tile
/// is read), or with the error that ended the read before its first batch
/// (an unknown field, an ill-typed range or condition, a range outside the
/// domain). A read of no cells has its schema, and at least one batch, of
/// no rows.
///
/// ```
/// use std::sync::Arc;
/// use tessera_query::stream::stream;
/// use tessera_query::{ReadRequest, ReadSession};
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
/// let request = ReadRequest::new().attributes(["i"]).budget(4 << 10);
/// let batches = stream(session, request).unwrap();
/// assert_eq!(batches.schema().fields().len(), 3); // x, y, i
/// let cells: usize = batches.map(|b| b.unwrap().num_rows()).sum();
/// assert!(cells > 0);
/// ```
pub fn stream(session: ReadSession, request: ReadRequest) -> Result<BatchStream, QueryError> {
    thread::iterated(session, with_budget(request))
}

/// [`stream`] for asynchronous callers, returning with the result's schema
/// (or the error that ended the read before its first batch) without
/// blocking the caller's thread; its batches are then awaited
/// ([`AsyncBatchStream`], a [`futures::Stream`]).
///
/// A read of local files, or of a store the session awaits
/// ([`ReadSession::awaiting`]), decodes on rayon's pool and starts no
/// thread; a read of a store the session only waits on (an object store
/// not awaited) runs on a thread of its own, as [`stream`]'s does. Await
/// the batches from a task; a thread of rayon's pool that blocked on them
/// would hold up the pool that decodes them (with one thread, for good).
///
/// ```
/// use futures::StreamExt;
/// use std::sync::Arc;
/// use tessera_query::stream::stream_async;
/// use tessera_query::{ReadRequest, ReadSession};
/// use tessera_storage::LocalFs;
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
    let request = with_budget(request);
    let awaited = session.awaited().cloned();
    if awaited.is_none() && session.storage().prefers_batches() {
        return thread::awaited(session, request).await;
    }
    on_pool(session, request, awaited).await
}

/// `request` with the default budget if it sets none.
fn with_budget(request: ReadRequest) -> ReadRequest {
    match request.budget {
        Some(_) => request,
        None => request.budget(DEFAULT_BUDGET),
    }
}

/// The read decoded on rayon's pool: its needs answered by `awaited`, or
/// by the session's storage inside each step (local files).
async fn on_pool(
    session: ReadSession,
    request: ReadRequest,
    awaited: Option<Arc<dyn AsyncStorage>>,
) -> Result<AsyncBatchStream, QueryError> {
    // The schema may need the array's enumerations read: on the pool too.
    let (s, r) = (session.clone(), request.clone());
    let conversion = crate::push::on_pool(move || Conversion::new(&s, &r)).await??;
    let schema = conversion.schema.clone();
    let ahead = ahead_bytes(&request);
    // Checked by the conversion.
    let mut decoder = PushDecoder::for_array(session.array().clone(), request).request_checked();
    if let Some(c) = session.shared_context() {
        decoder = decoder.context(c.clone());
    }
    decoder = match &awaited {
        // A dense read's next batches' tiles begun ahead: two batches'
        // worth, within what the store allows (the store's whole
        // read-ahead held more memory and took longer; one batch took
        // longer too: docs/PERFORMANCE.md, SQL).
        Some(_) => decoder.ahead(session.storage().batches_ahead().min(ahead)),
        None => decoder.answered_by(session.storage().clone()),
    };
    let convert = Arc::new(move |r: ReadResult| conversion.batch(r));
    Ok(AsyncBatchStream {
        schema,
        batches: decoded_on_pool(decoder, awaited, convert).boxed(),
    })
}

/// The bytes of tiles a pool read awaiting a store begins ahead, at most:
/// two of its batches.
fn ahead_bytes(request: &ReadRequest) -> u64 {
    request
        .batch_budget()
        .unwrap_or(DEFAULT_BUDGET)
        .saturating_mul(2)
}

/// How a read's results become its record batches.
struct Conversion {
    schema: SchemaRef,
    /// Put over enumerated attributes' keys; none where values are read.
    dictionaries: Option<Dictionaries>,
    return_buffers: bool,
    /// STRING_ASCII as Binary ([`ReadRequest::ascii_as_binary`]).
    ascii_as_binary: bool,
}

impl Conversion {
    /// The conversion of `request`'s results: its output schema, checked
    /// against the array (names, types, ranges) before anything is read
    /// but the array's enumerations.
    fn new(session: &ReadSession, request: &ReadRequest) -> Result<Conversion, QueryError> {
        let array = session.array();
        let enumerations = array.enumerations(&**session.storage())?;
        // Keys are put over their enumeration's values; values read as
        // values are plain columns.
        let (schema, dictionaries) = schema_and_dictionaries(array, request, enumerations)?;
        Ok(Conversion {
            schema: SchemaRef::new(schema),
            dictionaries,
            return_buffers: request.return_buffers,
            ascii_as_binary: request.ascii_as_binary,
        })
    }

    /// One result as a record batch of the read's schema.
    fn batch(&self, r: ReadResult) -> Result<RecordBatch, QueryError> {
        let batch = r.record_batch(self.return_buffers, self.ascii_as_binary)?;
        let batch = match &self.dictionaries {
            Some(d) => d.apply(batch)?,
            None => batch,
        };
        if batch.schema() != self.schema {
            return Err(QueryError::Invalid(format!(
                "internal error: a batch of schema {:?}, not the read's {:?}",
                batch.schema(),
                self.schema
            )));
        }
        Ok(batch)
    }
}

/// The batches of a streamed read, in order, each awaited; dropping it
/// stops the read.
pub struct AsyncBatchStream {
    schema: SchemaRef,
    batches: BoxStream<'static, Result<RecordBatch, QueryError>>,
}

impl AsyncBatchStream {
    /// The schema every batch has.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl futures::Stream for AsyncBatchStream {
    type Item = Result<RecordBatch, QueryError>;

    /// The next batch, once it is decoded.
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.batches.poll_next_unpin(cx)
    }
}
