//! Where an array (or group, or file) is: a path with the storage that
//! serves it. Writers take a [`Location`], so the same call writes a local
//! folder (`Location::from(path)`) or an object store
//! (`Location::new(storage, "s3://bucket/array")`).

use crate::local::LocalFs;
use crate::storage::Storage;
use crate::write::WritableStorage;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A path and the storage it is in.
///
/// ```
/// use tessera_storage::{Location, WritableStorage};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-location-{}", std::process::id()));
/// let at = Location::from(&dir);
/// at.storage().create_folder(at.path()).unwrap();
/// let file = at.join("notes");
/// file.storage().put(file.path(), b"hello").unwrap();
/// assert_eq!(at.reader().read_all(&dir.join("notes")).unwrap(), b"hello");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone)]
pub struct Location {
    storage: Arc<dyn WritableStorage>,
    path: PathBuf,
}

impl Location {
    /// `path` in `storage`.
    pub fn new(storage: Arc<dyn WritableStorage>, path: impl Into<PathBuf>) -> Location {
        Location {
            storage,
            path: path.into(),
        }
    }

    /// `path` on the local filesystem.
    pub fn local(path: impl Into<PathBuf>) -> Location {
        Location::new(Arc::new(LocalFs), path)
    }

    /// The storage, to write through.
    pub fn storage(&self) -> &dyn WritableStorage {
        &*self.storage
    }

    /// The storage, to read through.
    pub fn reader(&self) -> &dyn Storage {
        &*self.storage
    }

    /// The storage, shared.
    pub fn shared(&self) -> Arc<dyn WritableStorage> {
        self.storage.clone()
    }

    /// The path (a URI on an object store).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `rel` below this location, in the same storage.
    pub fn join(&self, rel: impl AsRef<Path>) -> Location {
        Location {
            storage: self.storage.clone(),
            path: self.path.join(rel),
        }
    }

    /// The same storage at another path.
    pub fn at(&self, path: impl Into<PathBuf>) -> Location {
        Location {
            storage: self.storage.clone(),
            path: path.into(),
        }
    }
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Location({})", self.path.display())
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.path.display().fmt(f)
    }
}

impl From<&Path> for Location {
    fn from(path: &Path) -> Location {
        Location::local(path)
    }
}

impl From<&PathBuf> for Location {
    fn from(path: &PathBuf) -> Location {
        Location::local(path.clone())
    }
}

impl From<PathBuf> for Location {
    fn from(path: PathBuf) -> Location {
        Location::local(path)
    }
}

impl From<&Location> for Location {
    fn from(at: &Location) -> Location {
        at.clone()
    }
}
