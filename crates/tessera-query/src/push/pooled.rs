//! The asynchronous driver that decodes on the pool: each step of a
//! [`PushDecoder`] runs as a job of rayon's pool (where its tiles are
//! decoded anyway), and the caller's task only awaits it and the answers
//! to its needs. No thread is started and none of the caller's runtime
//! waits: a Tokio worker polling the stream goes on with other tasks
//! while a batch decodes, and with the batch before (as an SQL engine's
//! operators do) while the next one decodes, since the next step is begun
//! before a batch is handed on. The ranges a decoder begins ahead
//! ([`PushDecoder::ahead`]) are fetched as soon as a step names them
//! ([`Fetches`]).

mod fetches;

use super::{PushDecoder, Step};
use crate::{QueryError, ReadResult};
use fetches::Fetches;
use futures::channel::oneshot;
use futures::{FutureExt, Stream};
use std::future::Future;
use std::sync::Arc;
use tessera_storage::{AsyncStorage, Need};

/// A batch made into what the caller takes (an Arrow record batch), on
/// the pool with the step that decoded it.
pub type Convert<T> = Arc<dyn Fn(ReadResult) -> Result<T, QueryError> + Send + Sync>;

/// What a step's job gives back: the decoder where the read goes on.
enum Stepped<T> {
    /// Needs, their answers begun (in the driver's [`Fetches`]).
    Need(PushDecoder, Vec<Need>),
    Batch(PushDecoder, T),
    Done,
    Failed(QueryError),
}

/// How a read on the pool goes on between steps.
struct Driver<T> {
    /// Answers the needs of a decoder that has no storage of its own
    /// ([`PushDecoder::answered_by`]), and the ranges it begins ahead.
    awaited: Option<Arc<Fetches>>,
    convert: Convert<T>,
}

impl<T: Send + 'static> Driver<T> {
    /// The decoder's next step, begun on the pool: its needs' answers
    /// begun, or its batch converted; either way the ranges it began
    /// ahead are fetched too.
    fn begin(&self, mut decoder: PushDecoder) -> impl Future<Output = Stepped<T>> {
        let (awaited, convert) = (self.awaited.clone(), self.convert.clone());
        let job = on_pool(move || {
            let step = decoder.step();
            if let Some(fetches) = &awaited {
                if let Ok(Step::Need(needs)) = &step {
                    fetches.begin(needs.clone());
                }
                fetches.begin(decoder.take_ahead());
            }
            stepped(decoder, step, &convert)
        });
        async move { job.await.unwrap_or_else(Stepped::Failed) }
    }
}

/// A step as the driver goes on from it.
fn stepped<T>(
    decoder: PushDecoder,
    step: Result<Step, QueryError>,
    convert: &Convert<T>,
) -> Stepped<T> {
    match step {
        Ok(Step::Batch(b)) => match convert(b) {
            Ok(t) => Stepped::Batch(decoder, t),
            Err(e) => Stepped::Failed(e),
        },
        Ok(Step::Done) => Stepped::Done,
        Ok(Step::Need(needs)) => Stepped::Need(decoder, needs),
        Err(e) => Stepped::Failed(e),
    }
}

/// Runs `job` on rayon's pool, begun now; awaited, its result, or an
/// error if it panicked.
pub(crate) fn on_pool<R: Send + 'static>(
    job: impl FnOnce() -> R + Send + 'static,
) -> impl Future<Output = Result<R, QueryError>> {
    let (tx, rx) = oneshot::channel();
    rayon::spawn(move || {
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        // A dropped receiver takes no answer; what the job made goes.
        let _ = tx.send(done);
    });
    async move {
        match rx.await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(_)) | Err(_) => Err(QueryError::Invalid(
                "internal error: a job of a read on the pool panicked".into(),
            )),
        }
    }
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
/// use tessera_storage::LocalFs;
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
    let awaited = awaited.map(|storage| Arc::new(Fetches::new(storage)));
    let driver = Driver { awaited, convert };
    let first = driver.begin(decoder).boxed();
    futures::stream::unfold(Some((first, driver)), |state| async move {
        let (mut job, driver) = state?;
        loop {
            match job.await {
                Stepped::Need(mut decoder, needs) => {
                    let Some(fetches) = &driver.awaited else {
                        let e = format!(
                            "internal error: a read on the pool without storage needs {needs:?}"
                        );
                        return Some((Err(QueryError::Invalid(e)), None));
                    };
                    decoder.push(fetches.answers(&needs).await);
                    job = driver.begin(decoder).boxed();
                }
                Stepped::Batch(decoder, b) => {
                    let next = driver.begin(decoder).boxed();
                    return Some((Ok(b), Some((next, driver))));
                }
                Stepped::Done => return None,
                Stepped::Failed(e) => return Some((Err(e), None)),
            }
        }
    })
}
