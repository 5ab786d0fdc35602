//! Every schema in testdata and in the legacy arrays, in text form
//! (snapshots), and malformed schemas: errors, never panics.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use tessera_schema::{describe, list_schemas, load_schema, ArraySchema};
use tessera_storage::LocalFs;

const KEY: tessera_filters::EncryptionKey =
    tessera_filters::EncryptionKey::new(*b"0123456789abcdeF0123456789abcdeF");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// The entries of a folder, sorted.
fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// The `testdata/tiledb-<version>` folders, sorted.
fn version_dirs() -> Vec<PathBuf> {
    sorted_entries(&root())
        .into_iter()
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("tiledb-"))
        })
        .collect()
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
    let versions = version_dirs();
    for v in versions {
        let cases = sorted_entries(&v);
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
    let legacy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/legacy");
    assert!(legacy.exists(), "{} is absent", legacy.display());
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

/// The JSON form of every fixture schema, one line each, names redacted.
#[test]
fn fixture_schema_json_snapshots() {
    let versions = version_dirs();
    for v in versions {
        let cases = sorted_entries(&v);
        let mut text = String::new();
        for c in cases {
            let array = c.join("array");
            let key = array
                .to_string_lossy()
                .contains("encrypted")
                .then_some(&KEY);
            let files = list_schemas(&LocalFs, &array).unwrap();
            for f in &files {
                let Ok(s) = load_schema(&LocalFs, &array, f, key) else {
                    continue;
                };
                let mut j = serde_json::to_value(&s).unwrap();
                j["name"] = "<schema file>".into();
                j["timestamp_range"] = serde_json::Value::Null;
                if let Some(es) = j["enumerations"].as_array_mut() {
                    for e in es {
                        e["path"] = "<enumeration file>".into();
                    }
                }
                let _ = writeln!(text, "{}: {}", c.file_name().unwrap().to_string_lossy(), j);
            }
        }
        let name = v.file_name().unwrap().to_string_lossy().replace('.', "_");
        insta::assert_snapshot!(format!("schema_json_{name}"), text);
    }
}

/// Opening at a timestamp uses the newest schema not after it; the legacy
/// file counts as the oldest; when every schema is newer, the oldest.
#[test]
fn schema_at_a_timestamp() {
    use tessera_schema::{schema_at, SchemaFile};
    let f = |t: u64, n: &str| SchemaFile {
        timestamp_range: (t, t),
        name: n.into(),
        relative_path: n.into(),
    };
    let files = vec![
        f(0, "__array_schema.tdb"),
        f(10, "__10_10_a"),
        f(20, "__20_20_b"),
    ];
    assert_eq!(schema_at(&files, 5).unwrap().name, "__array_schema.tdb");
    assert_eq!(schema_at(&files, 10).unwrap().name, "__10_10_a");
    assert_eq!(schema_at(&files, 19).unwrap().name, "__10_10_a");
    assert_eq!(schema_at(&files, u64::MAX).unwrap().name, "__20_20_b");
    let newer = vec![f(10, "__10_10_a")];
    assert_eq!(schema_at(&newer, 1).unwrap().name, "__10_10_a");
}

/// An array holding both a legacy schema file and `__schema/` lists both,
/// the legacy one first.
#[test]
fn legacy_and_timestamped_schemas_together() {
    let legacy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/legacy");
    let src = root().join("tiledb-0.36.1/dense_1d_fragments/array/__schema");
    assert!(legacy.exists(), "{} is absent", legacy.display());
    let dir = std::env::temp_dir().join(format!("tessera-both-schemas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("__schema")).unwrap();
    std::fs::copy(
        legacy.join("non_split_coords_v1_4_0/__array_schema.tdb"),
        dir.join("__array_schema.tdb"),
    )
    .unwrap();
    for e in std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
    {
        std::fs::copy(e.path(), dir.join("__schema").join(e.file_name())).unwrap();
    }
    let files = list_schemas(&LocalFs, &dir).unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].name, "__array_schema.tdb");
    assert_eq!(
        load_schema(&LocalFs, &dir, &files[0], None)
            .unwrap()
            .version
            .number(),
        1
    );
    assert_eq!(
        load_schema(&LocalFs, &dir, &files[1], None)
            .unwrap()
            .version
            .number(),
        22
    );
    let _ = std::fs::remove_dir_all(&dir);
}
