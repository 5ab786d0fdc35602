//! The crate's error.

/// Why a single-cell read or write could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SomaError {
    /// The array could not be read.
    #[error(transparent)]
    Query(#[from] tessera::QueryError),
    /// The array could not be written.
    #[error(transparent)]
    Write(#[from] tessera::write::WriteError),
    /// The array is not one this read takes (the caller reads another
    /// way): what it lacks.
    #[error("{0}")]
    Unsupported(String),
    /// The read gave cells the matrix has no place for, or out of order.
    #[error("{0}")]
    Invalid(String),
}
