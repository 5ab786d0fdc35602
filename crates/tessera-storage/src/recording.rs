//! A storage wrapper that records every request, for I/O plan tests.

use crate::error::StorageResult;
use crate::hints::StorageHints;
use crate::kept::KeptFile;
use crate::listable::{DirEntry, ListableStorage};
use crate::readable::{PendingBatch, ReadableStorage};
use crate::storage::Storage;
use crate::write::{FileWriter, WritableStorage};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A [`Storage`] wrapper that records every request, for I/O plan tests.
#[derive(Debug)]
pub struct Recording<S> {
    inner: S,
    root: PathBuf,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl<S: Storage> Recording<S> {
    /// Records requests to `inner`; paths are logged relative to `root`.
    pub fn new(inner: S, root: impl Into<PathBuf>) -> Self {
        Recording {
            inner,
            root: root.into(),
            log: Default::default(),
        }
    }

    fn rel(&self, p: &Path) -> String {
        p.strip_prefix(&self.root)
            .unwrap_or(p)
            .display()
            .to_string()
    }

    /// The requests made so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.log.lock().expect("log lock").clone()
    }

    fn push(&self, s: String) {
        self.log.lock().expect("log lock").push(s);
    }

    /// A batch as one log line; served in any order, so listed sorted and
    /// plans compare.
    fn batch_line(&self, requests: &[(PathBuf, Range<u64>)]) -> String {
        let mut asked: Vec<String> = requests
            .iter()
            .map(|(p, r)| format!("{} {}..{}", self.rel(p), r.start, r.end))
            .collect();
        asked.sort();
        format!("batch [{}]", asked.join(", "))
    }
}

impl<S: Storage> ReadableStorage for Recording<S> {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        self.push(format!(
            "read {} {}..{}",
            self.rel(path),
            range.start,
            range.end
        ));
        self.inner.read_range(path, range)
    }

    fn read_scattered(
        &self,
        path: &Path,
        start: u64,
        bufs: &mut [&mut [u8]],
        kept: &mut KeptFile,
    ) -> StorageResult<()> {
        let total: u64 = bufs.iter().map(|b| b.len() as u64).sum();
        self.push(format!(
            "read (scattered) {} {}..{}",
            self.rel(path),
            start,
            start + total
        ));
        self.inner.read_scattered(path, start, bufs, kept)
    }

    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        self.push(format!("read {} (whole file)", self.rel(path)));
        self.inner.read_all(path)
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        self.push(format!("size {}", self.rel(path)));
        self.inner.size(path)
    }

    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> StorageResult<Vec<Vec<u8>>> {
        self.push(self.batch_line(requests));
        self.inner.read_batch(requests)
    }

    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'static> {
        self.push(self.batch_line(&requests));
        self.inner.begin_batch(requests)
    }

    fn read_tails(&self, files: &[PathBuf], max: u64) -> Vec<StorageResult<(u64, Vec<u8>)>> {
        let mut asked: Vec<String> = files.iter().map(|p| self.rel(p)).collect();
        asked.sort();
        self.push(format!("tails of {max} [{}]", asked.join(", ")));
        self.inner.read_tails(files, max)
    }

    fn read_tail(&self, path: &Path, max: u64) -> StorageResult<(u64, Vec<u8>)> {
        self.push(format!("tail of {max} {}", self.rel(path)));
        self.inner.read_tail(path, max)
    }
}

impl<S: Storage> ListableStorage for Recording<S> {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        self.push(format!("list {}", self.rel(path)));
        self.inner.list(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }

    fn list_anew(&self) {
        self.inner.list_anew()
    }
}

impl<S: Storage> StorageHints for Recording<S> {
    crate::forward_storage_hints!(inner);
}

impl<S: WritableStorage> WritableStorage for Recording<S> {
    fn put(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.push(format!("put {} ({} bytes)", self.rel(path), bytes.len()));
        self.inner.put(path, bytes)
    }

    fn put_new(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.push(format!("put {} ({} bytes)", self.rel(path), bytes.len()));
        self.inner.put_new(path, bytes)
    }

    fn writer(&self, path: &Path) -> StorageResult<Box<dyn FileWriter>> {
        let inner = self.inner.writer(path)?;
        Ok(Box::new(RecordedWriter {
            inner,
            line: self.rel(path),
            log: self.log.clone(),
            len: 0,
        }))
    }

    fn delete(&self, path: &Path) -> StorageResult<bool> {
        self.push(format!("delete {}", self.rel(path)));
        self.inner.delete(path)
    }

    fn delete_folder(&self, path: &Path) -> StorageResult<usize> {
        self.push(format!("delete folder {}", self.rel(path)));
        self.inner.delete_folder(path)
    }

    fn create_folder(&self, path: &Path) -> StorageResult<()> {
        self.inner.create_folder(path)
    }

    fn renames_folders(&self) -> bool {
        self.inner.renames_folders()
    }

    fn rename_folder(&self, from: &Path, to: &Path) -> StorageResult<()> {
        self.push(format!("rename {} to {}", self.rel(from), self.rel(to)));
        self.inner.rename_folder(from, to)
    }

    fn uri(&self, path: &Path) -> StorageResult<String> {
        self.inner.uri(path)
    }
}

/// A streamed file of a [`Recording`]: logged once, when finished.
struct RecordedWriter {
    inner: Box<dyn FileWriter>,
    line: String,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    len: u64,
}

impl FileWriter for RecordedWriter {
    fn write(&mut self, bytes: &[u8]) -> StorageResult<()> {
        self.len += bytes.len() as u64;
        self.inner.write(bytes)
    }

    fn write_parts(&mut self, parts: &[&[u8]]) -> StorageResult<()> {
        self.len += parts.iter().map(|p| p.len() as u64).sum::<u64>();
        self.inner.write_parts(parts)
    }

    fn finish(self: Box<Self>) -> StorageResult<u64> {
        let line = format!("write {} ({} bytes)", self.line, self.len);
        self.log.lock().expect("log lock").push(line);
        self.inner.finish()
    }
}
