//! The bytes of small written fragments, snapshotted, so that any change
//! to what the writer writes shows in review: every file of a fragment of
//! five cells (two tiles; an INT64 and a FLOAT32 dimension, a nullable
//! INT32 attribute under ZSTD, a var-sized STRING_UTF8 attribute), in hex,
//! with the schema's file name (a random uuid) masked in the footer; and
//! a dense fragment of six cells in four space tiles.

use std::fmt::Write;
use tessera_cells::Column;
use tessera_schema::json::schema_from_json;
use tessera_schema::CellValNum;
use tessera_tile::Datatype;
use tessera_write::{create_array, FragmentWriter, WriteOptions};

fn column(
    name: &str,
    t: Datatype,
    cvn: CellValNum,
    data: Vec<u8>,
    offsets: Option<Vec<u64>>,
    validity: Option<Vec<u8>>,
) -> Column {
    Column {
        name: name.into(),
        is_dimension: name.len() == 1,
        datatype: t,
        cell_val_num: cvn,
        data,
        offsets,
        validity,
    }
}

/// A var-sized STRING_UTF8 column of `values`.
fn strings(name: &str, values: &[&str]) -> Column {
    let mut offsets = vec![0u64];
    for v in values {
        offsets.push(offsets.last().unwrap() + v.len() as u64);
    }
    let data = values.concat().into_bytes();
    column(
        name,
        Datatype::StringUtf8,
        CellValNum::Var,
        data,
        Some(offsets),
        None,
    )
}

fn hex_lines(b: &[u8]) -> String {
    b.chunks(32)
        .map(tessera_tile::hex::encode)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every file of fragment `name` of the array at `dir`, in hex, the
/// schema's name `schema` masked.
fn fragment_hex(dir: &std::path::Path, name: &str, schema: &str) -> String {
    let frag = dir.join("__fragments").join(name);
    let mut files: Vec<_> = std::fs::read_dir(&frag)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let mut out = String::new();
    for f in files {
        let mut b = std::fs::read(&f).unwrap();
        // The schema's name is random: mask it where the footer holds it.
        if let Some(at) = b.windows(schema.len()).position(|w| w == schema.as_bytes()) {
            b[at..at + schema.len()].fill(b'X');
        }
        let _ = writeln!(
            out,
            "== {} ({} bytes)\n{}",
            f.file_name().unwrap().to_string_lossy(),
            b.len(),
            hex_lines(&b)
        );
    }
    assert!(dir.join("__commits").join(format!("{name}.wrt")).is_file());
    out
}

#[test]
fn a_small_fragment_byte_for_byte() {
    let dir = std::env::temp_dir().join(format!("tessera-snapshot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let doc = schema_from_json(&serde_json::json!({
        "array_type": "sparse",
        "capacity": 3,
        "dimensions": [
            {"name": "x", "type": "INT64", "domain": [0, 99], "tile_extent": 10},
            {"name": "y", "type": "FLOAT32", "domain": [-1.0, 1.0], "tile_extent": 0.5},
        ],
        "attributes": [
            {"name": "count", "type": "INT32", "nullable": true, "filters": [{"name": "zstd", "level": 3}]},
            {"name": "label", "type": "STRING_UTF8", "cell_val_num": "var"},
        ],
    }))
    .unwrap();
    let schema = create_array(&dir, &doc, None, Some(1)).unwrap();
    let mut w = FragmentWriter::try_new(
        &dir,
        WriteOptions {
            timestamp: Some(2),
            ..Default::default()
        },
    )
    .unwrap();
    let bytes = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let labels = ["e", "", "cc", "dddd", "b"];
    w.write(&[
        column(
            "x",
            Datatype::Int64,
            CellValNum::Fixed(1),
            bytes(&[42, 7, 7, 99, 0]),
            None,
            None,
        ),
        column(
            "y",
            Datatype::Float32,
            CellValNum::Fixed(1),
            [0.5f32, -1.0, 0.25, 1.0, 0.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            None,
            None,
        ),
        column(
            "count",
            Datatype::Int32,
            CellValNum::Fixed(1),
            [1i32, 2, 3, 4, 5]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            None,
            Some(vec![1, 0, 1, 1, 1]),
        ),
        strings("label", &labels),
    ])
    .unwrap();
    let name = w.finish().unwrap().remove(0);
    let out = fragment_hex(&dir, &name, &schema.name);
    std::fs::remove_dir_all(&dir).unwrap();
    insta::assert_snapshot!(out);
}

/// A dense fragment: a box of six cells (x 1..=2, y 0..=2) meeting four
/// 2x2 space tiles, written in no particular order; the tiles hold zeros
/// around the box, and no coordinate files are written.
#[test]
fn a_small_dense_fragment_byte_for_byte() {
    let dir = std::env::temp_dir().join(format!("tessera-snapshot-dense-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let doc = schema_from_json(&serde_json::json!({
        "array_type": "dense",
        "dimensions": [
            {"name": "x", "type": "INT32", "domain": [0, 3], "tile_extent": 2},
            {"name": "y", "type": "INT32", "domain": [0, 3], "tile_extent": 2},
        ],
        "attributes": [
            {"name": "count", "type": "INT32", "nullable": true, "filters": [{"name": "zstd", "level": 3}]},
            {"name": "label", "type": "STRING_UTF8", "cell_val_num": "var"},
        ],
    }))
    .unwrap();
    let schema = create_array(&dir, &doc, None, Some(1)).unwrap();
    let options = WriteOptions {
        timestamp: Some(2),
        ..Default::default()
    };
    let mut w = FragmentWriter::try_new(&dir, options).unwrap();
    let ints = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let fixed = |name: &str, v: &[i32], validity: Option<Vec<u8>>| {
        column(
            name,
            Datatype::Int32,
            CellValNum::Fixed(1),
            ints(v),
            None,
            validity,
        )
    };
    let labels = ["a", "bb", "", "ccc", "d", "ee"];
    w.write(&[
        fixed("x", &[2, 1, 1, 2, 1, 2], None),
        fixed("y", &[0, 2, 0, 2, 1, 1], None),
        fixed(
            "count",
            &[10, 20, 30, 40, 50, 60],
            Some(vec![1, 1, 0, 1, 1, 1]),
        ),
        strings("label", &labels),
    ])
    .unwrap();
    let name = w.finish().unwrap().remove(0);
    let out = fragment_hex(&dir, &name, &schema.name);
    std::fs::remove_dir_all(&dir).unwrap();
    insta::assert_snapshot!(out);
}
