//! What the schema tests share: the test data and every array in it.
// Each test binary uses a part of what is here.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use tessera_filters::{read_generic_tile, EncryptionKey};
use tessera_schema::{list_schemas, ArraySchema, SchemaFile};
use tessera_storage::{LocalFs, ReadableStorage};

/// The key of the encrypted fixtures.
pub const KEY: tessera_filters::EncryptionKey =
    tessera_filters::EncryptionKey::new(*b"0123456789abcdeF0123456789abcdeF");

/// The repository's `testdata/`.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Every array folder under `dir` (an `array` folder, or a folder holding
/// a schema), recursively.
pub fn arrays(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    let is_array = entries.iter().any(|p| {
        p.file_name()
            .is_some_and(|n| n == "__schema" || n == "__array_schema.tdb")
    });
    if is_array {
        out.push(dir.to_path_buf());
        return;
    }
    for e in entries.into_iter().filter(|p| p.is_dir()) {
        arrays(&e, out);
    }
}

/// A schema file libtiledb wrote, parsed.
pub struct StoredSchema {
    /// The array folder.
    pub array: PathBuf,
    /// The schema file.
    pub file: SchemaFile,
    /// Its generic tile's payload.
    pub payload: Vec<u8>,
    /// The payload parsed.
    pub schema: ArraySchema,
    /// The array's key, for the encrypted fixtures.
    pub key: Option<&'static EncryptionKey>,
}

/// Every schema file in the test data that parses (the corrupt fixtures'
/// errors are tested elsewhere).
pub fn stored_schemas() -> Vec<StoredSchema> {
    let mut all = Vec::new();
    arrays(&root(), &mut all);
    let mut out = Vec::new();
    for array in all {
        let key = array
            .to_string_lossy()
            .contains("encrypted")
            .then_some(&KEY);
        for file in list_schemas(&LocalFs, &array).unwrap() {
            let bytes = LocalFs.read_all(&array.join(&file.relative_path)).unwrap();
            let Ok(tile) = read_generic_tile(&bytes, key, 0) else {
                continue;
            };
            let Ok(schema) = ArraySchema::parse(&tile.data, &file.name) else {
                continue;
            };
            let payload = tile.data;
            out.push(StoredSchema {
                array: array.clone(),
                file,
                payload,
                schema,
                key,
            });
        }
    }
    out
}
