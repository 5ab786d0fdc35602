//! Writes taken down instead of made: an [`Outbox`] is a
//! [`WritableStorage`] that does no I/O. Each write a writer asks of it
//! becomes a [`WriteOp`], kept in order until a driver takes them
//! ([`Outbox::take`]) and carries them out, as an asynchronous driver does
//! over an [`AsyncWritableStorage`](crate::AsyncWritableStorage) on the
//! caller's runtime. The writer runs unchanged, its I/O done by whoever
//! drives it.
//!
//! An outbox cannot say what storage holds: a writer over one must have
//! read what it needs already (a fragment writer given its schema). Its
//! reads fail, and a conditional put is taken down as asked and decided
//! when carried out.

use crate::error::{StorageError, StorageErrorKind, StorageResult};
use crate::hints::StorageHints;
use crate::listable::{DirEntry, ListableStorage};
use crate::readable::ReadableStorage;
use crate::write::{FileWriter, WritableStorage};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A write asked of an [`Outbox`], to be carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    /// A folder made, with its parents (object stores have none).
    CreateFolder(PathBuf),
    /// The next bytes of the file being written in parts at the path.
    Part(PathBuf, Vec<u8>),
    /// The file written in parts at the path is complete.
    Finish(PathBuf),
    /// The file written in parts at the path was given up: nothing of it
    /// may appear.
    Abandon(PathBuf),
    /// A whole file, replacing any there.
    Put(PathBuf, Vec<u8>),
    /// A whole file, only where none is (a commit; see
    /// [`WritableStorage::put_new`]).
    PutNew(PathBuf, Vec<u8>),
    /// A file removed.
    Delete(PathBuf),
    /// A folder removed with everything below it.
    DeleteFolder(PathBuf),
}

/// Storage that keeps the writes asked of it as [`WriteOp`]s.
///
/// ```
/// use std::path::Path;
/// use tessera_storage::{Outbox, WritableStorage, WriteOp};
/// let outbox = Outbox::default();
/// let mut w = outbox.writer(Path::new("s3://b/a/x.tdb")).unwrap();
/// w.write(b"tile").unwrap();
/// w.finish().unwrap();
/// outbox.put_new(Path::new("s3://b/a/x.ok"), b"").unwrap();
/// assert_eq!(
///     outbox.take(),
///     [
///         WriteOp::Part("s3://b/a/x.tdb".into(), b"tile".to_vec()),
///         WriteOp::Finish("s3://b/a/x.tdb".into()),
///         WriteOp::PutNew("s3://b/a/x.ok".into(), Vec::new()),
///     ]
/// );
/// assert!(outbox.take().is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Outbox {
    ops: Arc<Mutex<Vec<WriteOp>>>,
}

impl Outbox {
    /// The writes asked since the last call, in the order asked.
    pub fn take(&self) -> Vec<WriteOp> {
        std::mem::take(&mut *self.lock())
    }

