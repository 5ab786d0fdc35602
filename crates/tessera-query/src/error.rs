//! The error type of the query crate.

/// Why a read failed. Callers match the typed variants ([`QueryError::UnknownField`],
/// [`QueryError::IllTyped`], [`QueryError::OutOfDomain`]) and ask [`QueryError::is_key_problem`];
/// new variants may come.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// A file could not be read or listed.
    // Not transparent: the storage error stays in the source chain, where
    // `tessera_storage::is_missing_file` looks for it.
    #[error("{0}")]
    Storage(#[from] tessera_storage::StorageError),
    /// The query names a field the array does not have.
    #[error("the array has no {kind} `{name}`")]
    UnknownField {
        /// `attribute`, `dimension` or `field` (either).
        kind: &'static str,
        /// The name asked for.
        name: String,
    },
    /// A range or condition gives a field a value its type cannot hold.
    #[error("the {what} on `{field}` does not fit its type: {message}")]
    IllTyped {
        /// `range` or `condition`.
        what: &'static str,
        /// The attribute or dimension.
        field: String,
        /// What does not fit.
        message: String,
    },
    /// A range reaches outside a dimension's domain.
    #[error(
        "range [{lo}, {hi}] on `{dimension}` is outside the domain [{domain_lo}, {domain_hi}]"
    )]
    OutOfDomain {
        /// The dimension.
        dimension: String,
        /// The range asked for.
        lo: i128,
        /// Its upper bound.
        hi: i128,
        /// The domain's lower bound.
        domain_lo: i128,
        /// The domain's upper bound.
        domain_hi: i128,
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

impl From<tessera_cells::CellError> for QueryError {
    fn from(e: tessera_cells::CellError) -> Self {
        match e {
            tessera_cells::CellError::UnknownField { kind, name } => {
                QueryError::UnknownField { kind, name }
            }
            other => QueryError::Invalid(other.to_string()),
        }
    }
}

impl From<tessera_schema::SchemaError> for QueryError {
    fn from(e: tessera_schema::SchemaError) -> Self {
        QueryError::Schema(Box::new(e))
    }
}

impl QueryError {
    /// Whether the read failed for want of the right encryption key: none
    /// given for an encrypted array, or one that does not decrypt it
    /// (wherever in the array that showed: schema, metadata or a tile).
    pub fn is_key_problem(&self) -> bool {
        match self {
            QueryError::Fragment(f) => f.is_key_problem(),
            QueryError::Schema(s) => s.is_key_problem(),
            QueryError::Tile { source, .. } => source.is_key_problem(),
            _ => false,
        }
    }
}
