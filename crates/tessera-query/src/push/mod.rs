//! A read that does no I/O: a [`PushDecoder`] says what it needs from
//! storage ([`Need`]: byte ranges, footers, listings), takes the answers
//! as they come ([`PushDecoder::push`]) and gives the read's batches, as
//! arrow-rs parquet's push decoder does. It opens the array (listing its
//! folders, reading schemas and fragment footers), then reads batch by
//! batch within the request's budget, each batch's metadata first and
//! then its tiles, all a batch's tiles asked for at once.
//!
//! Whoever drives it does the I/O, as it likes: [`PushDecoder::read_from`]
//! answers from a synchronous [`Storage`], [`PushDecoder::stream_from`]
//! awaits an [`AsyncStorage`] (an object store on the caller's runtime),
//! and [`PushDecoder::into_stream`] awaits any async function of the
//! caller's (a browser's `fetch`), decoding on the task that polls; the
//! decoder has no thread of its own, and none waits for bytes.
//! [`decoded_on_pool`] decodes each step on rayon's pool instead, so the
//! caller's task only awaits; a decoder [`PushDecoder::answered_by`] a
//! storage (local files) has its needs answered inside its steps. The
//! asynchronous drivers read a batch ahead. A read can start from the
//! array opened already ([`PushDecoder::for_array`]); one that finds a
//! file gone before its first batch opens the array again, as a read over
//! storage does.
//!
//! ```
//! use tessera_query::push::PushDecoder;
//! use tessera_query::ReadRequest;
//! use tessera_storage::LocalFs;
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
//! let decoder = PushDecoder::new(path.as_ref(), None, ReadRequest::new().budget(4 << 10));
//! let mut cells = 0;
//! for batch in decoder.read_from(&LocalFs) {
//!     cells += batch.unwrap().cell_count;
//! }
//! assert!(cells > 0);
//! ```

mod pooled;
mod replay;

pub(crate) use pooled::on_pool;
pub use pooled::{decoded_on_pool, Convert};
pub use tessera_storage::{answer, Answer, AsyncStorage, Data, Need};

use crate::{Batches, QueryError, ReadContext, ReadRequest, ReadResult, ReadSession};
use replay::Replay;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_filters::EncryptionKey;
use tessera_fragment::OpenArray;
use tessera_storage::{is_missing_file, ListableStorage, Storage, REOPENS};

/// What a [`PushDecoder`] gives at each step.
pub enum Step {
    /// It needs these answered ([`PushDecoder::push`]) before it goes on.
    Need(Vec<Need>),
    /// The read's next batch.
    Batch(ReadResult),
    /// The read is over.
    Done,
}

/// Where the decoder is in its read.
enum State {
    /// Starting its batches from the decoder's [`Opening`].
    Opening,
    Reading(Box<Batches>),
    Done,
}

/// What the read starts from, and starts again from.
struct Opening {
    array: Start,
    request: ReadRequest,
    /// Whether `request` was checked against the array's schema: on the
    /// first open, unless whoever built the decoder had checked it.
    checked: bool,
    /// The buffers the read reuses, where the caller shares them.
    context: Option<Arc<ReadContext>>,
}

/// The array a read starts from.
enum Start {
    /// To be opened: its path and its AES-256-GCM key.
    Path(PathBuf, Option<EncryptionKey>),
    /// Opened already (its metadata was read by whoever opened it).
    Open(Arc<OpenArray>),
    /// Opened already, to be opened again at the same times (a file it
    /// listed is gone).
    Reopen(Arc<OpenArray>),
}

impl Opening {
    /// The read's batches over `storage`, the request checked once.
    fn batches(&mut self, storage: Arc<dyn Storage>) -> Result<Batches, QueryError> {
        let session = match &self.array {
            Start::Path(path, key) => ReadSession::open(storage, path, *key),
            Start::Open(array) => Ok(ReadSession::new(storage, array.clone())),
            // Not `reopened`, which would have the listings asked anew
            // at every attempt, answered or not.
            Start::Reopen(array) => ReadSession::new(storage, array.clone()).opened_again(),
        }?;
        let session = match &self.context {
            Some(c) => session.context(c.clone()),
            None => session,
        };
        if !self.checked {
            self.request.check(&session.array().schema)?;
            self.checked = true;
        }
        session.checked_batches(&self.request)
    }
}

