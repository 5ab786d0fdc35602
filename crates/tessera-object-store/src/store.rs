//! [`ObjectStorage`]: tessera's [`Storage`] over one object store.

use crate::listing::Listings;
use crate::plan::Plan;
use crate::uri::ObjectUri;
use crate::ObjectStoreError;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tessera_tile::storage::{DirEntry, PendingBatch, Storage};

/// How many requests a batch keeps in flight by default: enough to hide
/// tens of milliseconds of latency behind each other, few enough that a
/// store does not throttle one reader.
pub const DEFAULT_CONCURRENCY: usize = 64;

/// Objects in one page of a listing (S3's and GCS's default): a subtree
/// listed whole must fit in it.
const SUBTREE_PAGE: usize = 1000;

/// One request sent to the store, as [`ObjectStorage::requests`] records
/// it: for tests and benchmarks that count and compare request sequences.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Request {
    /// Which storage call sent it: requests of one call (a batch) are in
    /// flight together, in no set order.
    pub call: usize,
    /// `GET`, `HEAD`, `LIST`, `PUT` or `DELETE`.
    pub method: &'static str,
    /// The object key (for `LIST`, the folder's prefix).
    pub key: String,
    /// The bytes asked for: `a..b`, `last N`, or empty for whole objects.
    pub range: String,
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.key)?;
        if !self.range.is_empty() {
            write!(f, " {}", self.range)?;
        }
        Ok(())
    }
}

/// What clones of one storage share: the client, the runtime its futures
/// run on, and the request log.
struct Shared {
    store: Arc<dyn ObjectStore>,
    root: ObjectUri,
    /// Taken on drop: a runtime dropped inside another runtime's task
    /// would panic, so it is shut down in the background instead.
    runtime: Option<tokio::runtime::Runtime>,
    log: Mutex<Option<Vec<Request>>>,
    calls: std::sync::atomic::AtomicUsize,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// Tessera's [`Storage`] over one bucket of an object store.
///
/// Paths are URIs of that bucket (`s3://bucket/dir/array/__schema/...`).
/// Folder listings are kept for the storage's life, so that opening an
/// array lists each folder once: an `ObjectStorage` sees folders as they
/// were when first listed (its own writes excepted). [`ObjectStorage::fresh`]
/// gives one that lists anew, sharing the client and its connections.
#[derive(Clone)]
pub struct ObjectStorage {
    shared: Arc<Shared>,
    concurrency: usize,
    listings: Arc<Mutex<Listings>>,
}

impl std::fmt::Debug for ObjectStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectStorage({})", self.shared.root.store())
    }
}

impl ObjectStorage {
    /// The storage for the bucket `uri` names (any key in it is ignored),
    /// configured from the environment: `AWS_*` for `s3://`, `GOOGLE_*`
    /// for `gs://`, `AZURE_*` for `az://` and `abfs://`; `http(s)://`
    /// reads a server's objects by URL; `memory://` is an empty store in
    /// memory.
    pub fn for_uri(uri: &str) -> Result<ObjectStorage, ObjectStoreError> {
        use object_store::{aws, azure, gcp, http, memory};
        let parsed = ObjectUri::parse(uri)?;
        let store_uri = parsed.store();
        let client = |source| ObjectStoreError::Client {
            uri: store_uri.clone(),
            source,
        };
        let store: Arc<dyn ObjectStore> = match parsed.scheme.as_str() {
            "s3" | "s3a" => Arc::new(
                aws::AmazonS3Builder::from_env()
                    .with_url(&store_uri)
                    .build()
                    .map_err(client)?,
            ),
            "gs" | "gcs" => Arc::new(
                gcp::GoogleCloudStorageBuilder::from_env()
                    .with_url(&store_uri)
                    .build()
                    .map_err(client)?,
            ),
            "az" | "azure" | "abfs" => Arc::new(
                azure::MicrosoftAzureBuilder::from_env()
                    .with_url(&store_uri)
                    .build()
                    .map_err(client)?,
            ),
            "http" | "https" => Arc::new(
                http::HttpBuilder::new()
                    .with_url(&store_uri)
                    .build()
                    .map_err(client)?,
            ),
            _ => Arc::new(memory::InMemory::new()),
        };
        Self::with_store(store, &store_uri)
    }

