//! `tessera._native.create` and `write`: a new array from the schema's JSON
//! form, and a fragment from any Arrow stream (pyarrow tables and readers,
//! anything with `__arrow_c_stream__`). URIs are written straight to their
//! object store, the commit last.

use crate::convert::{parse_key, StorageOptions};
use crate::error::{message, py_msg};
use arrow_array::ffi_stream::ArrowArrayStreamReader;
use arrow_pyarrow::PyArrowType;
use pyo3::prelude::*;
use std::path::Path;
use tessera::storage::Location;
use tessera_write::{BoxWriter, Duplicates, FragmentWriter, WriteOptions};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Runs the write `op` on the array at `uri`: a local folder, or a URI
/// written straight to its object store (configured with `options` over
/// the environment).
pub(crate) fn at_location<T>(
    uri: &str,
    options: &StorageOptions,
    op: impl FnOnce(&Location) -> Result<T, BoxError>,
) -> Result<T, BoxError> {
    op(&tessera::location_with(Path::new(uri), options)?)
}

/// [`at_location`] with the GIL released, its error a `TesseraError`
/// naming `uri`.
pub(crate) fn on_location<T: Send>(
    py: Python<'_>,
    uri: &str,
    options: &StorageOptions,
    op: impl FnOnce(&Location) -> Result<T, BoxError> + Send,
) -> PyResult<T> {
    py.detach(|| at_location(uri, options, op))
        .map_err(|e| py_msg(format!("{uri}: {}", message(&*e))))
}

/// Creates an empty array at `uri` from the schema in its JSON form
/// (`docs/SCHEMA_JSON.md`), encrypted with `key` if given.
#[pyfunction]
#[pyo3(signature = (uri, schema_json, key=None, storage_options=StorageOptions::new()))]
pub fn create(
    py: Python<'_>,
    uri: &str,
    schema_json: &str,
    key: Option<&str>,
    storage_options: StorageOptions,
) -> PyResult<()> {
    let key = parse_key(key)?;
    let doc = schema_doc(schema_json)?;
    py.detach(|| {
        at_location(uri, &storage_options, |at| {
            tessera_write::create_array(at, &doc, key, None)?;
            Ok(())
        })
    })
    .map_err(|e| py_msg(message(&*e)))
}

/// Checks a schema in its JSON form as [`create`] reads it, creating
/// nothing: an error names the field and the problem.
#[pyfunction]
pub fn check_schema(schema_json: &str) -> PyResult<()> {
    schema_doc(schema_json).map(|_| ())
}

fn schema_doc(schema_json: &str) -> PyResult<tessera::schema::json::SchemaDocument> {
    let json: serde_json::Value =
        serde_json::from_str(schema_json).map_err(|e| py_msg(format!("schema: not JSON: {e}")))?;
    tessera::schema::json::schema_from_json(&json)
        .map_err(|e| py_msg(format!("schema: {}", message(&e))))
}

/// Writes the cells of the Arrow stream `data` (columns named as the
/// array's fields) as a new fragment of the array at `uri`; returns the
/// fragment names (several when `budget` cut a sparse write). With
/// `subarray` (per dimension in the schema's order, first and last
/// coordinate), a dense write's box: `data` then holds only attributes,
/// the box's cells in row-major order, and no coordinate is written or
/// checked.
#[pyfunction]
#[pyo3(signature = (uri, data, timestamp=None, key=None, budget=None, subarray=None, storage_options=StorageOptions::new(), duplicates="refuse"))]
#[allow(clippy::too_many_arguments)]
pub fn write(
    py: Python<'_>,
    uri: &str,
    data: PyArrowType<ArrowArrayStreamReader>,
    timestamp: Option<u64>,
    key: Option<&str>,
    budget: Option<u64>,
    subarray: Option<Vec<(i128, i128)>>,
    storage_options: StorageOptions,
    duplicates: &str,
) -> PyResult<Vec<String>> {
    let options = WriteOptions {
        timestamp,
        key: parse_key(key)?,
        budget,
        duplicates: parse_duplicates(duplicates)?,
        ..Default::default()
    };
    let stream = data.0;
    // Huge pages paused, as `tessera write` turns them off: see
    // `tessera_alloc::without_huge_pages`.
    py.detach(move || {
        tessera_alloc::without_huge_pages(|| {
            at_location(uri, &storage_options, move |at| {
                if let Some(bounds) = subarray {
                    let batches = stream.collect::<Result<Vec<_>, _>>()?;
                    let schema = match batches.first() {
                        Some(b) => b.schema(),
                        None => return Err("no cells to write in the box".into()),
                    };
                    // One batch is taken as it is; several are joined once.
                    let batch = match &batches[..] {
                        [one] => one.clone(),
                        _ => arrow_select::concat::concat_batches(&schema, &batches)?,
                    };
                    return write_box(at, options, &bounds, &batch);
                }
                let mut writer = FragmentWriter::try_new(at, options)?;
                for batch in stream {
                    let columns =
                        tessera_write::arrow::columns_from_batch(&batch?, writer.schema())?;
                    writer.write_owned(columns)?;
                }
                Ok(writer.finish()?)
            })
        })
    })
    .map_err(|e| py_msg(message(&*e)))
}

