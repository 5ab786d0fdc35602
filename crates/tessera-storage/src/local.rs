//! The local filesystem.

use crate::error::{inside, StorageError, StorageErrorKind, StorageResult};
use crate::hints::StorageHints;
use crate::kept::KeptFile;
use crate::listable::{DirEntry, ListableStorage};
use crate::mapped::MappedFile;
use crate::readable::ReadableStorage;
use crate::write::{already_there, FileWriter, WritableStorage};
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs of at least this many bytes [`LocalFs`] maps: below it a mapping
/// (its system calls and page faults) costs more than the copy it saves.
const MAPPED_RUN_BYTES: u64 = 1 << 20;

/// The local filesystem.
#[derive(Debug, Clone, Default)]
pub struct LocalFs;

impl ReadableStorage for LocalFs {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        let mut buf = Vec::new();
        self.read_range_into(path, range, &mut buf)?;
        Ok(buf)
    }

    fn read_range_into(
        &self,
        path: &Path,
        range: Range<u64>,
        buf: &mut Vec<u8>,
    ) -> StorageResult<()> {
        let at = |e| StorageError::io(path, e);
        let mut f = std::fs::File::open(path).map_err(at)?;
        let len = f.metadata().map_err(at)?.len();
        inside(path, &range, len)?;
        read_open_range(&mut f, range, buf).map_err(at)
    }

    fn read_scattered(
        &self,
        path: &Path,
        start: u64,
        bufs: &mut [&mut [u8]],
        kept: &mut KeptFile,
    ) -> StorageResult<()> {
        let at = |e| StorageError::io(path, e);
        scatter_from(kept.open(path).map_err(at)?, start, bufs).map_err(at)
    }

    fn read_tail(&self, path: &Path, max: u64) -> StorageResult<(u64, Vec<u8>)> {
        // One open for both: the size from the open file, then one read.
        let tail = || {
            let mut f = std::fs::File::open(path)?;
            let size = f.metadata()?.len();
            let mut buf = Vec::new();
            read_open_range(&mut f, size.saturating_sub(max)..size, &mut buf)?;
            Ok((size, buf))
        };
        tail().map_err(|e| StorageError::io(path, e))
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        std::fs::metadata(path)
            .map(|m| m.len())
            .map_err(|e| StorageError::io(path, e))
    }

    fn map(&self, path: &Path, run_bytes: u64) -> Option<StorageResult<MappedFile>> {
        (run_bytes >= MAPPED_RUN_BYTES).then(|| MappedFile::open(path))
    }

    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        std::fs::read(path).map_err(|e| StorageError::io(path, e))
    }
}

impl ListableStorage for LocalFs {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        let rd = match std::fs::read_dir(path) {
            Ok(rd) => rd,
            // Nothing is listed under a missing path or a file, as nothing
            // is under a key an object store holds no folder at.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(Vec::new())
            }
            Err(e) => return Err(StorageError::io(path, e)),
        };
        let entry = |e: io::Result<std::fs::DirEntry>| {
            let e = e?;
            // The entry's type comes with the listing on most file
            // systems; a size would cost a system call per file.
            Ok(DirEntry {
                name: e.file_name().to_string_lossy().into_owned(),
                is_dir: e.file_type()?.is_dir(),
                size: None,
            })
        };
        let mut out = rd
            .map(entry)
            .collect::<io::Result<Vec<DirEntry>>>()
            .map_err(|e| StorageError::io(path, e))?;
        out.sort();
        Ok(out)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}

impl StorageHints for LocalFs {}

/// Appends `range` of the open file `f` (inside the file: the caller
/// checked) to `buf`; a short read is an error.
fn read_open_range(f: &mut std::fs::File, range: Range<u64>, buf: &mut Vec<u8>) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    f.seek(SeekFrom::Start(range.start))?;
    let want = range.end - range.start;
    let had = buf.len();
    buf.try_reserve_exact(want as usize)
        .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()))?;
    // Into the reserved capacity: nothing is zeroed first.
    f.take(want).read_to_end(buf)?;
    let got = (buf.len() - had) as u64;
    if got != want {
        buf.truncate(had);
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("read {got} of {want} bytes at {}", range.start),
        ));
    }
    Ok(())
}

