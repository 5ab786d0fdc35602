//! The crate's one error type.

/// Why an object store could not be reached or configured.
#[derive(Debug, thiserror::Error)]
pub enum ObjectStoreError {
    /// Not a URI this crate serves.
    #[error("{uri}: {reason}")]
    Uri {
        /// The URI as given.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The store's client could not be built (missing credentials, a bad
    /// endpoint, an unknown option).
    #[error("{uri}: {source}")]
    Client {
        /// The URI the store was built for.
        uri: String,
        /// The client's error.
        source: object_store::Error,
    },
    /// A storage option the URI's store does not take.
    #[error("{uri}: storage option {key:?}: {reason}")]
    Option {
        /// The URI the store was built for.
        uri: String,
        /// The option's key as given.
        key: String,
        /// Why it was refused.
        reason: String,
    },
    /// A read-tuning setting from the environment could not be read.
    #[error("{uri}: {reason}")]
    Tuning {
        /// The URI the store was built for.
        uri: String,
        /// Which variable, and what is wrong with its value.
        reason: String,
    },
}