/// `duplicates=`: what a sparse write does with cells given twice at one
/// coordinate ([`Duplicates`]).
fn parse_duplicates(s: &str) -> PyResult<Duplicates> {
    Ok(match s {
        "refuse" => Duplicates::Refuse,
        "keep" => Duplicates::Keep,
        "drop" => Duplicates::Drop,
        other => {
            return Err(py_msg(format!(
                "duplicates=`{other}`: expected refuse, keep or drop"
            )))
        }
    })
}

/// Writes the box `bounds` whose cells `batch` holds row-major: band by
/// band when each band's cells are consecutive rows of the batch (numbers
/// then read where they lie, numpy's own memory when they came from
/// numpy), else whole.
fn write_box(
    at: &Location,
    options: WriteOptions,
    bounds: &[(i128, i128)],
    batch: &arrow_array::RecordBatch,
) -> Result<Vec<String>, BoxError> {
    let mut boxed = BoxWriter::try_new(at, options, bounds)?;
    let schema = boxed.schema().clone();
    let rows: Option<Vec<_>> = (0..boxed.bands().len())
        .map(|i| boxed.band_rows(i))
        .collect();
    match rows.filter(|_| boxed.cells() == batch.num_rows() as u64) {
        Some(rows) => {
            for r in rows {
                boxed.write_band_batch(&batch.slice(r.start, r.len()))?;
            }
            Ok(boxed.finish()?)
        }
        None => {
            // Whole (write_box names what does not fit the box).
            drop(boxed);
            let mut writer = FragmentWriter::try_new(at, options)?;
            let columns = tessera_write::arrow::columns_from_batch(batch, &schema)?;
            writer.write_box(bounds, columns)?;
            Ok(writer.finish()?)
        }
    }
}

/// Writes the cells of the Arrow stream `data` (`soma_dim_0`, `soma_dim_1`,
/// `soma_data`) into the 2-D sparse array at `uri` as one fragment, a band
/// of rows at a time (`tessera_soma::BandWriter`): the stream's rows must
/// come band after band (a matrix's rows in order), in any order within a
/// band. Returns the fragment's name.
#[pyfunction]
#[pyo3(signature = (uri, data, storage_options=StorageOptions::new()))]
pub fn write_bands(
    py: Python<'_>,
    uri: &str,
    data: PyArrowType<ArrowArrayStreamReader>,
    storage_options: StorageOptions,
) -> PyResult<Vec<String>> {
    let stream = data.0;
    py.detach(move || {
        tessera_alloc::without_huge_pages(|| {
            at_location(uri, &storage_options, move |at| {
                let mut w = tessera_soma::BandWriter::try_new(at.clone(), WriteOptions::default())?;
                for batch in stream {
                    let columns = tessera_write::arrow::columns_from_batch(&batch?, w.schema())?;
                    let field = |name: &str| columns.iter().find(|c| c.name == name);
                    let (Some(rows), Some(cols), Some(values)) =
                        (field("soma_dim_0"), field("soma_dim_1"), field("soma_data"))
                    else {
                        return Err("band writes take soma_dim_0, soma_dim_1 and soma_data".into());
                    };
                    w.push(&ints(&rows.data), &ints(&cols.data), &values.data)?;
                }
                Ok(w.finish()?)
            })
        })
    })
    .map_err(|e| py_msg(message(&*e)))
}

/// Little-endian int64 values.
fn ints(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect()
}
