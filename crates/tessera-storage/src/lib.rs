//! The I/O tessera's readers are driven by.
//!
//! Decoders never touch files; the layers that open arrays ask a
//! [`Storage`] for byte ranges ([`ReadableStorage`]) and folder listings
//! ([`ListableStorage`]), planning with its [`StorageHints`], and the layers that
//! write them a [`WritableStorage`] for puts, streamed files and removal
//! (or an [`Outbox`] that takes the writes down, for a driver to carry
//! out over an [`AsyncWritableStorage`]).
//! [`LocalFs`] serves a local filesystem; object stores plug in as
//! separate adapter crates. A [`Location`] is a path with its storage.
//!
//! Every request that fails says which key it was about and what kind of
//! failure it met ([`StorageError`]).
//!
//! ```
//! use tessera_storage::{LocalFs, ListableStorage, ReadableStorage};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
//! let dir = std::path::Path::new(dir);
//! let names: Vec<String> = LocalFs.list(dir).unwrap().into_iter().map(|e| e.name).collect();
//! assert!(names.contains(&"__schema".to_string()));
//! let schema = LocalFs.list(&dir.join("__schema")).unwrap();
//! let file = dir.join("__schema").join(&schema[0].name);
//! assert_eq!(LocalFs.read_range(&file, 0..8).unwrap().len(), 8);
//! let past = LocalFs.read_range(&file, 0..1 << 40).unwrap_err();
//! assert_eq!(past.kind(), tessera_storage::StorageErrorKind::OutOfRange);
//! ```

mod error;
mod fetched;
mod hints;
mod kept;
mod listable;
mod local;
mod location;
mod mapped;
mod memory;
mod need;
mod outbox;
mod readable;
mod recording;
mod side_by_side;
mod staged;
mod storage;
mod vanished;
mod write;
mod write_async;

pub use error::{StorageError, StorageErrorKind, StorageResult};
pub use fetched::fetched;
pub use hints::{reopen_pause, StorageHints};
pub use kept::KeptFile;
pub use listable::{DirEntry, ListableStorage};
pub use local::LocalFs;
pub use location::Location;
pub use mapped::MappedFile;
pub use memory::Memory;
pub use need::{answer, Answer, AnswersFuture, AsyncStorage, Data, Grouped, Need};
pub use outbox::{Outbox, WriteOp};
pub use readable::{PendingBatch, ReadableStorage};
pub use recording::Recording;
pub use side_by_side::{side_by_side, side_by_side_on};
pub use staged::{planned, planned_for_reading, AsyncLocation};
pub use storage::Storage;
pub use vanished::{is_missing_file, listing_again, pause_before_reopen, REOPENS};
pub use write::{already_there, entry_names, put_after_looking, FileWriter, WritableStorage};
pub use write_async::{AsyncUpload, AsyncWritableStorage, Pending};
