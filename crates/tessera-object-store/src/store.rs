//! [`ObjectStorage`]: tessera's [`Storage`] over one object store.

use crate::fetch::{
    failed, get_tails, serve, task_failed, AbortOnDrop, Batch, Fetch, Get, Started, Tail,
};
use crate::listing::{sized, Listings};
use crate::options::StoreOptions;
use crate::plan::Plan;
use crate::request::Request;
use crate::retry::listed_again_if_cut;
use crate::runtime::Executor;
use crate::tuning::StoreTuning;
use crate::uri::ObjectUri;
use crate::ObjectStoreError;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{GetRange, ObjectStore};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tessera_storage::{
    DirEntry, ListableStorage, PendingBatch, ReadableStorage, StorageError, StorageErrorKind,
    StorageHints, StorageResult,
};

/// Objects in one page of a listing (S3's and GCS's default): a subtree
/// listed whole must fit in it.
const SUBTREE_PAGE: usize = 1000;

/// What clones of one storage share: the client and the request log.
struct Shared {
    store: Arc<dyn ObjectStore>,
    root: ObjectUri,
    log: Mutex<Option<Vec<Request>>>,
    calls: std::sync::atomic::AtomicUsize,
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
    tuning: StoreTuning,
    /// One per request in flight: every batch begun on this storage (and
    /// its clones) shares [`StoreTuning::concurrency`] of them.
    permits: Arc<tokio::sync::Semaphore>,
    listings: Arc<Mutex<Listings>>,
    /// Where its requests run.
    executor: Arc<Executor>,
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
    /// memory. Its read tuning is the store's default with the
    /// environment's overrides ([`StoreTuning::from_env`]).
    pub fn for_uri(uri: &str) -> Result<ObjectStorage, ObjectStoreError> {
        Self::for_uri_with(uri, &[])
    }

    /// [`ObjectStorage::for_uri`] with `options` set over what the
    /// environment says: `object_store`'s configuration keys for the URI's
    /// store (`aws_endpoint`, `aws_region`, `aws_access_key_id`,
    /// `aws_allow_http`, `google_service_account_key`,
    /// `azure_storage_account_name`, ...) and their values, and the retry
    /// limits `max_retries` and `retry_timeout` (seconds; see the crate's
    /// `retry` module). A key the store does not take is an error naming
    /// it.
    ///
    /// ```
    /// use tessera_object_store::ObjectStorage;
    ///
    /// let options = [("aws_region".to_string(), "eu-west-1".to_string())];
    /// assert!(ObjectStorage::for_uri_with("s3://bucket", &options).is_ok());
    /// let bad = [("aws_colour".to_string(), "blue".to_string())];
    /// let error = ObjectStorage::for_uri_with("s3://bucket", &bad).unwrap_err();
    /// assert!(error.to_string().contains("aws_colour"));
    /// ```
    pub fn for_uri_with(
        uri: &str,
        options: &[(String, String)],
    ) -> Result<ObjectStorage, ObjectStoreError> {
        use object_store::{aws, azure, gcp, http, memory};
        let parsed = ObjectUri::parse(uri)?;
        let store_uri = parsed.store();
        let client = |source| ObjectStoreError::Client {
            uri: store_uri.clone(),
            source,
        };
        let (retry, options) = crate::retry::retry_config(&store_uri, options)?;
        let set = StoreOptions {
            uri: &store_uri,
            options: &options,
        };
        let store: Arc<dyn ObjectStore> = match parsed.scheme.as_str() {
            "s3" | "s3a" => Arc::new(
                set.on(
                    aws::AmazonS3Builder::from_env(),
                    aws::AmazonS3Builder::with_config,
                )?
                .with_retry(retry)
                .with_url(&store_uri)
                .build()
                .map_err(client)?,
            ),
            "gs" | "gcs" => Arc::new(
                set.on(
                    gcp::GoogleCloudStorageBuilder::from_env(),
                    gcp::GoogleCloudStorageBuilder::with_config,
                )?
                .with_retry(retry)
                .with_url(&store_uri)
                .build()
                .map_err(client)?,
            ),
            "az" | "azure" | "abfs" => Arc::new(
                set.on(
                    azure::MicrosoftAzureBuilder::from_env(),
                    azure::MicrosoftAzureBuilder::with_config,
                )?
                .with_retry(retry)
                .with_url(&store_uri)
                .build()
                .map_err(client)?,
            ),
            "http" | "https" => {
                set.none()?;
                Arc::new(
                    http::HttpBuilder::new()
                        .with_url(&store_uri)
                        .build()
                        .map_err(client)?,
                )
            }
            _ => {
                set.none()?;
                Arc::new(memory::InMemory::new())
            }
        };
        let tuning =
            StoreTuning::from_env(&parsed.scheme).map_err(|reason| ObjectStoreError::Tuning {
                uri: store_uri.clone(),
                reason,
            })?;
        Ok(Self::with_store(store, &store_uri)?.with_tuning(tuning))
    }

