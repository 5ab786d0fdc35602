//! Carrying out the writes an [`Outbox`](tessera_storage::Outbox) took
//! down, over an [`AsyncWritableStorage`]: the asynchronous driver's I/O.
//!
//! A file written in parts is uploaded as its parts fill (a few in flight
//! at once), or put whole when finished under one part; whole files and
//! finished uploads go side by side. A conditional put, a removal or a
//! folder waits for everything before it, so that what a writer wrote
//! before its commit has landed when the commit is put.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use tessera_storage::{AsyncUpload, AsyncWritableStorage, Pending, StorageResult, WriteOp};

/// Parts of one file in flight at once.
const PARTS_IN_FLIGHT: usize = 8;

/// Whole files and completions in flight at once.
const FILES_IN_FLIGHT: usize = 16;

/// A file being written in parts: bytes not yet sent, and its upload once
/// they pass a part.
#[derive(Default)]
struct Streamed {
    buf: Vec<u8>,
    upload: Option<Box<dyn AsyncUpload>>,
    in_flight: VecDeque<Pending<()>>,
}

/// What removals a batch of writes made.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Carried {
    /// Files removed that were there.
    pub files_removed: usize,
    /// Folders removed that held anything.
    pub folders_removed: usize,
}

/// The driver of an outbox's writes, holding the uploads under way
/// between one batch of writes and the next.
pub(crate) struct Carrier {
    storage: Arc<dyn AsyncWritableStorage>,
    files: HashMap<PathBuf, Streamed>,
}

impl Carrier {
    pub fn new(storage: Arc<dyn AsyncWritableStorage>) -> Carrier {
        Carrier {
            storage,
            files: HashMap::new(),
        }
    }

    /// Carries out `ops` in order; on a failure, the first.
    async fn carry(&mut self, ops: Vec<WriteOp>) -> StorageResult<Carried> {
        let mut carried = Carried::default();
        let mut side: VecDeque<Pending<()>> = VecDeque::new();
        for op in ops {
            match op {
                WriteOp::Part(path, bytes) => self.part(path, bytes).await?,
                WriteOp::Finish(path) => side.push_back(self.finish(path)),
                WriteOp::Abandon(path) => self.abandon(path).await,
                WriteOp::Put(path, bytes) => side.push_back(self.storage.put(path, bytes)),
                WriteOp::PutNew(path, bytes) => {
                    landed(&mut side, 0).await?;
                    self.storage.put_new(path, bytes).await?;
                }
                WriteOp::Delete(path) => {
                    landed(&mut side, 0).await?;
                    carried.files_removed += usize::from(self.storage.delete(path).await?);
                }
                WriteOp::DeleteFolder(path) => {
                    landed(&mut side, 0).await?;
                    let files = self.storage.delete_folder(path).await?;
                    carried.folders_removed += usize::from(files > 0);
                }
                WriteOp::CreateFolder(path) => {
                    landed(&mut side, 0).await?;
                    self.storage.create_folder(path).await?;
                }
            }
            landed(&mut side, FILES_IN_FLIGHT).await?;
        }
        landed(&mut side, 0).await?;
        Ok(carried)
    }

    /// Carries out `ops` in order; on a failure, the first, after giving
    /// up every upload under way (nothing of them appears).
    pub async fn carry_or_give_up(&mut self, ops: Vec<WriteOp>) -> StorageResult<Carried> {
        let carried = self.carry(ops).await;
        if carried.is_err() {
            self.abandon_all().await;
        }
        carried
    }

    /// Gives up every upload under way (after a failure): nothing of them
    /// appears.
    async fn abandon_all(&mut self) {
        let paths: Vec<PathBuf> = self.files.keys().cloned().collect();
        for path in paths {
            self.abandon(path).await;
        }
    }

    /// Removes the folders `paths`, as far as the storage lets it (after
    /// a failure: what is not removed is never committed, so no reader
    /// sees it).
    pub async fn remove_folders(&mut self, paths: Vec<PathBuf>) {
        for path in paths {
            let _ = self.storage.delete_folder(path).await;
        }
    }

    /// Adds `bytes` to the file at `path`, sending each part it fills.
    async fn part(&mut self, path: PathBuf, bytes: Vec<u8>) -> StorageResult<()> {
        let file = self.files.entry(path.clone()).or_default();
        file.buf.extend_from_slice(&bytes);
        loop {
            let size = match &file.upload {
                Some(upload) => upload.part_size(),
                None => self.storage.put_whole_up_to(),
            };
            if file.buf.len() < size {
                return Ok(());
            }
            if file.upload.is_none() {
                file.upload = Some(self.storage.upload(path.clone()).await?);
            }
            let upload = file.upload.as_mut().expect("started above");
            let size = upload.part_size();
            let rest = file.buf.split_off(size.min(file.buf.len()));
            let part = std::mem::replace(&mut file.buf, rest);
            file.in_flight.push_back(upload.part(part));
            landed(&mut file.in_flight, PARTS_IN_FLIGHT).await?;
        }
    }

    /// The file at `path` complete: put whole if it never passed a part,
    /// else its last part sent and its upload completed once every part
    /// landed.
    fn finish(&mut self, path: PathBuf) -> Pending<()> {
        let mut file = self.files.remove(&path).unwrap_or_default();
        let Some(mut upload) = file.upload.take() else {
            return self.storage.put(path, file.buf);
        };
        if !file.buf.is_empty() {
            file.in_flight.push_back(upload.part(file.buf));
        }
        let mut in_flight = file.in_flight;
        Box::pin(async move {
            if let Err(e) = landed(&mut in_flight, 0).await {
                let _ = upload.abort().await;
                return Err(e);
            }
            upload.complete().await
        })
    }

    /// Gives the file at `path` up, aborting its upload.
    async fn abandon(&mut self, path: PathBuf) {
        if let Some(upload) = self.files.remove(&path).and_then(|f| f.upload) {
            let _ = upload.abort().await;
        }
    }
}

/// Awaits the oldest requests of `pending` until at most `left` are under
/// way; the first failure.
async fn landed(pending: &mut VecDeque<Pending<()>>, left: usize) -> StorageResult<()> {
    while pending.len() > left {
        pending.pop_front().expect("more than left").await?;
    }
    Ok(())
}
