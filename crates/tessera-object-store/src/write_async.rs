//! [`AsyncWritableStorage`] for [`ObjectStorage`]: the requests of its
//! writes (`write.rs`, which waits for these same functions) awaited
//! instead. Each runs as a task where the storage's requests run (the
//! caller's runtime, with [`ObjectStorage::on_runtime`]), started when
//! asked, so any executor can await it and none of its threads waits.

use crate::fetch::failed;
use crate::retry::listed_again_if_cut;
use crate::store::ObjectStorage;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{MultipartUpload, ObjectStoreExt, PutMode, PutPayload};
use std::future::Future;
use std::path::PathBuf;
use tessera_storage::{already_there, AsyncUpload, AsyncWritableStorage, Pending, StorageResult};

/// A part of a multipart upload: big enough that S3's 10,000 parts hold
/// files of tens of gigabytes (and above S3's 5 MiB least part), small
/// enough that a few in flight stay a few tens of megabytes.
const PART_BYTES: usize = 8 << 20;

/// After this many parts, each part is twice as big (S3 allows 10,000).
const PARTS_PER_DOUBLING: usize = 1000;

/// The size of the part after `sent` parts: doubled every
/// [`PARTS_PER_DOUBLING`] parts, four times at most.
pub(crate) fn part_bytes(sent: usize) -> usize {
    PART_BYTES << (sent / PARTS_PER_DOUBLING).min(4)
}

/// Times a conditional `PUT` is sent again after a timeout or a dropped
/// connection, which `object_store` does not retry for it (whether the
/// first one landed cannot be known from the client).
const CONDITIONAL_RESENDS: usize = 3;

impl ObjectStorage {
    /// Starts `request` of a clone of this storage where its requests run.
    fn begin<T, F, Fut>(&self, request: F) -> Pending<T>
    where
        T: Send + 'static,
        F: FnOnce(ObjectStorage) -> Fut,
        Fut: Future<Output = StorageResult<T>> + Send + 'static,
    {
        let task = self.start_awaited(request(self.clone()));
        Box::pin(task.finish())
    }

    /// A `PUT` of the whole object.
    pub(crate) async fn put_async(self, path: PathBuf, bytes: Vec<u8>) -> StorageResult<()> {
        let key = self.key(&path)?;
        self.forget_listing(&path);
        self.log(self.call(), "PUT", &key, String::new());
        let uri = self.uri_of(&key);
        self.store()
            .put(&key, PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|e| failed("PUT", &uri, e))
    }

    /// `PUT` with `If-None-Match: *` (S3, Azure; on GCS
    /// `ifGenerationMatch=0`). An object already there holding these very
    /// bytes is this put's own, sent again after its answer was lost; a
    /// store that cannot put conditionally (S3 with `aws_conditional_put`
    /// set to `disabled`) is looked at first instead.
    pub(crate) async fn put_new_async(self, path: PathBuf, bytes: Vec<u8>) -> StorageResult<()> {
        let key = self.key(&path)?;
        let uri = self.uri_of(&key);
        let payload = PutPayload::from(bytes);
        let mut resent = 0;
        loop {
            self.forget_listing(&path);
            self.log(self.call(), "PUT", &key, "(if none match)".into());
            let mode = PutMode::Create.into();
            match self.store().put_opts(&key, payload.clone(), mode).await {
                Ok(_) => return Ok(()),
                Err(object_store::Error::AlreadyExists { .. }) => {
                    self.log(self.call(), "GET", &key, "(whose file)".into());
                    let there = match self.store().get(&key).await {
                        Ok(got) => got.bytes().await.ok(),
                        Err(_) => None,
                    };
                    let mine = payload.iter().flatten().copied();
                    return match there {
                        Some(there) if there.iter().copied().eq(mine) => Ok(()),
                        _ => Err(already_there(&path)),
                    };
                }
                Err(object_store::Error::NotImplemented { .. }) => {
                    if self.exists_async(&path).await {
                        return Err(already_there(&path));
                    }
                    let bytes: Vec<u8> = payload.iter().flatten().copied().collect();
                    return self.put_async(path, bytes).await;
                }
                Err(object_store::Error::Generic { .. }) if resent < CONDITIONAL_RESENDS => {
                    resent += 1;
                }
                Err(e) => return Err(failed("PUT", &uri, e)),
            }
        }
    }

    /// A `DELETE`; whether the object was there, as far as the kept
    /// listing tells (S3 answers a `DELETE` alike either way).
    pub(crate) async fn delete_async(self, path: PathBuf) -> StorageResult<bool> {
        let key = self.key(&path)?;
        let there = self.listed(&path).unwrap_or(true);
        self.forget_listing(&path);
        self.log(self.call(), "DELETE", &key, String::new());
        let uri = self.uri_of(&key);
        match self.store().delete(&key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(there),
            Err(e) => Err(failed("DELETE", &uri, e)),
        }
    }

    /// One `LIST` of everything below `path`, then its objects deleted
    /// side by side; how many there were.
    pub(crate) async fn delete_folder_async(self, path: PathBuf) -> StorageResult<usize> {
        let prefix = self.key(&path)?;
        self.forget_folder(&path);
        let call = self.call();
        self.log(call, "LIST", &prefix, "(all below)".into());
        let uri = self.uri_of(&prefix);
        let store = self.store();
        let keys: Vec<Key> = listed_again_if_cut(|| {
            store
                .list(Some(&prefix))
                .map_ok(|m| m.location)
                .try_collect()
        })
        .await
        .map_err(|e| failed("LIST", &uri, e))?;
        for key in &keys {
            self.log(call, "DELETE", key, String::new());
        }
        let n = keys.len();
        let keys = futures::stream::iter(keys.into_iter().map(Ok)).boxed();
        store
            .delete_stream(keys)
            .try_collect::<Vec<_>>()
            .await
            .map_err(|e| failed("DELETE", &uri, e))?;
        Ok(n)
    }

