//! Fetching a batch's requests: each GET a task of its own, waited on
//! together, cancelled together; and the wanted ranges served from what
//! came.

use crate::plan::Plan;
use futures::StreamExt;
use object_store::path::Path as Key;
use object_store::{GetOptions, GetRange, ObjectStore};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use tessera_storage::{StorageError, StorageErrorKind, StorageResult};

/// A GET to make: the key, the range (`None`: the whole object) and the
/// room its buffer is made with.
pub(crate) type Fetch = (Key, Option<Range<u64>>, usize);

/// A batch's bytes, one buffer per request.
pub(crate) type Batch = Vec<Vec<u8>>;

/// One GET of a batch.
pub(crate) struct Get {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) uri: String,
    pub(crate) key: Key,
    /// `None`: the whole object.
    pub(crate) range: Option<Range<u64>>,
    /// Room the buffer it fills is made with: the first part of a span
    /// has room for the whole span, whose later parts are appended to it.
    pub(crate) capacity: usize,
}

impl Get {
    /// Sends the request once a permit is free, copies its body as it
    /// streams in into one buffer (the client's chunks are not gathered
    /// twice), and checks the range came whole.
    pub(crate) async fn run(self, permits: Arc<tokio::sync::Semaphore>) -> StorageResult<Vec<u8>> {
        let Get {
            store,
            uri,
            key,
            range,
            capacity,
        } = self;
        if range.as_ref().is_some_and(|r| r.is_empty()) {
            return Ok(Vec::new());
        }
        let _permit = permits
            .acquire_owned()
            .await
            .map_err(|e| StorageError::caused(StorageErrorKind::Other, &uri, e))?;
        let options = GetOptions {
            range: range.clone().map(GetRange::Bounded),
            ..Default::default()
        };
        let got = store
            .get_opts(&key, options)
            .await
            .map_err(|e| failed("GET", &uri, e))?;
        let mut body = got.into_stream();
        let mut out = Vec::new();
        out.try_reserve_exact(capacity)
            .map_err(|_| StorageError::no_memory(&uri, capacity as u64))?;
        while let Some(chunk) = body.next().await {
            out.extend_from_slice(&chunk.map_err(|e| failed("GET", &uri, e))?);
        }
        if let Some(r) = range.filter(|r| out.len() as u64 != r.end - r.start) {
            return Err(StorageError::new(
                StorageErrorKind::OutOfRange,
                uri,
                format!(
                    "byte range {}..{} is outside the object ({} bytes came)",
                    r.start,
                    r.end,
                    out.len()
                ),
            ));
        }
        Ok(out)
    }
}

/// Tasks cancelled when dropped.
pub(crate) struct AbortOnDrop<T>(pub(crate) Vec<tokio::task::JoinHandle<T>>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// A task started where a storage's requests run (or why it could not
/// start); dropped unwaited (a reader that failed before it needed the
/// bytes), it is cancelled.
pub(crate) struct Started<T>(
    pub(crate) Option<StorageResult<tokio::task::JoinHandle<StorageResult<T>>>>,
);

impl<T> Started<T> {
    /// Waits for the task. Waiting on a spawned task never panics, whatever
    /// runtime the caller is on.
    pub(crate) fn wait(mut self) -> StorageResult<T> {
        let task = self.0.take().expect("waited once")?;
        crate::runtime::wait_for(task).map_err(task_failed)?
    }

    /// Awaits the task, from any executor.
    pub(crate) async fn finish(mut self) -> StorageResult<T> {
        let task = self.0.take().expect("awaited once")?;
        // Taken out of `self`, the task is not aborted when `self` drops;
        // a caller that drops this future drops the task's handle, which
        // lets it run on: abort it then too.
        let mut task = AbortOnDrop(vec![task]);
        let got = (&mut task.0[0]).await;
        got.map_err(task_failed)?
    }
}

impl<T> Drop for Started<T> {
    fn drop(&mut self) {
        if let Some(Ok(task)) = self.0.take() {
            task.abort();
        }
    }
}

/// The error of a failed request: which object, what was asked of it,
/// and the store's answer (status and message), its kind told from the
/// store client's.
pub(crate) fn failed(method: &str, uri: &str, e: object_store::Error) -> StorageError {
    use object_store::Error as E;
    let kind = match &e {
        E::NotFound { .. } => StorageErrorKind::NotFound,
        E::AlreadyExists { .. } | E::Precondition { .. } => StorageErrorKind::AlreadyExists,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            StorageErrorKind::PermissionDenied
        }
        E::InvalidPath { .. } => StorageErrorKind::InvalidKey,
        E::NotSupported { .. } | E::NotImplemented { .. } => StorageErrorKind::Unsupported,
        _ => StorageErrorKind::Other,
    };
    let message = format!("{method}: {e}");
    StorageError::new(kind, uri, message)
}

