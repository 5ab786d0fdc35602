//! `create_array` against every schema libtiledb 2.30 (TileDB-Py 0.36.1)
//! wrote: each schema, printed as JSON and read back, creates an array
//! whose schema and enumeration files hold exactly libtiledb's bytes (the
//! payloads, their GZIP and generic tile framing: only the file names, new
//! uuids and timestamps, differ), and which tessera opens. Encrypted
//! arrays open with their key only; refused destinations leave nothing.

use std::path::{Path, PathBuf};
use tessera_filters::{read_generic_tile, EncryptionKey};
use tessera_fragment::OpenArray;
use tessera_schema::json::{schema_from_json, schema_to_json};
use tessera_schema::{list_schemas, load_enumerations, load_schema, schema_at};
use tessera_storage::LocalFs;
use tessera_write::{create_array, WriteError};

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1");
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("array"))
        .filter(|p| p.join("__schema").is_dir())
        .collect();
    v.sort();
    v
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tessera-create-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn created_schemas_are_libtiledbs_bytes() {
    let dir = scratch("bytes");
    let (mut checked, mut failures) = (0, Vec::new());
    for array in fixtures() {
        let name = array
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if name.contains("encrypted") {
            continue; // random IVs: checked below by reading back
        }
        let files = list_schemas(&LocalFs, &array).unwrap();
        let file = schema_at(&files, u64::MAX).unwrap();
        let schema = load_schema(&LocalFs, &array, file, None).unwrap();
        let enums = load_enumerations(&LocalFs, &array, &schema, None).unwrap();
        let doc = schema_from_json(&schema_to_json(&schema, &enums)).unwrap();
        let out = dir.join(&name);
        let created = create_array(&out, &doc, None, Some(schema.timestamp_range.0)).unwrap();
        // The schema names its enumerations' files: compare with the
        // original names swapped back in.
        let ours = std::fs::read(out.join("__schema").join(&created.name)).unwrap();
        let ours = if schema.enumerations.is_empty() {
            ours
        } else {
            let mut s = load_schema(
                &LocalFs,
                &out,
                &list_schemas(&LocalFs, &out).unwrap()[0],
                None,
            )
            .unwrap();
            s.enumerations.clone_from(&schema.enumerations);
            let pipeline = tessera_write::generic_tile_pipeline();
            tessera_filters::write_generic_tile(&s.encode().unwrap(), &pipeline, s.version, None)
                .unwrap()
        };
        let theirs = std::fs::read(array.join(&file.relative_path)).unwrap();
        if ours != theirs {
            failures.push(format!(
                "{name}: schema file differs ({} vs {} bytes)",
                ours.len(),
                theirs.len()
            ));
        }
        for (ours, theirs) in created.enumerations.iter().zip(&schema.enumerations) {
            let read = |a: &Path, p: &str| {
                std::fs::read(a.join("__schema/__enumerations").join(p)).unwrap()
            };
            let (a, b) = (read(&out, &ours.path), read(&array, &theirs.path));
            // The payload names its own file: compare with the names swapped back.
            let mut e =
                tessera_schema::Enumeration::parse(&read_generic_tile(&a, None, 0).unwrap().data)
                    .unwrap();
            e.path_name.clone_from(&theirs.path);
            let again = tessera_filters::write_generic_tile(
                &e.encode(),
                &tessera_write::generic_tile_pipeline(),
                schema.version,
                None,
            )
            .unwrap();
            if again != b {
                failures.push(format!("{name}: enumeration {} differs", ours.name));
            }
        }
        for label in &schema.dimension_labels {
            // The label arrays, as libtiledb made them from the labels alone.
            let (ours, theirs) = (out.join(&label.uri), array.join(&label.uri));
            let files = list_schemas(&LocalFs, &ours).unwrap();
            let a = std::fs::read(ours.join(&files[0].relative_path)).unwrap();
            let files = list_schemas(&LocalFs, &theirs).unwrap();
            let b = std::fs::read(theirs.join(&files[0].relative_path)).unwrap();
            let mut l = load_schema(
                &LocalFs,
                &ours,
                &list_schemas(&LocalFs, &ours).unwrap()[0],
                None,
            )
            .unwrap();
            let t = load_schema(&LocalFs, &theirs, &files[0], None).unwrap();
            l.name.clone_from(&t.name);
            if a.len() != b.len() || l.encode().unwrap() != t.encode().unwrap() {
                failures.push(format!("{name}: label array {} differs", label.name));
            }
        }
        let opened = OpenArray::open(&LocalFs, &out, 0, u64::MAX, None).unwrap();
        assert_eq!(opened.fragments.len(), 0);
        let mut reopened = (*opened.schema).clone();
        reopened.enumerations.clone_from(&schema.enumerations);
        assert_eq!(
            reopened.encode().unwrap(),
            schema.encode().unwrap(),
            "{name}"
        );
        checked += 1;
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 40, "{checked} arrays");
}

