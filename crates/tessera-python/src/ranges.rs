//! Python values as the query's bounds and back: ranges per dimension
//! given as `{"dim": [(lo, hi), ...]}` (inclusive), each bound an `int`,
//! `float`, `str` or `bytes` fitting the dimension's datatype.

use crate::error::py_msg;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use pyo3::IntoPyObjectExt;
use tessera::query::Value;
use tessera::tile::datatype::Physical;
use tessera::tile::Datatype;

/// One bound for a dimension of type `t`.
pub fn key(value: &Bound<'_, PyAny>, t: Datatype, dim: &str) -> PyResult<Value> {
    let wrong = |what: &str| {
        py_msg(format!(
            "subarray on `{dim}` ({}): expected {what}, got {}",
            t.name(),
            value.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        ))
    };
    match t.physical() {
        Physical::Int(_) | Physical::UInt(_) => value
            .extract::<i128>()
            .map(Value::Int)
            .map_err(|_| wrong("an integer")),
        Physical::Float(_) => value
            .extract::<f64>()
            .map(Value::Float)
            .map_err(|_| wrong("a number")),
        Physical::Bytes => {
            if let Ok(s) = value.cast::<PyString>() {
                Ok(Value::Bytes(s.to_str()?.as_bytes().to_vec()))
            } else if let Ok(b) = value.cast::<PyBytes>() {
                Ok(Value::Bytes(b.as_bytes().to_vec()))
            } else {
                Err(wrong("str or bytes"))
            }
        }
    }
}

/// A bound as Python has it: `int`, `float`, or `bytes` (string
/// dimensions' bounds are bytes, as TileDB-Py gives them).
pub fn to_py(py: Python<'_>, value: Value) -> PyResult<Bound<'_, PyAny>> {
    match value {
        Value::Int(i) => i.into_bound_py_any(py),
        Value::Float(f) => f.into_bound_py_any(py),
        Value::Bytes(b) => PyBytes::new(py, &b).into_bound_py_any(py),
    }
}
