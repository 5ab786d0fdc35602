//! A read session: an opened array, the storage it is read from and the
//! buffers its reads reuse, all owned, so a session can be cloned, kept and
//! sent to other threads. Every read goes through [`ReadSession::batches`];
//! [`ReadSession::execute`] is a read in one batch, and aggregates decode
//! what metadata cannot answer in batches too.

use crate::aggregate::{aggregate, field_bounds, Aggregate, Aggregates, FieldBounds};
use crate::batch::Batches;
use crate::context::ReadContext;
use crate::read::Read;
use crate::request::ReadRequest;
use crate::result::ReadResult;
use crate::QueryError;
use std::path::Path;
use std::sync::Arc;
use tessera_filters::EncryptionKey;
use tessera_fragment::OpenArray;
use tessera_storage::{listing_again, AsyncStorage, Storage};

/// An opened array with its storage, read by [`ReadRequest`]s.
///
/// ```
/// use std::sync::Arc;
/// use tessera_query::{ReadRequest, ReadSession};
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
/// let mut cells = 0;
/// for batch in session.batches(&ReadRequest::new().budget(4 << 10)).unwrap() {
///     let batch = batch.unwrap();
///     cells += batch.cell_count;
///     batch.recycle();
/// }
/// assert_eq!(cells, session.execute(&ReadRequest::new()).unwrap().cell_count);
/// ```
#[derive(Clone)]
pub struct ReadSession {
    storage: Arc<dyn Storage>,
    array: Arc<OpenArray>,
    /// The buffers every read of the session reuses, where the caller gave
    /// them; otherwise each read has buffers of its own.
    context: Option<Arc<ReadContext>>,
    /// The same store as `storage`, awaited by asynchronous reads.
    awaited: Option<Arc<dyn AsyncStorage>>,
}

impl ReadSession {
    /// Reads of `array`, opened from `storage`.
    pub fn new(storage: Arc<dyn Storage>, array: Arc<OpenArray>) -> Self {
        ReadSession {
            storage,
            array,
            context: None,
            awaited: None,
        }
    }

    /// Opens the array at `path` in `storage` at its latest timestamp
    /// (`key`: an encrypted array's AES-256-GCM key) for reads.
    pub fn open(
        storage: Arc<dyn Storage>,
        path: &Path,
        key: Option<EncryptionKey>,
    ) -> Result<Self, QueryError> {
        let array = OpenArray::open(&*storage, path, 0, u64::MAX, key)?;
        Ok(ReadSession::new(storage, Arc::new(array)))
    }

    /// Has every read of this session reuse the buffers of `context`,
    /// which sessions given the same context share: results handed back
    /// with [`ReadResult::recycle`] go there. By default each read has a
    /// context of its own (a read in batches one capped by its budget), so
    /// nothing is shared that the caller did not share.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera_query::{ReadContext, ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
    /// let context = Arc::new(ReadContext::new());
    /// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap().context(context);
    /// session.execute(&ReadRequest::new()).unwrap().recycle();
    /// // The next read fills the buffers the last one handed back.
    /// assert!(session.execute(&ReadRequest::new()).unwrap().cell_count > 0);
    /// ```
    pub fn context(mut self, context: Arc<ReadContext>) -> Self {
        self.context = Some(context);
        self
    }

    /// Has reads streamed asynchronously
    /// ([`stream_async`](crate::stream::stream_async)) await `storage`,
    /// the same store as the session's (an object store's requests on the
    /// caller's runtime; `tessera-object-store`'s `ObjectStorage` is both),
    /// while their tiles decode on rayon's pool: no thread waits for the
    /// store.
    pub fn awaiting(mut self, storage: Arc<dyn AsyncStorage>) -> Self {
        self.awaited = Some(storage);
        self
    }

    /// The storage asynchronous reads await, if the session was given one
    /// ([`ReadSession::awaiting`]).
    pub(crate) fn awaited(&self) -> Option<&Arc<dyn AsyncStorage>> {
        self.awaited.as_ref()
    }

    /// The buffers the session's reads share, if it was given them
    /// ([`ReadSession::context`]).
    pub(crate) fn shared_context(&self) -> Option<&Arc<ReadContext>> {
        self.context.as_ref()
    }

    /// The opened array.
    pub fn array(&self) -> &Arc<OpenArray> {
        &self.array
    }

    /// The storage the array is read from.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// Reads `request` in batches of about its budget each (decoded tiles
    /// plus result; [`ReadRequest::budget`], by default the whole read in
    /// one), in its layout; concatenated, the batches are exactly the read
    /// in one batch (for sparse reads without an order, the same cells).
    /// The buffers kept for reuse between batches stay within three
    /// sixteenths of the budget (read, tile and scratch buffers) and half
    /// of it (recycled results): the read gets
    /// a [`ReadContext`] of its own, capped by its budget, unless the
    /// session was given one ([`ReadSession::context`]).
    pub fn batches(&self, request: &ReadRequest) -> Result<Batches, QueryError> {
        request.check(&self.array.schema)?;
        self.checked_batches(request)
    }

