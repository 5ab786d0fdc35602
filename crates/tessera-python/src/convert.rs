//! What arrays and groups take from Python and give back: open windows,
//! keys and URIs as tessera's, metadata entries in the form the Python side
//! shapes.

use crate::error::{py_err, py_msg};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera::filters::EncryptionKey;
use tessera::fragment::array_metadata::{read_metadata, MetadataValue};
use tessera::fragment::FragmentError;
use tessera::tile::storage::Storage;

/// An object's metadata, as read when it was opened.
pub type Metadata = BTreeMap<String, MetadataValue>;

/// Runs `open` (an array's or a group's) and, where a request costs a
/// round trip (storage that prefers batches), reads the object's metadata
/// at `path` in `window` beside it: two chains of requests in flight at
/// once instead of one after the other (SOMA reads each object's metadata
/// as it opens it). The metadata is `None` where it was not read then, or
/// failed (read again when asked for, where its error shows).
pub fn open_with_metadata<T: Send>(
    storage: &Arc<dyn Storage>,
    path: &Path,
    window: (u64, u64),
    key: Option<EncryptionKey>,
    open: impl FnOnce() -> Result<T, FragmentError> + Send,
) -> (Result<T, FragmentError>, Option<Metadata>) {
    if !storage.prefers_batches() {
        return (open(), None);
    }
    std::thread::scope(|s| {
        let metadata = s.spawn(|| read_metadata(&**storage, path, window, key.as_ref()).ok());
        let opened = open();
        (opened, metadata.join().ok().flatten())
    })
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

/// The storage serving `uri` and the path readers take for it.
pub fn storage_for(uri: &str) -> PyResult<(Arc<dyn Storage>, PathBuf)> {
    let path = tessera::local_path(Path::new(uri)).to_path_buf();
    Ok((tessera::storage_for(&path).map_err(py_err)?, path))
}

/// Metadata as `(key, datatype name, value as JSON)`: the Python side
/// gives the values TileDB-Py's shapes (bytes for BLOB, tuples for several).
pub fn metadata_entries(m: BTreeMap<String, MetadataValue>) -> Vec<(String, String, String)> {
    m.into_iter()
        .map(|(k, v)| (k, v.datatype.name().to_owned(), v.to_json().to_string()))
        .collect()
}
