//! `tessera._native.files_*`: files and folders by URI on the storage
//! that serves it (a local folder, or an object store with the storage
//! options given), what TileDB-Py's VFS does with them: list, size, read
//! a range, put a whole object, remove, make a folder.

use crate::convert::StorageOptions;
use crate::write::on_location as on;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The entries of the folder at `uri`: `(name, is_folder, size)` (size
/// `None` for folders, and for files where the listing does not give it).
#[pyfunction]
#[pyo3(signature = (uri, storage_options=StorageOptions::new()))]
pub fn files_list(
    py: Python<'_>,
    uri: &str,
    storage_options: StorageOptions,
) -> PyResult<Vec<(String, bool, Option<u64>)>> {
    on(py, uri, &storage_options, |at| {
        let entries = at.storage().list(at.path())?;
        Ok(entries
            .into_iter()
            .map(|e| (e.name, e.is_dir, e.size))
            .collect())
    })
}

/// The size in bytes of the file at `uri`.
#[pyfunction]
#[pyo3(signature = (uri, storage_options=StorageOptions::new()))]
pub fn files_size(py: Python<'_>, uri: &str, storage_options: StorageOptions) -> PyResult<u64> {
    on(py, uri, &storage_options, |at| {
        Ok(at.storage().size(at.path())?)
    })
}

/// Whether an object (a file, not a folder or prefix) is at `uri`.
#[pyfunction]
#[pyo3(signature = (uri, storage_options=StorageOptions::new()))]
pub fn files_is_object(
    py: Python<'_>,
    uri: &str,
    storage_options: StorageOptions,
) -> PyResult<bool> {
    on(py, uri, &storage_options, |at| {
        let store = at.storage();
        Ok(store.exists(at.path()) && store.size(at.path()).is_ok())
    })
}

/// `n` bytes of the file at `uri` from `offset` (fewer at its end).
#[pyfunction]
#[pyo3(signature = (uri, offset, n, storage_options=StorageOptions::new()))]
pub fn files_read<'py>(
    py: Python<'py>,
    uri: &str,
    offset: u64,
    n: u64,
    storage_options: StorageOptions,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = on(py, uri, &storage_options, |at| {
        let size = at.storage().size(at.path())?;
        let end = offset.saturating_add(n).min(size);
        if offset >= end {
            return Ok(Vec::new());
        }
        Ok(at.storage().read_range(at.path(), offset..end)?)
    })?;
    Ok(PyBytes::new(py, &bytes))
}

/// Writes `data` as the whole file at `uri` (replacing one there).
#[pyfunction]
#[pyo3(signature = (uri, data, storage_options=StorageOptions::new()))]
pub fn files_put(
    py: Python<'_>,
    uri: &str,
    data: Vec<u8>,
    storage_options: StorageOptions,
) -> PyResult<()> {
    on(py, uri, &storage_options, |at| {
        Ok(at.storage().put(at.path(), &data)?)
    })
}

/// Removes the file at `uri`; false if there was none.
#[pyfunction]
#[pyo3(signature = (uri, storage_options=StorageOptions::new()))]
pub fn files_delete(py: Python<'_>, uri: &str, storage_options: StorageOptions) -> PyResult<bool> {
    on(py, uri, &storage_options, |at| {
        Ok(at.storage().delete(at.path())?)
    })
}

/// Removes the folder at `uri` with everything in it; returns how many
/// files it held.
#[pyfunction]
#[pyo3(signature = (uri, storage_options=StorageOptions::new()))]
pub fn files_delete_folder(
    py: Python<'_>,
    uri: &str,
    storage_options: StorageOptions,
) -> PyResult<usize> {
    on(py, uri, &storage_options, |at| {
        Ok(at.storage().delete_folder(at.path())?)
    })
}

/// Makes the folder at `uri` (object stores have none: nothing to do).
#[pyfunction]
#[pyo3(signature = (uri, storage_options=StorageOptions::new()))]
pub fn files_create_folder(
    py: Python<'_>,
    uri: &str,
    storage_options: StorageOptions,
) -> PyResult<()> {
    on(py, uri, &storage_options, |at| {
        Ok(at.storage().create_folder(at.path())?)
    })
}
