//! The error type of the cells crate.

/// A condition that names no field of the array or does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CellError {
    /// A field the array does not have.
    #[error("the array has no {kind} `{name}`")]
    UnknownField {
        /// "field", "attribute" or "dimension".
        kind: &'static str,
        /// The name given.
        name: String,
    },
    /// Text that is not a condition or a value of its field's type.
    #[error("{0}")]
    Invalid(String),
}