    /// The storage for `store`, whose objects are named by URIs starting
    /// with `root` (`scheme://bucket`).
    pub fn with_store(
        store: Arc<dyn ObjectStore>,
        root: &str,
    ) -> Result<ObjectStorage, ObjectStoreError> {
        let root = ObjectUri::parse(root)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tessera-object-store")
            .enable_all()
            .build()?;
        Ok(ObjectStorage {
            shared: Arc::new(Shared {
                store,
                root,
                runtime: Some(runtime),
                log: Mutex::new(None),
                calls: Default::default(),
            }),
            concurrency: DEFAULT_CONCURRENCY,
            listings: Default::default(),
        })
    }

    /// At most `n` requests of a batch in flight at once.
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// A storage on the same client that lists folders anew (and keeps
    /// its own listings from then on).
    pub fn fresh(&self) -> ObjectStorage {
        ObjectStorage {
            shared: self.shared.clone(),
            concurrency: self.concurrency,
            listings: Default::default(),
        }
    }

    /// Starts recording every request sent (dropping any recorded).
    pub fn record_requests(&self) {
        *self.shared.log.lock().expect("log lock") = Some(Vec::new());
    }

    /// The requests sent since [`ObjectStorage::record_requests`], in the
    /// order they were sent.
    pub fn requests(&self) -> Vec<Request> {
        self.shared
            .log
            .lock()
            .expect("log lock")
            .clone()
            .unwrap_or_default()
    }

    /// The object key of `path`, which must be a URI of this store.
    pub(crate) fn key(&self, path: &Path) -> io::Result<Key> {
        let text = path.to_string_lossy();
        let uri = ObjectUri::parse(&text).map_err(|e| io::Error::other(e.to_string()))?;
        let root = &self.shared.root;
        if uri.scheme != root.scheme || uri.bucket != root.bucket {
            return Err(io::Error::other(format!(
                "{text}: not in {}, the store this storage serves",
                root.store()
            )));
        }
        Key::parse(&uri.key)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{text}: {e}")))
    }

    pub(crate) fn uri_of(&self, key: &Key) -> String {
        format!("{}/{key}", self.shared.root.store())
    }