/// What the asynchronous driver holds between batches: the next step's
/// answers being fetched, or the next step taken.
enum Ahead<Fut> {
    Fetching(Fut),
    Stepped(Result<Step, QueryError>),
}

/// A read of one array that does no I/O (see the [module](self)).
pub struct PushDecoder {
    replay: Arc<Replay>,
    /// The storage that answers needs as they arise, if one does
    /// ([`PushDecoder::answered_by`]).
    inline: Option<Arc<dyn Storage>>,
    state: State,
    /// Rounds of needs asked so far.
    rounds: usize,
    /// What the read starts from (again, if it finds a file gone).
    start: Opening,
    /// Whether a batch was given (the read cannot start again after).
    given: bool,
    /// How many times the read started again.
    reopens: usize,
}

impl PushDecoder {
    /// The read `request` of the array at `path` at its latest timestamp
    /// (`key`: an encrypted array's AES-256-GCM key). Nothing is read until
    /// [`PushDecoder::step`] asks.
    pub fn new(path: &Path, key: Option<EncryptionKey>, request: ReadRequest) -> PushDecoder {
        PushDecoder::starting(Start::Path(path.to_path_buf(), key), request)
    }

    /// The read `request` of an array already opened (`OpenArray::open`):
    /// it asks for the tiles of its batches and their metadata only.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera_fragment::OpenArray;
    /// use tessera_query::push::PushDecoder;
    /// use tessera_query::ReadRequest;
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let array = Arc::new(OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap());
    /// let decoder = PushDecoder::for_array(array, ReadRequest::new());
    /// let cells: usize = decoder.read_from(&LocalFs).map(|b| b.unwrap().cell_count).sum();
    /// assert!(cells > 0);
    /// ```
    pub fn for_array(array: Arc<OpenArray>, request: ReadRequest) -> PushDecoder {
        PushDecoder::starting(Start::Open(array), request)
    }

    fn starting(array: Start, request: ReadRequest) -> PushDecoder {
        PushDecoder {
            replay: Arc::new(Replay::default()),
            inline: None,
            state: State::Opening,
            rounds: 0,
            start: Opening {
                array,
                request,
                checked: false,
                context: None,
            },
            given: false,
            reopens: 0,
        }
    }

    /// Has the read reuse the buffers of `context` (see
    /// [`ReadSession::context`]): results handed back with
    /// [`ReadResult::recycle`] are filled again.
    pub fn context(mut self, context: Arc<ReadContext>) -> PushDecoder {
        self.start.context = Some(context);
        self
    }

    /// Marks the request as checked against the array's schema already
    /// (by the caller that built the decoder), so no attempt checks it.
    pub(crate) fn request_checked(mut self) -> PushDecoder {
        self.start.checked = true;
        self
    }

    /// Has `storage` answer the decoder's needs as they arise, inside
    /// [`PushDecoder::step`], which then never gives [`Step::Need`]: for
    /// local files, whose reads cost less than a round of needs and whose
    /// tiles are read in place (mapped) rather than copied into answers.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera_query::push::{PushDecoder, Step};
    /// use tessera_query::ReadRequest;
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let mut decoder = PushDecoder::new(path.as_ref(), None, ReadRequest::new()).answered_by(Arc::new(LocalFs));
    /// assert!(matches!(decoder.step().unwrap(), Step::Batch(b) if b.cell_count > 0));
    /// assert!(matches!(decoder.step().unwrap(), Step::Done));
    /// ```
    pub fn answered_by(mut self, storage: Arc<dyn Storage>) -> PushDecoder {
        self.inline = Some(storage);
        self
    }

