//! The schema writer against every schema libtiledb wrote: each stored
//! payload (fixtures of every TileDB-Py release, legacy arrays of formats 1
//! to 22) parsed, encoded again, and compared byte for byte; and each
//! schema gate on both sides: a schema encoded at the version before the
//! gate and at the gate's, parsed back equal, snapshotted.

use std::path::{Path, PathBuf};
use tessera_filters::read_generic_tile;
use tessera_schema::{gates, list_schemas, ArraySchema};
use tessera_tile::storage::{LocalFs, Storage};
use tessera_tile::{FormatVersion, Gate};

const KEY: tessera_filters::EncryptionKey =
    tessera_filters::EncryptionKey::new(*b"0123456789abcdeF0123456789abcdeF");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Every array folder under `dir` (an `array` folder, or a folder holding
/// a schema), recursively.
fn arrays(dir: &Path, out: &mut Vec<PathBuf>) {
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

#[test]
fn every_stored_schema_encodes_to_its_own_bytes() {
    let mut all = Vec::new();
    arrays(&root(), &mut all);
    let mut checked = 0;
    let mut versions = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for array in &all {
        let key = array
            .to_string_lossy()
            .contains("encrypted")
            .then_some(&KEY);
        for f in list_schemas(&LocalFs, array).unwrap() {
            let bytes = LocalFs.read_all(&array.join(&f.relative_path)).unwrap();
            let Ok(tile) = read_generic_tile(&bytes, key, 0) else {
                continue; // the corrupt fixtures: their errors are tested elsewhere
            };
            let Ok(schema) = ArraySchema::parse(&tile.data, &f.name) else {
                continue;
            };
            let encoded = schema.encode().unwrap();
            let first_diff = encoded
                .iter()
                .zip(&tile.data)
                .position(|(a, b)| a != b)
                .unwrap_or(encoded.len().min(tile.data.len()));
            if encoded != tile.data {
                failures.push(format!(
                "{}: {} encodes to other bytes (format {}): first difference at byte {first_diff} of {} (stored {}): stored {:?}, encoded {:?}",
                array.display(),
                f.name,
                schema.version,
                encoded.len(),
                tile.data.len(),
                &tile.data[first_diff.saturating_sub(8)..(first_diff + 16).min(tile.data.len())],
                &encoded[first_diff.saturating_sub(8)..(first_diff + 16).min(encoded.len())],
            ));
            }
            versions.insert(schema.version.number());
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 100, "only {checked} schemas checked");
    // Formats from the legacy arrays and every fixture release.
    insta::assert_snapshot!(format!("{versions:?}"), @"{1, 10, 11, 16, 20, 21, 22}");
}

/// A schema of `version`: the fixture `name`'s, written at that version.
fn schema_at(name: &str, version: FormatVersion) -> ArraySchema {
    let array = root().join("tiledb-0.36.1").join(name).join("array");
    let files = list_schemas(&LocalFs, &array).unwrap();
    let mut s = tessera_schema::load_schema(&LocalFs, &array, files.last().unwrap(), None).unwrap();
    s.version = version;
    // What a version before the gate cannot hold is what it reads back as.
    let back = ArraySchema::parse(&s.encode().unwrap(), &s.name).unwrap();
    ArraySchema::parse(&back.encode().unwrap(), &s.name).unwrap()
}

/// The schema of fixture `name` on both sides of `gate`, each encoded,
/// parsed back equal to itself, and described.
fn both_sides(gate: Gate, name: &str) -> String {
    let from = gate.version();
    let before = FormatVersion::new(from.number() - 1);
    [before, from]
        .into_iter()
        .map(|v| {
            let s = schema_at(name, v);
            let bytes = s.encode().unwrap();
            let back = ArraySchema::parse(&bytes, &s.name).unwrap();
            assert_eq!(back, s, "version {v}");
            let text = tessera_schema::describe(&back).replace(&s.name, "<schema file>");
            format!("== format {} ({} bytes)\n{text}", v.number(), bytes.len())
        })
        .collect()
}

#[test]
fn per_dimension_types() {
    insta::assert_snapshot!(both_sides(gates::PER_DIMENSION_TYPES, "sparse_2d"));
}

#[test]
fn fill_value() {
    insta::assert_snapshot!(both_sides(gates::FILL_VALUE, "dense_partial_fill"));
}

#[test]
fn nullable() {
    insta::assert_snapshot!(both_sides(gates::NULLABLE, "dense_nullable_var"));
}

#[test]
fn attribute_order() {
    insta::assert_snapshot!(both_sides(gates::ATTRIBUTE_ORDER, "sparse_2d"));
}

#[test]
fn dimension_labels() {
    insta::assert_snapshot!(both_sides(gates::DIMENSION_LABELS, "dim_labels"));
}

#[test]
fn enumerations() {
    insta::assert_snapshot!(both_sides(gates::ENUMERATIONS, "enumerations"));
}

#[test]
fn current_domain() {
    insta::assert_snapshot!(both_sides(gates::CURRENT_DOMAIN, "current_domain"));
}

/// Version 10 moved schemas into `__schema/`: a gate of the folder layout,
/// not of the bytes, which are the same on both sides.
#[test]
fn schema_folder() {
    let [a, b] = [9, 10].map(|v| schema_at("sparse_2d", FormatVersion::new(v)));
    let strip = |mut bytes: Vec<u8>| {
        bytes.drain(..4);
        bytes
    };
    assert_eq!(strip(a.encode().unwrap()), strip(b.encode().unwrap()));
}
