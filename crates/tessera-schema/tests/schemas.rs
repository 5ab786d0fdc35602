//! Every schema in testdata and in the legacy arrays, in text form
//! (snapshots), and malformed schemas: errors, never panics.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use tessera_schema::{describe, list_schemas, load_schema, ArraySchema};
use tessera_tile::storage::LocalFs;

const KEY: [u8; 32] = *b"0123456789abcdeF0123456789abcdeF";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// The schema's text with names that change on regeneration replaced.
fn stable_text(s: &ArraySchema) -> String {
    let mut t = describe(s).replace(&s.name, "<schema file>");
    for e in &s.enumerations {
        t = t.replace(&e.path, "<enumeration file>");
    }
    t
}

fn schemas_of(array: &Path) -> String {
    let mut out = String::new();
    let key = array
        .to_string_lossy()
        .contains("encrypted")
        .then_some(&KEY);
    for f in list_schemas(&LocalFs, array).unwrap() {
        match load_schema(&LocalFs, array, &f, key) {
            Ok(s) => out.push_str(&stable_text(&s)),
            Err(e) => {
                let msg = e.to_string().replace(&array.display().to_string(), "ARRAY");
                let _ = writeln!(out, "error: {}", msg.replace(&f.name, "<schema file>"));
            }
        }
    }
    out
}

#[test]
fn fixture_schema_snapshots() {
    let mut versions: Vec<_> = std::fs::read_dir(root())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    versions.sort();
    for v in versions {
        let mut cases: Vec<_> = std::fs::read_dir(&v)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        cases.sort();
        let mut text = String::new();
        for c in cases {
            let _ = writeln!(text, "== {}", c.file_name().unwrap().to_string_lossy());
            text.push_str(&schemas_of(&c.join("array")));
        }
        let name = v.file_name().unwrap().to_string_lossy().replace('.', "_");
        insta::assert_snapshot!(format!("schemas_{name}"), text);
    }
}

#[test]
fn legacy_schema_snapshots() {
    let legacy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/legacy-arrays");
    if !legacy.exists() {
        eprintln!("skipping: {} is absent", legacy.display());
        return;
    }
    let mut arrays: Vec<_> = std::fs::read_dir(&legacy)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    arrays.sort();
    let mut text = String::new();
    for a in arrays {
        let _ = writeln!(text, "== {}", a.file_name().unwrap().to_string_lossy());
        text.push_str(&schemas_of(&a));
    }
    insta::assert_snapshot!("schemas_legacy", text);
}

/// Truncations and flipped bytes of real schema payloads: errors, never panics.
#[test]
fn malformed_schemas_are_errors() {
    let cases = [
        "tiledb-0.19.1/dense_2d_types",
        "tiledb-0.23.5/enumerations",
        "tiledb-0.31.1/current_domain",
        "tiledb-0.36.1/dim_labels",
        "tiledb-0.36.1/filter_pipeline",
    ];
    let mut checked = 0;
    for c in cases {
        let array = root().join(c).join("array");
        if !array.exists() {
            continue;
        }
        let files = list_schemas(&LocalFs, &array).unwrap();
        let f = files.last().unwrap();
        let bytes = std::fs::read(array.join(&f.relative_path)).unwrap();
        let payload = tessera_filters::read_generic_tile(&bytes, None, 0)
            .unwrap()
            .data;
        assert!(ArraySchema::parse(&payload, &f.name).is_ok(), "{c}");
        for cut in 0..payload.len() {
            let e = ArraySchema::parse(&payload[..cut], &f.name);
            assert!(e.is_err(), "{c}: a schema cut at {cut} parsed");
            checked += 1;
        }
        for i in 0..payload.len() {
            let mut p = payload.clone();
            p[i] ^= 0xff;
            let _ = ArraySchema::parse(&p, &f.name); // any result but a panic
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} variants checked");
}

#[test]
fn bad_ids_name_the_field() {
    let array = root().join("tiledb-0.36.1/dense_1d_fragments/array");
    let files = list_schemas(&LocalFs, &array).unwrap();
    let f = files.last().unwrap();
    let bytes = std::fs::read(array.join(&f.relative_path)).unwrap();
    let mut payload = tessera_filters::read_generic_tile(&bytes, None, 0)
        .unwrap()
        .data;
    // Byte 5 is the array type (after the version and allows-dups).
    payload[5] = 9;
    let e = ArraySchema::parse(&payload, &f.name)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("array type") && e.contains("byte offset 5"),
        "{e}"
    );
}
