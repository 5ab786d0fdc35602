//! What arrays and groups take from Python and give back: open windows,
//! keys and URIs as tessera's, metadata entries in the form the Python side
//! shapes.

use crate::error::{py_err, py_msg};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use tessera::filters::EncryptionKey;
use tessera::fragment::array_metadata::{read_metadata, MetadataValue};
use tessera::fragment::FragmentError;
use tessera::storage::Storage;

/// An object's metadata, as read when it was opened.
pub type Metadata = BTreeMap<String, MetadataValue>;

/// Opens an array or a group (`open`: `OpenArray::open` or
/// `OpenGroup::open`) at `path` through `storage`, at the window Python's
/// `timestamp` names, with `key`. Where a request costs a round trip
/// (storage that prefers batches), the object's metadata is read beside
/// the open: two chains of requests in flight at once instead of one after
/// the other (SOMA reads each object's metadata as it opens it). The
/// metadata comes back read, or empty where it was not read then or
/// failed ([`cached_metadata`] reads it when asked for, where its error
/// shows).
pub fn open_object<T: Send>(
    py: Python<'_>,
    storage: &Arc<dyn Storage>,
    path: &Path,
    timestamp: Option<&Bound<'_, PyAny>>,
    key: Option<&str>,
    open: impl FnOnce(&dyn Storage, &Path, u64, u64, Option<EncryptionKey>) -> Result<T, FragmentError>
        + Send,
) -> PyResult<(T, OnceLock<Metadata>)> {
    let (t1, t2) = window(timestamp)?;
    let key = parse_key(key)?;
    let (opened, metadata) = py.detach(|| {
        if !storage.prefers_batches() {
            return (open(&**storage, path, t1, t2, key), None);
        }
        std::thread::scope(|s| {
            let metadata = s.spawn(|| read_metadata(&**storage, path, (t1, t2), key.as_ref()).ok());
            let opened = open(&**storage, path, t1, t2, key);
            (opened, metadata.join().ok().flatten())
        })
    });
    Ok((
        opened.map_err(py_err)?,
        metadata.map(OnceLock::from).unwrap_or_default(),
    ))
}

/// An opened object's metadata as Python takes it: from `cache` where
/// it was read already, else read (`read`) and kept there.
pub fn cached_metadata(
    py: Python<'_>,
    cache: &OnceLock<Metadata>,
    read: impl FnOnce() -> Result<Metadata, FragmentError> + Send,
) -> PyResult<Vec<(String, String, String)>> {
    if let Some(m) = cache.get() {
        return Ok(metadata_entries(m.clone()));
    }
    let m = py.detach(read).map_err(py_err)?;
    Ok(metadata_entries(cache.get_or_init(|| m).clone()))
}

/// The open window a Python `timestamp` names: `None` (latest), `t`
/// (up to t) or `(t1, t2)`.
pub fn window(timestamp: Option<&Bound<'_, PyAny>>) -> PyResult<(u64, u64)> {
    let Some(t) = timestamp else {
        return Ok((0, u64::MAX));
    };
    if t.is_none() {
        return Ok((0, u64::MAX));
    }
    if let Ok(end) = t.extract::<u64>() {
        return Ok((0, end));
    }
    let (start, end): (Option<u64>, Option<u64>) = t.extract().map_err(|_| {
        py_msg("timestamp: expected milliseconds since the epoch, or a (start, end) pair")
    })?;
    Ok((start.unwrap_or(0), end.unwrap_or(u64::MAX)))
}

/// A key's text form as a key.
pub fn parse_key(key: Option<&str>) -> PyResult<Option<EncryptionKey>> {
    key.map(|k| EncryptionKey::parse(k).map_err(py_msg))
        .transpose()
}

/// Storage options for an object store: `object_store`'s configuration
/// keys and values, set over the environment's.
pub type StorageOptions = Vec<(String, String)>;

/// The storage serving `uri` (with `options`) and the path readers take
/// for it.
pub fn storage_for(uri: &str, options: &StorageOptions) -> PyResult<(Arc<dyn Storage>, PathBuf)> {
    let path = tessera::local_path(Path::new(uri)).to_path_buf();
    Ok((tessera::storage_with(&path, options).map_err(py_err)?, path))
}

/// Metadata as `(key, datatype name, value as JSON)`: the Python side
/// gives the values TileDB-Py's shapes (bytes for BLOB, tuples for several).
pub fn metadata_entries(m: BTreeMap<String, MetadataValue>) -> Vec<(String, String, String)> {
    m.into_iter()
        .map(|(k, v)| {
            let text = v.datatype.is_string() || v.datatype == tessera::tile::Datatype::Char;
            if text && std::str::from_utf8(&v.bytes).is_err() {
                // Text that is not UTF-8 (TileDB-Py keeps numpy's UTF-32
                // arrays so): its bytes as hex, the datatype marked.
                let hex = serde_json::Value::from(tessera::tile::hex::encode(&v.bytes));
                return (k, format!("{}:hex", v.datatype.name()), hex.to_string());
            }
            (k, v.datatype.name().to_owned(), v.to_json().to_string())
        })
        .collect()
}
