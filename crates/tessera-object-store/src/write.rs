//! Writing an object store: whole objects in one `PUT`, large files as
//! multipart uploads sent part by part while they are written, removal.
//!
//! An object appears whole or not at all either way: a `PUT` replaces an
//! object atomically, and a multipart upload is invisible until completed.
//! A writer dropped unfinished aborts its upload; one whose process was
//! killed leaves parts no reader sees, which the bucket's lifecycle rule
//! for incomplete uploads removes.

use crate::fetch::{failed, Started};
use crate::store::ObjectStorage;
use object_store::path::Path as Key;
use object_store::{MultipartUpload, ObjectStoreExt, PutPayload};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;
use tessera_storage::{FileWriter, StorageResult, WritableStorage};

/// A part of a multipart upload: big enough that S3's 10,000 parts hold
/// files of tens of gigabytes (and above S3's 5 MiB least part), small
/// enough that a few in flight stay a few tens of megabytes.
const PART_BYTES: usize = 8 << 20;

/// Parts in flight at once per file: each on its own connection.
const PARTS_IN_FLIGHT: usize = 8;

/// After this many parts, each part is twice as big (S3 allows 10,000).
const PARTS_PER_DOUBLING: usize = 1000;

impl WritableStorage for ObjectStorage {
    fn put(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.run(self.clone().put_async(path.into(), bytes.to_vec()))
    }

    /// A conditional `PUT` (see `ObjectStorage::put_new_async`).
    fn put_new(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        self.run(self.clone().put_new_async(path.into(), bytes.to_vec()))
    }

    fn writer(&self, path: &Path) -> StorageResult<Box<dyn FileWriter>> {
        Ok(Box::new(ObjectWriter {
            storage: self.clone(),
            path: path.to_path_buf(),
            key: self.key(path)?,
            buf: Vec::new(),
            upload: None,
            in_flight: VecDeque::new(),
            parts: 0,
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

/// The size of the part after `sent` parts: doubled every
/// [`PARTS_PER_DOUBLING`] parts, four times at most.
pub(crate) fn part_bytes(sent: usize) -> usize {
    PART_BYTES << (sent / PARTS_PER_DOUBLING).min(4)
}

/// A file sent as one `PUT` if it stays under a part, or else as a
/// multipart upload whose parts go out while later ones are written.
struct ObjectWriter {
    storage: ObjectStorage,
    path: std::path::PathBuf,
    key: Key,
    buf: Vec<u8>,
    /// In a mutex only to be `Sync` (a writer is used from one thread).
    upload: Option<Mutex<Box<dyn MultipartUpload>>>,
    in_flight: VecDeque<Started<()>>,
    parts: usize,
    len: u64,
    done: bool,
}

impl ObjectWriter {
    fn part_bytes(&self) -> usize {
        part_bytes(self.parts)
    }

    /// Sends `bytes` as the next part, starting the upload first if
    /// needed; waits for the oldest part while too many are in flight.
    fn send_part(&mut self, bytes: Vec<u8>) -> StorageResult<()> {
        let s = self.storage.clone();
        let uri = s.uri_of(&self.key);
        if self.upload.is_none() {
            let (call, store, key) = (s.call(), s.store(), self.key.clone());
            s.log(call, "POST", &self.key, "(start multipart)".into());
            let u = uri.clone();
            let upload = s.run(async move {
                store
                    .put_multipart(&key)
                    .await
                    .map_err(|e| failed("POST", &u, e))
            })?;
            self.upload = Some(Mutex::new(upload));
        }
        self.parts += 1;
        s.log(s.call(), "PUT", &self.key, format!("part {}", self.parts));
        let upload = self.upload.as_mut().expect("started above");
        let upload = upload.get_mut().unwrap_or_else(|e| e.into_inner());
        let part = upload.put_part(PutPayload::from(bytes));
        self.in_flight
            .push_back(s.start(async move { part.await.map_err(|e| failed("PUT", &uri, e)) }));
        while self.in_flight.len() > PARTS_IN_FLIGHT {
            self.in_flight.pop_front().expect("more than one").wait()?;
        }
        Ok(())
    }

    fn complete(&mut self) -> StorageResult<()> {
        let s = self.storage.clone();
        s.forget_listing(&self.path);
        let Some(mut upload) = self.upload.take() else {
            return s.put(&self.path, &std::mem::take(&mut self.buf));
        };
        if !self.buf.is_empty() {
            self.upload = Some(upload);
            let last = std::mem::take(&mut self.buf);
            self.send_part(last)?;
            upload = self.upload.take().expect("put back above");
        }
        while let Some(part) = self.in_flight.pop_front() {
            if let Err(e) = part.wait() {
                self.upload = Some(upload);
                return Err(e);
            }
        }
        s.log(s.call(), "POST", &self.key, "(complete multipart)".into());
        let uri = s.uri_of(&self.key);
        let mut upload = upload.into_inner().unwrap_or_else(|e| e.into_inner());
        s.run(async move {
            upload
                .complete()
                .await
                .map(|_| ())
                .map_err(|e| failed("POST", &uri, e))
        })
    }
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
    /// billed) by the store.
    fn drop(&mut self) {
        self.in_flight.clear();
        if let (false, Some(upload)) = (self.done, self.upload.take()) {
            let mut upload = upload.into_inner().unwrap_or_else(|e| e.into_inner());
            let s = &self.storage;
            s.log(s.call(), "DELETE", &self.key, "(abort multipart)".into());
            let _ = s.run(async move {
                let _ = upload.abort().await;
                Ok(())
            });
        }
    }
}
