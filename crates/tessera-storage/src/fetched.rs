//! Small synchronous work over an asynchronous storage: [`fetched`] runs
//! a function against the listings and whole files fetched so far; where
//! the function reaches for one not yet fetched, the attempt is dropped,
//! what it lacked is fetched (awaited), and the function runs again. For
//! work that reads a few small files (an array's schema before a write),
//! not for reading tiles (`tessera_query::push::PushDecoder` does that).

use crate::error::{inside, StorageError, StorageErrorKind, StorageResult};
use crate::hints::StorageHints;
use crate::listable::{DirEntry, ListableStorage};
use crate::need::{AsyncStorage, Data, Need};
use crate::readable::ReadableStorage;
use crate::storage::Storage;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Attempts before [`fetched`] gives up: each one fetches what the one
/// before lacked, so this many levels of files found through files.
const ROUNDS: usize = 16;

/// Whole files are fetched as tails of this many bytes at most.
const WHOLE: u64 = 1 << 40;

/// What `run` returns over the files and listings of `storage` it asks
/// for, fetched as it asks; its result is the storage's answers' as a
/// synchronous storage would give them.
///
/// ```
/// use tessera_storage::{fetched, AnswersFuture, AsyncStorage, LocalFs, ListableStorage, Need};
/// // A storage answering from local files: any AsyncStorage does.
/// struct Local;
/// impl AsyncStorage for Local {
///     fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
///         let answers = tessera_storage::answer(&LocalFs, needs);
///         Box::pin(std::future::ready(answers))
///     }
/// }
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let names = fetched(&Local, |s| {
///     s.list(&std::path::Path::new(dir).join("__schema")).map(|l| l.len())
/// });
/// assert_eq!(block_on(names).unwrap().unwrap(), 1);
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     let mut f = std::pin::pin!(f);
/// #     loop {
/// #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
/// #             return v;
/// #         }
/// #     }
/// # }
/// ```
pub async fn fetched<T>(
    storage: &dyn AsyncStorage,
    run: impl Fn(&dyn Storage) -> T,
) -> StorageResult<T> {
    let known = Fetched::default();
    until_fetched(storage, &known, || run(&known)).await
}

/// What `attempt` returns once it lacked nothing of `known`, fetching
/// into `known` what each attempt lacked.
pub(crate) async fn until_fetched<T>(
    storage: &dyn AsyncStorage,
    known: &Fetched,
    mut attempt: impl FnMut() -> T,
) -> StorageResult<T> {
    for _ in 0..ROUNDS {
        known.anew_asked.store(0, Ordering::Relaxed);
        let got = attempt();
        let lacked = std::mem::take(&mut *lock(&known.lacked));
        if lacked.is_empty() {
            return Ok(got);
        }
        for (need, answer) in storage.answer(lacked).await {
            known.keep(need, answer);
        }
    }
    Err(StorageError::new(
        StorageErrorKind::Other,
        "",
        format!("still lacking files after {ROUNDS} rounds of fetching"),
    ))
}

/// Listings and whole files fetched, and what an attempt lacked.
#[derive(Default)]
pub(crate) struct Fetched {
    lists: Mutex<HashMap<PathBuf, StorageResult<Vec<DirEntry>>>>,
    files: Mutex<HashMap<PathBuf, StorageResult<Vec<u8>>>>,
    lacked: Mutex<Vec<Need>>,
    /// How often what was fetched was dropped (from the first time on,
    /// listings are asked anew, [`Need::Relist`]: a file listed was
    /// gone), and how often the attempt under way asked for that: an
    /// attempt runs again from its start, so only its asks past those
    /// already met drop anything.
    anew_done: AtomicUsize,
    anew_asked: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A kept answer, given again as the storage gave it.
fn again<T: Clone>(kept: &StorageResult<T>) -> StorageResult<T> {
    match kept {
        Ok(v) => Ok(v.clone()),
        Err(e) => Err(e.copied()),
    }
}

impl Fetched {
    fn keep(&self, need: Need, answer: StorageResult<Data>) {
        match need {
            Need::List(path) | Need::Relist(path) => {
                let listing = answer.and_then(|d| match d {
                    Data::List(entries) => Ok(entries),
                    _ => Err(wrong(&path)),
                });
                lock(&self.lists).insert(path, listing);
            }
            Need::Tail(path, _) => {
                let bytes = answer.and_then(|d| match d {
                    Data::Tail(_, bytes) => Ok(bytes),
                    _ => Err(wrong(&path)),
                });
                lock(&self.files).insert(path, bytes);
            }
            // Only listings and whole files are asked for.
            Need::Range(..) | Need::Size(_) | Need::Exists(_) => {}
        }
    }

    /// The file at `path`, or `None` (noted as lacked).
    fn file(&self, path: &Path) -> Option<StorageResult<Vec<u8>>> {
        if let Some(kept) = lock(&self.files).get(path) {
            return Some(again(kept));
        }
        self.lack(Need::Tail(path.into(), WHOLE));
        None
    }

    /// The answer to `need` (a range, a tail or a size) from a file
    /// fetched whole; `None` for a file not fetched, or another need.
    pub(crate) fn held(&self, need: &Need) -> Option<Data> {
        let path = match need {
            Need::Range(p, _) | Need::Tail(p, _) | Need::Size(p) => p,
            _ => return None,
        };
        let files = lock(&self.files);
        let bytes = files.get(path)?.as_ref().ok()?;
        let len = bytes.len() as u64;
        match need {
            Need::Range(_, r) if r.start <= r.end && r.end <= len => Some(Data::Bytes(
                bytes[r.start as usize..r.end as usize].to_vec(),
            )),
            Need::Tail(_, max) => {
                let from = len.saturating_sub(*max) as usize;
                Some(Data::Tail(len, bytes[from..].to_vec()))
            }
            Need::Size(_) => Some(Data::Size(len)),
            _ => None,
        }
    }

    fn lack(&self, need: Need) {
        let mut lacked = lock(&self.lacked);
        if !lacked.contains(&need) {
            lacked.push(need);
        }
    }
}

/// The error of an answer of another kind than asked.
fn wrong(path: &Path) -> StorageError {
    StorageError::new(
        StorageErrorKind::Other,
        path.to_string_lossy(),
        "answered with data of another kind than asked",
    )
}

/// The error of an attempt that reached for what is not fetched yet (the
/// attempt is dropped).
fn not_yet(path: &Path) -> StorageError {
    StorageError::new(
        StorageErrorKind::Other,
        path.to_string_lossy(),
        "not fetched yet",
    )
}

impl ReadableStorage for Fetched {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        let bytes = self.file(path).ok_or_else(|| not_yet(path))??;
        inside(path, &range, bytes.len() as u64)?;
        Ok(bytes[range.start as usize..range.end as usize].to_vec())
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        let bytes = self.file(path).ok_or_else(|| not_yet(path))??;
        Ok(bytes.len() as u64)
    }

    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        self.file(path).ok_or_else(|| not_yet(path))?
    }
}

impl ListableStorage for Fetched {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        if let Some(kept) = lock(&self.lists).get(path) {
            return again(kept);
        }
        let relist = self.anew_done.load(Ordering::Relaxed) > 0;
        self.lack(match relist {
            true => Need::Relist(path.into()),
            false => Need::List(path.into()),
        });
        Err(not_yet(path))
    }

    /// From the listing of its folder.
    fn exists(&self, path: &Path) -> bool {
        let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        let name = name.to_string_lossy();
        self.list(folder)
            .is_ok_and(|entries| entries.iter().any(|e| e.name == name))
    }

    /// Everything fetched is dropped, to be fetched again with listings
    /// asked anew: a file listed was gone (a vacuum elsewhere), so the
    /// work runs again over what storage holds now.
    fn list_anew(&self) {
        let asked = self.anew_asked.fetch_add(1, Ordering::Relaxed) + 1;
        if asked > self.anew_done.load(Ordering::Relaxed) {
            self.anew_done.store(asked, Ordering::Relaxed);
            lock(&self.lists).clear();
            lock(&self.files).clear();
        }
    }
}

