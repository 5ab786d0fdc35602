//! Schema evolution as libtiledb writes it: each release's
//! `schema_evolution` fixture holds the schema TileDB-Py created and the
//! one its `ArraySchemaEvolution` wrote (attribute `b` FLOAT32 with fill
//! 3.5 added, `old` dropped); tessera evolves the first the same way and
//! must write the second byte for byte. And an evolved array reads as
//! libtiledb reads it: older cells show the added attribute's fill value.

mod common;

use common::copy_dir;
use std::path::Path;
use std::sync::Arc;
use tessera_filters::{read_generic_tile, write_generic_tile};
use tessera_query::{ReadRequest, ReadSession};
use tessera_schema::json::attribute_from_json;
use tessera_schema::ArraySchema;
use tessera_storage::LocalFs;
use tessera_tile::FormatVersion;
use tessera_write::evolve::{evolve_array, evolved_schema, Evolution};
use tessera_write::generic_tile_pipeline;

fn evolution(version: FormatVersion) -> Evolution {
    let b = serde_json::json!({"name": "b", "type": "FLOAT32", "fill_value": 3.5});
    Evolution {
        add_attributes: vec![attribute_from_json(&b, "attribute", &[], version).unwrap()],
        drop_attributes: vec!["old".into()],
        ..Default::default()
    }
}

#[test]
fn evolved_schemas_are_libtiledbs_bytes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    for release in ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"] {
        let dir = root.join(format!("tiledb-{release}/schema_evolution/array/__schema"));
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        assert_eq!(files.len(), 2, "{release}");
        let load = |p: &Path| {
            let bytes = std::fs::read(p).unwrap();
            let tile = read_generic_tile(&bytes, None, 0).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (
                ArraySchema::parse(&tile.data, &name).unwrap(),
                tile.data,
                bytes,
            )
        };
        let (before, _, _) = load(&files[0]);
        let (after, payload, bytes) = load(&files[1]);
        let mut ours =
            evolved_schema(&before, &evolution(before.version), after.timestamp_range.1).unwrap();
        ours.name.clone_from(&after.name);
        assert_eq!(
            ours.encode().unwrap(),
            payload,
            "{release}: the schema's payload"
        );
        let version = FormatVersion::new(u32::from_le_bytes(bytes[..4].try_into().unwrap()));
        let tile = write_generic_tile(&payload, &generic_tile_pipeline(), version, None).unwrap();
        assert_eq!(tile, bytes, "{release}: the schema file");
    }
}

