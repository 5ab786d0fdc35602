//! TileDB arrays and groups on object stores (S3, GCS, Azure Blob, HTTP),
//! read and written through tessera's [`Storage`] trait.
//!
//! [`ObjectStorage`] serves one bucket (or container, or HTTP origin)
//! through the `object_store` crate. Readers keep handing it paths: a URI
//! such as `s3://bucket/path/array` is used as the path, and the storage
//! maps each to its object key. Credentials and endpoints come from the
//! standard environment (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ALLOW_HTTP`, and the
//! `GOOGLE_*` and `AZURE_*` variables `object_store` reads).
//!
//! What makes it fast where a request costs tens of milliseconds: readers
//! hand it their whole read plan ([`ReadableStorage::read_batch`](tessera_storage::ReadableStorage::read_batch),
//! [`ReadableStorage::read_tails`](tessera_storage::ReadableStorage::read_tails)), and it merges neighbouring ranges of a file
//! ([`plan`]), reads overlapping ranges once, cuts large ranges into
//! requests of the size that suits the store, and keeps many requests in
//! flight at once ([`StoreTuning`]: per store, overridable from the
//! environment); each folder is listed once per storage, and a folder
//! whose whole subtree fits in one page of a listing (an array) is listed
//! with everything below it in one request; a footer comes
//! with the file's size in one suffix request. Throttling and transient
//! failures (5xx answers, dropped connections, timeouts) are retried with
//! backoff by `object_store`'s client, within limits the caller sets
//! (storage options `max_retries` and `retry_timeout`, or
//! `TESSERA_STORE_MAX_RETRIES` and `TESSERA_STORE_RETRY_TIMEOUT_SECS`); a
//! GET whose body stops is resumed from the byte it reached, on the same
//! version of the object; a multipart upload's failed part is sent again
//! alone. The rest are errors naming the request, the URI and the store's
//! last answer.
//!
//! ```
//! use std::path::Path;
//! use tessera_object_store::ObjectStorage;
//! use tessera_storage::{ListableStorage, ReadableStorage, WritableStorage};
//!
//! // An in-memory store: the same code paths as S3, no server.
//! let storage = ObjectStorage::for_uri("memory://bucket").unwrap();
//! storage.put(Path::new("memory://bucket/a/__schema/s1"), b"abcdef").unwrap();
//! let got = storage.read_batch(&[
//!     ("memory://bucket/a/__schema/s1".into(), 1..3),
//!     ("memory://bucket/a/__schema/s1".into(), 2..5),
//! ]).unwrap();
//! assert_eq!(got, [b"bc".to_vec(), b"cde".to_vec()]);
//! assert_eq!(storage.list(Path::new("memory://bucket/a")).unwrap()[0].name, "__schema");
//! ```

mod answer;
mod error;
mod fetch;
mod listing;
mod options;
pub mod plan;
mod request;
mod retry;
mod runtime;
mod store;
mod tuning;
mod uri;
mod write;
mod write_async;

pub use error::ObjectStoreError;
pub use request::Request;
pub use store::ObjectStorage;
pub use tessera_storage::{
    ListableStorage, Location, ReadableStorage, Storage, StorageError, StorageErrorKind,
    StorageHints, WritableStorage,
};
pub use tuning::StoreTuning;
pub use uri::ObjectUri;