impl StorageHints for Fetched {
    /// No wait: the work runs again only once the listing is fetched
    /// anew, and a thread of the caller's runtime never sleeps.
    fn pause_before_listing_again(&self, _attempt: usize) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::need::testing::{block_on, Held};
    use crate::Memory;

    /// A file found through a listing, and one named in that file: one
    /// round each; a missing file is the storage's error, kept.
    #[test]
    fn files_found_through_files_take_a_round_each() {
        let mut m = Memory::default();
        m.insert("a/list/first", b"a/second".to_vec());
        m.insert("a/second", b"found".to_vec());
        let s = Held::new(m);
        let got = block_on(fetched(&s, |st| -> StorageResult<Vec<u8>> {
            let entries = st.list(Path::new("a/list"))?;
            let first = Path::new("a/list").join(&entries[0].name);
            let next = String::from_utf8(st.read_all(&first)?).expect("utf-8");
            assert!(st.exists(&first));
            st.read_all(Path::new(&next))
        }));
        assert_eq!(got.unwrap().unwrap(), b"found");
        assert_eq!(s.1.load(Ordering::Relaxed), 3);
        let missing = block_on(fetched(&s, |st| st.read_all(Path::new("a/none"))));
        let e = missing.unwrap().unwrap_err();
        assert_eq!(e.kind(), StorageErrorKind::NotFound, "{e}");
    }
}
