//! The error type of the writer crate.

use std::path::PathBuf;

/// Why an array could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The schema is invalid or cannot be written.
    #[error(transparent)]
    Schema(#[from] tessera_schema::SchemaError),
    /// A tile could not be filtered.
    #[error(transparent)]
    Filter(#[from] tessera_filters::FilterError),
    /// The cells given cannot be written: a missing field, a wrong type, a
    /// coordinate outside the domain, duplicates where none are allowed.
    #[error("{0}")]
    Input(String),
    /// The array cannot be created (or written) where asked.
    #[error("{path}: {message}")]
    Refused {
        /// The array's path.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The array's cells or fragments could not be read (a consolidation's
    /// input, the array opened to be written).
    #[error("{path}: {source}")]
    Read {
        /// The array's path.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file or folder could not be written, read or listed.
    // Not transparent: the storage error stays in the source chain, where
    // `tessera_storage::is_missing_file` looks for it.
    #[error("{0}")]
    Storage(#[from] tessera_storage::StorageError),
    /// The operating system's random source (for the uuids of names)
    /// failed.
    #[error("the operating system's random source: {0}")]
    Randomness(String),
}

impl WriteError {
    /// The error of an array that cannot be opened to be written.
    pub(crate) fn refused(path: &std::path::Path, message: impl ToString) -> WriteError {
        WriteError::Refused {
            path: path.into(),
            message: message.to_string(),
        }
    }

    /// The error of reading the array at `path`.
    pub(crate) fn read<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
        path: &std::path::Path,
    ) -> impl Fn(E) -> WriteError + Copy + '_ {
        move |e| WriteError::Read {
            path: path.into(),
            source: e.into(),
        }
    }

    /// Whether a file was missing: one listed and then removed by another
    /// process's vacuum, or one another writer was to have made.
    pub fn is_missing_file(&self) -> bool {
        tessera_storage::is_missing_file(self)
    }
}
