//! The crate's error.

/// What went wrong making a page.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The array could not be read.
    #[error(transparent)]
    Query(#[from] tessera::QueryError),
    /// The array or group folder could not be read.
    #[error(transparent)]
    Fragment(#[from] tessera::fragment::FragmentError),
    /// The options ask for something the array does not have.
    #[error("{0}")]
    Invalid(String),
}
