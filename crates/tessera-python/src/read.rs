//! Python's read arguments as a `ReadRequest`, and its streamed
//! batches (`tessera_query::stream`) as a `RecordBatchReader` pyarrow
//! pulls from through the Arrow C stream interface.

use crate::error::message;
use crate::ranges;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use tessera::fragment::OpenArray;
use tessera::query::stream::BatchStream;
use tessera::query::Value;

/// The ranges of a Python `subarray`: `{"dim": (lo, hi)}` or
/// `{"dim": [(lo, hi), ...]}`, or a sequence with one entry per dimension
/// in schema order (`None` for the whole dimension).
pub fn ranges_from(
    array: &OpenArray,
    subarray: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<(String, Value, Value)>> {
    let mut out = Vec::new();
    let Some(sub) = subarray else { return Ok(out) };
    let dims = &array.schema.dimensions;
    let per_dim: Vec<(String, Bound<'_, PyAny>)> = if let Ok(d) = sub.cast::<PyDict>() {
        d.iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v)))
            .collect::<PyResult<_>>()?
    } else {
        let items: Vec<Bound<'_, PyAny>> = sub.try_iter()?.collect::<PyResult<_>>()?;
        if items.len() > dims.len() {
            return Err(crate::error::py_msg(format!(
                "subarray: {} entries for {} dimensions",
                items.len(),
                dims.len()
            )));
        }
        dims.iter().map(|d| d.name.clone()).zip(items).collect()
    };
    for (name, ranges) in per_dim {
        if ranges.is_none() {
            continue;
        }
        let d = array.schema.dimension(&name).ok_or_else(|| {
            crate::error::py_msg(format!("subarray: the array has no dimension `{name}`"))
        })?;
        // One (lo, hi) pair, or a list of them.
        let pairs: Vec<Bound<'_, PyAny>> = if is_pair(&ranges) {
            vec![ranges]
        } else {
            ranges.try_iter()?.collect::<PyResult<_>>()?
        };
        for p in pairs {
            let (lo, hi): (Bound<'_, PyAny>, Bound<'_, PyAny>) = p.extract().map_err(|_| {
                crate::error::py_msg(format!("subarray on `{name}`: expected (lo, hi) pairs"))
            })?;
            out.push((
                name.clone(),
                ranges::key(&lo, d.datatype, &name)?,
                ranges::key(&hi, d.datatype, &name)?,
            ));
        }
    }
    Ok(out)
}

/// A `(lo, hi)` pair rather than a list of pairs: a tuple or list of two
/// items neither of which is itself a tuple or list.
fn is_pair(v: &Bound<'_, PyAny>) -> bool {
    let items: Option<Vec<Bound<'_, PyAny>>> = if let Ok(t) = v.cast::<PyTuple>() {
        Some(t.iter().collect())
    } else if let Ok(l) = v.cast::<PyList>() {
        Some(l.iter().collect())
    } else {
        None
    };
    items.is_some_and(|i| {
        i.len() == 2
            && i.iter()
                .all(|x| x.cast::<PyTuple>().is_err() && x.cast::<PyList>().is_err())
    })
}

/// A streamed read as a `RecordBatchReader` for pyarrow; errors keep
/// tessera's message and causes.
pub struct PyBatches(pub BatchStream);

impl Iterator for PyBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(
            self.0
                .next()?
                .map_err(|e| ArrowError::ExternalError(message(&e).into())),
        )
    }
}

impl RecordBatchReader for PyBatches {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }
}