    /// Runs `fut` on this storage's runtime and waits for it.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = io::Result<T>> + Send + 'static,
    ) -> io::Result<T> {
        self.start(fut).wait()
    }

    /// Starts `fut` on this storage's runtime.
    pub(crate) fn start<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = io::Result<T>> + Send + 'static,
    ) -> Started<T> {
        let rt = self.shared.runtime.as_ref().expect("runtime until dropped");
        Started(Some(rt.spawn(fut)))
    }

    /// The client.
    pub(crate) fn store(&self) -> Arc<dyn ObjectStore> {
        self.shared.store.clone()
    }

    pub(crate) fn call(&self) -> usize {
        self.shared
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn log(&self, call: usize, method: &'static str, key: &Key, range: String) {
        if let Some(log) = self.shared.log.lock().expect("log lock").as_mut() {
            log.push(Request {
                call,
                method,
                key: key.to_string(),
                range,
            });
        }
    }

    /// Forgets the kept listings a write or delete at `path` changes: its
    /// folder's, and every folder above, which may gain or lose a
    /// subfolder (`a/__commits/x.wrt` makes `__commits` appear in `a`).
    pub(crate) fn forget_listing(&self, path: &Path) {
        if let Ok(mut l) = self.listings.lock() {
            l.forget(&folder_id(path));
        }
    }

    /// Forgets the kept listings of the folder `path` and below it, and
    /// those above it, after it was removed whole.
    pub(crate) fn forget_folder(&self, path: &Path) {
        if let Ok(mut l) = self.listings.lock() {
            l.forget_folder(&folder_id(path));
        }
    }

    /// The listing of `folder`, from the ones kept, or one `LIST` of its
    /// whole subtree where that fits in a page (keeping every folder's
    /// below it), or else one `LIST` of the folder.
    fn listing(&self, folder: &Path) -> io::Result<Vec<DirEntry>> {
        let id = folder_id(folder);
        if let Some(l) = self.listings.lock().expect("listings lock").get(&id) {
            return Ok(l);
        }
        let key = self.key(folder)?;
        if let Some(objects) = self.list_subtree(&key) {
            let mut listings = self.listings.lock().expect("listings lock");
            listings.insert_tree(&id, &objects);
            return Ok(listings.get(&id).unwrap_or_default());
        }
        let (call, store) = (self.call(), self.shared.store.clone());
        self.log(call, "LIST", &key, String::new());
        let uri = self.uri_of(&key);
        let prefix = key.clone();
        let listed = self.run(async move {
            let prefix = (!prefix.as_ref().is_empty()).then_some(prefix);
            store
                .list_with_delimiter(prefix.as_ref())
                .await
                .map_err(|e| failed("LIST", &uri, e))
        })?;
        let entries: Vec<DirEntry> = listed
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename())
            .map(|name| DirEntry {
                name: name.to_string(),
                is_dir: true,
                size: None,
            })
            .chain(listed.objects.iter().filter_map(|o| {
                Some(DirEntry {
                    name: o.location.filename()?.to_string(),
                    is_dir: false,
                    size: Some(o.size),
                })
            }))
            .collect();
        let mut listings = self.listings.lock().expect("listings lock");
        listings.insert(id.clone(), entries);
        Ok(listings.get(&id).unwrap_or_default())
    }

    /// Every object below `key` (its key relative to `key`, and size) from
    /// one recursive `LIST`, or `None` when they fill a page (more may
    /// follow: the caller lists the folder alone instead) or the store
    /// cannot list recursively.
    fn list_subtree(&self, key: &Key) -> Option<Vec<(String, u64)>> {
        let (call, store) = (self.call(), self.shared.store.clone());
        self.log(call, "LIST", key, "whole subtree".into());
        let prefix = key.clone();
        let objects: Vec<object_store::ObjectMeta> = self
            .run(async move {
                let prefix = (!prefix.as_ref().is_empty()).then_some(prefix);
                store
                    .list(prefix.as_ref())
                    .take(SUBTREE_PAGE)
                    .try_collect()
                    .await
                    .map_err(io::Error::other)
            })
            .ok()?;
        if objects.len() >= SUBTREE_PAGE {
            return None;
        }
        let below = |o: &object_store::ObjectMeta| {
            let full = o.location.as_ref();
            let rel = match key.as_ref() {
                "" => full,
                k => full.strip_prefix(k)?.strip_prefix('/')?,
            };
            Some((rel.to_string(), o.size))
        };
        Some(objects.iter().filter_map(below).collect())
    }

    /// The entry `path` names in its folder's listing.
    /// Whether the object at `path` is in its folder's kept listing;
    /// `None` where the folder's listing is not kept (no request made).
    pub(crate) fn listed(&self, path: &Path) -> Option<bool> {
        let (folder, name) = (path.parent()?, path.file_name()?.to_string_lossy());
        let kept = self.listings.lock().ok()?.get(&folder_id(folder))?;
        Some(kept.iter().any(|e| e.name == name))
    }

    fn entry(&self, path: &Path) -> io::Result<Option<DirEntry>> {
        let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
            return Ok(None);
        };
        let name = name.to_string_lossy();
        Ok(self.listing(folder)?.into_iter().find(|e| e.name == name))
    }

    /// The requests fetching `requests` (neighbours merged, overlaps read
    /// once), and per wanted range the request holding it and where.
    fn batch_plan(&self, requests: &[(PathBuf, Range<u64>)]) -> io::Result<BatchPlan> {
        for (_, r) in requests {
            if r.start > r.end {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("byte range {}..{} ends before it starts", r.start, r.end),
                ));
            }
        }
        let plan = Plan::new(requests);
        let keys: Vec<Key> = plan
            .files
            .iter()
            .map(|p| self.key(p))
            .collect::<io::Result<_>>()?;
        let fetches = plan
            .fetches
            .iter()
            .map(|f| (keys[f.file].clone(), Some(f.range.clone())))
            .collect();
        Ok((fetches, plan.served_by))
    }

    /// GETs `range` of each of `fetches` (key, range; `None` for the whole
    /// object), `concurrency` at a time, results in order.
    fn get_all(&self, fetches: Vec<(Key, Option<Range<u64>>)>) -> io::Result<Vec<Bytes>> {
        self.start_all(fetches).wait()
    }

    /// [`ObjectStorage::get_all`] begun on the storage's runtime: the
    /// requests are in flight when this returns.
    fn start_all(&self, fetches: Vec<(Key, Option<Range<u64>>)>) -> Started<Vec<Bytes>> {
        let call = self.call();
        for (key, range) in &fetches {
            let r = range.as_ref().map(|r| format!("{}..{}", r.start, r.end));
            self.log(call, "GET", key, r.unwrap_or_default());
        }
        let store = self.shared.store.clone();
        let root = self.shared.root.store();
        let n = self.concurrency;
        self.start(async move {
            futures::stream::iter(fetches)
                .map(|(key, range)| {
                    let (store, root) = (store.clone(), root.clone());
                    async move {
                        let uri = format!("{root}/{key}");
                        match range {
                            Some(r) if r.is_empty() => Ok(Bytes::new()),
                            Some(r) => {
                                let got = store
                                    .get_range(&key, r.clone())
                                    .await
                                    .map_err(|e| failed("GET", &uri, e))?;
                                if got.len() as u64 != r.end - r.start {
                                    return Err(io::Error::new(
                                        io::ErrorKind::UnexpectedEof,
                                        format!(
                                            "{uri}: byte range {}..{} is outside the object ({} bytes came)",
                                            r.start,
                                            r.end,
                                            got.len()
                                        ),
                                    ));
                                }
                                Ok(got)
                            }
                            None => {
                                let got = store.get(&key).await.map_err(|e| failed("GET", &uri, e))?;
                                got.bytes().await.map_err(|e| failed("GET", &uri, e))
                            }
                        }
                    }
                })
                .buffered(n)
                .try_collect()
                .await
        })
    }
}

