//! The error type of the filters crate.

use tessera_tile::ParseError;

/// Why a tile could not be (un)filtered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// A structure (pipeline, chunk framing, filter metadata) is malformed.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A filter id no filter has.
    #[error("unknown filter type id {0}")]
    UnknownFilter(u8),
    /// Id 17: an experimental bitsort filter that was withdrawn before release.
    #[error("filter type id 17 (a withdrawn experimental bitsort filter) is not supported")]
    WithdrawnFilter,
    /// A filter was given data of a type it does not accept.
    #[error("{filter} filter: unsupported datatype {datatype}")]
    UnsupportedType {
        /// The filter.
        filter: &'static str,
        /// The datatype it received.
        datatype: tessera_tile::Datatype,
    },
    /// A checksum stored in a chunk does not match the data.
    #[error("{algorithm} checksum mismatch in chunk {chunk} ({part} part {index})")]
    ChecksumMismatch {
        /// MD5 or SHA-256.
        algorithm: &'static str,
        /// Chunk index in the tile.
        chunk: usize,
        /// `metadata` or `data`.
        part: &'static str,
        /// Index of the checksummed part.
        index: usize,
    },
    /// The tile is encrypted and no key was given.
    #[error("the tile is encrypted with AES-256-GCM but no encryption key was given")]
    MissingKey,
    /// Decryption failed: wrong key or tampered data (the GCM tag did not verify).
    #[error("AES-256-GCM decryption failed in chunk {chunk}: wrong key or corrupted data")]
    Decrypt {
        /// Chunk index in the tile.
        chunk: usize,
    },
    /// A codec rejected its input.
    #[error("{filter} filter failed in chunk {chunk}: {message}")]
    Codec {
        /// The filter.
        filter: &'static str,
        /// Chunk index in the tile.
        chunk: usize,
        /// What the codec said.
        message: String,
    },
    /// Decoded sizes disagree with what the framing promised.
    #[error("chunk {chunk}: {message}")]
    Size {
        /// Chunk index in the tile.
        chunk: usize,
        /// Explanation.
        message: String,
    },
    /// A filter tessera does not implement in this direction.
    #[error("{0}")]
    Unsupported(String),
    /// Adds the location (file, tile) to an inner error.
    #[error("{location}: {source}")]
    At {
        /// Where: file and tile.
        location: String,
        /// The error.
        #[source]
        source: Box<FilterError>,
    },
}

impl FilterError {
    /// Wraps the error with a location (file, tile index).
    pub fn at(self, location: impl Into<String>) -> FilterError {
        FilterError::At {
            location: location.into(),
            source: Box::new(self),
        }
    }

    pub(crate) fn codec(filter: &'static str, chunk: usize, message: impl ToString) -> FilterError {
        FilterError::Codec {
            filter,
            chunk,
            message: message.to_string(),
        }
    }
}

impl FilterError {
    /// Whether this is a missing or wrong encryption key: the tile is
    /// encrypted and no key was given, or the key does not decrypt it.
    pub fn is_key_problem(&self) -> bool {
        matches!(self, FilterError::MissingKey | FilterError::Decrypt { .. })
    }
}

/// A filter error as a parse error: parse errors as they are, others as
/// an invalid filter pipeline (for decoders that report parse errors).
impl From<FilterError> for ParseError {
    fn from(e: FilterError) -> ParseError {
        match e {
            FilterError::Parse(p) => p,
            other => ParseError {
                file: None,
                structure: "filter pipeline",
                field: String::new(),
                offset: 0,
                kind: tessera_tile::ParseErrorKind::Invalid(other.to_string()),
            },
        }
    }
}