    /// The storage for `store`, whose objects are named by URIs starting
    /// with `root` (`scheme://bucket`), tuned with the defaults of its
    /// scheme ([`StoreTuning::for_scheme`]).
    pub fn with_store(
        store: Arc<dyn ObjectStore>,
        root: &str,
    ) -> Result<ObjectStorage, ObjectStoreError> {
        let root = ObjectUri::parse(root)?;
        let tuning = StoreTuning::for_scheme(&root.scheme);
        Ok(ObjectStorage {
            shared: Arc::new(Shared {
                store,
                root,
                log: Mutex::new(None),
                calls: Default::default(),
            }),
            tuning,
            permits: Arc::new(tokio::sync::Semaphore::new(tuning.concurrency.max(1))),
            listings: Default::default(),
            executor: Arc::new(Executor::own()),
        })
    }

    /// The same storage read with `tuning`: its requests' size, how many
    /// are in flight at once, and how far readers fetch ahead.
    ///
    /// ```
    /// use tessera_object_store::{ObjectStorage, StoreTuning};
    ///
    /// let tuning = StoreTuning { concurrency: 8, ..StoreTuning::for_scheme("s3") };
    /// let storage = ObjectStorage::for_uri("memory://bucket").unwrap().with_tuning(tuning);
    /// assert_eq!(storage.tuning().concurrency, 8);
    /// ```
    pub fn with_tuning(mut self, tuning: StoreTuning) -> Self {
        self.permits = Arc::new(tokio::sync::Semaphore::new(tuning.concurrency.max(1)));
        self.tuning = tuning;
        self
    }

    /// How this storage's reads are cut into requests and kept in flight.
    pub fn tuning(&self) -> &StoreTuning {
        &self.tuning
    }

    /// A storage on the same client that lists folders anew (and keeps
    /// its own listings from then on).
    pub fn fresh(&self) -> ObjectStorage {
        ObjectStorage {
            shared: self.shared.clone(),
            tuning: self.tuning,
            permits: self.permits.clone(),
            listings: Default::default(),
            executor: self.executor.clone(),
        }
    }

    /// The same storage (client, connections, kept listings, requests in
    /// flight) with its requests run on the runtime of `handle`, the
    /// caller's, instead of a runtime of its own: for applications already
    /// on Tokio (SQL engines, servers), whose runtime then carries every
    /// request and no other runtime is started. Synchronous reads still
    /// work from any thread: they wait for their requests on the calling
    /// thread (on a worker of a multi-thread runtime, through
    /// [`tokio::task::block_in_place`]); from a thread in the context of a
    /// current-thread runtime (its own, whose waiting would stop it, and
    /// its blocking threads, which Tokio does not tell apart), they run on
    /// a runtime of the storage's own. Await reads (`stream_async` in
    /// `tessera-query`) to keep every request on the caller's runtime.
    ///
    /// The runtime must outlive the storage's use: requests spawned on a
    /// runtime that has shut down fail.
    ///
    /// ```
    /// use std::path::Path;
    /// use tessera_object_store::ObjectStorage;
    /// use tessera_storage::{ReadableStorage, WritableStorage};
    ///
    /// let rt = tokio::runtime::Runtime::new().unwrap();
    /// let storage = ObjectStorage::for_uri("memory://bucket").unwrap().on_runtime(rt.handle().clone());
    /// storage.put(Path::new("memory://bucket/a"), b"abc").unwrap();
    /// assert_eq!(storage.read_range(Path::new("memory://bucket/a"), 1..3).unwrap(), b"bc");
    /// assert!(!storage.started_own_runtime());
    /// ```
    pub fn on_runtime(&self, handle: tokio::runtime::Handle) -> ObjectStorage {
        ObjectStorage {
            executor: Arc::new(Executor::on(handle)),
            ..self.clone()
        }
    }

