//! TileDB array schemas, for format versions 1 to 23 (`format_spec/array_schema.md`).
//!
//! [`ArraySchema::parse`] decodes the payload of a schema file (see
//! [`gates`] for which field exists from which version); [`list_schemas`]
//! and [`load_schema`] find and read the schemas of an array folder (the
//! legacy `__array_schema.tdb` and the timestamped files of `__schema/`);
//! [`Enumeration`] decodes enumeration files. [`describe`] gives a stable text
//! form, and the types serialize to JSON with serde.
//!
//! ```
//! use tessera_schema::{list_schemas, load_schema};
//! use tessera_storage::LocalFs;
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
//! let array = std::path::Path::new(path);
//! let files = list_schemas(&LocalFs, array).unwrap();
//! let schema = load_schema(&LocalFs, array, files.last().unwrap(), None).unwrap();
//! assert_eq!(schema.dimensions.len(), 2);
//! println!("{}", tessera_schema::describe(&schema));
//! ```

mod decode;
pub mod describe;
mod encode;
pub mod enumeration;
pub mod error;
mod fill;
pub mod gates;
pub mod json;
pub mod schema;
pub mod value;

pub use describe::{describe, describe_enumerations, enumeration_value};
pub use enumeration::Enumeration;
pub use error::SchemaError;
pub use fill::default_fill_value;
pub use schema::{
    ArraySchema, Attribute, CellValNum, CurrentDomain, Dimension, DimensionLabel, EnumerationRef,
    Range1D,
};
pub use value::{Value, ValueParseError};

use std::path::{Path, PathBuf};
use tessera_filters::{read_generic_tile, EncryptionKey};
use tessera_storage::{DirEntry, Storage};

/// The legacy schema file name (format versions up to 9).
pub const LEGACY_SCHEMA_FILE: &str = "__array_schema.tdb";
/// The schema folder (format version 10 and later).
pub const SCHEMA_FOLDER: &str = "__schema";
/// The enumerations folder inside the schema folder.
pub const ENUMERATIONS_FOLDER: &str = "__enumerations";

/// A schema file of an array.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SchemaFile {
    /// Timestamps from the name; the legacy file counts as (0, 0), the oldest.
    pub timestamp_range: (u64, u64),
    /// File name.
    pub name: String,
    /// Path relative to the array folder.
    pub relative_path: PathBuf,
}

/// Lists an array's schema files, oldest first.
pub fn list_schemas(storage: &dyn Storage, array: &Path) -> Result<Vec<SchemaFile>, SchemaError> {
    let root = storage.list(array)?;
    list_schemas_in(storage, array, &root)
}

/// [`list_schemas`] for a caller that has listed the array folder already
/// (`root`): on an object store, a listing is a request.
pub fn list_schemas_in(
    storage: &dyn Storage,
    array: &Path,
    root: &[DirEntry],
) -> Result<Vec<SchemaFile>, SchemaError> {
    let mut out = Vec::new();
    for e in root {
        if e.name == LEGACY_SCHEMA_FILE && !e.is_dir {
            out.push(SchemaFile {
                timestamp_range: (0, 0),
                name: e.name.clone(),
                relative_path: PathBuf::from(&e.name),
            });
        }
    }
    let folder = array.join(SCHEMA_FOLDER);
    for e in storage.list(&folder)? {
        if e.is_dir || !e.name.starts_with("__") {
            continue;
        }
        let ts = schema::parse_timestamps(&e.name);
        out.push(SchemaFile {
            timestamp_range: ts,
            relative_path: Path::new(SCHEMA_FOLDER).join(&e.name),
            name: e.name,
        });
    }
    out.sort();
    Ok(out)
}

/// The schema an array opened at `timestamp_end` uses: the newest whose
/// timestamp is not after it, or the oldest if all are newer (libtiledb does
/// the same when fragments predate every schema file).
pub fn schema_at(files: &[SchemaFile], timestamp_end: u64) -> Option<&SchemaFile> {
    files
        .iter()
        .rev()
        .find(|f| f.timestamp_range.1 <= timestamp_end)
        .or_else(|| files.first())
}

/// Reads and parses one schema file.
pub fn load_schema(
    storage: &dyn Storage,
    array: &Path,
    file: &SchemaFile,
    key: Option<&EncryptionKey>,
) -> Result<ArraySchema, SchemaError> {
    let path = array.join(&file.relative_path);
    let bytes = storage.read_all(&path)?;
    let at = |e: SchemaError| e.in_file(path.display().to_string());
    let tile = read_generic_tile(&bytes, key, 0).map_err(|e| at(e.into()))?;
    ArraySchema::parse(&tile.data, &file.name).map_err(at)
}

/// Reads the enumerations a schema lists.
pub fn load_enumerations(
    storage: &dyn Storage,
    array: &Path,
    schema: &ArraySchema,
    key: Option<&EncryptionKey>,
) -> Result<Vec<Enumeration>, SchemaError> {
    let paths: Vec<std::path::PathBuf> = schema
        .enumerations
        .iter()
        .map(|e| {
            array
                .join(SCHEMA_FOLDER)
                .join(ENUMERATIONS_FOLDER)
                .join(&e.path)
        })
        .collect();
    let files = storage.read_files(&paths);
    paths
        .iter()
        .zip(files)
        .map(|(path, bytes)| {
            let bytes = bytes?;
            let tile = read_generic_tile(&bytes, key, 0)
                .map_err(|err| SchemaError::from(err).in_file(path.display().to_string()))?;
            Enumeration::parse(&tile.data).map_err(|err| err.in_file(path.display().to_string()))
        })
        .collect()
}