#[test]
fn an_evolved_array_reads_the_added_attributes_fill() {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/sparse_2d/array");
    let dir = std::env::temp_dir().join(format!("tessera-evolve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&source, &dir);
    let before =
        Arc::new(tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap());
    let cells = ReadSession::new(Arc::new(LocalFs), before.clone())
        .execute(&ReadRequest::new())
        .unwrap()
        .cell_count;
    let dropped = before.schema.attributes[0].name.clone();
    let w = serde_json::json!({"name": "w", "type": "INT16", "fill_value": -7});
    let evolution = Evolution {
        add_attributes: vec![
            attribute_from_json(&w, "attribute", &[], before.schema.version).unwrap(),
        ],
        drop_attributes: vec![dropped.clone()],
        ..Default::default()
    };
    evolve_array(&dir, &evolution, None, None).unwrap();
    let after =
        Arc::new(tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap());
    assert!(after.schema.attributes.iter().all(|a| a.name != dropped));
    let r = ReadSession::new(Arc::new(LocalFs), after.clone())
        .execute(&ReadRequest::new())
        .unwrap();
    assert_eq!(r.cell_count, cells);
    let w = r.columns.iter().find(|c| c.name == "w").unwrap();
    assert!(w.data.chunks(2).all(|c| c == (-7i16).to_le_bytes()));
    // Refusals: an unknown attribute, a name taken.
    for (e, want) in [
        (
            Evolution {
                drop_attributes: vec!["nope".into()],
                ..Default::default()
            },
            "no attribute `nope` to drop",
        ),
        (
            Evolution {
                add_attributes: evolution.add_attributes.clone(),
                ..Default::default()
            },
            "already a field of the schema",
        ),
    ] {
        let err = evolve_array(&dir, &e, None, None).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
    // As libtiledb: a timestamp before the current schema's names an
    // older schema, which arrays opened at the present do not use.
    let before = tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
    evolve_array(&dir, &Evolution::default(), None, Some(1)).unwrap();
    let after = tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
    assert_eq!(after.schema.name, before.schema.name);
    let names = std::fs::read_dir(dir.join("__schema")).unwrap();
    assert!(names
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("__1_1_")));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Extending an enumeration writes a new enumeration file (old values,
/// then new) that the new schema names; the cells keep their keys and
/// values. Values already held, unknown enumerations and more values than
/// an attribute's keys reach are refused.
#[test]
fn extended_enumerations_append_their_values() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/enumerations/array");
    let dir = std::env::temp_dir().join(format!("tessera-extend-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&source, &dir);
    let open =
        || Arc::new(tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap());
    let read = |a: &Arc<tessera_fragment::OpenArray>| {
        let r = ReadSession::new(Arc::new(LocalFs), a.clone())
            .execute(&ReadRequest::new().enumeration_values(true))
            .unwrap();
        r.columns
            .iter()
            .map(|c| (c.data.clone(), c.offsets.clone()))
            .collect::<Vec<_>>()
    };
    let before = open();
    let cells = read(&before);
    let extend = |name: &str, values: &[&[u8]]| Evolution {
        extend_enumerations: vec![(name.into(), values.iter().map(|v| v.to_vec()).collect())],
        ..Default::default()
    };
    let s = evolve_array(&dir, &extend("colors", &[b"purple"]), None, None).unwrap();
    let after = open();
    assert_eq!(after.schema.name, s.name);
    let enums = tessera_schema::load_enumerations(&LocalFs, &dir, &after.schema, None).unwrap();
    let colors = enums.iter().find(|e| e.name == "colors").unwrap();
    assert_eq!(colors.values, [&b"red"[..], b"green", b"blue", b"purple"]);
    assert_eq!(read(&after), cells);
    let sizes: Vec<Vec<u8>> = (0..126i32)
        .map(|i| (100 + i).to_le_bytes().to_vec())
        .collect();
    let too_many = Evolution {
        extend_enumerations: vec![("sizes".into(), sizes)],
        ..Default::default()
    };
    for (e, want) in [
        (
            extend("colors", &[b"red"]),
            "enumeration `colors` already holds red",
        ),
        (extend("nope", &[b"x"]), "no enumeration `nope` to extend"),
        (
            too_many,
            "would hold 129 values; attribute `s` (INT8) has keys for 128",
        ),
    ] {
        let err = evolve_array(&dir, &e, None, None).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An enumerated attribute is added with its enumeration: the enumeration
/// file is written, older cells read the added attribute's fill value, and
/// an attribute naming an enumeration the schema lacks is refused.
#[test]
fn an_added_enumerated_attribute_brings_its_enumeration() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/enumerations/array");
    let dir = std::env::temp_dir().join(format!("tessera-add-enum-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&source, &dir);
    let version = tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None)
        .unwrap()
        .schema
        .version;
    let e = serde_json::json!({"name": "grades", "type": "STRING_UTF8", "values": ["a", "b"], "ordered": true});
    let enumeration = tessera_schema::json::enumeration_from_json(&e, "enumeration").unwrap();
    let a = serde_json::json!({"name": "grade", "type": "INT32", "nullable": true, "enumeration": "grades"});
    let attribute =
        attribute_from_json(&a, "attribute", std::slice::from_ref(&enumeration), version).unwrap();
    let evolution = Evolution {
        add_enumerations: vec![enumeration],
        add_attributes: vec![attribute.clone()],
        ..Default::default()
    };
    evolve_array(&dir, &evolution, None, None).unwrap();
    let after = tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
    let enums = tessera_schema::load_enumerations(&LocalFs, &dir, &after.schema, None).unwrap();
    let grades = enums.iter().find(|e| e.name == "grades").unwrap();
    assert_eq!(grades.values, [&b"a"[..], b"b"]);
    assert!(grades.ordered);
    let r = ReadSession::new(Arc::new(LocalFs), Arc::new(after))
        .execute(&ReadRequest::new().attributes(["grade"]))
        .unwrap();
    let grade = r.columns.iter().find(|c| c.name == "grade").unwrap();
    let validity = grade
        .validity
        .as_ref()
        .expect("a nullable attribute's validity");
    assert!(r.cell_count > 0 && validity.iter().all(|v| *v == 0));
    let orphan = Evolution {
        add_attributes: vec![tessera_schema::Attribute {
            name: "other".into(),
            enumeration: Some("missing".into()),
            ..attribute
        }],
        ..Default::default()
    };
    let err = evolve_array(&dir, &orphan, None, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("names enumeration `missing`"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An array made without enumerations gets its first one (and the folder
/// for it); an enumeration an attribute uses cannot be dropped, and can
/// once the attribute is.
#[test]
fn enumerations_are_added_to_arrays_without_any_and_dropped() {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/sparse_2d/array");
    let dir = std::env::temp_dir().join(format!("tessera-first-enum-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&source, &dir);
    assert!(!dir.join("__schema/__enumerations").exists());
    let open = || tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
    let e =
        serde_json::json!({"name": "e", "type": "INT32", "values": [0, 1, 2], "ordered": false});
    let enumeration = tessera_schema::json::enumeration_from_json(&e, "enumeration").unwrap();
    let a = serde_json::json!({"name": "k", "type": "INT8", "enumeration": "e"});
    let attribute = attribute_from_json(
        &a,
        "attribute",
        std::slice::from_ref(&enumeration),
        open().schema.version,
    )
    .unwrap();
    let add = Evolution {
        add_enumerations: vec![enumeration],
        add_attributes: vec![attribute],
        ..Default::default()
    };
    evolve_array(&dir, &add, None, None).unwrap();
    let enums = tessera_schema::load_enumerations(&LocalFs, &dir, &open().schema, None).unwrap();
    assert_eq!(enums.len(), 1);
    let drop_enum = Evolution {
        drop_enumerations: vec!["e".into()],
        ..Default::default()
    };
    let err = evolve_array(&dir, &drop_enum, None, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("Unable to drop enumeration `e`"), "{err}");
    let both = Evolution {
        drop_attributes: vec!["k".into()],
        ..drop_enum
    };
    evolve_array(&dir, &both, None, None).unwrap();
    assert!(open().schema.enumerations.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A current domain expanded lets writes reach the new cells (refused
/// before), and is refused where it would shrink or leave the domain.
#[test]
fn an_expanded_current_domain_admits_new_cells() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/current_domain/array");
    let dir = std::env::temp_dir().join(format!("tessera-expand-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&source, &dir);
    let write_at = |d: i64| {
        let col = |name: &str, t, data: Vec<u8>| tessera_query::Column {
            name: name.into(),
            is_dimension: name == "d",
            datatype: t,
            cell_val_num: tessera_schema::CellValNum::Fixed(1),
            data,
            offsets: None,
            validity: None,
        };
        let mut w = tessera_write::FragmentWriter::try_new(&dir, Default::default())?;
        w.write(&[
            col("d", tessera_tile::Datatype::Int64, d.to_le_bytes().to_vec()),
            col(
                "a",
                tessera_tile::Datatype::Int32,
                7i32.to_le_bytes().to_vec(),
            ),
        ])?;
        w.finish()
    };
    let err = write_at(60).unwrap_err().to_string();
    assert!(
        err.contains("d = 60 is outside the current domain [0, 49]"),
        "{err}"
    );
    let range = |lo: i64, hi: i64| {
        let r = tessera_schema::Range1D {
            lo: lo.to_le_bytes().to_vec(),
            hi: hi.to_le_bytes().to_vec(),
        };
        Evolution {
            expand_current_domain: Some(vec![r]),
            ..Default::default()
        }
    };
    for (e, want) in [
        (
            range(10, 99),
            "[10, 99] on `d` does not hold the current [0, 49]",
        ),
        (
            range(0, 1000),
            "[0, 1000] on `d` leaves the domain [0, 999]",
        ),
    ] {
        let err = evolve_array(&dir, &e, None, None).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
    evolve_array(&dir, &range(0, 99), None, None).unwrap();
    write_at(60).unwrap();
    let array =
        Arc::new(tessera_fragment::OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap());
    let r = ReadSession::new(Arc::new(LocalFs), array.clone())
        .execute(&ReadRequest::new())
        .unwrap();
    let d = &r.columns[0];
    assert!(
        d.data.chunks(8).any(|c| c == 60i64.to_le_bytes()),
        "cell 60 reads back"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