    /// Whether this storage has started a runtime of its own: it does on
    /// its first request, unless it runs on the caller's
    /// ([`ObjectStorage::on_runtime`]).
    pub fn started_own_runtime(&self) -> bool {
        self.executor.own_started()
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
    pub(crate) fn key(&self, path: &Path) -> StorageResult<Key> {
        let text = path.to_string_lossy();
        let invalid = |why: String| StorageError::new(StorageErrorKind::InvalidKey, &*text, why);
        let uri = ObjectUri::parse(&text).map_err(|e| invalid(e.to_string()))?;
        let root = &self.shared.root;
        if uri.scheme != root.scheme || uri.bucket != root.bucket {
            return Err(invalid(format!(
                "not in {}, the store this storage serves",
                root.store()
            )));
        }
        Key::parse(&uri.key).map_err(|e| invalid(e.to_string()))
    }

    pub(crate) fn uri_of(&self, key: &Key) -> String {
        format!("{}/{key}", self.shared.root.store())
    }

    /// Runs `fut` where this storage's requests run and waits for it.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = StorageResult<T>> + Send + 'static,
    ) -> StorageResult<T> {
        self.start(fut).wait()
    }

    /// Starts `fut` where this storage's requests run.
    pub(crate) fn start<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = StorageResult<T>> + Send + 'static,
    ) -> Started<T> {
        Started(Some(self.executor.spawn(fut)))
    }

    /// [`ObjectStorage::start`] for a caller that awaits the task rather
    /// than waits for it: on the caller's runtime from any of its threads.
    pub(crate) fn start_awaited<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = StorageResult<T>> + Send + 'static,
    ) -> Started<T> {
        Started(Some(self.executor.spawn_awaited(fut)))
    }

    /// Starts `fut` where this storage's requests run, to run to its end
    /// unawaited (the abort of an upload given up as it is dropped).
    pub(crate) fn detach(&self, fut: impl std::future::Future<Output = ()> + Send + 'static) {
        // A dropped handle lets its task run on.
        let _ = self.executor.spawn_awaited(fut);
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
    fn listing(&self, folder: &Path) -> StorageResult<Vec<DirEntry>> {
        if let Some(l) = self.kept_listing(folder) {
            return Ok(l);
        }
        let (me, folder) = (self.clone(), folder.to_path_buf());
        self.run(async move { me.listing_async(&folder).await })
    }

    /// A folder's kept listing, if it is kept.
    fn kept_listing(&self, folder: &Path) -> Option<Vec<DirEntry>> {
        self.listings
            .lock()
            .expect("listings lock")
            .get(&folder_id(folder))
    }

    /// [`ObjectStorage::listing`], awaited.
    pub(crate) async fn listing_async(&self, folder: &Path) -> StorageResult<Vec<DirEntry>> {
        let id = folder_id(folder);
        if let Some(l) = self.kept_listing(folder) {
            return Ok(l);
        }
        let key = self.key(folder)?;
        if let Some(objects) = self.list_subtree(&key).await {
            let mut listings = self.listings.lock().expect("listings lock");
            listings.insert_tree(&id, &objects);
            return Ok(listings.get(&id).unwrap_or_default());
        }
        let (call, store) = (self.call(), self.shared.store.clone());
        self.log(call, "LIST", &key, String::new());
        let uri = self.uri_of(&key);
        let prefix = (!key.as_ref().is_empty()).then_some(key.clone());
        let listed = listed_again_if_cut(|| store.list_with_delimiter(prefix.as_ref()))
            .await
            .map_err(|e| failed("LIST", &uri, e))?;
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
    async fn list_subtree(&self, key: &Key) -> Option<Vec<(String, u64)>> {
        let (call, store) = (self.call(), self.shared.store.clone());
        self.log(call, "LIST", key, "whole subtree".into());
        let prefix = (!key.as_ref().is_empty()).then_some(key.clone());
        let objects: Vec<object_store::ObjectMeta> = store
            .list(prefix.as_ref())
            .take(SUBTREE_PAGE)
            .try_collect()
            .await
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

    /// Whether the object at `path` is in its folder's kept listing;
    /// `None` where the folder's listing is not kept (no request made).
    pub(crate) fn listed(&self, path: &Path) -> Option<bool> {
        self.kept_entry(path).map(|e| e.is_some())
    }

    /// The size of the object at `path` from its folder's kept listing;
    /// `None` where that listing is not kept (no request made).
    fn listed_size(&self, path: &Path) -> Option<u64> {
        self.kept_entry(path)??.size
    }

    /// The entry `path` names in its folder's kept listing (`Some(None)`:
    /// not there); `None` where that listing is not kept.
    fn kept_entry(&self, path: &Path) -> Option<Option<DirEntry>> {
        let (folder, name) = (path.parent()?, path.file_name()?.to_string_lossy());
        let kept = self.listings.lock().ok()?.get(&folder_id(folder))?;
        Some(kept.into_iter().find(|e| e.name == name))
    }

    /// The entry `path` names in its folder's listing: from the kept
    /// listing, or [`ObjectStorage::entry_async`] waited for.
    fn entry(&self, path: &Path) -> StorageResult<Option<DirEntry>> {
        if let Some(kept) = self.kept_entry(path) {
            return Ok(kept);
        }
        let (me, path) = (self.clone(), path.to_path_buf());
        self.run(async move { me.entry_async(&path).await })
    }

    /// [`ObjectStorage::entry`], awaited.
    pub(crate) async fn entry_async(&self, path: &Path) -> StorageResult<Option<DirEntry>> {
        let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
            return Ok(None);
        };
        let name = name.to_string_lossy();
        let listing = self.listing_async(folder).await?;
        Ok(listing.into_iter().find(|e| e.name == name))
    }

    /// Whether a file or folder exists at `path`: the store's root does;
    /// else its entry in its folder's listing.
    pub(crate) async fn exists_async(&self, path: &Path) -> bool {
        ObjectUri::is_store_root(path) || matches!(self.entry_async(path).await, Ok(Some(_)))
    }

    /// The size and last `max` bytes of each of `files` (at most the
    /// tuned concurrency of requests at once), each file's on its own.
    pub(crate) async fn read_tails_async(&self, files: &[PathBuf], max: u64) -> Vec<Tail> {
        let mut keys: Vec<StorageResult<Key>> = files.iter().map(|f| self.key(f)).collect();
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
                false => match self.size_async(f).await {
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
        let (store, root) = (self.shared.store.clone(), self.shared.root.store());
        let n = self.tuning.concurrency.max(1);
        let fetched = get_tails(store, root, wanted, n).await;
        let mut out: Vec<Tail> = keys
            .into_iter()
            .map(|k| k.map(|_| (0, Vec::new())))
            .collect();
        for (i, r) in fetched {
            out[i] = r;
        }
        for i in empty {
            out[i] = Ok((0, Vec::new()));
        }
        out
    }

    /// The size of the object at `path`, from its folder's listing.
    pub(crate) async fn size_async(&self, path: &Path) -> StorageResult<u64> {
        let entry = self.entry_async(path).await?;
        sized(path, entry)
    }

    /// A batch's plan, and its requests begun.
    pub(crate) fn start_batch(
        &self,
        requests: &[(PathBuf, Range<u64>)],
    ) -> StorageResult<(Plan<PathBuf>, Started<Batch>)> {
        let (plan, fetches) = self.batch_fetches(requests)?;
        Ok((plan, self.start_all(fetches)))
    }

    /// A batch fetched by the task awaiting it (its requests side by side
    /// in that task, at most the tuned concurrency across the storage).
    pub(crate) async fn fetch_batch(
        &self,
        requests: &[(PathBuf, Range<u64>)],
    ) -> StorageResult<Vec<Vec<u8>>> {
        let (plan, fetches) = self.batch_fetches(requests)?;
        let gets = self.gets(fetches).into_iter();
        let got = futures::future::try_join_all(gets.map(|g| g.run(self.permits.clone()))).await?;
        Ok(serve(&plan, requests, got))
    }

    /// A batch's plan and its fetches (key, range, room of its buffer).
    fn batch_fetches(
        &self,
        requests: &[(PathBuf, Range<u64>)],
    ) -> StorageResult<(Plan<PathBuf>, Vec<Fetch>)> {
        let plan = self.batch_plan(requests)?;
        let keys: Vec<Key> = plan
            .files
            .iter()
            .map(|p| self.key(p))
            .collect::<StorageResult<_>>()?;
        // Each buffer with room for its range; a span's first part's with
        // room for the whole span, its later parts appended to it.
        let mut fetches: Vec<Fetch> = plan
            .fetches
            .iter()
            .map(|f| {
                let room = (f.range.end - f.range.start) as usize;
                (keys[f.file].clone(), Some(f.range.clone()), room)
            })
            .collect();
        for span in &plan.spans {
            if let Some(first) = fetches.get_mut(span.fetches.start) {
                first.2 = (span.range.end - span.range.start) as usize;
            }
        }
        Ok((plan, fetches))
    }

    /// The plan fetching `requests`: neighbours merged into spans,
    /// overlaps read once, spans cut into requests of the tuned size.
    fn batch_plan(&self, requests: &[(PathBuf, Range<u64>)]) -> StorageResult<Plan<PathBuf>> {
        for (p, r) in requests {
            if r.start > r.end {
                return Err(StorageError::new(
                    StorageErrorKind::OutOfRange,
                    p.to_string_lossy(),
                    format!("byte range {}..{} ends before it starts", r.start, r.end),
                ));
            }
        }
        // Ranges come from metadata read off the store: one past the end
        // of an object whose size the listings know is an error here,
        // before it is cut into requests.
        let mut ends: std::collections::HashMap<&Path, u64> = Default::default();
        for (p, r) in requests {
            let end = ends.entry(p.as_path()).or_default();
            *end = (*end).max(r.end);
        }
        for (p, end) in ends {
            if let Some(size) = self.listed_size(p).filter(|&size| end > size) {
                return Err(StorageError::new(
                    StorageErrorKind::OutOfRange,
                    p.to_string_lossy(),
                    format!("bytes up to {end} asked of an object of {size} bytes"),
                ));
            }
        }
        let t = &self.tuning;
        Ok(Plan::new(requests, t.coalesce_gap, t.request_bytes()))
    }

    /// GETs `range` of each of `fetches` (key, range; `None` for the whole
    /// object), results in order.
    fn get_all(&self, fetches: Vec<(Key, Option<Range<u64>>)>) -> StorageResult<Vec<Vec<u8>>> {
        let sized = fetches
            .into_iter()
            .map(|(key, range)| {
                let room = range.as_ref().map_or(0, |r| (r.end - r.start) as usize);
                (key, range, room)
            })
            .collect();
        self.start_all(sized).wait()
    }

    /// [`ObjectStorage::get_all`] begun where the storage's requests run: the
    /// requests are in flight when this returns, each a task of its own
    /// (so the runtime's threads share their bytes' arrival), at most
    /// [`StoreTuning::concurrency`] at once across the storage; each
    /// buffer made with the room given beside its range.
    fn start_all(&self, fetches: Vec<Fetch>) -> Started<Batch> {
        let tasks: StorageResult<Vec<_>> = self
            .gets(fetches)
            .into_iter()
            .map(|get| self.executor.spawn(get.run(self.permits.clone())))
            .collect();
        let tasks = match tasks {
            Ok(tasks) => tasks,
            Err(e) => return Started(Some(Err(e))),
        };
        self.start(async move {
            // Dropped early (a failure, or the batch abandoned), the
            // requests still in flight are cancelled.
            let mut tasks = AbortOnDrop(tasks);
            let mut out = Vec::with_capacity(tasks.0.len());
            for task in &mut tasks.0 {
                let got = task.await.map_err(task_failed)?;
                out.push(got?);
            }
            Ok(out)
        })
    }

    /// The GETs of `fetches` (key, range, room of its buffer), logged as
    /// one call.
    fn gets(&self, fetches: Vec<Fetch>) -> Vec<Get> {
        let call = self.call();
        for (key, range, _) in &fetches {
            let r = range.as_ref().map(|r| format!("{}..{}", r.start, r.end));
            self.log(call, "GET", key, r.unwrap_or_default());
        }
        let root = self.shared.root.store();
        fetches
            .into_iter()
            .map(|(key, range, capacity)| Get {
                store: self.shared.store.clone(),
                uri: format!("{root}/{key}"),
                key,
                range,
                capacity,
            })
            .collect()
    }
}

/// A folder's identity in the listing cache, however its path was joined.
fn folder_id(folder: &Path) -> String {
    match ObjectUri::parse(&folder.to_string_lossy()) {
        Ok(u) => u.to_string(),
        Err(_) => folder.to_string_lossy().into_owned(),
    }
}

impl ReadableStorage for ObjectStorage {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        // A batch of one: a large range goes in requests of the tuned size.
        let mut got = self.read_batch(&[(path.to_path_buf(), range)])?;
        Ok(got.pop().unwrap_or_default())
    }

    fn read_ranges(&self, path: &Path, ranges: &[Range<u64>]) -> StorageResult<Vec<Vec<u8>>> {
        let requests: Vec<(PathBuf, Range<u64>)> = ranges
            .iter()
            .map(|r| (path.to_path_buf(), r.clone()))
            .collect();
        self.read_batch(&requests)
    }

    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> StorageResult<Vec<Vec<u8>>> {
        self.begin_batch(requests.to_vec()).wait()
    }

    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'static> {
        match self.start_batch(&requests) {
            Ok((plan, started)) => PendingBatch::in_flight(move || {
                let got = started.wait()?;
                Ok(serve(&plan, &requests, got))
            }),
            Err(e) => PendingBatch::ready(Err(e)),
        }
    }

    fn read_tails(&self, files: &[PathBuf], max: u64) -> Vec<StorageResult<(u64, Vec<u8>)>> {
        let (me, wanted) = (self.clone(), files.to_vec());
        match self.run(async move { Ok(me.read_tails_async(&wanted, max).await) }) {
            Ok(tails) => tails,
            Err(e) => files.iter().map(|_| Err(e.copied())).collect(),
        }
    }

    fn read_tail(&self, path: &Path, max: u64) -> StorageResult<(u64, Vec<u8>)> {
        self.read_tails(&[path.to_path_buf()], max)
            .pop()
            .expect("one result per file")
    }

    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        let key = self.key(path)?;
        let mut got = self.get_all(vec![(key, None)])?;
        Ok(got.pop().unwrap_or_default())
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        // From the folder's listing, which opening an array made anyway.
        sized(path, self.entry(path)?)
    }
}

impl ListableStorage for ObjectStorage {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        self.listing(path)
    }

    fn exists(&self, path: &Path) -> bool {
        ObjectUri::is_store_root(path) || matches!(self.entry(path), Ok(Some(_)))
    }

    fn list_anew(&self) {
        if let Ok(mut l) = self.listings.lock() {
            *l = Listings::default();
        }
    }
}

impl StorageHints for ObjectStorage {
    fn read_ahead(&self) -> u64 {
        self.tuning.read_ahead_bytes()
    }

    fn prefers_batches(&self) -> bool {
        true
    }
}
