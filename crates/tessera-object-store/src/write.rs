//! Writing an object store: whole objects in one `PUT`, large files as
//! multipart uploads sent part by part while they are written, removal.
//!
//! An object appears whole or not at all either way: a `PUT` replaces an
//! object atomically, and a multipart upload is invisible until completed.
//! A writer dropped unfinished aborts its upload; one whose process was
//! killed leaves parts no reader sees, which the bucket's lifecycle rule
//! for incomplete uploads removes.

use crate::fetch::Started;
use crate::store::ObjectStorage;
use crate::write_async::{part_bytes, ObjectUpload};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;
use tessera_storage::{FileWriter, StorageResult, WritableStorage};

/// Parts in flight at once per file: each on its own connection.
const PARTS_IN_FLIGHT: usize = 8;

impl WritableStorage for ObjectStorage {
    fn put(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.run(self.clone().put_async(path.into(), bytes.to_vec()))
    }

    /// A conditional `PUT` (see `ObjectStorage::put_new_async`).
    fn put_new(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.run(self.clone().put_new_async(path.into(), bytes.to_vec()))
    }

    fn writer(&self, path: &Path) -> StorageResult<Box<dyn FileWriter>> {
        // A path that names no object is refused here, not at the end.
        self.key(path)?;
        Ok(Box::new(ObjectWriter {
            storage: self.clone(),
            path: path.to_path_buf(),
            buf: Vec::new(),
            upload: None,
            in_flight: VecDeque::new(),
            len: 0,
            done: false,
        }))
    }

    fn delete(&self, path: &Path) -> StorageResult<bool> {
        self.run(self.clone().delete_async(path.into()))
    }

    fn delete_folder(&self, path: &Path) -> StorageResult<usize> {
        self.run(self.clone().delete_folder_async(path.into()))
    }

    fn create_folder(&self, _path: &Path) -> StorageResult<()> {
        Ok(())
    }

    fn uri(&self, path: &Path) -> StorageResult<String> {
        Ok(self.uri_of(&self.key(path)?))
    }
}

/// A file sent as one `PUT` if it stays under a part, or else as a
/// multipart upload (`ObjectUpload`, the asynchronous writer's requests,
/// waited for) whose parts go out while later ones are written.
struct ObjectWriter {
    storage: ObjectStorage,
    path: std::path::PathBuf,
    buf: Vec<u8>,
    /// In a mutex only to be `Sync` (a writer is used from one thread).
    upload: Option<Mutex<ObjectUpload>>,
    in_flight: VecDeque<Started<()>>,
    len: u64,
    done: bool,
}

impl ObjectWriter {
    fn part_bytes(&mut self) -> usize {
        match &mut self.upload {
            Some(u) => locked(u).next_part_bytes(),
            None => part_bytes(0),
        }
    }

    /// Sends `bytes` as the next part, starting the upload first if
    /// needed; waits for the oldest part while too many are in flight.
    fn send_part(&mut self, bytes: Vec<u8>) -> StorageResult<()> {
        let s = self.storage.clone();
        let upload = match &mut self.upload {
            Some(u) => u,
            None => {
                let started = s.run(s.clone().upload_async(self.path.clone()))?;
                self.upload.insert(Mutex::new(started))
            }
        };
        let part = locked(upload).part_request(bytes);
        self.in_flight.push_back(s.start(part));
        while self.in_flight.len() > PARTS_IN_FLIGHT {
            self.in_flight.pop_front().expect("more than one").wait()?;
        }
        Ok(())
    }

    fn complete(&mut self) -> StorageResult<()> {
        // The put and the completion forget the folder's listing.
        let s = self.storage.clone();
        if self.upload.is_none() {
            return s.put(&self.path, &std::mem::take(&mut self.buf));
        }
        if !self.buf.is_empty() {
            let last = std::mem::take(&mut self.buf);
            self.send_part(last)?;
        }
        // A part that failed leaves the upload here, aborted on drop.
        while let Some(part) = self.in_flight.pop_front() {
            part.wait()?;
        }
        let upload = self.upload.take().expect("started above");
        let upload = upload.into_inner().unwrap_or_else(|e| e.into_inner());
        s.run(upload.complete_request())
    }
}

/// The upload, whatever a panic elsewhere left it as.
fn locked(upload: &mut Mutex<ObjectUpload>) -> &mut ObjectUpload {
    upload.get_mut().unwrap_or_else(|e| e.into_inner())
}

impl FileWriter for ObjectWriter {
    fn write(&mut self, mut bytes: &[u8]) -> StorageResult<()> {
        self.len += bytes.len() as u64;
        while !bytes.is_empty() {
            let want = self.part_bytes();
            let take = (want - self.buf.len()).min(bytes.len());
            self.buf.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.buf.len() == want {
                let part = std::mem::replace(&mut self.buf, Vec::with_capacity(want));
                self.send_part(part)?;
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> StorageResult<u64> {
        self.complete()?;
        self.done = true;
        Ok(self.len)
    }
}

impl Drop for ObjectWriter {
    /// An unfinished upload is aborted, so its parts are not kept (and
    /// billed) by the store; waited for, as every request of this writer.
    fn drop(&mut self) {
        self.in_flight.clear();
        if let (false, Some(upload)) = (self.done, self.upload.take()) {
            let upload = upload.into_inner().unwrap_or_else(|e| e.into_inner());
            let _ = self.storage.run(upload.abort_request());
        }
    }
}
