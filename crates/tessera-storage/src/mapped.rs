//! Local files mapped into memory, so readers decode tiles where they lie
//! in the page cache instead of copying them into a buffer first (the copy
//! was a sixth of a dense scan's time).
//!
//! A mapping is sound only while its file keeps its length: reading a
//! page past the end of a file truncated meanwhile faults the process.
//! TileDB writes a data file once and never rewrites or truncates it
//! (consolidation writes new fragments; vacuuming removes whole files,
//! which leaves mappings readable), so readers map the files of fragments
//! they read. Small reads are not worth a mapping: see
//! [`ReadableStorage::map`](crate::ReadableStorage::map).

use crate::error::{inside, StorageError, StorageErrorKind, StorageResult};
use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// A file mapped read-only; clones share the mapping, which ends with the
/// last of them.
#[derive(Clone)]
pub struct MappedFile {
    map: Arc<memmap2::Mmap>,
    /// The path it was mapped from, to name in errors.
    path: Arc<str>,
}

impl MappedFile {
    /// Maps the file at `path`. An empty file has nothing to map: an error
    /// (readers then read it as usual).
    pub fn open(path: &Path) -> StorageResult<MappedFile> {
        let at = |e| StorageError::io(path, e);
        let file = File::open(path).map_err(at)?;
        if file.metadata().map_err(at)?.len() == 0 {
            return Err(StorageError::new(
                StorageErrorKind::OutOfRange,
                path.to_string_lossy(),
                "an empty file is not mapped",
            ));
        }
        // SAFETY: the mapping is read-only, and the bytes are only ever
        // seen as `&[u8]` (no type is read out of them in place). It stays
        // valid while the file keeps its length, which TileDB's data files
        // do once written (see the module's documentation).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file).map_err(at)? };
        Ok(MappedFile {
            map: Arc::new(map),
            path: path.to_string_lossy().into(),
        })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The bytes of `range`; a range not inside the file is an error, as
    /// [`LocalFs`](crate::LocalFs)'s read of it would be.
    pub fn range(&self, range: Range<u64>) -> StorageResult<&[u8]> {
        let len = self.map.len() as u64;
        inside(&*self.path, &range, len)?;
        Ok(&self.map[range.start as usize..range.end as usize])
    }
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MappedFile({}, {} bytes)", self.path, self.map.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_holds_the_file_and_outlives_its_removal() {
        let dir = std::env::temp_dir().join(format!("tessera-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.tdb");
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let map = MappedFile::open(&path).unwrap();
        let clone = map.clone();
        drop(map);
        // Vacuuming removes files: a mapping made before stays readable.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(clone.bytes(), &bytes[..]);
        assert_eq!(clone.range(10..20).unwrap(), &bytes[10..20]);
        let past = clone.range(99_990..100_001).unwrap_err().to_string();
        assert_eq!(
            past,
            format!(
                "{}: byte range 99990..100001 is outside the file (100000 bytes)",
                path.display()
            )
        );
        std::fs::write(&path, b"").unwrap();
        assert!(MappedFile::open(&path).is_err());
        assert!(MappedFile::open(&dir.join("missing.tdb")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
