//! Reading and clearing the folders maintenance works in (`__commits`,
//! `__meta`, `__fragment_meta`): a folder libtiledb never made (git and
//! some object stores drop empty ones) holds nothing, and a file already
//! gone was removed by an earlier, interrupted run.

use crate::WriteError;
use std::path::Path;

/// The names of the entries of `dir`, sorted; none if it does not exist.
pub(crate) fn entry_names(dir: &Path) -> Result<Vec<String>, WriteError> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(d) => d
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(WriteError::io(dir)(e)),
    };
    names.sort();
    Ok(names)
}

/// Removes the file at `path`; true if it was there.
pub(crate) fn remove_if_present(path: &Path) -> Result<bool, WriteError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(WriteError::io(path)(e)),
    }
}
