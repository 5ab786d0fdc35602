//! Tessera reads and writes TileDB arrays (every format version libtiledb
//! wrote) in pure Rust.
//!
//! This facade re-exports the layered crates:
//!
//! | crate | what it knows |
//! |---|---|
//! | [`storage`] | reading, listing and writing files: the local filesystem, files in memory, the traits object stores implement |
//! | [`tile`] | datatypes, format versions, bounded parsing, tile and chunk framing |
//! | [`filters`] | filter pipelines, every filter, generic tiles |
//! | [`schema`] | array schemas, enumerations |
//! | [`fragment`] | array folders, fragments, R-trees, commits, array metadata |
//! | [`query`] | dense and sparse reads |
//! | [`write`] | creating arrays, fragments, deletes, schema evolution, consolidation, vacuum |
//!
//! ```
//! use tessera::{open, ReadRequest};
//! let session = open(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array"), None).unwrap();
//! let result = session.execute(&ReadRequest::new()).unwrap();
//! for c in &result.columns {
//!     println!("{}: {} bytes", c.name, c.data.len());
//! }
//! ```

pub use tessera_filters as filters;
pub use tessera_fragment as fragment;
pub use tessera_query as query;
pub use tessera_schema as schema;
pub use tessera_storage as storage;
pub use tessera_tile as tile;
pub use tessera_write as write;

pub use tessera_fragment::OpenArray;
#[cfg(feature = "object-store")]
pub use tessera_object_store as object_store;
pub use tessera_query::{
    Column, Expr, QueryError, QuerySource, ReadRequest, ReadResult, ReadSession, Value,
};
pub use tessera_storage::LocalFs;

mod serving;
pub use serving::{is_uri, local_path, location_with, storage_for, storage_with, store_of};
#[cfg(feature = "object-store")]
pub use serving::{storage_on_runtime, RuntimeStorage};

/// Opens the array at `path`, at the latest timestamp, for reads; `key`
/// is the AES-256-GCM key of an encrypted array. `path` is local, or with
/// the `object-store` feature a URI (`tessera::open("s3://bucket/array",
/// None)`); the session keeps the storage it was opened from.
///
/// ```
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
/// let session = tessera::open(path, None).unwrap();
/// let r = session.execute(&tessera::ReadRequest::new()).unwrap();
/// assert!(r.cell_count > 0);
/// assert_eq!(session.array().schema.dimensions.len(), 2);
/// ```
pub fn open(
    path: impl AsRef<std::path::Path>,
    key: Option<[u8; 32]>,
) -> Result<ReadSession, QueryError> {
    let key = key.map(tessera_filters::EncryptionKey::new);
    let path = local_path(path.as_ref());
    ReadSession::open(storage_for(path)?, path, key)
}

/// Opens the group at `path` (local, or a URI as for [`open`]), at the
/// latest timestamp: its members ([`fragment::group::OpenGroup::list`], recursively
/// or not), its metadata, and the paths to open member arrays with [`open`].
///
/// ```
/// use tessera::fragment::group::ObjectType;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/groups/tiledb-0.36.1/group_nested/group");
/// let group = tessera::open_group(path, None).unwrap();
/// let all = group.list(&tessera::LocalFs, true).unwrap();
/// let data = all.iter().find(|m| m.path == "ms/RNA/X/data").unwrap();
/// assert_eq!(data.object_type, ObjectType::Array);
/// let session = tessera::open(&data.location, None).unwrap();
/// assert!(session.execute(&tessera::ReadRequest::new()).unwrap().cell_count > 0);
/// ```
pub fn open_group(
    path: impl AsRef<std::path::Path>,
    key: Option<[u8; 32]>,
) -> Result<tessera_fragment::group::OpenGroup, tessera_fragment::FragmentError> {
    let key = key.map(tessera_filters::EncryptionKey::new);
    let path = local_path(path.as_ref());
    tessera_fragment::group::OpenGroup::open(&*storage_for(path)?, path, 0, u64::MAX, key)
}

pub mod maintain;

