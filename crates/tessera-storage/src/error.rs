//! The crate's one error type: which file, object or folder a request
//! was about, what kind of failure it met, and the storage's own error
//! beneath.

use std::fmt;
use std::io;
use std::ops::Range;

/// A result of a storage request.
pub type StorageResult<T> = Result<T, StorageError>;

/// What kind of failure a storage request met: what a caller may act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StorageErrorKind {
    /// No file or object at the key (a vacuum may have removed it).
    NotFound,
    /// A write that must not replace anything found something there.
    AlreadyExists,
    /// A byte range not inside the file, or a file shorter than it said.
    OutOfRange,
    /// The storage refused the credentials or the request.
    PermissionDenied,
    /// The storage could not be reached: a connection refused, reset or
    /// aborted, or a request timed out.
    Unavailable,
    /// A key that names nothing this storage serves (a bad URI, another
    /// bucket).
    InvalidKey,
    /// The request is not one this storage does.
    Unsupported,
    /// Memory for the bytes asked for could not be had.
    OutOfMemory,
    /// Anything else.
    Other,
}

impl StorageErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            StorageErrorKind::NotFound => "not found",
            StorageErrorKind::AlreadyExists => "already exists",
            StorageErrorKind::OutOfRange => "out of range",
            StorageErrorKind::PermissionDenied => "permission denied",
            StorageErrorKind::Unavailable => "unavailable",
            StorageErrorKind::InvalidKey => "invalid key",
            StorageErrorKind::Unsupported => "unsupported",
            StorageErrorKind::OutOfMemory => "out of memory",
            StorageErrorKind::Other => "failed",
        }
    }
}

