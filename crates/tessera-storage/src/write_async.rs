//! The writing half of storage, asynchronous: what a driver awaits to
//! carry out the [`WriteOp`](crate::WriteOp)s of a writer that does no
//! I/O itself. The same promises as [`WritableStorage`]: a put appears
//! whole or not at all, a conditional put never replaces another writer's
//! file, an upload appears only once completed.

use crate::error::StorageResult;
use crate::local::LocalFs;
use crate::write::WritableStorage;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

/// A request under way, to be awaited. It owns what it needs, so that it
/// can be begun on one thread and awaited on another.
pub type Pending<T> = Pin<Box<dyn Future<Output = StorageResult<T>> + Send + 'static>>;

/// Storage written by awaiting requests, never by blocking a thread.
pub trait AsyncWritableStorage: Send + Sync {
    /// Writes `bytes` as the whole file at `path` (see
    /// [`WritableStorage::put`]).
    fn put(&self, path: PathBuf, bytes: Vec<u8>) -> Pending<()>;

    /// Writes `bytes` as the file at `path` only if none is there (see
    /// [`WritableStorage::put_new`]).
    fn put_new(&self, path: PathBuf, bytes: Vec<u8>) -> Pending<()>;

    /// Starts a file written in parts at `path`, invisible until
    /// completed.
    fn upload(&self, path: PathBuf) -> Pending<Box<dyn AsyncUpload>>;

    /// Removes the file at `path` (see [`WritableStorage::delete`]).
    fn delete(&self, path: PathBuf) -> Pending<bool>;

    /// Removes the folder at `path` with everything below it (see
    /// [`WritableStorage::delete_folder`]).
    fn delete_folder(&self, path: PathBuf) -> Pending<usize>;

    /// Makes the folder at `path` where folders exist (see
    /// [`WritableStorage::create_folder`]).
    fn create_folder(&self, path: PathBuf) -> Pending<()>;

    /// Files up to this size are put whole; larger ones are uploaded in
    /// parts as they are written.
    fn put_whole_up_to(&self) -> usize {
        8 << 20
    }
}

/// A file being uploaded in parts (see [`AsyncWritableStorage::upload`]).
pub trait AsyncUpload: Send {
    /// How many bytes the next part holds, unless it is the last.
    fn part_size(&self) -> usize;

    /// Sends the next part. Parts may be in flight side by side; every
    /// part but the last holds at least 5 MiB (S3's least part).
    fn part(&mut self, bytes: Vec<u8>) -> Pending<()>;

    /// Completes the file, once every part sent has landed.
    fn complete(self: Box<Self>) -> Pending<()>;

    /// Gives the file up: nothing of it appears.
    fn abort(self: Box<Self>) -> Pending<()>;
}

/// The local filesystem, its requests done when asked (a local write does
/// not wait on a network): for local arrays written by the same driver as
/// object stores.
impl AsyncWritableStorage for LocalFs {
    fn put(&self, path: PathBuf, bytes: Vec<u8>) -> Pending<()> {
        ready(WritableStorage::put(self, &path, &bytes))
    }

    fn put_new(&self, path: PathBuf, bytes: Vec<u8>) -> Pending<()> {
        ready(WritableStorage::put_new(self, &path, &bytes))
    }

    fn upload(&self, path: PathBuf) -> Pending<Box<dyn AsyncUpload>> {
        let writer = WritableStorage::writer(self, &path);
        ready(writer.map(|w| Box::new(LocalUpload(w)) as Box<dyn AsyncUpload>))
    }

    fn delete(&self, path: PathBuf) -> Pending<bool> {
        ready(WritableStorage::delete(self, &path))
    }

    fn delete_folder(&self, path: PathBuf) -> Pending<usize> {
        ready(WritableStorage::delete_folder(self, &path))
    }

    fn create_folder(&self, path: PathBuf) -> Pending<()> {
        ready(WritableStorage::create_folder(self, &path))
    }

    /// A local file is written as its parts come.
    fn put_whole_up_to(&self) -> usize {
        1 << 20
    }
}

/// A request answered already.
fn ready<T: Send + 'static>(result: StorageResult<T>) -> Pending<T> {
    Box::pin(std::future::ready(result))
}

/// A local file written in parts, each written when sent.
struct LocalUpload(Box<dyn crate::FileWriter>);

impl AsyncUpload for LocalUpload {
    /// Parts of a local file are written as they come: a small one keeps
    /// little in memory.
    fn part_size(&self) -> usize {
        1 << 20
    }

    fn part(&mut self, bytes: Vec<u8>) -> Pending<()> {
        ready(self.0.write(&bytes))
    }

    fn complete(self: Box<Self>) -> Pending<()> {
        ready(self.0.finish().map(|_| ()))
    }

    /// The local writer, dropped unfinished, removes its partial file.
    fn abort(self: Box<Self>) -> Pending<()> {
        drop(self);
        ready(Ok(()))
    }
}
