//! Files that appear whole or not at all: a storage's put (on local disk
//! written under a name no reader takes, then renamed; on an object store
//! one `PUT`).

use crate::WriteError;
use tessera_tile::storage::Location;

/// Writes `bytes` as `dir/name`, whole or not at all.
pub(crate) fn write_whole(dir: &Location, name: &str, bytes: &[u8]) -> Result<(), WriteError> {
    let path = dir.path().join(name);
    dir.storage()
        .put(&path, bytes)
        .map_err(WriteError::io(path))
}
