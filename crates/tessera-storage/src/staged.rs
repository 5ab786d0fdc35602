//! Maintenance over an asynchronous storage, planned without I/O:
//! [`planned`] runs a synchronous function (a vacuum, a consolidation of
//! commits or metadata) over a [`Location`] whose reads come from
//! listings and whole files fetched so far and whose writes are taken
//! down in an [`Outbox`]. Where the function reaches for something not
//! yet fetched, the attempt is dropped with its writes, what it lacked is
//! fetched (awaited) and it runs again; the writes of the attempt that
//! lacked nothing are returned for a driver to carry out, in order.
//!
//! A function whose later reads must see its earlier writes (a check run
//! after removals) is planned in two steps, the first carried out before
//! the second is planned.

use crate::error::{StorageError, StorageErrorKind, StorageResult};
use crate::fetched::{until_fetched, Fetched};
use crate::hints::StorageHints;
use crate::listable::{DirEntry, ListableStorage};
use crate::location::Location;
use crate::need::{AnswersFuture, AsyncStorage, Need};
use crate::outbox::{Outbox, WriteOp};
use crate::readable::ReadableStorage;
use crate::write::{FileWriter, WritableStorage};
use crate::write_async::AsyncWritableStorage;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A path and the asynchronous storage it is in, read and written by
/// awaiting it: what maintenance over an object store takes, as
/// [`Location`] is for the synchronous one.
#[derive(Clone)]
pub struct AsyncLocation {
    reads: Arc<dyn AsyncStorage>,
    writes: Arc<dyn AsyncWritableStorage>,
    path: PathBuf,
}

impl AsyncLocation {
    /// `path` in `storage` (an object store's
    /// `tessera_object_store::ObjectStorage` is one).
    pub fn new<S>(storage: Arc<S>, path: impl Into<PathBuf>) -> AsyncLocation
    where
        S: AsyncStorage + AsyncWritableStorage + 'static,
    {
        AsyncLocation::read_and_written(storage.clone(), storage, path)
    }

    /// `path`, read through `reads` and written through `writes`.
    pub fn read_and_written(
        reads: Arc<dyn AsyncStorage>,
        writes: Arc<dyn AsyncWritableStorage>,
        path: impl Into<PathBuf>,
    ) -> AsyncLocation {
        AsyncLocation {
            reads,
            writes,
            path: path.into(),
        }
    }

    /// The storage, to read through.
    pub fn reader(&self) -> &dyn AsyncStorage {
        &*self.reads
    }

    /// The storage, to read through, shared (a read that outlives the
    /// borrow holds it).
    pub fn shared_reader(&self) -> Arc<dyn AsyncStorage> {
        self.reads.clone()
    }

    /// The storage, to write through.
    pub fn writer(&self) -> Arc<dyn AsyncWritableStorage> {
        self.writes.clone()
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::fmt::Debug for AsyncLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path.display())
    }
}

