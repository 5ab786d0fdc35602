//! The error type of the query crate.

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The array folder or a fragment could not be read.
    #[error(transparent)]
    Fragment(Box<tessera_fragment::FragmentError>),
    /// A schema file (an enumeration) could not be read.
    #[error(transparent)]
    Schema(Box<tessera_schema::SchemaError>),
    /// A tile could not be unfiltered.
    #[error("fragment {fragment}, {file}, tile {tile}: {source}")]
    Tile {
        /// Fragment name.
        fragment: String,
        /// Data file.
        file: String,
        /// Tile index.
        tile: u64,
        /// The error.
        #[source]
        source: Box<tessera_filters::FilterError>,
    },
    /// A data file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The query asks for something the array does not have or allow.
    #[error("{0}")]
    Invalid(String),
    /// Decoded data contradicts itself.
    #[error("fragment {fragment}, {file}, tile {tile}: {message}")]
    Corrupt {
        /// Fragment name.
        fragment: String,
        /// Data file.
        file: String,
        /// Tile index.
        tile: u64,
        /// What is wrong.
        message: String,
    },
}

impl From<tessera_fragment::FragmentError> for QueryError {
    fn from(e: tessera_fragment::FragmentError) -> Self {
        QueryError::Fragment(Box::new(e))
    }
}

impl From<tessera_schema::SchemaError> for QueryError {
    fn from(e: tessera_schema::SchemaError) -> Self {
        QueryError::Schema(Box::new(e))
    }
}
