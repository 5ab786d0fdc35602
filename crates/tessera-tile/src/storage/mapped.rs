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
//! [`ReadableStorage::map`](super::ReadableStorage::map).

use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// A file mapped read-only; clones share the mapping, which ends with the
/// last of them.
#[derive(Clone)]
pub struct MappedFile(Arc<memmap2::Mmap>);

impl MappedFile {
    /// Maps the file at `path`. An empty file has nothing to map: an error
    /// (readers then read it as usual).
    pub fn open(path: &Path) -> io::Result<MappedFile> {
        let file = File::open(path)?;
        if file.metadata()?.len() == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "an empty file is not mapped",
            ));
        }
        // SAFETY: the mapping is read-only, and the bytes are only ever
        // seen as `&[u8]` (no type is read out of them in place). It stays
        // valid while the file keeps its length, which TileDB's data files
        // do once written (see the module's documentation).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(MappedFile(Arc::new(map)))
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The bytes of `range`; a range not inside the file is an error, as
    /// [`LocalFs`](super::LocalFs)'s read of it would be.
    pub fn range(&self, range: Range<u64>) -> io::Result<&[u8]> {
        let len = self.0.len() as u64;
        if range.start > range.end || range.end > len {
            return Err(super::outside_file(&range, len));
        }
        Ok(&self.0[range.start as usize..range.end as usize])
    }
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MappedFile({} bytes)", self.0.len())
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
            "byte range 99990..100001 is outside the file (100000 bytes)"
        );
        std::fs::write(&path, b"").unwrap();
        assert!(MappedFile::open(&path).is_err());
        assert!(MappedFile::open(&dir.join("missing.tdb")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
