//! Files that appear whole or not at all, and only where no file was: a
//! storage's conditional put (on local disk written under a name no
//! reader takes, then hard-linked; on an object store one `PUT` with
//! `If-None-Match`). Every file a writer makes has a new name (a
//! timestamp and a UUID); the condition makes sure that, whatever
//! happens, nothing another writer wrote is replaced.

use crate::WriteError;
use tessera_storage::Location;

/// Writes `bytes` as `dir/name`, whole or not at all, failing if another
/// writer wrote that name first.
pub(crate) fn write_whole(dir: &Location, name: &str, bytes: &[u8]) -> Result<(), WriteError> {
    let path = dir.path().join(name);
    dir.storage()
        .put_new(&path, bytes)
        .map_err(WriteError::from)
}
