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
