//! Python values as the query's bounds: ranges per dimension given as
//! `{"dim": [(lo, hi), ...]}` (inclusive), each bound an `int`, `float`,
//! `str` or `bytes` fitting the dimension's datatype.

use crate::error::py_msg;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
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
