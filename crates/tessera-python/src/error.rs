//! Tessera's errors as one Python exception, `tessera.TesseraError`,
//! carrying the message and its cause chain as the CLI prints them.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(
    tessera,
    TesseraError,
    PyException,
    "An array, group or query tessera could not read or write: the message names the file, structure and byte where it can."
);

/// `e` and its causes, `: `-joined (each cause once).
pub fn message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let s = c.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        cause = c.source();
    }
    text
}

/// Any tessera error as a [`TesseraError`].
pub fn py_err(e: impl std::error::Error + 'static) -> PyErr {
    TesseraError::new_err(message(&e))
}

/// A message as a [`TesseraError`].
pub fn py_msg(m: impl Into<String>) -> PyErr {
    TesseraError::new_err(m.into())
}