/// A task started on a storage's runtime; dropped unwaited (a reader
/// that failed before it needed the bytes), it is cancelled.
pub(crate) struct Started<T>(Option<tokio::task::JoinHandle<io::Result<T>>>);

impl<T> Started<T> {
    /// Waits for the task. Waiting on a spawned task never panics, whatever
    /// runtime the caller is on.
    pub(crate) fn wait(mut self) -> io::Result<T> {
        let task = self.0.take().expect("waited once");
        futures::executor::block_on(task)
            .map_err(|e| io::Error::other(format!("object store task failed: {e}")))?
    }
}

impl<T> Drop for Started<T> {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// The GETs of a batch (key, range), and per wanted range the GET holding
/// it and the offset of its first byte there.
type BatchPlan = (Vec<(Key, Option<Range<u64>>)>, Vec<(usize, u64)>);

/// A file's size and last bytes, or why not.
type Tail = io::Result<(u64, Vec<u8>)>;

/// A folder's identity in the listing cache, however its path was joined.
fn folder_id(folder: &Path) -> String {
    match ObjectUri::parse(&folder.to_string_lossy()) {
        Ok(u) => u.to_string(),
        Err(_) => folder.to_string_lossy().into_owned(),
    }
}

/// An I/O error for a failed request: what was asked of which object, and
/// the store's answer (status and message); missing objects are NotFound.
pub(crate) fn failed(method: &str, uri: &str, e: object_store::Error) -> io::Error {
    let kind = match e {
        object_store::Error::NotFound { .. } => io::ErrorKind::NotFound,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, format!("{method} {uri}: {e}"))
}

impl Storage for ObjectStorage {
    fn read_range(&self, path: &Path, range: Range<u64>) -> io::Result<Vec<u8>> {
        let key = self.key(path)?;
        let mut got = self.get_all(vec![(key, Some(range))])?;
        Ok(got.pop().map(|b| b.to_vec()).unwrap_or_default())
    }

