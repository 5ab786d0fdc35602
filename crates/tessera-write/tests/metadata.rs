//! Array metadata as libtiledb writes it: every metadata file the fixture
//! releases wrote (formats 16 to 22) is decoded and encoded again by
//! tessera, byte for byte the file libtiledb wrote (the entries in key
//! order, the generic tile at the file's version, GZIP level 1); and
//! metadata put and deleted by tessera reads back as set.

#[path = "../../tessera/tests/common/mod.rs"]
mod common;

use common::copy_dir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tessera_filters::{read_generic_tile, write_generic_tile};
use tessera_fragment::array_metadata::{decode_entries, encode_entries};
use tessera_fragment::OpenArray;
use tessera_storage::LocalFs;
use tessera_tile::FormatVersion;
use tessera_write::generic_tile_pipeline;
use tessera_write::metadata::{put_metadata, value_from_text};

/// Every `__meta` file of every unencrypted fixture array.
fn metadata_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut out = Vec::new();
    for release in ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"] {
        for case in std::fs::read_dir(root.join(format!("tiledb-{release}")))
            .unwrap()
            .flatten()
        {
            let dir = case.path().join("array/__meta");
            let Ok(files) = std::fs::read_dir(&dir) else {
                continue;
            };
            out.extend(files.flatten().map(|f| f.path()).filter(|p| p.is_file()));
        }
    }
    out.sort();
    out
}

#[test]
fn metadata_files_are_libtiledbs_bytes() {
    let mut checked = 0;
    for file in metadata_files() {
        let bytes = std::fs::read(&file).unwrap();
        let Ok(tile) = read_generic_tile(&bytes, None, 0) else {
            continue; // encrypted
        };
        let entries = decode_entries(&tile.data).unwrap();
        let map: BTreeMap<_, _> = entries.iter().cloned().collect();
        assert_eq!(map.len(), entries.len(), "{}: a key twice", file.display());
        assert_eq!(encode_entries(&map), tile.data, "{}", file.display());
        let version = FormatVersion::new(u32::from_le_bytes(bytes[..4].try_into().unwrap()));
        let ours = write_generic_tile(&tile.data, &generic_tile_pipeline(), version, None).unwrap();
        assert_eq!(ours, bytes, "{}", file.display());
        checked += 1;
    }
    assert!(checked >= 10, "{checked} files");
}

#[test]
fn put_and_deleted_keys_read_back() {
    let dir = std::env::temp_dir().join(format!("tessera-meta-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/array_metadata/array");
    copy_dir(&source, &dir);
    let t = |s: &str| value_from_text(s, None).unwrap();
    let typed = |s: &str, name: &str| {
        let dt = tessera_tile::Datatype::ALL
            .iter()
            .copied()
            .find(|d| d.name() == name)
            .unwrap();
        value_from_text(s, Some(dt)).unwrap()
    };
    let entries = BTreeMap::from([
        ("int".to_string(), Some(t("42"))),
        ("half".to_string(), Some(t("0.5"))),
        ("mixed".to_string(), Some(t("[1, 2.5]"))),
        ("text".to_string(), Some(t("not json, a string"))),
        ("i16".to_string(), Some(typed("[-3, 4]", "INT16"))),
        ("blob".to_string(), Some(typed("00ff", "BLOB"))),
        ("str".to_string(), None),
    ]);
    let name = put_metadata(&dir, &entries, None, None).unwrap();
    assert!(dir.join("__meta").join(&name).is_file());
    let array = OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
    let meta = array.metadata(&LocalFs).unwrap();
    let json: BTreeMap<&str, serde_json::Value> = meta
        .iter()
        .map(|(k, v)| (k.as_str(), v.to_json()))
        .collect();
    let want: BTreeMap<&str, serde_json::Value> = BTreeMap::from([
        ("float", serde_json::json!(2.5)),
        ("int", serde_json::json!(42)),
        ("ints", serde_json::json!([1, 2, 3])),
        ("half", serde_json::json!(0.5)),
        ("mixed", serde_json::json!([1.0, 2.5])),
        ("text", serde_json::json!("not json, a string")),
        ("i16", serde_json::json!([-3, 4])),
        ("blob", serde_json::json!("00ff")),
    ]);
    assert_eq!(json, want);
    assert_eq!(meta["i16"].datatype, tessera_tile::Datatype::Int16);
    assert_eq!(meta["int"].datatype, tessera_tile::Datatype::Int64);
    // Puts in quick succession apply in order (none share a millisecond).
    for i in 0..20 {
        let v = BTreeMap::from([("k".to_string(), Some(t(&i.to_string())))]);
        put_metadata(&dir, &v, None, None).unwrap();
    }
    let array = OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
    assert_eq!(array.metadata(&LocalFs).unwrap()["k"].to_json(), 19);
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(dir.join("__meta"))
        .unwrap()
        .flatten()
        .collect();
    assert!(left
        .iter()
        .all(|e| !e.file_name().to_string_lossy().ends_with(".tmp")));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Metadata consolidated, then vacuumed: the same metadata at each step,
/// one file and no `.vac` at the end; a single file is left alone.
#[test]
fn metadata_consolidates_and_vacuums() {
    use tessera_write::metadata::{consolidate_metadata, vacuum_metadata};
    let dir = std::env::temp_dir().join(format!("tessera-meta-consolidate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/array_metadata/array");
    copy_dir(&source, &dir);
    let read = || {
        let a = OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
        a.metadata(&LocalFs).unwrap()
    };
    let want = read();
    let name = consolidate_metadata(&dir, None).unwrap().unwrap();
    assert_eq!(read(), want, "consolidated, not vacuumed");
    assert!(dir.join("__meta").join(format!("{name}.vac")).is_file());
    assert_eq!(vacuum_metadata(&dir, None).unwrap(), 3);
    assert_eq!(read(), want, "vacuumed");
    let left: Vec<String> = std::fs::read_dir(dir.join("__meta"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, [name]);
    assert_eq!(consolidate_metadata(&dir, None).unwrap(), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Group metadata: put and deleted keys read back, the file written at
/// the format version of the group's own files (16: TileDB-Py 0.19.1's).
#[test]
fn group_metadata_puts_at_the_groups_version() {
    use tessera_fragment::group::OpenGroup;
    use tessera_write::metadata::put_group_metadata;
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/groups/tiledb-0.19.1/group_nested/group");
    let dir = std::env::temp_dir().join(format!("tessera-group-meta-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&source, &dir);
    let meta = || {
        let g = OpenGroup::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
        g.metadata(&LocalFs).unwrap()
    };
    let before = meta();
    let gone = before.keys().next().unwrap().clone();
    let entries = BTreeMap::from([
        (
            "added".to_string(),
            Some(value_from_text("7", None).unwrap()),
        ),
        (gone.clone(), None),
    ]);
    let name = put_group_metadata(&dir, &entries, None, None).unwrap();
    let bytes = std::fs::read(dir.join("__meta").join(&name)).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[..4].try_into().unwrap()), 16);
    let after = meta();
    assert_eq!(after["added"].to_json(), 7);
    assert!(!after.contains_key(&gone));
    assert_eq!(after.len(), before.len());
    let not_a_group = put_group_metadata(dir.join("ms/nope"), &entries, None, None);
    assert!(not_a_group
        .unwrap_err()
        .to_string()
        .contains("not a TileDB group"));
    std::fs::remove_dir_all(&dir).unwrap();
}
