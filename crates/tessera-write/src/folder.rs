//! Reading and clearing the folders maintenance works in (`__commits`,
//! `__meta`, `__fragment_meta`): a folder libtiledb never made (git and
//! object stores drop empty ones) holds nothing, and a file already gone
//! was removed by an earlier, interrupted run.

use crate::WriteError;
use tessera_storage::Location;

/// The names of the entries of `dir`, sorted; none if it does not exist.
pub(crate) fn entry_names(dir: &Location) -> Result<Vec<String>, WriteError> {
    tessera_storage::entry_names(dir.reader(), dir.path()).map_err(WriteError::from)
}

/// Removes the file at `path`; true if it was there.
pub(crate) fn remove_if_present(path: &Location) -> Result<bool, WriteError> {
    path.storage().delete(path.path()).map_err(WriteError::from)
}

/// The whole file at `path`.
pub(crate) fn read(path: &Location) -> Result<Vec<u8>, WriteError> {
    path.reader()
        .read_all(path.path())
        .map_err(WriteError::from)
}

/// Makes the folder at `dir` where folders exist (not on object stores).
pub(crate) fn create(dir: &Location) -> Result<(), WriteError> {
    dir.storage()
        .create_folder(dir.path())
        .map_err(WriteError::from)
}

/// Removes the folder at `dir` with everything in it; false if there was
/// none.
pub(crate) fn remove_folder(dir: &Location) -> Result<bool, WriteError> {
    dir.storage()
        .delete_folder(dir.path())
        .map(|n| n > 0)
        .map_err(WriteError::from)
}
