//! `tessera._native.Array`: an array opened at a time, with what it says
//! about itself (schema, fragments, metadata, non-empty domain) and reads.

use crate::convert::{cached_metadata, open_object, storage_for, Metadata, StorageOptions};
use crate::error::{py_err, py_msg};
use crate::read::{ranges_from, PyBatches};
use arrow_pyarrow::IntoPyArrow;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, OnceLock};
use tessera::fragment::OpenArray;
use tessera::query::partition;
use tessera::query::stream::stream;
use tessera::query::Expr;
use tessera::query::{ReadRequest, ReadSession};
use tessera::storage::Storage;
use tessera::tile::Layout;

/// An opened array. Cheap to share between Python threads: reads hold
/// their own references.
#[pyclass(module = "tessera._native", frozen)]
pub struct Array {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) array: Arc<OpenArray>,
    uri: String,
    /// The metadata, once read (beside the open on object stores).
    metadata: OnceLock<Metadata>,
}

/// Opens the array at `uri` (a path, or `s3://`, `gs://`, `az://`,
/// `http(s)://`), at `timestamp` (ms, or a `(start, end)` window), with
/// the AES-256-GCM `key` (64 hex digits) of an encrypted array.
#[pyfunction]
#[pyo3(signature = (uri, timestamp=None, key=None, options=StorageOptions::new()))]
pub fn open_array(
    py: Python<'_>,
    uri: &str,
    timestamp: Option<&Bound<'_, PyAny>>,
    key: Option<&str>,
    options: StorageOptions,
) -> PyResult<Array> {
    let (storage, path) = storage_for(uri, &options)?;
    Array::open(py, storage, &path, uri, timestamp, key)
}

impl Array {
    /// Opens the array at `path` (named `uri`) through `storage`.
    pub(crate) fn open(
        py: Python<'_>,
        storage: Arc<dyn Storage>,
        path: &std::path::Path,
        uri: &str,
        timestamp: Option<&Bound<'_, PyAny>>,
        key: Option<&str>,
    ) -> PyResult<Array> {
        let (opened, metadata) = open_object(py, &storage, path, timestamp, key, OpenArray::open)?;
        Ok(Array {
            storage,
            array: Arc::new(opened),
            uri: uri.to_owned(),
            metadata,
        })
    }
}

#[pymethods]
impl Array {
    /// The URI the array was opened at.
    #[getter]
    fn uri(&self) -> &str {
        &self.uri
    }

    /// The open window `(start, end)` in milliseconds.
    #[getter]
    fn timestamp_range(&self) -> (u64, u64) {
        (self.array.timestamp_start, self.array.timestamp_end)
    }

    /// The schema in force, in the JSON form `tessera schema --json` prints.
    fn schema_json(&self, py: Python<'_>) -> PyResult<String> {
        let enums = py
            .detach(|| self.array.enumerations(&*self.storage))
            .map_err(py_err)?;
        let doc = tessera::schema::json::schema_to_json(&self.array.schema, enums);
        Ok(doc.to_string())
    }

    /// The visible fragments as JSON (`tessera fragments --json`).
    fn fragments_json(&self) -> String {
        serde_json::Value::from(self.array.fragment_info()).to_string()
    }

    /// Per visible fragment, its data tiles' MBRs as JSON (each per
    /// dimension `[lo, hi]`).
    fn fragment_mbrs_json(&self, py: Python<'_>) -> PyResult<String> {
        let mbrs = py
            .detach(|| self.array.fragment_mbrs(&*self.storage))
            .map_err(py_err)?;
        Ok(serde_json::Value::from(mbrs).to_string())
    }

    /// The metadata: `(key, datatype, value as JSON)` per key, sorted.
    fn metadata(&self, py: Python<'_>) -> PyResult<Vec<(String, String, String)>> {
        cached_metadata(py, &self.metadata, || self.array.metadata(&*self.storage))
    }

