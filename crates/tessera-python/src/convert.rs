//! What arrays and groups take from Python and give back: open windows,
//! keys and URIs as tessera's, metadata entries in the form the Python side
//! shapes.

use crate::error::{py_err, py_msg};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera::filters::EncryptionKey;
use tessera::fragment::array_metadata::MetadataValue;
use tessera::tile::storage::Storage;

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