/// A scatter read of `start..` from the open file `f` (see
/// [`ReadableStorage::read_scattered`]).
fn scatter_from(mut f: &std::fs::File, start: u64, bufs: &mut [&mut [u8]]) -> io::Result<()> {
    use std::io::{IoSliceMut, Read, Seek, SeekFrom};
    let total: u64 = bufs.iter().map(|b| b.len() as u64).sum();
    // The end of the file shows as a short read below: no size asked.
    f.seek(SeekFrom::Start(start))?;
    let mut slices: Vec<IoSliceMut<'_>> = bufs.iter_mut().map(|b| IoSliceMut::new(b)).collect();
    let mut rest = &mut slices[..];
    let mut left = total;
    // One readv per IOV_MAX slices at most; short reads resume where
    // they stopped.
    while left > 0 {
        let n = f.read_vectored(rest)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the file ends {} bytes into the {total} bytes read from {start}",
                    total - left
                ),
            ));
        }
        left -= n as u64;
        IoSliceMut::advance_slices(&mut rest, n);
    }
    Ok(())
}

/// A name beside `path` no reader takes for a file of the format (a
/// leading dot, a `.tmp` ending), unique among this process's writers.
fn partial_name(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy());
    path.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()))
}

impl WritableStorage for LocalFs {
    fn put(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        let partial = partial_name(path);
        std::fs::write(&partial, bytes).map_err(|e| StorageError::io(path, e))?;
        std::fs::rename(&partial, path).map_err(|e| {
            let _ = std::fs::remove_file(&partial);
            StorageError::io(path, e)
        })
    }

    /// A hard link is made only where no file is: the conditional step.
    /// Where the file system has no hard links, the file is looked for
    /// and then renamed into place.
    fn put_new(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        let partial = partial_name(path);
        std::fs::write(&partial, bytes).map_err(|e| StorageError::io(path, e))?;
        let linked = match std::fs::hard_link(&partial, path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(already_there(path)),
            Err(_) if !path.exists() => {
                std::fs::rename(&partial, path).map_err(|e| StorageError::io(path, e))
            }
            other => other.map_err(|e| StorageError::io(path, e)),
        };
        let _ = std::fs::remove_file(&partial);
        linked
    }

    fn writer(&self, path: &Path) -> StorageResult<Box<dyn FileWriter>> {
        let partial = partial_name(path);
        let file = std::fs::File::create(&partial).map_err(|e| StorageError::io(path, e))?;
        Ok(Box::new(LocalWriter {
            out: Some(io::BufWriter::with_capacity(1 << 20, file)),
            partial,
            path: path.to_path_buf(),
            len: 0,
        }))
    }

