//! What a reader that does no I/O of its own asks of storage ([`Need`]),
//! what it is given back ([`Data`]), and the answering of needs: from a
//! synchronous [`Storage`] ([`answer`]) or an asynchronous one
//! ([`AsyncStorage`]). `tessera_query::push::PushDecoder` is such a reader.

use crate::error::StorageResult;
use crate::listable::DirEntry;
use crate::storage::Storage;
use std::collections::BTreeMap;
use std::future::Future;
use std::ops::Range;
use std::path::PathBuf;
use std::pin::Pin;

/// One thing a read needs from storage before it can go on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Need {
    /// The bytes `range` of the file at the path.
    Range(PathBuf, Range<u64>),
    /// A file's size and its last bytes, at most the given many (a
    /// fragment's footer).
    Tail(PathBuf, u64),
    /// A file's size.
    Size(PathBuf),
    /// A folder's listing (a missing folder lists as empty).
    List(PathBuf),
    /// A folder's listing as it is now, not one storage kept from before:
    /// asked when a file listed earlier was found gone (a vacuum since).
    Relist(PathBuf),
    /// Whether a file or folder exists.
    Exists(PathBuf),
}

/// What answers a [`Need`]: the variant of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    /// A [`Need::Range`]'s bytes.
    Bytes(Vec<u8>),
    /// A [`Need::Tail`]'s file size and last bytes.
    Tail(u64, Vec<u8>),
    /// A [`Need::Size`]'s size.
    Size(u64),
    /// A [`Need::List`]'s or [`Need::Relist`]'s entries.
    List(Vec<DirEntry>),
    /// A [`Need::Exists`]'s answer.
    Exists(bool),
}

/// A need with its answer, or why storage could not answer it.
pub type Answer = (Need, StorageResult<Data>);

/// Answers `needs` from `storage`: every range as one
/// [`read_batch`](crate::ReadableStorage::read_batch) (each
/// alone if the batch fails, so that a failure is the range's own), the
/// tails of each size as one
/// [`read_tails`](crate::ReadableStorage::read_tails), the
/// rest one by one.
///
/// ```
/// use tessera_storage::{answer, Data, LocalFs, Need};
/// let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array/__schema");
/// let answers = answer(&LocalFs, vec![Need::Exists(schema.into())]);
/// assert_eq!(answers[0].1.as_ref().unwrap(), &Data::Exists(true));
/// ```
pub fn answer(storage: &dyn Storage, needs: Vec<Need>) -> Vec<Answer> {
    let grouped = Grouped::of(needs);
    let mut out = Vec::with_capacity(grouped.len());
    for need in grouped.single {
        let got = match &need {
            Need::Size(path) => storage.size(path).map(Data::Size),
            Need::List(path) => storage.list(path).map(Data::List),
            Need::Relist(path) => {
                storage.list_anew();
                storage.list(path).map(Data::List)
            }
            Need::Exists(path) => Ok(Data::Exists(storage.exists(path))),
            Need::Range(..) | Need::Tail(..) => unreachable!("grouped apart"),
        };
        out.push((need, got));
    }
    for (max, files) in grouped.tails {
        let got = storage.read_tails(&files, max);
        out.extend(Grouped::tails_answered(files, max, got));
    }
    let ranges = grouped.ranges;
    match storage.read_batch(&ranges) {
        Ok(bytes) => out.extend(Grouped::ranges_answered(ranges, bytes)),
        Err(_) => out.extend(ranges.into_iter().map(|(p, r)| {
            let got = storage.read_range(&p, r.clone()).map(Data::Bytes);
            (Need::Range(p, r), got)
        })),
    }
    out
}

/// Needs sorted for answering: ranges to read as one batch, footers as
/// one batch per size asked, the rest one by one.
#[derive(Debug, Default)]
pub struct Grouped {
    /// [`Need::Range`]s, in the order asked.
    pub ranges: Vec<(PathBuf, Range<u64>)>,
    /// [`Need::Tail`]s, files by the bytes asked of each.
    pub tails: BTreeMap<u64, Vec<PathBuf>>,
    /// Sizes, listings and existence.
    pub single: Vec<Need>,
}

impl Grouped {
    /// `needs`, grouped.
    pub fn of(needs: Vec<Need>) -> Grouped {
        let mut g = Grouped::default();
        for need in needs {
            match need {
                Need::Range(path, range) => g.ranges.push((path, range)),
                Need::Tail(path, max) => g.tails.entry(max).or_default().push(path),
                other => g.single.push(other),
            }
        }
        g
    }

    /// How many needs there are.
    pub fn len(&self) -> usize {
        self.ranges.len() + self.tails.values().map(Vec::len).sum::<usize>() + self.single.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The answers of the tails of `files` (`max` bytes asked of each).
    pub fn tails_answered(
        files: Vec<PathBuf>,
        max: u64,
        got: Vec<StorageResult<(u64, Vec<u8>)>>,
    ) -> impl Iterator<Item = Answer> {
        files
            .into_iter()
            .zip(got)
            .map(move |(p, t)| (Need::Tail(p, max), t.map(|(n, b)| Data::Tail(n, b))))
    }

    /// The answers of `ranges`, read as one batch into `bytes`.
    pub fn ranges_answered(
        ranges: Vec<(PathBuf, Range<u64>)>,
        bytes: Vec<Vec<u8>>,
    ) -> impl Iterator<Item = Answer> {
        ranges
            .into_iter()
            .zip(bytes)
            .map(|((p, r), b)| (Need::Range(p, r), Ok(Data::Bytes(b))))
    }
}

/// Storage that answers needs asynchronously: the I/O of an asynchronous
/// driver of a reader that does none itself. Answers come in any order,
/// one per need.
pub trait AsyncStorage: Send + Sync {
    /// Answers `needs`; storage failures are the answers' errors. The
    /// future owns what it needs, so that a driver can begin the answers
    /// on one thread and await them on another; a storage whose requests
    /// run as tasks starts them when this is called.
    fn answer(&self, needs: Vec<Need>) -> AnswersFuture;
}

/// The answers an [`AsyncStorage`] gives, to be awaited.
pub type AnswersFuture = Pin<Box<dyn Future<Output = Vec<Answer>> + Send + 'static>>;

/// What this crate's tests of asynchronous storage share.
#[cfg(test)]
pub(crate) mod testing {
    use super::{answer, AnswersFuture, AsyncStorage, Need};
    use crate::memory::Memory;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Files in memory answered as an asynchronous storage, counting the
    /// rounds of needs asked.
    pub(crate) struct Held(pub Memory, pub AtomicUsize);

    impl Held {
        pub fn new(files: Memory) -> Held {
            Held(files, AtomicUsize::new(0))
        }
    }

    impl AsyncStorage for Held {
        fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
            self.1.fetch_add(1, Ordering::Relaxed);
            Box::pin(std::future::ready(answer(&self.0, needs)))
        }
    }

    /// Polls `f` to its end on this thread (its futures never wait long).
    pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let mut f = std::pin::pin!(f);
        loop {
            if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }
}