impl fmt::Display for StorageErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A storage request that failed: the key it was about (a local path or
/// a URI), its kind, what happened, and the error beneath, if any.
///
/// ```
/// use tessera_storage::{LocalFs, ReadableStorage, StorageErrorKind};
/// let err = LocalFs.read_all("no/such/file".as_ref()).unwrap_err();
/// assert_eq!(err.kind(), StorageErrorKind::NotFound);
/// assert_eq!(err.key(), "no/such/file");
/// assert!(err.to_string().starts_with("no/such/file: "));
/// ```
#[derive(Debug)]
pub struct StorageError {
    kind: StorageErrorKind,
    key: String,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl StorageError {
    /// A failure of `kind` at `key`, saying `message`.
    pub fn new(kind: StorageErrorKind, key: impl Into<String>, message: impl Into<String>) -> Self {
        StorageError {
            kind,
            key: key.into(),
            message: message.into(),
            source: None,
        }
    }

    /// A failure of `kind` at `key` caused by `source` (the storage
    /// client's error), whose message it shows.
    pub fn caused(
        kind: StorageErrorKind,
        key: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StorageError {
            kind,
            key: key.into(),
            message: source.to_string(),
            source: Some(Box::new(source)),
        }
    }

    /// An I/O error at `key`, its kind told from the I/O error's.
    pub fn io(key: impl AsRef<std::path::Path>, source: io::Error) -> Self {
        let kind = match source.kind() {
            io::ErrorKind::NotFound => StorageErrorKind::NotFound,
            io::ErrorKind::AlreadyExists => StorageErrorKind::AlreadyExists,
            io::ErrorKind::UnexpectedEof => StorageErrorKind::OutOfRange,
            io::ErrorKind::PermissionDenied => StorageErrorKind::PermissionDenied,
            io::ErrorKind::OutOfMemory => StorageErrorKind::OutOfMemory,
            io::ErrorKind::Unsupported => StorageErrorKind::Unsupported,
            io::ErrorKind::InvalidInput => StorageErrorKind::InvalidKey,
            io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::TimedOut
            | io::ErrorKind::Interrupted => StorageErrorKind::Unavailable,
            _ => StorageErrorKind::Other,
        };
        StorageError::caused(kind, key.as_ref().to_string_lossy(), source)
    }

    /// The error of a request at `key` for which `bytes` could not be
    /// allocated.
    pub fn no_memory(key: impl AsRef<std::path::Path>, bytes: u64) -> Self {
        StorageError::new(
            StorageErrorKind::OutOfMemory,
            key.as_ref().to_string_lossy(),
            format!("{bytes} bytes could not be allocated"),
        )
    }

    /// What kind of failure it was.
    pub fn kind(&self) -> StorageErrorKind {
        self.kind
    }

    /// The file, object or folder the request was about: a local path or
    /// a URI (empty where a failure was no one key's: a storage's runtime
    /// that would not start).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether the file or object was not there.
    pub fn is_not_found(&self) -> bool {
        self.kind == StorageErrorKind::NotFound
    }

    /// The same kind, key and message, without the error beneath: for one
    /// failure that answers several requests.
    pub fn copied(&self) -> StorageError {
        StorageError::new(self.kind, self.key.clone(), self.message.clone())
    }
}

/// `Ok` if `range` lies inside the file at `key`, of `len` bytes; else the
/// error saying it does not.
pub(crate) fn inside(
    key: impl AsRef<std::path::Path>,
    range: &Range<u64>,
    len: u64,
) -> StorageResult<()> {
    if range.start <= range.end && range.end <= len {
        return Ok(());
    }
    Err(StorageError::new(
        StorageErrorKind::OutOfRange,
        key.as_ref().to_string_lossy(),
        format!(
            "byte range {}..{} is outside the file ({len} bytes)",
            range.start, range.end
        ),
    ))
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what: &dyn fmt::Display = match self.message.is_empty() {
            true => &self.kind,
            false => &self.message,
        };
        match self.key.is_empty() {
            true => write!(f, "{what}"),
            false => write!(f, "{}: {what}", self.key),
        }
    }
}

impl std::error::Error for StorageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// For callers inside `std::io` interfaces: the kind maps back, the
/// message keeps the key.
impl From<StorageError> for io::Error {
    fn from(e: StorageError) -> io::Error {
        let kind = match e.kind {
            StorageErrorKind::NotFound => io::ErrorKind::NotFound,
            StorageErrorKind::AlreadyExists => io::ErrorKind::AlreadyExists,
            StorageErrorKind::OutOfRange => io::ErrorKind::UnexpectedEof,
            StorageErrorKind::PermissionDenied => io::ErrorKind::PermissionDenied,
            StorageErrorKind::Unavailable => io::ErrorKind::TimedOut,
            StorageErrorKind::InvalidKey => io::ErrorKind::InvalidInput,
            StorageErrorKind::Unsupported => io::ErrorKind::Unsupported,
            StorageErrorKind::OutOfMemory => io::ErrorKind::OutOfMemory,
            StorageErrorKind::Other => io::ErrorKind::Other,
        };
        io::Error::new(kind, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_keep_their_kind_both_ways() {
        for (io_kind, kind) in [
            (io::ErrorKind::NotFound, StorageErrorKind::NotFound),
            (
                io::ErrorKind::AlreadyExists,
                StorageErrorKind::AlreadyExists,
            ),
            (io::ErrorKind::UnexpectedEof, StorageErrorKind::OutOfRange),
            (
                io::ErrorKind::PermissionDenied,
                StorageErrorKind::PermissionDenied,
            ),
        ] {
            let e = StorageError::io("a/b", io::Error::new(io_kind, "why"));
            assert_eq!((e.kind(), e.key()), (kind, "a/b"));
            assert_eq!(e.to_string(), "a/b: why");
            assert!(std::error::Error::source(&e).is_some());
            assert_eq!(io::Error::from(e).kind(), io_kind);
        }
        let e = StorageError::new(StorageErrorKind::Unavailable, "s3://b/k", "");
        assert_eq!(e.to_string(), "s3://b/k: unavailable");
    }
}