    /// Has the read begin the tiles of the batches after the one it
    /// reads, up to `bytes` of them (a dense read in batches, as one over
    /// an object store does): the ranges begun are given by
    /// [`PushDecoder::take_ahead`] after each step, for a driver to fetch
    /// while the caller works on the batch before, and pushed once in. A
    /// step asks for them ([`Step::Need`]) only if they are still not
    /// pushed when it reads their batch.
    ///
    /// ```
    /// use tessera_query::push::{answer, PushDecoder, Step};
    /// use tessera_query::ReadRequest;
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
    /// let request = ReadRequest::new().attributes(["i32"]).budget(256);
    /// let mut decoder = PushDecoder::new(path.as_ref(), None, request).ahead(1 << 20);
    /// let (mut batches, mut begun) = (0, 0);
    /// loop {
    ///     let step = decoder.step().unwrap();
    ///     let ahead = decoder.take_ahead();
    ///     begun += ahead.len();
    ///     decoder.push(answer(&LocalFs, ahead));
    ///     match step {
    ///         Step::Need(needs) => decoder.push(answer(&LocalFs, needs)),
    ///         Step::Batch(_) => batches += 1,
    ///         Step::Done => break,
    ///     }
    /// }
    /// assert!(batches > 1 && begun > 0);
    /// ```
    pub fn ahead(mut self, bytes: u64) -> PushDecoder {
        self.replay = Arc::new(Replay::ahead(bytes));
        self
    }

    /// The bytes of answers the decoder holds: pushed and not read yet
    /// (ranges begun ahead among them), or kept for the steps that read
    /// them again; none once the read is over.
    pub fn buffered_bytes(&self) -> u64 {
        self.replay.buffered_bytes()
    }

    /// The ranges the read began ahead ([`PushDecoder::ahead`]) since the
    /// last call and were not pushed, in the order begun: the tiles of
    /// batches after the one stepped to.
    pub fn take_ahead(&mut self) -> Vec<Need> {
        self.replay.take_ahead()
    }

    /// How many times the decoder asked for answers: one round to list
    /// each level of the array's folders, one for its schemas and
    /// fragment footers, then about one per batch for its metadata and
    /// one for its tiles.
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// Gives `answers` (to needs a step asked for; others are kept too).
    pub fn push(&mut self, answers: impl IntoIterator<Item = Answer>) {
        for (need, answer) in answers {
            self.replay.push(need, answer);
        }
    }

    /// Goes on as far as the answers given allow: the next batch, what it
    /// needs to get there, or the end. An error ends the read: a request
    /// that does not fit the array, damaged files, or a storage failure
    /// pushed as an answer, named as a read would name it.
    pub fn step(&mut self) -> Result<Step, QueryError> {
        loop {
            match &mut self.state {
                State::Opening => {
                    let storage: Arc<dyn Storage> = match &self.inline {
                        Some(s) => s.clone(),
                        None => self.replay.clone(),
                    };
                    let opened = self.start.batches(storage);
                    if let Some(needs) = self.replay.take_lacked() {
                        self.rounds += 1;
                        return Ok(Step::Need(needs));
                    }
                    self.replay.forget_bytes();
                    match opened {
                        Ok(batches) => self.state = State::Reading(Box::new(batches)),
                        Err(e) => self.start_again_or_fail(e)?,
                    }
                }
                State::Reading(batches) => {
                    let next = batches.next();
                    if let Some(needs) = self.replay.take_lacked() {
                        batches.again();
                        self.rounds += 1;
                        return Ok(Step::Need(needs));
                    }
                    self.replay.forget_bytes();
                    match next {
                        Some(Ok(batch)) => {
                            self.given = true;
                            return Ok(Step::Batch(batch));
                        }
                        Some(Err(e)) => self.start_again_or_fail(e)?,
                        None => self.finish(),
                    }
                }
                State::Done => return Ok(Step::Done),
            }
        }
    }

    /// Ends the read: what it was given is dropped, ranges begun ahead
    /// and never read among them.
    fn finish(&mut self) {
        self.state = State::Done;
        self.replay.forget_all();
    }

    /// After `error`: a file found gone before any batch was given (a
    /// vacuum since the array was listed) has the read start again on the
    /// array opened anew, its folders listed anew ([`Need::Relist`]), up
    /// to [`REOPENS`] times; otherwise the read ends with `error`.
    fn start_again_or_fail(&mut self, error: QueryError) -> Result<(), QueryError> {
        if self.given || self.reopens == REOPENS || !is_missing_file(&error) {
            self.finish();
            return Err(error);
        }
        self.reopens += 1;
        self.replay.list_anew();
        if let Some(s) = &self.inline {
            s.list_anew();
        }
        if let Start::Open(array) = &self.start.array {
            self.start.array = Start::Reopen(array.clone());
        }
        self.state = State::Opening;
        Ok(())
    }