/// What `run` returns over `at` (its reads fetched from `at` as it asks,
/// its writes taken down), and the writes of the attempt that lacked
/// nothing, in the order asked.
///
/// ```
/// use std::path::Path;
/// use std::sync::Arc;
/// use tessera_storage::{answer, planned, AnswersFuture, AsyncLocation, AsyncStorage, LocalFs, Need, WriteOp};
/// // Local files answered as an asynchronous storage would: any AsyncStorage does.
/// struct Local;
/// impl AsyncStorage for Local {
///     fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
///         Box::pin(std::future::ready(answer(&LocalFs, needs)))
///     }
/// }
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let (schemas, writes) = block_on(planned(&Local, Path::new(dir), |at| {
///     let names = tessera_storage::entry_names(at.reader(), &at.path().join("__schema"))?;
///     at.storage().put(&at.path().join("schemas.txt"), names.join("\n").as_bytes())?;
///     Ok::<_, tessera_storage::StorageError>(names.len())
/// }))
/// .unwrap();
/// assert_eq!(schemas.unwrap(), 1);
/// assert!(matches!(&writes[..], [WriteOp::Put(p, _)] if p.ends_with("schemas.txt")));
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
pub async fn planned<T>(
    storage: &dyn AsyncStorage,
    at: &Path,
    run: impl Fn(&Location) -> T,
) -> StorageResult<(T, Vec<WriteOp>)> {
    let (got, writes, _) = planned_fetching(storage, at, run).await?;
    Ok((got, writes))
}

/// [`planned`], for a plan a read then follows: besides, `storage` as it
/// answers the read, the whole files the planning fetched (schemas,
/// fragment metadata) answered from memory, not fetched again.
///
/// ```
/// use std::path::Path;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// use tessera_storage::{answer, planned_for_reading, AnswersFuture, AsyncStorage, Data, LocalFs, Need};
/// // Local files answered as an asynchronous storage would, counted.
/// struct Local(AtomicUsize);
/// impl AsyncStorage for Local {
///     fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
///         self.0.fetch_add(needs.len(), Ordering::Relaxed);
///         Box::pin(std::future::ready(answer(&LocalFs, needs)))
///     }
/// }
/// let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array"));
/// let local = Arc::new(Local(AtomicUsize::new(0)));
/// let (schema, _, reading) = block_on(planned_for_reading(local.clone(), dir, |at| {
///     let names = tessera_storage::entry_names(at.reader(), &at.path().join("__schema"))?;
///     let schema = at.path().join("__schema").join(&names[0]);
///     at.reader().read_all(&schema)?; // fetched whole while planning
///     Ok::<_, tessera_storage::StorageError>(schema)
/// }))
/// .unwrap();
/// let schema = schema.unwrap();
/// let asked = local.0.load(Ordering::Relaxed);
/// // The schema's first bytes, from what the planning fetched.
/// let got = block_on(reading.answer(vec![Need::Range(schema.clone(), 0..4)]));
/// let whole = std::fs::read(&schema).unwrap();
/// assert_eq!(got[0].1.as_ref().unwrap(), &Data::Bytes(whole[..4].to_vec()));
/// assert_eq!(local.0.load(Ordering::Relaxed), asked);
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
pub async fn planned_for_reading<T>(
    storage: Arc<dyn AsyncStorage>,
    at: &Path,
    run: impl Fn(&Location) -> T,
) -> StorageResult<(T, Vec<WriteOp>, Arc<dyn AsyncStorage>)> {
    let (got, writes, known) = planned_fetching(&*storage, at, run).await?;
    let primed = Primed {
        known,
        inner: storage,
    };
    Ok((got, writes, Arc::new(primed)))
}

/// [`planned`] and what it fetched.
async fn planned_fetching<T>(
    storage: &dyn AsyncStorage,
    at: &Path,
    run: impl Fn(&Location) -> T,
) -> StorageResult<(T, Vec<WriteOp>, Arc<Fetched>)> {
    let known = Arc::new(Fetched::default());
    let mut outbox = Outbox::default();
    let got = until_fetched(storage, &known, || {
        // Each attempt writes into an outbox of its own: only the last
        // one's writes are carried out.
        outbox = Outbox::default();
        let staged = Staged {
            known: known.clone(),
            outbox: outbox.clone(),
        };
        run(&Location::new(Arc::new(staged), at))
    })
    .await?;
    Ok((got, outbox.take(), known))
}

/// A storage answering ranges, tails and sizes of the files fetched
/// whole from them, and every other need from `inner`.
struct Primed {
    known: Arc<Fetched>,
    inner: Arc<dyn AsyncStorage>,
}

impl AsyncStorage for Primed {
    fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
        let (mut held, mut rest) = (Vec::new(), Vec::new());
        for need in needs {
            match self.known.held(&need) {
                Some(data) => held.push((need, Ok(data))),
                None => rest.push(need),
            }
        }
        if rest.is_empty() {
            return Box::pin(std::future::ready(held));
        }
        let later = self.inner.answer(rest);
        Box::pin(async move {
            held.extend(later.await);
            held
        })
    }
}

/// Reads from what was fetched, writes into an outbox.
struct Staged {
    known: Arc<Fetched>,
    outbox: Outbox,
}

impl ReadableStorage for Staged {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        self.known.read_range(path, range)
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        self.known.size(path)
    }

    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        self.known.read_all(path)
    }
}

impl ListableStorage for Staged {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        self.known.list(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.known.exists(path)
    }

    fn list_anew(&self) {
        self.known.list_anew()
    }
}

impl StorageHints for Staged {
    crate::forward_storage_hints!(known);
}

