//! `tessera._native.LabelRegistry`: `tessera_soma::LabelRegistry` for
//! `tessera.soma.io`'s registration. Labels cross as pyarrow string arrays
//! (no Python string a label), joinids as int64 bytes numpy reads in place.

use crate::error::py_msg;
use crate::matrix::soma_err;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, LargeStringArray};
use arrow_pyarrow::{IntoPyArrow, PyArrowType};
use arrow_schema::DataType;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;
use tessera_soma::LabelRegistry as Registry;

/// Labels to joinids (see `tessera_soma::LabelRegistry`).
#[pyclass(module = "tessera._native")]
pub struct LabelRegistry(Registry);

/// The labels of the pyarrow string array `labels`; a null label or
/// another type is an error.
fn strings(labels: &ArrayRef) -> PyResult<Box<dyn Iterator<Item = &str> + '_>> {
    if labels.null_count() > 0 {
        return Err(py_msg("labels: a label is null"));
    }
    let values: Box<dyn Iterator<Item = Option<&str>>> = match labels.data_type() {
        DataType::Utf8 => Box::new(labels.as_string::<i32>().iter()),
        DataType::LargeUtf8 => Box::new(labels.as_string::<i64>().iter()),
        DataType::Utf8View => Box::new(labels.as_string_view().iter()),
        other => return Err(py_msg(format!("labels: expected strings, not {other}"))),
    };
    Ok(Box::new(values.map(Option::unwrap_or_default)))
}

fn array(data: PyArrowType<arrow_data::ArrayData>) -> ArrayRef {
    arrow_array::make_array(data.0)
}

/// Little-endian int64 values as a `bytearray`.
fn int64_bytes<'py>(py: Python<'py>, values: &[i64]) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, values.len() * 8, |out: &mut [u8]| {
        for (o, v) in out.chunks_exact_mut(8).zip(values) {
            o.copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    })
}

/// Up to `n` examples of labels and how many there were.
type Examples = (Vec<String>, usize);

fn note(examples: &mut Examples, label: &str, n: usize) {
    if examples.0.len() < n {
        examples.0.push(label.to_string());
    }
    examples.1 += 1;
}

#[pymethods]
impl LabelRegistry {
    /// An empty registry.
    #[new]
    fn new() -> LabelRegistry {
        LabelRegistry(Registry::new())
    }

    /// Records labels an experiment holds (a string array) at their
    /// joinids (an int64 array of the same length).
    fn insert(
        &mut self,
        labels: PyArrowType<arrow_data::ArrayData>,
        joinids: PyArrowType<arrow_data::ArrayData>,
    ) -> PyResult<()> {
        let (labels, joinids) = (array(labels), array(joinids));
        let joinids = joinids
            .as_primitive_opt::<arrow_array::types::Int64Type>()
            .filter(|j| j.null_count() == 0 && j.len() == labels.len())
            .ok_or_else(|| py_msg("joinids: expected int64 values, one a label"))?;
        for (label, &joinid) in strings(&labels)?.zip(joinids.values()) {
            self.0.insert(label, joinid).map_err(soma_err)?;
        }
        Ok(())
    }

    /// Registers labels (a string array) in order: held ones keep their
    /// joinids, new ones take the next. Returns up to `examples` labels
    /// that were registered already (held, or earlier in `labels`) and
    /// how many.
    #[pyo3(signature = (labels, examples=4))]
    fn register(
        &mut self,
        labels: PyArrowType<arrow_data::ArrayData>,
        examples: usize,
    ) -> PyResult<Examples> {
        let mut repeated = (Vec::new(), 0);
        for label in strings(&array(labels))? {
            if !self.0.register(label).map_err(soma_err)?.1 {
                note(&mut repeated, label, examples);
            }
        }
        Ok(repeated)
    }

    /// The joinids of labels (a string array) as int64 bytes, -1 where a
    /// label is not registered.
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        labels: PyArrowType<arrow_data::ArrayData>,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let labels = array(labels);
        let out: Vec<i64> = strings(&labels)?
            .map(|label| self.0.get(label).unwrap_or(-1))
            .collect();
        int64_bytes(py, &out)
    }

    /// A registry of the labels given only (a string array), with this
    /// one's shape; or, when some are not registered, `None`, up to
    /// `examples` of those and how many.
    #[pyo3(signature = (labels, examples=5))]
    fn subset(
        &self,
        labels: PyArrowType<arrow_data::ArrayData>,
        examples: usize,
    ) -> PyResult<(Option<LabelRegistry>, Examples)> {
        let labels = array(labels);
        let subset = self.0.subset(strings(&labels)?, examples);
        Ok(match subset {
            Ok(r) => (Some(LabelRegistry(r)), (Vec::new(), 0)),
            Err(missing) => (None, missing),
        })
    }

    /// Every label (a pyarrow large string array), in registration order.
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let labels: LargeStringArray = self.0.iter().map(|(l, _)| Some(l)).collect();
        labels.into_data().into_pyarrow(py)
    }

    /// Every label's joinid as int64 bytes, in registration order.
    fn joinids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyByteArray>> {
        let joinids: Vec<i64> = self.0.iter().map(|(_, j)| j).collect();
        int64_bytes(py, &joinids)
    }

    /// The largest joinid plus one (0 when empty).
    #[getter]
    fn shape(&self) -> i64 {
        self.0.shape()
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "LabelRegistry({} labels, shape {})",
            self.0.len(),
            self.0.shape()
        )
    }
}
