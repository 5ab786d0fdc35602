//! Which storage serves a path: the local filesystem, or an object store
//! for a URI (feature `object-store`), for reads and for writes.

use std::path::Path;
use std::sync::Arc;
use tessera_storage::{LocalFs, Location, Storage, WritableStorage};

/// True if `path` is a URI of an object store (`s3://`, `gs://`, `az://`,
/// `abfs://`, `http(s)://`, `memory://`) rather than a local path; a
/// `file://` URI is local.
///
/// ```
/// use std::path::Path;
/// assert!(tessera::is_uri(Path::new("https://host:8080/a")));
/// assert!(!tessera::is_uri(Path::new("/local/array")));
/// assert!(!tessera::is_uri(Path::new("file:///local/array")));
/// ```
pub fn is_uri(path: &Path) -> bool {
    let s = path.to_string_lossy();
    s.split_once("://")
        .is_some_and(|(scheme, _)| scheme != "file" && !scheme.is_empty() && !scheme.contains('/'))
}

/// The store a path lies in: `scheme://bucket` for an object-store URI,
/// `None` for a local path. Paths of one store can share one storage.
///
/// ```
/// use std::path::Path;
/// assert_eq!(tessera::store_of(Path::new("s3://b/exp/ms")).as_deref(), Some("s3://b"));
/// assert_eq!(tessera::store_of(Path::new("/local/a")), None);
/// ```
pub fn store_of(path: &Path) -> Option<String> {
    let path = local_path(path);
    let s = path.to_string_lossy();
    let (scheme, rest) = s.split_once("://").filter(|_| is_uri(path))?;
    Some(format!(
        "{scheme}://{}",
        rest.split('/').next().unwrap_or("")
    ))
}

/// A local path, with a `file://` prefix removed.
pub fn local_path(path: &Path) -> &Path {
    match path.to_str().and_then(|s| s.strip_prefix("file://")) {
        Some(rest) => Path::new(rest),
        None => path,
    }
}

/// The storage that serves `path`: the local filesystem for paths (and
/// `file://` URIs), an object store for URIs, configured from the standard
/// environment (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, ...; feature
/// `object-store`). Each call makes a new storage, which lists each folder
/// once: keep it for the reads of one opened array.
///
/// ```
/// let storage = tessera::storage_for("testdata/x".as_ref()).unwrap();
/// assert!(!storage.prefers_batches());
/// ```
pub fn storage_for(path: &Path) -> Result<Arc<dyn Storage>, tessera_fragment::FragmentError> {
    storage_with(path, &[])
}

/// [`storage_for`] with storage options for an object store set over the
/// environment's: `object_store`'s configuration keys (`aws_endpoint`,
/// `aws_region`, `azure_storage_account_name`, ...) and values. A local
/// path takes none.
///
/// ```
/// let options = [("aws_region".to_string(), "eu-west-1".to_string())];
/// assert!(tessera::storage_with("testdata/x".as_ref(), &options).is_err());
/// ```
pub fn storage_with(
    path: &Path,
    options: &[(String, String)],
) -> Result<Arc<dyn Storage>, tessera_fragment::FragmentError> {
    Ok(writable_with(path, options)?)
}

/// A storage on a caller's Tokio runtime ([`storage_on_runtime`]).
#[cfg(feature = "object-store")]
pub struct RuntimeStorage {
    /// The storage, for what waits on it (opening an array, a read over
    /// storage).
    pub storage: Arc<dyn Storage>,
    /// For an object store, the same store answering a read's needs
    /// awaited on the runtime (`ReadSession::awaiting`), which no thread
    /// waits on; `None` for a local path (a read awaited decodes on
    /// rayon's pool, its files read there).
    pub awaited: Option<Arc<dyn tessera_storage::AsyncStorage>>,
}

/// [`storage_for`] for a caller on Tokio: an object store's requests run
/// on the runtime of `handle`, the caller's, and the storage starts no
/// runtime of its own (`ObjectStorage::on_runtime`); a local path is
/// served as by [`storage_for`]. Feature `object-store`.
///
/// ```
/// let rt = tokio::runtime::Runtime::new().unwrap();
/// let on = tessera::storage_on_runtime("memory://b/a".as_ref(), rt.handle().clone()).unwrap();
/// assert!(on.storage.prefers_batches() && on.awaited.is_some());
/// let local = tessera::storage_on_runtime("testdata/x".as_ref(), rt.handle().clone()).unwrap();
/// assert!(local.awaited.is_none());
/// ```
#[cfg(feature = "object-store")]
pub fn storage_on_runtime(
    path: &Path,
    handle: tokio::runtime::Handle,
) -> Result<RuntimeStorage, tessera_fragment::FragmentError> {
    if !is_uri(path) {
        return Ok(RuntimeStorage {
            storage: storage_for(path)?,
            awaited: None,
        });
    }
    let store = object_storage(path, &[])?.on_runtime(handle);
    Ok(RuntimeStorage {
        storage: Arc::new(store.clone()),
        awaited: Some(Arc::new(store)),
    })
}

/// Where to write the array at `path` (local, or a URI written straight
/// to its object store), with storage options as [`storage_with`]'s.
///
/// ```
/// let at = tessera::location_with("testdata/x".as_ref(), &[]).unwrap();
/// assert_eq!(at.path(), std::path::Path::new("testdata/x"));
/// let options = [("aws_region".to_string(), "eu-west-1".to_string())];
/// assert!(tessera::location_with("testdata/x".as_ref(), &options).is_err());
/// ```
pub fn location_with(
    path: &Path,
    options: &[(String, String)],
) -> Result<Location, tessera_fragment::FragmentError> {
    Ok(Location::new(
        writable_with(path, options)?,
        local_path(path),
    ))
}

/// Where `path` is read and written: the local filesystem, or an object
/// store configured from the environment and `options`.
fn writable_with(
    path: &Path,
    options: &[(String, String)],
) -> Result<Arc<dyn WritableStorage>, tessera_fragment::FragmentError> {
    if !is_uri(path) {
        return match options.first() {
            Some((key, _)) => Err(failed(
                path,
                format!("storage option {key:?}: local paths take no storage options"),
            )),
            None => Ok(Arc::new(LocalFs)),
        };
    }
    #[cfg(feature = "object-store")]
    return Ok(Arc::new(object_storage(path, options)?));
    #[cfg(not(feature = "object-store"))]
    Err(failed(
        path,
        "object store URIs need tessera's `object-store` feature".into(),
    ))
}

/// The object store of the URI `path`.
#[cfg(feature = "object-store")]
fn object_storage(
    path: &Path,
    options: &[(String, String)],
) -> Result<tessera_object_store::ObjectStorage, tessera_fragment::FragmentError> {
    let uri = path.to_string_lossy();
    tessera_object_store::ObjectStorage::for_uri_with(&uri, options)
        .map_err(|e| failed(path, e.to_string()))
}

/// Storage for `path` could not be made, for `reason`.
fn failed(path: &Path, reason: String) -> tessera_fragment::FragmentError {
    let kind = tessera_storage::StorageErrorKind::InvalidKey;
    tessera_storage::StorageError::new(kind, path.to_string_lossy(), reason).into()
}
