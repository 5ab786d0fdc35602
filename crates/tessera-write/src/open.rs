//! Opening the array a write changes, at its latest state.

use crate::WriteError;
use std::path::Path;
use tessera_filters::EncryptionKey;
use tessera_fragment::OpenArray;
use tessera_tile::storage::LocalFs;

/// The array at `array`, opened over all its timestamps with `key`; an
/// array that cannot be opened is a refusal naming it.
pub(crate) fn open_array(
    array: &Path,
    key: Option<EncryptionKey>,
) -> Result<OpenArray, WriteError> {
    OpenArray::open(&LocalFs, array, 0, u64::MAX, key).map_err(|e| WriteError::refused(array, e))
}

/// Checks that `key` opens the array's newest schema, for operations that
/// could do without the key (vacuums): a user passes the key to every
/// command, and a wrong one is refused before anything is removed.
pub(crate) fn check_key(array: &Path, key: Option<EncryptionKey>) -> Result<(), WriteError> {
    let Some(key) = key else {
        return Ok(());
    };
    let files =
        tessera_schema::list_schemas(&LocalFs, array).map_err(|e| WriteError::refused(array, e))?;
    let newest = tessera_schema::schema_at(&files, u64::MAX)
        .ok_or_else(|| WriteError::refused(array, "no array schema"))?;
    tessera_schema::load_schema(&LocalFs, array, newest, Some(&key))
        .map_err(|e| WriteError::refused(array, format!("the key does not open the array: {e}")))?;
    Ok(())
}