/// The error of a request's task that did not finish (cancelled, or
/// failed inside the client).
pub(crate) fn task_failed(e: tokio::task::JoinError) -> StorageError {
    StorageError::new(
        StorageErrorKind::Other,
        "",
        format!("object store task failed: {e}"),
    )
}

/// The wanted ranges of `plan`, in the order asked, from its requests'
/// bytes `got`: a span's later parts appended to its first (made with
/// room for the span); a span that serves one range is that range, moved
/// out; others' ranges are copied out.
pub(crate) fn serve(
    plan: &Plan<PathBuf>,
    wanted: &[(PathBuf, Range<u64>)],
    got: Vec<Vec<u8>>,
) -> Vec<Vec<u8>> {
    let mut serves = vec![0usize; plan.spans.len()];
    for &(span, _) in &plan.served_by {
        serves[span] += 1;
    }
    let mut got = got.into_iter();
    let mut spans: Vec<Option<Vec<u8>>> = plan
        .spans
        .iter()
        .map(|s| {
            let mut parts = got.by_ref().take(s.fetches.len());
            let mut bytes = parts.next().unwrap_or_default();
            for part in parts {
                bytes.extend_from_slice(&part);
            }
            Some(bytes)
        })
        .collect();
    wanted
        .iter()
        .zip(&plan.served_by)
        .map(|((_, r), &(span, at))| {
            if serves[span] == 1 {
                return spans[span].take().unwrap_or_default();
            }
            let bytes = spans[span].as_deref().unwrap_or_default();
            bytes[at as usize..(at + r.end - r.start) as usize].to_vec()
        })
        .collect()
}

/// A file's size and last bytes, or why not.
pub(crate) type Tail = StorageResult<(u64, Vec<u8>)>;

/// GETs each of `wanted` (its index in the caller's list, key, range) from
/// `store` (named `root` in messages), `n` at once: each file's size and
/// bytes, or why not, by index, in no particular order.
pub(crate) async fn get_tails(
    store: Arc<dyn ObjectStore>,
    root: String,
    wanted: Vec<(usize, Key, GetRange)>,
    n: usize,
) -> Vec<(usize, Tail)> {
    futures::stream::iter(wanted)
        .map(|(i, key, range)| {
            let (store, root) = (store.clone(), root.clone());
            async move {
                let uri = format!("{root}/{key}");
                let options = GetOptions {
                    range: Some(range),
                    ..Default::default()
                };
                let got = async {
                    let r = store.get_opts(&key, options).await?;
                    let size = r.meta.size;
                    Ok((size, r.bytes().await?.to_vec()))
                }
                .await
                .map_err(|e| failed("GET", &uri, e));
                (i, got)
            }
        })
        .buffer_unordered(n)
        .collect()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spans made of several parts are joined; a span serving one range
    /// is that range; overlapping and neighbouring ranges are cut out of
    /// their span, in the order asked.
    #[test]
    fn wanted_ranges_come_out_of_their_spans() {
        let file: Vec<u8> = (0..100u8).collect();
        let wanted: Vec<(PathBuf, Range<u64>)> =
            [("a", 10..30), ("b", 0..50), ("a", 20..40), ("a", 90..95)]
                .into_iter()
                .map(|(f, r)| (PathBuf::from(f), r))
                .collect();
        let plan = Plan::new(&wanted, 5, 16);
        let got: Vec<Vec<u8>> = plan
            .fetches
            .iter()
            .map(|f| file[f.range.start as usize..f.range.end as usize].to_vec())
            .collect();
        let served = serve(&plan, &wanted, got);
        for ((_, r), bytes) in wanted.iter().zip(&served) {
            assert_eq!(bytes.as_slice(), &file[r.start as usize..r.end as usize]);
        }
        // b's 50 bytes came as four parts of at most 16.
        assert_eq!(plan.fetches.len(), 2 + 4 + 1);
    }
}