#[test]
fn encrypted_arrays_open_with_their_key_only() {
    let dir = scratch("key");
    let doc = schema_from_json(&serde_json::json!({
        "array_type": "dense",
        "dimensions": [{"name": "r", "type": "INT32", "domain": [1, 4], "tile_extent": 2}],
        "attributes": [{"name": "a", "type": "INT32"}],
    }))
    .unwrap();
    let key = EncryptionKey::new(*b"0123456789abcdeF0123456789abcdeF");
    let out = dir.join("enc");
    create_array(&out, &doc, Some(key), None).unwrap();
    let opened = OpenArray::open(&LocalFs, &out, 0, u64::MAX, Some(key)).unwrap();
    assert_eq!(opened.schema.attributes[0].name, "a");
    let err = OpenArray::open(&LocalFs, &out, 0, u64::MAX, None).unwrap_err();
    assert!(err.to_string().contains("no encryption key"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refused_destinations_are_clear_errors_and_leave_nothing() {
    let dir = scratch("refused");
    let doc = schema_from_json(&serde_json::json!({
        "array_type": "sparse",
        "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}],
    }))
    .unwrap();
    let a = dir.join("a");
    create_array(&a, &doc, None, None).unwrap();
    let again = create_array(&a, &doc, None, None).unwrap_err();
    assert!(matches!(again, WriteError::Refused { .. }));
    assert!(
        again.to_string().ends_with("already a TileDB array"),
        "{again}"
    );
    std::fs::write(dir.join("file"), b"x").unwrap();
    let not_empty = create_array(&dir, &doc, None, None).unwrap_err();
    assert!(
        not_empty.to_string().ends_with("exists and is not empty"),
        "{not_empty}"
    );
    let orphan = create_array(dir.join("no/such/parent"), &doc, None, None).unwrap_err();
    assert!(orphan.to_string().contains("does not exist"), "{orphan}");
    // An empty folder may become an array.
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    create_array(&empty, &doc, None, None).unwrap();
    // No staging folder is left behind.
    let hidden: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The example in docs/SCHEMA_JSON.md creates an array tessera opens.
#[test]
fn the_documented_example_creates_an_array() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/SCHEMA_JSON.md"),
    )
    .unwrap();
    let start = doc.find("```json\n").unwrap() + "```json\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let json: serde_json::Value = serde_json::from_str(&doc[start..end]).unwrap();
    let dir = scratch("doc");
    let out = dir.join("example");
    create_array(&out, &schema_from_json(&json).unwrap(), None, None).unwrap();
    let opened = OpenArray::open(&LocalFs, &out, 0, u64::MAX, None).unwrap();
    let names: Vec<&str> = opened
        .schema
        .attributes
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, ["v", "s", "kind"]);
    let enums = load_enumerations(&LocalFs, &out, &opened.schema, None).unwrap();
    assert_eq!(
        enums[0].values,
        [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
    );
    // The second example: an array with a dimension label, its label
    // array created inside it.
    let start = end + doc[end..].find("```json\n").unwrap() + "```json\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let json: serde_json::Value = serde_json::from_str(&doc[start..end]).unwrap();
    let out = dir.join("labelled");
    let created = create_array(&out, &schema_from_json(&json).unwrap(), None, None).unwrap();
    assert_eq!(created.dimension_labels[0].uri, "__labels/l0");
    let label = OpenArray::open(&LocalFs, &out.join("__labels/l0"), 0, u64::MAX, None).unwrap();
    assert_eq!(label.schema.dimensions[0].name, "index");
    assert_eq!(label.schema.attributes[0].name, "label");
    assert_eq!(label.schema.attributes[0].order, 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Arrays of formats before 16 (libtiledb before 2.13) are refused with
/// an error saying what can be written.
#[test]
fn older_formats_are_refused_clearly() {
    let legacy =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/legacy/sparse_array_v11");
    let err =
        tessera_write::FragmentWriter::try_new(&legacy, tessera_write::WriteOptions::default())
            .err()
            .unwrap();
    assert!(
        err.to_string()
            .contains("format version is 11; tessera writes fragments at versions 16 to 22"),
        "{err}"
    );
}

/// A dense schema whose dimensions differ in datatype is refused, as
/// libtiledb refuses it (`ArraySchema::set_domain`); nothing is created.
#[test]
fn dense_dimensions_of_two_datatypes_are_refused() {
    let doc = tessera_schema::json::schema_from_json(&serde_json::json!({
        "array_type": "dense",
        "dimensions": [
            {"name": "r", "type": "UINT16", "domain": [0, 9], "tile_extent": 5},
            {"name": "c", "type": "INT8", "domain": [-20, -11], "tile_extent": 5},
        ],
        "attributes": [{"name": "v", "type": "INT32"}],
    }));
    let err = doc.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        err.contains(
            "in dense arrays all dimensions have one datatype; this one is INT8, the first UINT16"
        ),
        "{err}"
    );
}
