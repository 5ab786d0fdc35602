//! A local file a reader keeps open between its scatter reads of it.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The file a reader's last scatter read opened
/// ([`ReadableStorage::read_scattered`](crate::ReadableStorage::read_scattered)),
/// kept open for its next: a job reading rows of several tiles of one
/// file opens it once, not once a tile (an open and a close are about 3 %
/// of a dense read of unfiltered tiles). The reader owns it and drops it
/// when its run of reads ends; storage that opens no files (object
/// stores, memory) leaves it empty. Readers keep one only across reads of
/// files that do not change meanwhile, as a fragment's do not.
#[derive(Debug, Default)]
pub struct KeptFile(Option<(PathBuf, File)>);

impl KeptFile {
    /// Nothing kept yet.
    pub fn new() -> KeptFile {
        KeptFile(None)
    }

    /// The open file at `path`: the one kept if it is that path's, else
    /// opened now and kept in place of the one before.
    pub(crate) fn open(&mut self, path: &Path) -> io::Result<&File> {
        let kept = match self.0.take() {
            Some((p, f)) if p == path => (p, f),
            _ => (path.to_path_buf(), File::open(path)?),
        };
        Ok(&self.0.insert(kept).1)
    }
}

#[cfg(test)]
mod tests {
    use super::KeptFile;
    use crate::{LocalFs, ReadableStorage};
    use std::path::Path;

    /// A scatter read reuses the file the last one opened (a file
    /// replaced at its path meanwhile still reads as the one opened),
    /// another path opens anew, a missing file is an error; a fresh
    /// `KeptFile` opens the path again.
    #[test]
    fn a_kept_file_serves_the_scatter_reads_of_its_reader() {
        let dir = std::env::temp_dir().join(format!("tessera-kept-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (a, b) = (dir.join("a.tdb"), dir.join("b.tdb"));
        std::fs::write(&a, b"aaaa").expect("temp file");
        std::fs::write(&b, b"bbbb").expect("temp file");
        let read = |p: &Path, kept: &mut KeptFile| {
            let mut x = [0u8; 2];
            LocalFs
                .read_scattered(p, 1, &mut [&mut x[..]], kept)
                .map(|()| x)
        };
        let mut kept = KeptFile::new();
        assert_eq!(&read(&a, &mut kept).unwrap(), b"aa");
        // Replaced by a rename, as a writer would: the kept file reads.
        let new = dir.join("new.tdb");
        std::fs::write(&new, b"AAAA").expect("temp file");
        std::fs::rename(&new, &a).expect("rename");
        assert_eq!(&read(&a, &mut kept).unwrap(), b"aa");
        // Another reader opens its own.
        assert_eq!(&read(&a, &mut KeptFile::new()).unwrap(), b"AA");
        assert_eq!(&read(&b, &mut kept).unwrap(), b"bb");
        assert!(read(&dir.join("missing"), &mut kept).is_err());
        // `b` was the last opened; `a` opens anew.
        assert_eq!(&read(&a, &mut kept).unwrap(), b"AA");
        std::fs::remove_dir_all(&dir).ok();
    }
}
