//! A CSR matrix filled straight from a read (`tessera_soma::CsrFill`)
//! handed to Python: its arrays copied into `bytearray`s that numpy arrays
//! share, each chunk freed as soon as it is copied.

use crate::error::py_msg;
use pyo3::exceptions::PyNotImplementedError;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;
use tessera_soma::{CsrChunks, SomaError};

/// A single-cell read's error as Python's: `NotImplementedError` for an
/// array the fill does not take (the caller reads another way).
pub fn soma_err(e: SomaError) -> PyErr {
    match e {
        SomaError::Unsupported(m) => PyNotImplementedError::new_err(m),
        other => py_msg(other.to_string()),
    }
}

/// A CSR matrix's `(data, indices, indptr)` as `bytearray`s.
pub type CsrArrays<'py> = (
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
);

/// The matrix's arrays as `bytearray`s (indptr int64).
pub fn bytearrays(py: Python<'_>, csr: CsrChunks) -> PyResult<CsrArrays<'_>> {
    let (data, indices, starts) = csr.into_parts();
    let whole = |chunks: Vec<Vec<u8>>| {
        let len = chunks.iter().map(Vec::len).sum();
        PyByteArray::new_with(py, len, move |out: &mut [u8]| {
            let mut at = 0;
            for c in chunks {
                out[at..at + c.len()].copy_from_slice(&c);
                at += c.len();
            }
            Ok(())
        })
    };
    let data = whole(data)?;
    let indices = whole(indices)?;
    let indptr: Vec<u8> = starts.iter().flat_map(|s| s.to_le_bytes()).collect();
    Ok((data, indices, PyByteArray::new(py, &indptr)))
}
