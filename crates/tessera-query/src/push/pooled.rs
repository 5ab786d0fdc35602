//! The asynchronous driver that decodes on the pool: each step of a
//! [`PushDecoder`] runs as a job of rayon's pool (where its tiles are
//! decoded anyway), and the caller's task only awaits it and the answers
//! to its needs. No thread is started and none of the caller's runtime
//! waits: a Tokio worker polling the stream goes on with other tasks
//! while a batch decodes, and with the batch before (as an SQL engine's
//! operators do) while the next one decodes, since the next step is begun
//! before a batch is handed on.

use super::{PushDecoder, Step};
use crate::{QueryError, ReadResult};
use futures::channel::oneshot;
use futures::Stream;
use std::sync::Arc;
use tessera_tile::storage::{AnswersFuture, AsyncStorage};

/// A batch made into what the caller takes (an Arrow record batch), on
/// the pool with the step that decoded it.
pub type Convert<T> = Arc<dyn Fn(ReadResult) -> Result<T, QueryError> + Send + Sync>;

/// What a step's job gives back.
enum Stepped<T> {
    /// Needs, their answers begun (the job called the storage).
    Need(AnswersFuture),
    Batch(T),
    Done,
    Failed(QueryError),
}

/// How a read on the pool goes on between steps.
struct Driver<T> {
    /// Answers the needs of a decoder that has no storage of its own
    /// ([`PushDecoder::answered_by`]).
    awaited: Option<Arc<dyn AsyncStorage>>,
    convert: Convert<T>,
}

impl<T: Send + 'static> Driver<T> {
    /// Begins the decoder's next step on the pool; the receiver gives the
    /// decoder back with what the step gave (no decoder after a panic).
    fn begin(&self, decoder: PushDecoder) -> oneshot::Receiver<(Option<PushDecoder>, Stepped<T>)> {
        let (tx, rx) = oneshot::channel();
        let awaited = self.awaited.clone();
        let convert = self.convert.clone();
        rayon::spawn(move || {
            let mut decoder = decoder;
            let stepped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                Self::step(&mut decoder, awaited.as_deref(), &*convert)
            }));
            // A dropped stream takes no answer; the decoder goes with it.
            let _ = tx.send(match stepped {
                Ok(s) => (Some(decoder), s),
                Err(_) => (None, Stepped::Failed(panicked())),
            });
        });
        rx
    }

    /// One step, its needs' answers begun or its batch converted.
    fn step(
        decoder: &mut PushDecoder,
        awaited: Option<&dyn AsyncStorage>,
        convert: &(dyn Fn(ReadResult) -> Result<T, QueryError> + Send + Sync),
    ) -> Stepped<T> {
        match decoder.step() {
            Ok(Step::Need(needs)) => match awaited {
                Some(storage) => Stepped::Need(storage.answer(needs)),
                None => Stepped::Failed(QueryError::Invalid(format!(
                    "internal error: a read on the pool without storage needs {needs:?}"
                ))),
            },
            Ok(Step::Batch(b)) => match convert(b) {
                Ok(t) => Stepped::Batch(t),
                Err(e) => Stepped::Failed(e),
            },
            Ok(Step::Done) => Stepped::Done,
            Err(e) => Stepped::Failed(e),
        }
    }
}

fn panicked() -> QueryError {
    QueryError::Invalid("internal error: a read's step panicked".into())
}

/// The batches of `decoder`, each step decoded on rayon's pool and each
/// batch converted there by `convert`, as a [`futures::Stream`]: its
/// needs are answered by `awaited` (an object store on the caller's
/// runtime), or inside the step by the decoder's own storage
/// ([`PushDecoder::answered_by`], local files). The step after a batch is
/// begun before the batch is handed on, so at most one batch waits beside
/// the one the caller holds. Await it from a task, not by blocking a
/// thread of rayon's pool, which its steps need.
///
/// ```
/// use futures::StreamExt;
/// use std::sync::Arc;
/// use tessera_query::push::{decoded_on_pool, PushDecoder};
/// use tessera_query::ReadRequest;
/// use tessera_tile::storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let request = ReadRequest::new().budget(4 << 10);
/// let decoder = PushDecoder::new(path.as_ref(), None, request).answered_by(Arc::new(LocalFs));
/// let batches = decoded_on_pool(decoder, None, Arc::new(|b| Ok(b.cell_count)));
/// let cells = futures::executor::block_on(batches.map(|n| n.unwrap()).fold(0, |a, n| async move { a + n }));
/// assert!(cells > 0);
/// ```
pub fn decoded_on_pool<T: Send + 'static>(
    decoder: PushDecoder,
    awaited: Option<Arc<dyn AsyncStorage>>,
    convert: Convert<T>,
) -> impl Stream<Item = Result<T, QueryError>> + Send + 'static {
    let driver = Arc::new(Driver { awaited, convert });
    let first = driver.begin(decoder);
    futures::stream::unfold(Some((first, driver)), |state| async move {
        let (mut job, driver) = state?;
        loop {
            let Ok((decoder, stepped)) = job.await else {
                return Some((Err(panicked()), None));
            };
            match (decoder, stepped) {
                (Some(mut decoder), Stepped::Need(answers)) => {
                    decoder.push(answers.await);
                    job = driver.begin(decoder);
                }
                (Some(decoder), Stepped::Batch(b)) => {
                    let next = driver.begin(decoder);
                    return Some((Ok(b), Some((next, driver))));
                }
                (_, Stepped::Done) => return None,
                (_, Stepped::Failed(e)) => return Some((Err(e), None)),
                (None, _) => return Some((Err(panicked()), None)),
            }
        }
    })
}