    /// [`ReadSession::batches`] of a request its caller checked against
    /// this array's schema ([`ReadRequest::check`]).
    pub(crate) fn checked_batches(&self, request: &ReadRequest) -> Result<Batches, QueryError> {
        Batches::start(
            self.storage.clone(),
            self.array.clone(),
            request.clone(),
            self.context_for(request),
            Arc::default(),
        )
    }

    /// Reads `request` in one batch, whatever its budget. A fragment
    /// found gone (another process vacuumed it after this session opened
    /// the array) has the read start again on the array opened anew
    /// ([`ReadSession::reopened`]), up to [`tessera_storage::REOPENS`] times.
    pub fn execute(&self, request: &ReadRequest) -> Result<ReadResult, QueryError> {
        request.check(&self.array.schema)?;
        let mut whole = request.clone();
        whole.budget = None;
        let once = |session: &ReadSession| {
            session.checked_batches(&whole)?.next().unwrap_or_else(|| {
                Err(QueryError::Invalid(
                    "internal error: a read in one batch gave none".into(),
                ))
            })
        };
        listing_again(&*self.storage, |before| match before {
            0 => once(self),
            _ => once(&self.reopened()?),
        })
    }

    /// This session's array opened again at the same times, listed anew:
    /// where a file it had listed is gone, the commit state a vacuum left.
    pub fn reopened(&self) -> Result<ReadSession, QueryError> {
        self.storage.list_anew();
        self.opened_again()
    }

    /// This session's array opened again at the same times, with the
    /// listings its storage gives now ([`ReadSession::reopened`] has them
    /// asked anew first; the push decoder asks for them as its own needs).
    pub(crate) fn opened_again(&self) -> Result<ReadSession, QueryError> {
        let a = &self.array;
        let array = OpenArray::open(
            &*self.storage,
            &a.path,
            a.timestamp_start,
            a.timestamp_end,
            a.key,
        )?;
        Ok(ReadSession {
            storage: self.storage.clone(),
            array: Arc::new(array),
            context: self.context.clone(),
            awaited: self.awaited.clone(),
        })
    }

    /// Computes aggregates over the cells `request` selects (its ranges
    /// and condition; attributes and layout play no part), from metadata
    /// where it can; what it must decode it reads in the request's
    /// batches.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera_query::{Aggregate, ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/random_sparse/array");
    /// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let request = ReadRequest::new().budget(64 << 20);
    /// let r = session.aggregate(&request, &[Aggregate::Count, Aggregate::Sum("a".into())]).unwrap();
    /// println!("{} cells, sum {}", r.values[0].to_json(), r.values[1].to_json());
    /// ```
    pub fn aggregate(
        &self,
        request: &ReadRequest,
        aggs: &[Aggregate],
    ) -> Result<Aggregates, QueryError> {
        request.check(&self.array.schema)?;
        let context = self.context_for(request);
        aggregate(&self.storage, &self.array, context, request, aggs)
    }

    /// What fragment metadata says of the single-valued field `name` over
    /// the whole array, decoding no tile: its least and greatest values
    /// and its null cells, from each fragment's summary (format 12 and
    /// later) of a sparse array. `None` when a fragment keeps no usable
    /// summary of it, or the array is dense (its fill values are no
    /// fragment's). `exact` says no cell can be dropped or shadowed (as
    /// [`ReadSession::aggregate`] decides per fragment); otherwise the
    /// values only bound the cells a read returns.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera_query::ReadSession;
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let b = session.field_bounds("i").unwrap().unwrap();
    /// assert!(b.min.is_some() && b.null_count == 0);
    /// ```
    pub fn field_bounds(&self, name: &str) -> Result<Option<FieldBounds>, QueryError> {
        let whole = ReadRequest::new();
        let context = self.context_for(&whole);
        let read = Read::resolve(&*self.storage, &self.array, &whole, context);
        field_bounds(&read, name)
    }

    /// The buffers a read of `request` reuses: the session's, else a
    /// context of the read's own, capped by its budget.
    fn context_for(&self, request: &ReadRequest) -> Arc<ReadContext> {
        match (&self.context, request.budget) {
            (Some(c), _) => c.clone(),
            (None, Some(budget)) => Arc::new(ReadContext::with_budget(budget)),
            (None, None) => Arc::new(ReadContext::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_storage::LocalFs;

    fn session() -> ReadSession {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/tiledb-0.36.1/dense_2d_types/array");
        ReadSession::open(Arc::new(LocalFs), &path, None).unwrap()
    }

    /// No context is process-wide: two reads of sessions given none share
    /// no buffers; sessions given one context share it.
    #[test]
    fn reads_share_buffers_only_through_a_given_context() {
        let (a, b) = (session(), session());
        let request = ReadRequest::new();
        assert!(!Arc::ptr_eq(
            &a.context_for(&request),
            &b.context_for(&request)
        ));
        assert!(!Arc::ptr_eq(
            &a.context_for(&request),
            &a.context_for(&request)
        ));
        let shared = Arc::new(ReadContext::new());
        let (a, b) = (a.context(shared.clone()), b.context(shared));
        assert!(Arc::ptr_eq(
            &a.context_for(&request),
            &b.context_for(&request)
        ));
    }
}