    fn read_ranges(&self, path: &Path, ranges: &[Range<u64>]) -> io::Result<Vec<Vec<u8>>> {
        let requests: Vec<(PathBuf, Range<u64>)> = ranges
            .iter()
            .map(|r| (path.to_path_buf(), r.clone()))
            .collect();
        self.read_batch(&requests)
    }

    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> io::Result<Vec<Vec<u8>>> {
        self.begin_batch(requests.to_vec()).wait()
    }

    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'_> {
        let plan = match self.batch_plan(&requests) {
            Ok(plan) => plan,
            Err(e) => return PendingBatch::ready(Err(e)),
        };
        let (fetches, served_by) = plan;
        let started = self.start_all(fetches);
        PendingBatch::in_flight(move || {
            let got = started.wait()?;
            Ok(requests
                .iter()
                .zip(&served_by)
                .map(|((_, r), &(fetch, at))| {
                    let at = at as usize;
                    got[fetch][at..at + (r.end - r.start) as usize].to_vec()
                })
                .collect())
        })
    }

    fn read_tails(&self, files: &[PathBuf], max: u64) -> Vec<io::Result<(u64, Vec<u8>)>> {
        let mut keys: Vec<io::Result<Key>> = files.iter().map(|f| self.key(f)).collect();
        // Azure takes no suffix range: there the size comes from the
        // folder's listing (which opening an array made) and the range is
        // bounded; an empty file needs no request.
        let suffix = !matches!(self.shared.root.scheme.as_str(), "az" | "azure" | "abfs");
        let mut empty = Vec::new();
        let mut ranges: Vec<Option<GetRange>> = vec![None; files.len()];
        for (i, f) in files.iter().enumerate() {
            if keys[i].is_err() {
                continue;
            }
            ranges[i] = match suffix {
                true => Some(GetRange::Suffix(max)),
                false => match self.size(f) {
                    Ok(0) => {
                        empty.push(i);
                        None
                    }
                    Ok(size) => Some(GetRange::Bounded(size.saturating_sub(max)..size)),
                    Err(e) => {
                        keys[i] = Err(e);
                        None
                    }
                },
            };
        }
        let call = self.call();
        let wanted: Vec<(usize, Key, GetRange)> = keys
            .iter()
            .zip(ranges)
            .enumerate()
            .filter_map(|(i, (k, r))| Some((i, k.as_ref().ok()?.clone(), r?)))
            .collect();
        for (_, key, range) in &wanted {
            let shown = match range {
                GetRange::Bounded(r) => format!("{}..{}", r.start, r.end),
                _ => format!("last {max}"),
            };
            self.log(call, "GET", key, shown);
        }
        let store = self.shared.store.clone();
        let root = self.shared.root.store();
        let n = self.concurrency;
        let fetched = self.run(async move {
            let results: Vec<(usize, Tail)> = futures::stream::iter(wanted)
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
                .await;
            Ok(results)
        });
        let mut out: Vec<io::Result<(u64, Vec<u8>)>> = keys
            .into_iter()
            .map(|k| k.map(|_| (0, Vec::new())))
            .collect();
        match fetched {
            Ok(results) => {
                for (i, r) in results {
                    out[i] = r;
                }
                for i in empty {
                    out[i] = Ok((0, Vec::new()));
                }
            }
            Err(e) => {
                let msg = e.to_string();
                for o in out.iter_mut().filter(|o| o.is_ok()) {
                    *o = Err(io::Error::other(msg.clone()));
                }
            }
        }
        out
    }

    fn read_tail(&self, path: &Path, max: u64) -> io::Result<(u64, Vec<u8>)> {
        self.read_tails(&[path.to_path_buf()], max)
            .pop()
            .expect("one result per file")
    }

    fn prefers_batches(&self) -> bool {
        true
    }

    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let key = self.key(path)?;
        let mut got = self.get_all(vec![(key, None)])?;
        Ok(got.pop().map(|b| b.to_vec()).unwrap_or_default())
    }

    fn size(&self, path: &Path) -> io::Result<u64> {
        // From the folder's listing, which opening an array made anyway.
        match self.entry(path)? {
            Some(DirEntry {
                size: Some(size), ..
            }) => Ok(size),
            Some(_) => Err(io::Error::other(format!(
                "{}: a folder, not an object",
                path.display()
            ))),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no such object", path.display()),
            )),
        }
    }

    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.listing(path)
    }

    fn exists(&self, path: &Path) -> bool {
        if ObjectUri::parse(&path.to_string_lossy()).is_ok_and(|u| u.key.is_empty()) {
            return true;
        }
        matches!(self.entry(path), Ok(Some(_)))
    }
}
