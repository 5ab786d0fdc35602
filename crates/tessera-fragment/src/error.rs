//! The error type of the fragment crate.

/// Why an array folder or fragment could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FragmentError {
    /// Malformed bytes.
    #[error(transparent)]
    Parse(#[from] tessera_tile::ParseError),
    /// A generic tile could not be unfiltered.
    #[error(transparent)]
    Filter(#[from] tessera_filters::FilterError),
    /// A schema problem.
    #[error(transparent)]
    Schema(#[from] tessera_schema::SchemaError),
    /// A file could not be read or listed.
    // Not transparent: the storage error stays in the source chain, where
    // `tessera_storage::is_missing_file` looks for it.
    #[error("{0}")]
    Storage(#[from] tessera_storage::StorageError),
    /// Something is wrong with a named fragment or file.
    #[error("{what}: {message}")]
    Invalid {
        /// Fragment, file, section.
        what: String,
        /// Why.
        message: String,
    },
    /// Context: the fragment and section an error happened in.
    #[error("fragment {fragment}, {section}: {source}")]
    In {
        /// Fragment name.
        fragment: String,
        /// Section (footer, R-tree, tile offsets of `a`, ...).
        section: String,
        /// The error.
        #[source]
        source: Box<FragmentError>,
    },
}

impl FragmentError {
    /// Whether opening or reading failed for want of the right encryption
    /// key: none given for an encrypted array, or one that does not decrypt
    /// it.
    pub fn is_key_problem(&self) -> bool {
        match self {
            FragmentError::Filter(f) => f.is_key_problem(),
            FragmentError::Schema(s) => s.is_key_problem(),
            FragmentError::In { source, .. } => source.is_key_problem(),
            _ => false,
        }
    }

    pub(crate) fn invalid(what: impl Into<String>, message: impl Into<String>) -> FragmentError {
        FragmentError::Invalid {
            what: what.into(),
            message: message.into(),
        }
    }
    pub(crate) fn within(self, fragment: &str, section: impl Into<String>) -> FragmentError {
        FragmentError::In {
            fragment: fragment.to_owned(),
            section: section.into(),
            source: Box::new(self),
        }
    }
}