    /// The batches, the decoder's needs answered from `storage`
    /// ([`answer`]): the synchronous driver.
    pub fn read_from(self, storage: &dyn Storage) -> PushBatches<'_> {
        PushBatches {
            decoder: self,
            storage,
            over: false,
        }
    }

    /// The batches as a [`futures::Stream`], the decoder's needs answered
    /// by `storage` ([`AsyncStorage`]; `tessera-object-store`'s
    /// `ObjectStorage` is one).
    pub fn stream_from(
        self,
        storage: Arc<dyn AsyncStorage>,
    ) -> impl futures::Stream<Item = Result<ReadResult, QueryError>> {
        self.into_stream(move |needs| {
            let storage = storage.clone();
            async move { storage.answer(needs).await }
        })
    }

    /// The batches as a [`futures::Stream`], the decoder's needs answered
    /// by awaiting `fetch` (which does the I/O, as the caller likes): the
    /// asynchronous driver. Decoding runs on the task that polls.
    ///
    /// It reads one batch ahead: before a batch is handed on, the next
    /// batch's needs are asked of `fetch`, so that a fetch that starts
    /// its requests when called (as `ObjectStorage`'s do) has the next
    /// batch's bytes on the way while the caller works on this one.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use tessera_query::push::{answer, PushDecoder};
    /// use tessera_query::ReadRequest;
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
    /// let decoder = PushDecoder::new(path.as_ref(), None, ReadRequest::new());
    /// let batches = decoder.into_stream(|needs| async move { answer(&LocalFs, needs) });
    /// let cells: usize = futures::executor::block_on(
    ///     batches.map(|b| b.unwrap().cell_count).fold(0, |a, n| async move { a + n }),
    /// );
    /// assert!(cells > 0);
    /// ```
    pub fn into_stream<F, Fut>(
        self,
        fetch: F,
    ) -> impl futures::Stream<Item = Result<ReadResult, QueryError>>
    where
        F: FnMut(Vec<Need>) -> Fut,
        Fut: Future<Output = Vec<Answer>>,
    {
        let start = (self, fetch, None::<Ahead<Fut>>);
        futures::stream::unfold(Some(start), |driven| async move {
            let (mut decoder, mut fetch, mut ahead) = driven?;
            loop {
                let step = match ahead.take() {
                    Some(Ahead::Fetching(answers)) => {
                        decoder.push(answers.await);
                        decoder.step()
                    }
                    Some(Ahead::Stepped(step)) => step,
                    None => decoder.step(),
                };
                match step {
                    Ok(Step::Need(needs)) => ahead = Some(Ahead::Fetching(fetch(needs))),
                    Ok(Step::Batch(b)) => {
                        let next = match decoder.step() {
                            Ok(Step::Need(needs)) => Ahead::Fetching(fetch(needs)),
                            stepped => Ahead::Stepped(stepped),
                        };
                        return Some((Ok(b), Some((decoder, fetch, Some(next)))));
                    }
                    Ok(Step::Done) => return None,
                    Err(e) => return Some((Err(e), None)),
                }
            }
        })
    }
}

/// The batches of a [`PushDecoder`] driven from a synchronous storage
/// ([`PushDecoder::read_from`]).
pub struct PushBatches<'s> {
    decoder: PushDecoder,
    storage: &'s dyn Storage,
    over: bool,
}

impl PushBatches<'_> {
    /// The decoder driven.
    pub fn decoder(&self) -> &PushDecoder {
        &self.decoder
    }
}

impl Iterator for PushBatches<'_> {
    type Item = Result<ReadResult, QueryError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.over {
            match self.decoder.step() {
                Ok(Step::Need(needs)) => {
                    let answers = answer(self.storage, needs);
                    self.decoder.push(answers);
                }
                Ok(Step::Batch(b)) => return Some(Ok(b)),
                Ok(Step::Done) => self.over = true,
                Err(e) => {
                    self.over = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}
