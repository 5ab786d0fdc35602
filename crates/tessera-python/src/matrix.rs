//! A CSR matrix filled straight from a read (`tessera_soma::CsrFill`)
//! handed to Python as `bytearray`s that numpy arrays share: filled in
//! place where the read's cell bound sizes them, else copied from the
//! fill's own arrays.

use crate::error::py_msg;
use pyo3::exceptions::PyNotImplementedError;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;
use tessera::query::{ReadRequest, ReadSession};
use tessera_soma::{CsrFill, CsrMatrix, SomaError};

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
pub fn bytearrays(py: Python<'_>, csr: CsrMatrix) -> PyResult<CsrArrays<'_>> {
    let (data, indices, starts) = csr.into_parts();
    // Each array's memory is freed once copied (the closure owns it).
    let copied = |v: Vec<u8>| PyByteArray::new(py, &v);
    let (data, indices) = (copied(data), copied(indices));
    Ok((data, indices, indptr(py, &starts)))
}

/// The row starts as an int64 `bytearray`.
fn indptr<'py>(py: Python<'py>, starts: &[i64]) -> Bound<'py, PyByteArray> {
    let bytes: Vec<u8> = starts.iter().flat_map(|s| s.to_le_bytes()).collect();
    PyByteArray::new(py, &bytes)
}

/// A CSR read: the session and request, and whether the matrix's rows
/// and columns are the coordinates themselves.
pub struct CsrRead<'s> {
    pub session: &'s ReadSession,
    pub request: ReadRequest,
    pub attribute: &'s str,
    pub by_coordinates: bool,
}

impl CsrRead<'_> {
    /// The matrix's `(data, indices, indptr)`. Indexed by coordinates, a
    /// read's cells are at most those of the tiles it meets: the
    /// `bytearray`s are made that size and filled in place (a copy of the
    /// arrays, at tens of millions of cells, costs as much time as
    /// placing them and holds them twice), then cut to the cells read.
    /// Elsewhere, or where that bound is more than half the machine's
    /// memory, the fill grows arrays of its own, copied after.
    pub fn read<'py>(self, py: Python<'py>, fill: CsrFill) -> PyResult<CsrArrays<'py>> {
        let (session, attribute) = (self.session, self.attribute);
        let (batches, bound) = py
            .detach(|| -> Result<_, SomaError> {
                let batches = fill.batches(session, self.request, attribute)?;
                let bound = match self.by_coordinates {
                    true => Some(batches.cell_bound()?),
                    false => None,
                };
                Ok((batches, bound))
            })
            .map_err(soma_err)?;
        let (w, iw) = (fill.value_width(), fill.index_width());
        let bytes = |n: u64| usize::try_from(n).ok()?.checked_mul(w + iw);
        let Some(bound) = bound.filter(|&n| bytes(n).is_some_and(|b| b <= half_of_memory())) else {
            let csr = py.detach(|| fill.read_batches(batches)).map_err(soma_err)?;
            return bytearrays(py, csr);
        };
        let bound = bound as usize;
        let (mut filled, mut indices_made) = (None, None);
        let data = PyByteArray::new_with(py, bound * w, |data| {
            let indices = PyByteArray::new_with(py, bound * iw, |indices| {
                let read = py.detach(|| fill.read_into(batches, data, indices));
                filled = Some(read.map_err(soma_err)?);
                Ok(())
            })?;
            indices_made = Some(indices);
            Ok(())
        })?;
        let (Some((cells, starts)), Some(indices)) = (filled, indices_made) else {
            return Err(py_msg("internal error: a CSR fill in place left no arrays"));
        };
        data.resize(cells * w)?;
        indices.resize(cells * iw)?;
        Ok((data, indices, indptr(py, &starts)))
    }
}

/// Half the machine's memory (`MemTotal`), or 0 where it cannot be read.
fn half_of_memory() -> usize {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
    });
    total_kib.map_or(0, |kib| kib.saturating_mul(1024) / 2)
}