    /// Reads the cells of a 2-D sparse array at `subarray` as the arrays
    /// of a CSR matrix of `n_rows` rows: `(data, indices, indptr)` as
    /// `bytearray`s (`attribute`'s values; column positions of
    /// `index_width` bytes; int64 row starts), rows and columns placed by
    /// their positions among `rows` and `cols` (the bytes of ascending
    /// int64 arrays; `None`: the coordinates themselves). Raises
    /// NotImplementedError for arrays it does not take (see
    /// `tessera_soma::CsrFill::new`).
    #[pyo3(signature = (subarray, rows, cols, attribute, n_rows, index_width, budget))]
    #[allow(clippy::too_many_arguments)]
    fn csr<'py>(
        &self,
        py: Python<'py>,
        subarray: Option<&Bound<'py, PyAny>>,
        rows: Option<&Bound<'py, PyBytes>>,
        cols: Option<&Bound<'py, PyBytes>>,
        attribute: &str,
        n_rows: usize,
        index_width: usize,
        budget: u64,
    ) -> PyResult<crate::matrix::CsrArrays<'py>> {
        use crate::matrix::soma_err;
        use tessera_soma::{CsrFill, Positions};
        let ids = |b: Option<&Bound<'py, PyBytes>>| {
            b.map(|b| {
                let bytes = b.as_bytes().chunks_exact(8);
                bytes
                    .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                    .collect::<Vec<i64>>()
            })
        };
        let by_coordinates = rows.is_none() && cols.is_none();
        let (rows, cols) = (Positions::new(ids(rows)), Positions::new(ids(cols)));
        let request = ReadRequest::new()
            .with_ranges(ranges_from(&self.array, subarray)?)
            .budget(budget.max(1));
        let fill = CsrFill::new(&self.array, attribute, n_rows, index_width, rows, cols)
            .map_err(soma_err)?;
        let session = ReadSession::new(self.storage.clone(), self.array.clone());
        let how = crate::matrix::CsrRead {
            session: &session,
            request,
            attribute,
            by_coordinates,
        };
        how.read(py, fill)
    }

    /// The Arrow schema of a whole read (dimensions, then attributes;
    /// enumerated attributes as dictionaries), without reading a cell.
    fn arrow_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let enums = py
            .detach(|| self.array.enumerations(&*self.storage))
            .map_err(py_err)?;
        let d = tessera::query::arrow::Dictionaries::new(&self.array, enums).map_err(py_err)?;
        tessera::query::arrow::array_schema(&self.array, Some(&d)).into_pyarrow(py)
    }

    /// A page of pictures of the array (`tessera view`): `(fragment,
    /// document)`, the HTML a notebook shows and a whole HTML file.
    fn view(&self, py: Python<'_>, args: crate::view::ViewArgs) -> PyResult<(String, String)> {
        let options = crate::view::options(args)?;
        let session = ReadSession::new(self.storage.clone(), self.array.clone());
        crate::view::render(py, || tessera_view::array_page(&session, &options))
    }

    /// The non-empty domain as JSON: `[[lo, hi], ...]` per dimension, or
    /// `null` when nothing is written.
    fn nonempty_domain_json(&self) -> String {
        let ned = self.array.non_empty_domain().map(|d| {
            d.iter()
                .map(|(lo, hi)| serde_json::json!([lo.to_json(), hi.to_json()]))
                .collect::<Vec<_>>()
        });
        serde_json::json!(ned).to_string()
    }

    /// The non-empty domain's bounds on dimension `dim` as bytes, exactly
    /// as stored (a string dimension's need not be UTF-8, which the JSON
    /// form cannot carry); None when nothing is written.
    fn nonempty_domain_bytes<'py>(
        &self,
        py: Python<'py>,
        dim: usize,
    ) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
        let Some(ned) = self.array.non_empty_domain() else {
            return Ok(None);
        };
        let (lo, hi) = ned
            .get(dim)
            .ok_or_else(|| py_msg(format!("the array has no dimension {dim}")))?;
        let bytes = |v: &tessera::schema::Value| match v {
            tessera::schema::Value::Bytes(b) => Ok(PyBytes::new(py, b)),
            other => Err(py_msg(format!(
                "dimension {dim}: {other:?} is not a string bound"
            ))),
        };
        Ok(Some((bytes(lo)?, bytes(hi)?)))
    }

    /// Up to `n` partitions of a read of `subarray` (as `reader` takes
    /// it) with `condition`, planned from metadata alone
    /// (`tessera::query::partition::plan`): each a list of inclusive
    /// `(dimension, lo, hi)` ranges; none when the subarray selects
    /// nothing.
    #[pyo3(signature = (subarray=None, n=1, condition=None))]
    fn partitions<'py>(
        &self,
        py: Python<'py>,
        subarray: Option<&Bound<'py, PyAny>>,
        n: usize,
        condition: Option<String>,
    ) -> PyResult<Vec<Vec<PyRange<'py>>>> {
        let ranges = ranges_from(&self.array, subarray)?;
        let prune = condition
            .map(|c| Expr::parse(&c, &self.array.schema))
            .transpose()
            .map_err(py_err)?;
        let (array, storage) = (&self.array, self.storage.as_ref());
        let planned = py
            .detach(|| partition::plan(array, storage, &ranges, n.max(1), prune.as_ref()))
            .map_err(py_err)?;
        planned
            .into_iter()
            .map(|part| {
                part.into_iter()
                    .map(|(name, lo, hi)| {
                        Ok((
                            name,
                            crate::ranges::to_py(py, lo)?,
                            crate::ranges::to_py(py, hi)?,
                        ))
                    })
                    .collect()
            })
            .collect()
    }

    /// Nothing if `condition` (the CLI's `--where` syntax) parses against
    /// the array's schema; else its error.
    fn check_condition(&self, condition: &str) -> PyResult<()> {
        Expr::parse(condition, &self.array.schema).map_err(py_err)?;
        Ok(())
    }

    /// A `pyarrow.RecordBatchReader` over the cells asked for, read in
    /// batches of about `budget` bytes on a thread of its own; with
    /// `ascii_as_binary`, STRING_ASCII fields as binary (their bytes need not
    /// be UTF-8).
    #[pyo3(signature = (attrs=None, subarray=None, condition=None, layout=None, dims=Dims::All(true), budget=1u64 << 30, enum_values=false, ascii_as_binary=false))]
    #[allow(clippy::too_many_arguments)]
    fn reader<'py>(
        &self,
        py: Python<'py>,
        attrs: Option<Vec<String>>,
        subarray: Option<&Bound<'py, PyAny>>,
        condition: Option<String>,
        layout: Option<&str>,
        dims: Dims,
        budget: u64,
        enum_values: bool,
        ascii_as_binary: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let condition = condition
            .map(|c| Expr::parse(&c, &self.array.schema))
            .transpose()
            .map_err(py_err)?;
        let mut request = ReadRequest::new()
            .with_ranges(ranges_from(&self.array, subarray)?)
            .budget(budget.max(1))
            .enumeration_values(enum_values)
            .ascii_as_binary(ascii_as_binary);
        if let Some(a) = attrs {
            request = request.attributes(a);
        }
        request = match dims {
            Dims::All(yes) => request.dimensions(yes),
            Dims::Named(names) => request.dimension_names(names),
        };
        if let Some(l) = layout.map(parse_layout).transpose()? {
            request = request.layout(l);
        }
        if let Some(c) = condition {
            request = request.condition(c);
        }
        let session = ReadSession::new(self.storage.clone(), self.array.clone());
        let batches = py.detach(|| stream(session, request)).map_err(py_err)?;
        let boxed: Box<dyn arrow_array::RecordBatchReader + Send> = Box::new(PyBatches(batches));
        boxed.into_pyarrow(py)
    }
}

/// An inclusive range on a dimension, as Python has it: `(name, lo, hi)`.
type PyRange<'py> = (String, Bound<'py, PyAny>, Bound<'py, PyAny>);

/// A layout by its TileDB-Py or CLI name.
fn parse_layout(s: &str) -> PyResult<Layout> {
    Ok(match s {
        "row-major" | "C" => Layout::RowMajor,
        "col-major" | "F" => Layout::ColMajor,
        "global-order" | "global" | "G" => Layout::GlobalOrder,
        "unordered" | "U" => Layout::Unordered,
        other => {
            return Err(py_msg(format!(
                "layout `{other}`: expected row-major (C), col-major (F), global-order (G) or unordered (U)"
            )))
        }
    })
}

/// The dimensions a read returns: all of them or none (`True`, `False`), or
/// those named (a list).
#[derive(FromPyObject)]
enum Dims {
    All(bool),
    Named(Vec<String>),
}