pub mod fuzzing {
    //! Whole-folder mutation, shared by the `array_folder` fuzz target, the
    //! seeds `cargo xtask fuzz` writes for it, and the known-bad corpus test.
    //!
    //! An input is: byte 0 picks a fixture of [`ARRAY_FOLDER_FIXTURES`],
    //! bytes 1..3 (little endian) a file of it in path order, the rest
    //! replaces that file's content.

    use std::path::{Path, PathBuf};
    use tessera_storage::Memory;

    /// testdata/tiledb-0.36.1 cases the target mutates: between them they
    /// hold every commits-folder file kind, consolidated fragment metadata,
    /// delete conditions, evolution, nullable and var-sized tiles.
    pub const ARRAY_FOLDER_FIXTURES: &[&str] = &[
        "consolidated",
        "deletes",
        "deletes_consolidated",
        "vacuumed",
        "sparse_strings",
        "dense_nullable_var",
        "schema_evolution",
        "array_metadata",
    ];

    /// Each fixture's array folder, loaded into memory.
    pub fn load_fixtures(
        testdata: &Path,
    ) -> tessera_storage::StorageResult<Vec<(PathBuf, Memory)>> {
        ARRAY_FOLDER_FIXTURES
            .iter()
            .map(|c| {
                let a = testdata.join("tiledb-0.36.1").join(c).join("array");
                Memory::load_dir(&a).map(|m| (a, m))
            })
            .collect()
    }

    /// The fixture folder with one file replaced as `data` says; `None` when
    /// `data` is shorter than its 3-byte selector.
    pub fn mutate(fixtures: &[(PathBuf, Memory)], data: &[u8]) -> Option<(PathBuf, Memory)> {
        let (path, base) = fixtures.get((*data.first()? as usize).checked_rem(fixtures.len())?)?;
        let pick = u16::from_le_bytes([*data.get(1)?, *data.get(2)?]) as usize;
        let file = base
            .files()
            .nth(pick.checked_rem(base.files().count())?)?
            .0
            .to_path_buf();
        let mut m = base.clone();
        m.insert(file, data[3..].to_vec());
        Some((path.clone(), m))
    }

    /// Opens the mutated array, reads its metadata and every cell, then
    /// picks cells (the first half of the first dimension's non-empty
    /// domain, and a condition on the first attribute); the first error,
    /// as text.
    pub fn open_and_read(path: &Path, m: &Memory) -> Result<(), String> {
        use crate::{Expr, ReadRequest, ReadSession, Value};
        let array =
            crate::OpenArray::open(m, path, 0, u64::MAX, None).map_err(|e| e.to_string())?;
        array.metadata(m).map_err(|e| e.to_string())?;
        let array = std::sync::Arc::new(array);
        let session = ReadSession::new(std::sync::Arc::new(m.clone()), array.clone());
        session
            .execute(&ReadRequest::new())
            .map_err(|e| e.to_string())?;
        let mut q = ReadRequest::new();
        if let Some(a) = array.schema.attributes.first() {
            q = q.condition(Expr::IsNull {
                field: a.name.clone(),
                negated: true,
            });
        }
        let d0 = array.schema.dimensions.first();
        let ned = array
            .fragments
            .iter()
            .find_map(|f| f.footer.non_empty_domain.as_ref()?.first());
        if let (Some(d), Some(r)) = (d0, ned) {
            if let (Value::Int(lo), Value::Int(hi)) = (
                Value::decode(d.datatype, &r.lo),
                Value::decode(d.datatype, &r.hi),
            ) {
                q = q.range(&d.name, Value::Int(lo), Value::Int(lo + (hi - lo) / 2));
            }
        }
        session.execute(&q).map(drop).map_err(|e| e.to_string())
    }

    /// Seed inputs: every file of every fixture, with its selector.
    pub fn seeds(fixtures: &[(PathBuf, Memory)]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for (i, (_, m)) in fixtures.iter().enumerate() {
            for (j, (_, bytes)) in m.files().enumerate() {
                let mut s = vec![i as u8];
                s.extend_from_slice(&(j as u16).to_le_bytes());
                s.extend_from_slice(bytes);
                out.push(s);
            }
        }
        out
    }
}

/// The README's Rust examples, run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;
