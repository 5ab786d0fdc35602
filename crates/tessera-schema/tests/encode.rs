//! The schema writer against every schema libtiledb wrote: each stored
//! payload (fixtures of every TileDB-Py release, legacy arrays of formats 1
//! to 22) parsed, encoded again, and compared byte for byte; and each
//! schema gate on both sides: a schema encoded at the version before the
//! gate and at the gate's, parsed back equal, snapshotted.

use tessera_filters::read_generic_tile;
use tessera_schema::{gates, list_schemas, ArraySchema};
use tessera_storage::LocalFs;
use tessera_tile::{FormatVersion, Gate};

mod common;
use common::{arrays, root, stored_schemas, StoredSchema};

#[test]
fn every_stored_schema_encodes_to_its_own_bytes() {
    let mut checked = 0;
    let mut versions = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for StoredSchema {
        array,
        file: f,
        payload,
        schema,
        ..
    } in stored_schemas()
    {
        let encoded = schema.encode().unwrap();
        let first_diff = encoded
            .iter()
            .zip(&payload)
            .position(|(a, b)| a != b)
            .unwrap_or(encoded.len().min(payload.len()));
        if encoded != payload {
            failures.push(format!(
                "{}: {} encodes to other bytes (format {}): first difference at byte {first_diff} of {} (stored {}): stored {:?}, encoded {:?}",
                array.display(),
                f.name,
                schema.version,
                encoded.len(),
                payload.len(),
                &payload[first_diff.saturating_sub(8)..(first_diff + 16).min(payload.len())],
                &encoded[first_diff.saturating_sub(8)..(first_diff + 16).min(encoded.len())],
            ));
        }
        versions.insert(schema.version.number());
        checked += 1;
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

#[test]
fn every_stored_enumeration_encodes_to_its_own_bytes() {
    let mut all = Vec::new();
    arrays(&root(), &mut all);
    let mut checked = 0;
    for array in &all {
        let folder = array.join("__schema/__enumerations");
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for e in entries.flatten() {
            let bytes = std::fs::read(e.path()).unwrap();
            let Ok(tile) = read_generic_tile(&bytes, None, 0) else {
                continue; // the encrypted fixtures
            };
            let parsed = tessera_schema::Enumeration::parse(&tile.data).unwrap();
            assert_eq!(parsed.encode(), tile.data, "{}", e.path().display());
            checked += 1;
        }
    }
    assert!(checked >= 4, "{checked} enumerations");
}
