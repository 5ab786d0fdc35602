//! Files that appear whole or not at all: written under a name no reader
//! takes (a leading dot, a `.tmp` ending: not a timestamped name), then
//! renamed, which a local file system does atomically.

use crate::WriteError;
use std::path::Path;

/// Writes `bytes` as `dir/name`, whole or not at all.
pub(crate) fn write_whole(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), WriteError> {
    let partial = dir.join(format!(".{name}.tmp"));
    std::fs::write(&partial, bytes).map_err(WriteError::io(&partial))?;
    let done = dir.join(name);
    if let Err(e) = std::fs::rename(&partial, &done) {
        let _ = std::fs::remove_file(&partial);
        return Err(WriteError::io(done)(e));
    }
    Ok(())
}
