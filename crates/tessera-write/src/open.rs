//! Opening the array a write changes, at its latest state.

use crate::WriteError;
use tessera_filters::EncryptionKey;
use tessera_fragment::OpenArray;
use tessera_storage::Location;

/// The array at `array`, opened over all its timestamps with `key`; an
/// array that cannot be opened is an error naming it.
pub(crate) fn open_array(
    array: &Location,
    key: Option<EncryptionKey>,
) -> Result<OpenArray, WriteError> {
    OpenArray::open(array.reader(), array.path(), 0, u64::MAX, key)
        .map_err(WriteError::read(array.path()))
}

/// Checks that `key` opens the array's newest schema, for operations that
/// could do without the key (vacuums): a user passes the key to every
/// command, and a wrong one is refused before anything is removed.
pub(crate) fn check_key(array: &Location, key: Option<EncryptionKey>) -> Result<(), WriteError> {
    let Some(key) = key else {
        return Ok(());
    };
    let (storage, path) = (array.reader(), array.path());
    let files =
        tessera_schema::list_schemas(storage, path).map_err(|e| WriteError::refused(path, e))?;
    let newest = tessera_schema::schema_at(&files, u64::MAX)
        .ok_or_else(|| WriteError::refused(path, "no array schema"))?;
    tessera_schema::load_schema(storage, path, newest, Some(&key))
        .map_err(|e| WriteError::refused(path, format!("the key does not open the array: {e}")))?;
    Ok(())
}
