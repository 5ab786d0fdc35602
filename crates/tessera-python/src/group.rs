//! `tessera._native.Group`: a group opened at a time, its members and metadata.

use crate::array::Array;
use crate::convert::{cached_metadata, open_object, storage_for, Metadata, StorageOptions};
use crate::error::py_err;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use tessera::fragment::group::{ObjectType, OpenGroup};
use tessera::storage::Storage;

/// An opened group.
#[pyclass(module = "tessera._native", frozen)]
pub struct Group {
    storage: Arc<dyn Storage>,
    group: OpenGroup,
    uri: String,
    /// The storage options it was opened with, for members in other stores.
    options: StorageOptions,
    /// The metadata, once read (beside the open on object stores).
    metadata: OnceLock<Metadata>,
}

/// Opens a group; where requests cost a round trip, its whole folder is
/// listed beside the open (one `LIST` where the group's subtree fits a
/// page: a SOMA experiment of a few hundred objects). The open itself
/// lists only the group's details, so this costs it no time; the members
/// then open through the same storage without a listing of their own (a
/// round trip less for each level of a nested experiment).
fn open_listed(
    storage: &dyn Storage,
    path: &Path,
    t1: u64,
    t2: u64,
    key: Option<tessera::filters::EncryptionKey>,
) -> Result<OpenGroup, tessera::fragment::FragmentError> {
    if !storage.prefers_batches() {
        return OpenGroup::open(storage, path, t1, t2, key);
    }
    std::thread::scope(|s| {
        s.spawn(|| storage.list(path));
        OpenGroup::open(storage, path, t1, t2, key)
    })
}

/// Opens the group at `uri` at `timestamp`, with `key` (as `open_array`).
#[pyfunction]
#[pyo3(signature = (uri, timestamp=None, key=None, options=StorageOptions::new()))]
pub fn open_group(
    py: Python<'_>,
    uri: &str,
    timestamp: Option<&Bound<'_, PyAny>>,
    key: Option<&str>,
    options: StorageOptions,
) -> PyResult<Group> {
    let (storage, path) = storage_for(uri, &options)?;
    Group::open(py, (storage, options), &path, uri, timestamp, key)
}

/// `"array"`, `"group"` or `None` for what is at `uri`, from one listing
/// (`tessera::fragment::group::object_type`); a store that does not answer
/// raises, so nothing is taken for absent that was not seen.
#[pyfunction]
#[pyo3(signature = (uri, options=StorageOptions::new()))]
pub fn object_type(
    py: Python<'_>,
    uri: &str,
    options: StorageOptions,
) -> PyResult<Option<&'static str>> {
    let (storage, path) = storage_for(uri, &options)?;
    let kind = py
        .detach(|| tessera::fragment::group::object_type(&*storage, &path))
        .map_err(py_err)?;
    Ok(kind.map(|k| match k {
        ObjectType::Array => "array",
        ObjectType::Group => "group",
    }))
}

impl Group {
    /// Opens the group at `path` (named `uri`) through `storage` (made
    /// with the options beside it).
    fn open(
        py: Python<'_>,
        (storage, options): (Arc<dyn Storage>, StorageOptions),
        path: &Path,
        uri: &str,
        timestamp: Option<&Bound<'_, PyAny>>,
        key: Option<&str>,
    ) -> PyResult<Group> {
        let (group, metadata) = open_object(py, &storage, path, timestamp, key, open_listed)?;
        Ok(Group {
            storage,
            group,
            uri: uri.to_owned(),
            options,
            metadata,
        })
    }

    /// The storage and path that serve `uri`: this group's storage where
    /// `uri` lies in the same store (on an object store, one client and
    /// one pool of connections for a group and the members opened from
    /// it), else a storage of its own.
    fn storage_of(&self, uri: &str) -> PyResult<(Arc<dyn Storage>, PathBuf)> {
        match same_store(&self.uri, uri) {
            true => Ok((
                self.storage.clone(),
                tessera::local_path(Path::new(uri)).to_path_buf(),
            )),
            false => storage_for(uri, &self.options),
        }
    }
}

/// Whether two locations are served by one storage: both local paths, or
/// URIs of the same scheme and bucket (`s3://bucket/...`).
fn same_store(a: &str, b: &str) -> bool {
    tessera::store_of(Path::new(a)) == tessera::store_of(Path::new(b))
}

#[pymethods]
impl Group {
    /// A page of pictures of the group and its member arrays (`tessera
    /// view`): `(fragment, document)`.
    fn view(&self, py: Python<'_>, args: crate::view::ViewArgs) -> PyResult<(String, String)> {
        let options = crate::view::options(args)?;
        crate::view::render(py, || {
            tessera_view::group::group_page(&self.storage, &self.group, &options)
        })
    }

    /// Opens the array at `uri` (a member's), through this group's
    /// storage where it lies in the same store.
    #[pyo3(signature = (uri, timestamp=None, key=None))]
    fn open_array(
        &self,
        py: Python<'_>,
        uri: &str,
        timestamp: Option<&Bound<'_, PyAny>>,
        key: Option<&str>,
    ) -> PyResult<Array> {
        let (storage, path) = self.storage_of(uri)?;
        Array::open(py, storage, &path, uri, timestamp, key)
    }

    /// Opens the group at `uri` (a member's), through this group's
    /// storage where it lies in the same store.
    #[pyo3(signature = (uri, timestamp=None, key=None))]
    fn open_group(
        &self,
        py: Python<'_>,
        uri: &str,
        timestamp: Option<&Bound<'_, PyAny>>,
        key: Option<&str>,
    ) -> PyResult<Group> {
        let (storage, path) = self.storage_of(uri)?;
        Group::open(
            py,
            (storage, self.options.clone()),
            &path,
            uri,
            timestamp,
            key,
        )
    }

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

    /// The members as stored, in the order they were added: `(name or
    /// None, URI as stored, relative, "array" | "group")`.
    fn member_entries(&self) -> Vec<(Option<String>, String, bool, String)> {
        (self.group.members.iter())
            .map(|m| {
                let kind = match m.object_type {
                    ObjectType::Array => "array",
                    ObjectType::Group => "group",
                };
                (m.name.clone(), m.uri.clone(), m.relative, kind.to_owned())
            })
            .collect()
    }

    /// The metadata: `(key, datatype, value as JSON)` per key, sorted.
    fn metadata(&self, py: Python<'_>) -> PyResult<Vec<(String, String, String)>> {
        cached_metadata(py, &self.metadata, || self.group.metadata(&*self.storage))
    }
}
