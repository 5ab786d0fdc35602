//! The error type of the schema crate.

/// Why a schema could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// Malformed bytes.
    #[error(transparent)]
    Parse(#[from] tessera_tile::ParseError),
    /// A filter pipeline could not be decoded.
    #[error(transparent)]
    Filter(#[from] tessera_filters::FilterError),
    /// The schema contradicts itself.
    #[error("invalid schema: {field}: {message}")]
    Invalid {
        /// The field at fault.
        field: String,
        /// Why.
        message: String,
    },
    /// A file could not be read or listed.
    // Not transparent: the storage error stays in the source chain, where
    // `tessera_storage::is_missing_file` looks for it.
    #[error("{0}")]
    Storage(#[from] tessera_storage::StorageError),
    /// An error in a named file.
    #[error("{file}: {source}")]
    InFile {
        /// The file.
        file: String,
        /// The error.
        #[source]
        source: Box<SchemaError>,
    },
}

impl SchemaError {
    /// Whether reading failed for want of the right encryption key.
    pub fn is_key_problem(&self) -> bool {
        match self {
            SchemaError::Filter(f) => f.is_key_problem(),
            SchemaError::InFile { source, .. } => source.is_key_problem(),
            _ => false,
        }
    }

    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> SchemaError {
        SchemaError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// Attaches the file the error happened in.
    pub fn in_file(self, file: impl Into<String>) -> SchemaError {
        SchemaError::InFile {
            file: file.into(),
            source: Box::new(self),
        }
    }
}