    fn delete(&self, path: &Path) -> StorageResult<bool> {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StorageError::io(path, e)),
        }
    }

    fn delete_folder(&self, path: &Path) -> StorageResult<usize> {
        let mut files = 0;
        let mut stack = vec![path.to_path_buf()];
        while let Some(dir) = stack.pop() {
            match std::fs::read_dir(&dir) {
                Ok(rd) => {
                    for e in rd.flatten() {
                        let kind = e.file_type().map_err(|e| StorageError::io(&dir, e))?;
                        match kind.is_dir() {
                            true => stack.push(e.path()),
                            false => files += 1,
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(StorageError::io(&dir, e)),
            }
        }
        match std::fs::remove_dir_all(path) {
            Ok(()) => Ok(files),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(StorageError::io(path, e)),
        }
    }

    fn create_folder(&self, path: &Path) -> StorageResult<()> {
        std::fs::create_dir_all(path).map_err(|e| StorageError::io(path, e))
    }

    fn renames_folders(&self) -> bool {
        true
    }

    fn rename_folder(&self, from: &Path, to: &Path) -> StorageResult<()> {
        std::fs::rename(from, to).map_err(|e| StorageError::io(from, e))
    }

    fn uri(&self, path: &Path) -> StorageResult<String> {
        let absolute = std::fs::canonicalize(path).map_err(|e| StorageError::io(path, e))?;
        Ok(format!("file://{}", absolute.display()))
    }
}

/// A local file written under a partial name and renamed when finished.
struct LocalWriter {
    out: Option<io::BufWriter<std::fs::File>>,
    partial: PathBuf,
    path: PathBuf,
    len: u64,
}

impl FileWriter for LocalWriter {
    fn write(&mut self, bytes: &[u8]) -> StorageResult<()> {
        let Some(out) = self.out.as_mut() else {
            return Err(self.finished());
        };
        out.write_all(bytes)
            .map_err(|e| StorageError::io(&self.path, e))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// A vectored write: pieces as large as the buffer together go to the
    /// file in `writev` calls, not copied into the buffer first.
    fn write_parts(&mut self, parts: &[&[u8]]) -> StorageResult<()> {
        let Some(out) = self.out.as_mut() else {
            return Err(self.finished());
        };
        write_all_vectored(out, parts).map_err(|e| StorageError::io(&self.path, e))?;
        self.len += parts.iter().map(|p| p.len() as u64).sum::<u64>();
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> StorageResult<u64> {
        let Some(out) = self.out.take() else {
            return Err(self.finished());
        };
        out.into_inner()
            .map_err(|e| StorageError::io(&self.path, e.into_error()))?;
        std::fs::rename(&self.partial, &self.path).map_err(|e| StorageError::io(&self.path, e))?;
        Ok(self.len)
    }
}

impl LocalWriter {
    fn finished(&self) -> StorageError {
        StorageError::new(
            StorageErrorKind::Other,
            self.path.to_string_lossy(),
            "written after it was finished",
        )
    }
}

impl Drop for LocalWriter {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// Writes every byte of `parts` in order (`Write::write_all_vectored`
/// is not stable).
fn write_all_vectored(out: &mut impl Write, parts: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<io::IoSlice<'_>> = parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| io::IoSlice::new(p))
        .collect();
    let mut left = &mut slices[..];
    while !left.is_empty() {
        match out.write_vectored(left) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => io::IoSlice::advance_slices(&mut left, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{entry_names, Memory, Storage};

    /// Scatter reads fill every buffer in turn, past one readv's limit of
    /// slices (IOV_MAX, 1024 on Linux), the same on disk and in memory;
    /// a range past the end of the file is an error, not a short read.
    #[test]
    fn scattered_reads_fill_every_buffer_in_order() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let path = std::env::temp_dir().join(format!("tessera-scatter-{}", std::process::id()));
        std::fs::write(&path, &bytes).expect("temp file");
        let mut mem = Memory::default();
        mem.insert(path.clone(), bytes.clone());
        for storage in [&LocalFs as &dyn Storage, &mem] {
            // 3000 buffers of 1 to 5 bytes, from byte 100 on.
            let mut out = vec![0u8; 9000];
            let mut bufs: Vec<&mut [u8]> = Vec::new();
            let mut rest = &mut out[..];
            for i in 0..3000 {
                let (b, r) = rest.split_at_mut(1 + i % 5);
                bufs.push(b);
                rest = r;
            }
            let used = 9000 - rest.len();
            storage
                .read_scattered(&path, 100, &mut bufs, &mut KeptFile::new())
                .expect("read");
            assert_eq!(&out[..used], &bytes[100..100 + used]);
            let mut past = [0u8; 16];
            let err = storage
                .read_scattered(&path, 19_990, &mut [&mut past[..]], &mut KeptFile::new())
                .expect_err("past the end");
            assert_eq!(err.kind(), crate::StorageErrorKind::OutOfRange);
        }
        std::fs::remove_file(&path).ok();
    }

    /// A file's tail comes with its size, on disk as in memory (the
    /// default): the last `max` bytes, or the whole file when shorter; a
    /// missing file is an error. Listings give sizes only where free.
    #[test]
    fn tails_come_with_the_file_size() {
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 253) as u8).collect();
        let dir = std::env::temp_dir().join(format!("tessera-tail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("f.tdb");
        std::fs::write(&path, &bytes).expect("temp file");
        let mut mem = Memory::default();
        mem.insert(path.clone(), bytes.clone());
        for storage in [&LocalFs as &dyn Storage, &mem] {
            let (size, tail) = storage.read_tail(&path, 300).expect("tail");
            assert_eq!((size, tail.as_slice()), (5000, &bytes[4700..]));
            let (size, all) = storage.read_tail(&path, 1 << 20).expect("whole");
            assert_eq!((size, all), (5000, bytes.clone()));
            assert!(storage.read_tail(&dir.join("missing"), 10).is_err());
        }
        let listed = LocalFs.list(&dir).expect("list");
        assert_eq!(listed.len(), 1);
        assert!(!listed[0].is_dir && listed[0].size.is_none());
        let listed = mem.list(&dir).expect("list");
        assert_eq!(listed[0].size, Some(5000));
        // Under a file, as under a missing folder, nothing is listed.
        assert!(LocalFs.list(&path).expect("a file listed").is_empty());
        assert!(LocalFs
            .list(&dir.join("missing"))
            .expect("missing")
            .is_empty());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A put and a finished writer leave the file and nothing beside it;
    /// a writer dropped unfinished leaves nothing; folders go whole.
    #[test]
    fn local_writes_appear_whole_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("tessera-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        LocalFs.create_folder(&dir.join("a/b")).expect("folders");
        LocalFs.put(&dir.join("a/one"), b"12345").expect("put");
        let mut w = LocalFs.writer(&dir.join("a/b/two")).expect("writer");
        w.write(b"ab").expect("write");
        w.write(b"cde").expect("write");
        assert!(!dir.join("a/b/two").exists(), "not there until finished");
        assert_eq!(w.finish().expect("finish"), 5);
        let mut dropped = LocalFs.writer(&dir.join("a/b/three")).expect("writer");
        dropped.write(b"x").expect("write");
        drop(dropped);
        assert_eq!(
            entry_names(&LocalFs, &dir.join("a/b")).expect("list"),
            ["two"]
        );
        assert_eq!(std::fs::read(dir.join("a/b/two")).expect("read"), b"abcde");
        let e = LocalFs.put_new(&dir.join("a/one"), b"other").unwrap_err();
        assert_eq!(e.kind(), StorageErrorKind::AlreadyExists, "{e}");
        assert_eq!(std::fs::read(dir.join("a/one")).expect("kept"), b"12345");
        LocalFs.put_new(&dir.join("a/new"), b"n").expect("put_new");
        assert_eq!(std::fs::read(dir.join("a/new")).expect("read"), b"n");
        assert!(LocalFs.delete(&dir.join("a/new")).expect("delete"));
        assert!(LocalFs.delete(&dir.join("a/one")).expect("delete"));
        assert!(!LocalFs.delete(&dir.join("a/one")).expect("delete again"));
        assert_eq!(LocalFs.delete_folder(&dir.join("a")).expect("folder"), 1);
        assert_eq!(LocalFs.delete_folder(&dir.join("a")).expect("again"), 0);
        assert!(LocalFs.uri(&dir).expect("uri").starts_with("file:///"));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Pieces written together land back to back: past one writev's limit
    /// of slices, with empty ones, small ones buffered and large ones
    /// written straight, between plain writes.
    #[test]
    fn pieces_are_written_back_to_back() {
        let dir = std::env::temp_dir().join(format!("tessera-pieces-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        LocalFs.create_folder(&dir).expect("folder");
        let pieces: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| {
                let len = match i % 7 {
                    0 => 0,
                    3 => 2000,
                    _ => 1 + i as usize % 13,
                };
                (0..len).map(|k| (i as usize * 31 + k) as u8).collect()
            })
            .collect();
        let big = vec![9u8; 3 << 20];
        let mut want = b"head".to_vec();
        let mut w = LocalFs.writer(&dir.join("tile")).expect("writer");
        w.write(b"head").expect("write");
        let parts: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
        w.write_parts(&parts).expect("pieces");
        want.extend(pieces.concat());
        w.write_parts(&[b"ab", &big, b"c"]).expect("a large piece");
        want.extend([&b"ab"[..], &big, b"c"].concat());
        w.write_parts(&[b"de", b"f"]).expect("small pieces");
        want.extend(b"def");
        assert_eq!(w.finish().expect("finish"), want.len() as u64);
        assert!(std::fs::read(dir.join("tile")).expect("read") == want);
        std::fs::remove_dir_all(&dir).ok();
    }
}
