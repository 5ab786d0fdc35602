//! An array's files handed over at once, as storage in memory.

use crate::bytes::{take_bytes, take_len, take_str};
use crate::ROOT;
use std::path::Path;
use tessera_storage::Memory;

/// The files of `blob`, in memory under [`ROOT`]: each file is its path
/// relative to the array (a `u32` length, then UTF-8), its length (a
/// `u64`) and its bytes, little-endian.
pub fn files(mut blob: &[u8]) -> Result<Memory, String> {
    let mut storage = Memory::default();
    while !blob.is_empty() {
        let path = take_str(&mut blob, "file's path")?;
        let size = take_len(&mut blob, "file's length")?;
        let bytes = take_bytes(&mut blob, size, "file's bytes")?.to_vec();
        storage.insert(Path::new(ROOT).join(path), bytes);
    }
    Ok(storage)
}