    fn push(&self, op: WriteOp) {
        self.lock().push(op);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<WriteOp>> {
        // A panic elsewhere leaves the list whole: every change is one push.
        self.ops.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The error of a read of an outbox.
fn nothing_to_read(path: &Path) -> StorageError {
    StorageError::new(
        StorageErrorKind::Unsupported,
        path.to_string_lossy(),
        "an outbox only takes writes down; it has nothing to read",
    )
}

impl ReadableStorage for Outbox {
    fn read_range(&self, path: &Path, _range: Range<u64>) -> StorageResult<Vec<u8>> {
        Err(nothing_to_read(path))
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        Err(nothing_to_read(path))
    }
}

impl ListableStorage for Outbox {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        Err(nothing_to_read(path))
    }

    /// Nothing is known to be there.
    fn exists(&self, _path: &Path) -> bool {
        false
    }
}

impl StorageHints for Outbox {}

impl WritableStorage for Outbox {
    fn put(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.push(WriteOp::Put(path.into(), bytes.to_vec()));
        Ok(())
    }

    /// Taken down; whether another writer was first is found when it is
    /// carried out.
    fn put_new(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.push(WriteOp::PutNew(path.into(), bytes.to_vec()));
        Ok(())
    }

    fn writer(&self, path: &Path) -> StorageResult<Box<dyn FileWriter>> {
        Ok(Box::new(OutboxWriter {
            outbox: self.clone(),
            path: path.into(),
            len: 0,
            done: false,
        }))
    }

    /// Taken down; said to have removed a file (an outbox cannot know).
    fn delete(&self, path: &Path) -> StorageResult<bool> {
        self.push(WriteOp::Delete(path.into()));
        Ok(true)
    }

    /// Taken down; said to have removed no file (an outbox cannot know).
    fn delete_folder(&self, path: &Path) -> StorageResult<usize> {
        self.push(WriteOp::DeleteFolder(path.into()));
        Ok(0)
    }

    fn create_folder(&self, path: &Path) -> StorageResult<()> {
        self.push(WriteOp::CreateFolder(path.into()));
        Ok(())
    }

    /// A path that is a URI already (an object store's) names itself;
    /// a local path cannot be made absolute without looking.
    fn uri(&self, path: &Path) -> StorageResult<String> {
        let text = path.to_string_lossy();
        match text.contains("://") {
            true => Ok(text.into_owned()),
            false => Err(nothing_to_read(path)),
        }
    }
}

/// A file written in parts into an [`Outbox`].
struct OutboxWriter {
    outbox: Outbox,
    path: PathBuf,
    len: u64,
    done: bool,
}

impl FileWriter for OutboxWriter {
    fn write(&mut self, bytes: &[u8]) -> StorageResult<()> {
        self.len += bytes.len() as u64;
        self.outbox
            .push(WriteOp::Part(self.path.clone(), bytes.to_vec()));
        Ok(())
    }

    /// One part of the pieces together.
    fn write_parts(&mut self, parts: &[&[u8]]) -> StorageResult<()> {
        self.write(&parts.concat())
    }

    fn finish(mut self: Box<Self>) -> StorageResult<u64> {
        self.done = true;
        self.outbox.push(WriteOp::Finish(self.path.clone()));
        Ok(self.len)
    }
}

impl Drop for OutboxWriter {
    fn drop(&mut self) {
        if !self.done {
            self.outbox.push(WriteOp::Abandon(self.path.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every write is taken down in order, a file dropped unfinished as
    /// given up; reads fail naming the path.
    #[test]
    fn writes_are_taken_down_in_order_and_reads_fail() {
        let o = Outbox::default();
        o.create_folder(Path::new("d")).unwrap();
        let mut w = o.writer(Path::new("d/f")).unwrap();
        w.write_parts(&[b"ab", b"c"]).unwrap();
        let mut dropped = o.writer(Path::new("d/g")).unwrap();
        dropped.write(b"x").unwrap();
        drop(dropped);
        assert_eq!(w.finish().unwrap(), 3);
        o.put(Path::new("d/p"), b"1").unwrap();
        assert!(o.delete(Path::new("d/p")).unwrap());
        o.delete_folder(Path::new("d")).unwrap();
        let d = PathBuf::from;
        assert_eq!(
            o.take(),
            [
                WriteOp::CreateFolder(d("d")),
                WriteOp::Part(d("d/f"), b"abc".to_vec()),
                WriteOp::Part(d("d/g"), b"x".to_vec()),
                WriteOp::Abandon(d("d/g")),
                WriteOp::Finish(d("d/f")),
                WriteOp::Put(d("d/p"), b"1".to_vec()),
                WriteOp::Delete(d("d/p")),
                WriteOp::DeleteFolder(d("d")),
            ]
        );
        let e = o.read_all(Path::new("d/f")).unwrap_err();
        assert_eq!(e.kind(), StorageErrorKind::Unsupported);
        assert!(e.to_string().contains("d/f"), "{e}");
        assert!(o.list(Path::new("d")).is_err());
        assert_eq!(o.uri(Path::new("s3://b/a")).unwrap(), "s3://b/a");
        assert!(o.uri(Path::new("a")).is_err());
    }
}