    /// Starts a multipart upload.
    pub(crate) async fn upload_async(self, path: PathBuf) -> StorageResult<ObjectUpload> {
        let key = self.key(&path)?;
        self.log(self.call(), "POST", &key, "(start multipart)".into());
        let uri = self.uri_of(&key);
        let upload = self
            .store()
            .put_multipart(&key)
            .await
            .map_err(|e| failed("POST", &uri, e))?;
        Ok(ObjectUpload {
            storage: self,
            path,
            key,
            uri,
            upload: Some(upload),
            parts: 0,
        })
    }
}

impl AsyncWritableStorage for ObjectStorage {
    fn put(&self, path: PathBuf, bytes: Vec<u8>) -> Pending<()> {
        self.begin(|s| s.put_async(path, bytes))
    }

    fn put_new(&self, path: PathBuf, bytes: Vec<u8>) -> Pending<()> {
        self.begin(|s| s.put_new_async(path, bytes))
    }

    fn upload(&self, path: PathBuf) -> Pending<Box<dyn AsyncUpload>> {
        self.begin(|s| async move {
            let upload = s.upload_async(path).await?;
            Ok(Box::new(upload) as Box<dyn AsyncUpload>)
        })
    }

    fn delete(&self, path: PathBuf) -> Pending<bool> {
        self.begin(|s| s.delete_async(path))
    }

    fn delete_folder(&self, path: PathBuf) -> Pending<usize> {
        self.begin(|s| s.delete_folder_async(path))
    }

    /// One part: a file that fits goes as one `PUT`.
    fn put_whole_up_to(&self) -> usize {
        part_bytes(0)
    }

    /// Object stores have no folders: nothing to do.
    fn create_folder(&self, _path: PathBuf) -> Pending<()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// A multipart upload under way: aborted if dropped before it is
/// completed or aborted (a write given up, or its future dropped), so
/// that the store keeps (and bills) no parts of it.
pub(crate) struct ObjectUpload {
    storage: ObjectStorage,
    path: PathBuf,
    key: Key,
    uri: String,
    /// Taken by `complete` and `abort`.
    upload: Option<Box<dyn MultipartUpload>>,
    parts: usize,
}

impl ObjectUpload {
    /// The next part's request (logged now), for the caller to start:
    /// awaited here, waited for by the synchronous writer (`write.rs`).
    pub(crate) fn part_request(
        &mut self,
        bytes: Vec<u8>,
    ) -> impl Future<Output = StorageResult<()>> + Send + 'static {
        self.parts += 1;
        let s = &self.storage;
        s.log(s.call(), "PUT", &self.key, format!("part {}", self.parts));
        let upload = self.upload.as_mut().expect("not completed: that takes it");
        let part = upload.put_part(PutPayload::from(bytes));
        let uri = self.uri.clone();
        async move { part.await.map_err(|e| failed("PUT", &uri, e)) }
    }

    /// The request completing the upload (logged now), once every part
    /// sent has landed.
    pub(crate) fn complete_request(mut self) -> impl Future<Output = StorageResult<()>> + Send {
        let mut upload = self.taken();
        let s = &self.storage;
        s.forget_listing(&self.path);
        s.log(s.call(), "POST", &self.key, "(complete multipart)".into());
        let uri = self.uri.clone();
        async move {
            upload
                .complete()
                .await
                .map(|_| ())
                .map_err(|e| failed("POST", &uri, e))
        }
    }

    /// The request giving the upload up (logged now).
    pub(crate) fn abort_request(mut self) -> impl Future<Output = StorageResult<()>> + Send {
        let mut upload = self.taken();
        let s = &self.storage;
        s.log(s.call(), "DELETE", &self.key, "(abort multipart)".into());
        async move {
            let _ = upload.abort().await;
            Ok(())
        }
    }

    /// The bytes the next part holds, unless it is the last.
    pub(crate) fn next_part_bytes(&self) -> usize {
        part_bytes(self.parts)
    }

    fn taken(&mut self) -> Box<dyn MultipartUpload> {
        self.upload
            .take()
            .expect("completed or aborted once, consuming it")
    }
}

impl Drop for ObjectUpload {
    fn drop(&mut self) {
        if let Some(mut upload) = self.upload.take() {
            let (s, key) = (self.storage.clone(), self.key.clone());
            self.storage.detach(async move {
                // Logged as it is sent, on the runtime.
                s.log(s.call(), "DELETE", &key, "(abort multipart)".into());
                let _ = upload.abort().await;
            });
        }
    }
}

impl AsyncUpload for ObjectUpload {
    fn part_size(&self) -> usize {
        self.next_part_bytes()
    }

    fn part(&mut self, bytes: Vec<u8>) -> Pending<()> {
        let request = self.part_request(bytes);
        self.storage.begin(|_| request)
    }

    fn complete(self: Box<Self>) -> Pending<()> {
        let s = self.storage.clone();
        let request = (*self).complete_request();
        s.begin(|_| request)
    }

    fn abort(self: Box<Self>) -> Pending<()> {
        let s = self.storage.clone();
        let request = (*self).abort_request();
        s.begin(|_| request)
    }
}