impl WritableStorage for Staged {
    fn put(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.outbox.put(path, bytes)
    }

    fn put_new(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.outbox.put_new(path, bytes)
    }

    fn writer(&self, path: &Path) -> StorageResult<Box<dyn FileWriter>> {
        self.outbox.writer(path)
    }

    fn delete(&self, path: &Path) -> StorageResult<bool> {
        self.outbox.delete(path)
    }

    fn delete_folder(&self, path: &Path) -> StorageResult<usize> {
        self.outbox.delete_folder(path)
    }

    fn create_folder(&self, path: &Path) -> StorageResult<()> {
        self.outbox.create_folder(path)
    }

    /// A URI as it is; a local path absolute as `file://` (as
    /// [`LocalFs`](crate::LocalFs) names it, less resolving links, which
    /// would need I/O).
    fn uri(&self, path: &Path) -> StorageResult<String> {
        let text = path.to_string_lossy();
        match (text.contains("://"), path.is_absolute()) {
            (true, _) => Ok(text.into_owned()),
            (false, true) => Ok(format!("file://{text}")),
            (false, false) => Err(StorageError::new(
                StorageErrorKind::Unsupported,
                text,
                "a relative local path has no URI without asking the filesystem",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::need::testing::{block_on, Held};
    use crate::{answer, AnswersFuture, Memory};

    /// Only the writes of the attempt that lacked nothing are kept, once
    /// each, though earlier attempts asked some of them too.
    #[test]
    fn writes_of_dropped_attempts_are_dropped() {
        let mut m = Memory::default();
        m.insert("a/list/one", b"1".to_vec());
        m.insert("a/list/two", b"2".to_vec());
        let (sum, writes) = block_on(planned(&Held::new(m), Path::new("a"), |at| {
            let s = at.storage();
            s.delete(Path::new("a/old"))?;
            let mut sum = 0;
            for name in crate::entry_names(at.reader(), Path::new("a/list"))? {
                let bytes = at.reader().read_all(&Path::new("a/list").join(&name))?;
                sum += bytes[0] - b'0';
                s.put_new(&Path::new("a/seen").join(&name), &bytes)?;
            }
            Ok::<u8, StorageError>(sum)
        }))
        .unwrap();
        assert_eq!(sum.unwrap(), 3);
        assert_eq!(
            writes,
            [
                WriteOp::Delete("a/old".into()),
                WriteOp::PutNew("a/seen/one".into(), b"1".to_vec()),
                WriteOp::PutNew("a/seen/two".into(), b"2".to_vec()),
            ]
        );
    }

    /// A listed file gone when read: the listing is asked anew and the
    /// work runs over what is there now, once.
    #[test]
    fn a_file_gone_is_listed_again() {
        // Another process removes `a/gone` right after the first listing.
        struct Vanishing(Memory, Memory, std::sync::atomic::AtomicUsize);
        impl AsyncStorage for Vanishing {
            fn answer(&self, needs: Vec<crate::Need>) -> AnswersFuture {
                use std::sync::atomic::Ordering::Relaxed;
                let listings = needs
                    .iter()
                    .filter(|n| matches!(n, crate::Need::List(_) | crate::Need::Relist(_)));
                let before = self.2.fetch_add(listings.count(), Relaxed) == 0;
                let m = if before { &self.0 } else { &self.1 };
                Box::pin(std::future::ready(answer(m, needs)))
            }
        }
        let (mut before, mut after) = (Memory::default(), Memory::default());
        before.insert("a/gone", b"x".to_vec());
        before.insert("a/kept", b"y".to_vec());
        after.insert("a/kept", b"y".to_vec());
        let s = Vanishing(before, after, Default::default());
        let (names, _) = block_on(planned(&s, Path::new("a"), |at| {
            crate::listing_again(at.reader(), |_| {
                let names = crate::entry_names(at.reader(), Path::new("a"))?;
                for n in &names {
                    at.reader().read_all(&Path::new("a").join(n))?;
                }
                Ok::<_, StorageError>(names)
            })
        }))
        .unwrap();
        assert_eq!(names.unwrap(), ["kept"]);
        assert_eq!(s.2.load(std::sync::atomic::Ordering::Relaxed), 2);
    }
}
