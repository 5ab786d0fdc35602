//! `tessera._native.Group`: a group opened at a time, its members and metadata.

use crate::convert::{metadata_entries, parse_key, storage_for, window};
use crate::error::py_err;
use pyo3::prelude::*;
use std::sync::Arc;
use tessera::fragment::group::{ObjectType, OpenGroup};
use tessera::tile::storage::Storage;

/// An opened group.
#[pyclass(module = "tessera._native", frozen)]
pub struct Group {
    storage: Arc<dyn Storage>,
    group: OpenGroup,
    uri: String,
}

/// Opens the group at `uri` at `timestamp`, with `key` (as `open_array`).
#[pyfunction]
#[pyo3(signature = (uri, timestamp=None, key=None))]
pub fn open_group(
    py: Python<'_>,
    uri: &str,
    timestamp: Option<&Bound<'_, PyAny>>,
    key: Option<&str>,
) -> PyResult<Group> {
    let (t1, t2) = window(timestamp)?;
    let key = parse_key(key)?;
    let (storage, path) = storage_for(uri)?;
    let group = py
        .detach(|| OpenGroup::open(&*storage, &path, t1, t2, key))
        .map_err(py_err)?;
    Ok(Group {
        storage,
        group,
        uri: uri.to_owned(),
    })
}

#[pymethods]
impl Group {
    /// The URI the group was opened at.
    #[getter]
    fn uri(&self) -> &str {
        &self.uri
    }

    /// The members as `(path, type, uri)`, sorted by path; with
    /// `recursive`, member groups' members too (paths joined with `/`).
    #[pyo3(signature = (recursive=false))]
    fn members(&self, py: Python<'_>, recursive: bool) -> PyResult<Vec<(String, String, String)>> {
        let listed = py
            .detach(|| self.group.list(&*self.storage, recursive))
            .map_err(py_err)?;
        Ok(listed
            .into_iter()
            .map(|m| {
                let kind = match m.object_type {
                    ObjectType::Array => "array",
                    ObjectType::Group => "group",
                };
                (
                    m.path,
                    kind.to_owned(),
                    m.location.to_string_lossy().into_owned(),
                )
            })
            .collect())
    }

    /// The metadata: `(key, datatype, value as JSON)` per key, sorted.
    fn metadata(&self, py: Python<'_>) -> PyResult<Vec<(String, String, String)>> {
        let m = py
            .detach(|| self.group.metadata(&*self.storage))
            .map_err(py_err)?;
        Ok(metadata_entries(m))
    }
}
