//! Writing an object store: whole objects in one `PUT`, large files as
//! multipart uploads sent part by part while they are written, removal.
//!
//! An object appears whole or not at all either way: a `PUT` replaces an
//! object atomically, and a multipart upload is invisible until completed.
//! A writer dropped unfinished aborts its upload; one whose process was
//! killed leaves parts no reader sees, which the bucket's lifecycle rule
//! for incomplete uploads removes.

use crate::fetch::{failed, Started};
use crate::retry::listed_again_if_cut;
use crate::store::ObjectStorage;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{MultipartUpload, ObjectStoreExt, PutMode, PutPayload};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;
use tessera_storage::{
    already_there, put_after_looking, FileWriter, ReadableStorage, StorageResult, WritableStorage,
};

/// A part of a multipart upload: big enough that S3's 10,000 parts hold
/// files of tens of gigabytes (and above S3's 5 MiB least part), small
/// enough that a few in flight stay a few tens of megabytes.
const PART_BYTES: usize = 8 << 20;

/// Parts in flight at once per file: each on its own connection.
const PARTS_IN_FLIGHT: usize = 8;

/// Times a conditional `PUT` is sent again after a timeout or a dropped
/// connection, which `object_store` does not retry for it (whether the
/// first one landed cannot be known from the client).
const CONDITIONAL_RESENDS: usize = 3;

/// After this many parts, each part is twice as big (S3 allows 10,000).
const PARTS_PER_DOUBLING: usize = 1000;

impl WritableStorage for ObjectStorage {
    fn put(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        let key = self.key(path)?;
        self.forget_listing(path);
        let (call, store) = (self.call(), self.store());
        self.log(call, "PUT", &key, String::new());
        let uri = self.uri_of(&key);
        let payload = PutPayload::from(bytes.to_vec());
        self.run(async move {
            store
                .put(&key, payload)
                .await
                .map(|_| ())
                .map_err(|e| failed("PUT", &uri, e))
        })
    }

    /// `PUT` with `If-None-Match: *` (S3, Azure; on GCS
    /// `ifGenerationMatch=0`). An object already there holding these very
    /// bytes is this put's own, sent again after its answer was lost; a
    /// store that cannot put conditionally (S3 with `aws_conditional_put`
    /// set to `disabled`) is looked at first instead.
    fn put_new(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        let key = self.key(path)?;
        let uri = self.uri_of(&key);
        let mut resent = 0;
        loop {
            self.forget_listing(path);
            let (call, store) = (self.call(), self.store());
            self.log(call, "PUT", &key, "(if none match)".into());
            let (k, payload) = (key.clone(), PutPayload::from(bytes.to_vec()));
            let outcome =
                self.run(
                    async move { Ok(store.put_opts(&k, payload, PutMode::Create.into()).await) },
                )?;
            match outcome {
                Ok(_) => return Ok(()),
                Err(object_store::Error::AlreadyExists { .. }) => {
                    return match self.read_all(path) {
                        Ok(there) if there == bytes => Ok(()),
                        _ => Err(already_there(path)),
                    };
                }
                Err(object_store::Error::NotImplemented { .. }) => {
                    return put_after_looking(self, path, bytes);
                }
                Err(object_store::Error::Generic { .. }) if resent < CONDITIONAL_RESENDS => {
                    resent += 1;
                }
                Err(e) => return Err(failed("PUT", &uri, e)),
            }
        }
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
        let key = self.key(path)?;
        // S3 answers a DELETE alike whether the object was there; the
        // kept listing tells, where there is one (no request for it).
        let there = self.listed(path).unwrap_or(true);
        self.forget_listing(path);
        let (call, store) = (self.call(), self.store());
        self.log(call, "DELETE", &key, String::new());
        let uri = self.uri_of(&key);
        self.run(async move {
            match store.delete(&key).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(failed("DELETE", &uri, e)),
            }
        })?;
        Ok(there)
    }

    fn delete_folder(&self, path: &Path) -> StorageResult<usize> {
        let prefix = self.key(path)?;
        self.forget_folder(path);
        let (call, store) = (self.call(), self.store());
        self.log(call, "LIST", &prefix, "(all below)".into());
        let uri = self.uri_of(&prefix);
        let keys: Vec<Key> = self.run(async move {
            let (store, prefix) = (&store, &prefix);
            listed_again_if_cut(move || {
                store
                    .list(Some(prefix))
                    .map_ok(|m| m.location)
                    .try_collect()
            })
            .await
            .map_err(|e| failed("LIST", &uri, e))
        })?;
        for key in &keys {
            self.log(call, "DELETE", key, String::new());
        }
        let (store, n) = (self.store(), keys.len());
        let uri = self.uri_of(&self.key(path)?);
        self.run(async move {
            let keys = futures::stream::iter(keys.into_iter().map(Ok)).boxed();
            store
                .delete_stream(keys)
                .try_collect::<Vec<_>>()
                .await
                .map_err(|e| failed("DELETE", &uri, e))
        })?;
        Ok(n)
    }

    fn create_folder(&self, _path: &Path) -> StorageResult<()> {
        Ok(())
    }

    fn uri(&self, path: &Path) -> StorageResult<String> {
        Ok(self.uri_of(&self.key(path)?))
    }
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
        PART_BYTES << (self.parts / PARTS_PER_DOUBLING).min(4)
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
