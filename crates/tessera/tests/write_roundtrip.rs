//! A property: random sparse schemas and random cells, written by tessera
//! in any order, read back by tessera equal to what was written (as a set
//! of cells; every version of a cell where duplicates are allowed); and
//! random dense schemas with a random box of cells written in a random
//! order, read back over the box equal to what was written. A
//! sample of such arrays is read by TileDB-Py in `cargo xtask
//! check-writes`; this test needs no Python.

use proptest::prelude::*;
use serde_json::json;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{Column, ReadRequest, ReadSession, Value};
use tessera_schema::json::schema_from_json;
use tessera_schema::CellValNum;
use tessera_storage::LocalFs;
use tessera_tile::Datatype;
use tessera_write::{create_array, FragmentWriter, WriteOptions};

/// A dimension: its JSON and how to draw a coordinate.
#[derive(Debug, Clone, Copy)]
enum Dim {
    Int8,
    Int64,
    UInt16,
    Float64,
    Text,
}

impl Dim {
    fn json(self, j: usize, extent: bool) -> serde_json::Value {
        let name = format!("d{j}");
        let mut d = match self {
            Dim::Int8 => {
                json!({"name": name, "type": "INT8", "domain": [-100, 100], "tile_extent": 7})
            }
            Dim::Int64 => {
                json!({"name": name, "type": "INT64", "domain": [-1000, 1000000], "tile_extent": 1000})
            }
            Dim::UInt16 => {
                json!({"name": name, "type": "UINT16", "domain": [0, 500], "tile_extent": 16})
            }
            Dim::Float64 => {
                json!({"name": name, "type": "FLOAT64", "domain": [-10.0, 10.0], "tile_extent": 2.5})
            }
            Dim::Text => json!({"name": name, "type": "STRING_ASCII"}),
        };
        if !extent {
            d.as_object_mut().unwrap().remove("tile_extent");
        }
        d
    }

    fn value(self, seed: u64) -> Vec<u8> {
        match self {
            Dim::Int8 => vec![((seed % 201) as i64 - 100) as i8 as u8],
            Dim::Int64 => ((seed % 1_001_001) as i64 - 1000).to_le_bytes().to_vec(),
            Dim::UInt16 => ((seed % 501) as u16).to_le_bytes().to_vec(),
            Dim::Float64 => (((seed % 2001) as f64 - 1000.0) / 100.0)
                .to_le_bytes()
                .to_vec(),
            Dim::Text => format!("k{}", seed % 37).into_bytes(),
        }
    }

    fn datatype(self) -> Datatype {
        match self {
            Dim::Int8 => Datatype::Int8,
            Dim::Int64 => Datatype::Int64,
            Dim::UInt16 => Datatype::UInt16,
            Dim::Float64 => Datatype::Float64,
            Dim::Text => Datatype::StringAscii,
        }
    }
}

fn dim() -> impl Strategy<Value = Dim> {
    prop_oneof![
        Just(Dim::Int8),
        Just(Dim::Int64),
        Just(Dim::UInt16),
        Just(Dim::Float64),
        Just(Dim::Text)
    ]
}

/// A column of `values` (None: null) of a field.
fn column(
    name: &str,
    dim: bool,
    t: Datatype,
    cvn: CellValNum,
    values: &[Option<Vec<u8>>],
    nullable: bool,
) -> Column {
    let mut data = Vec::new();
    let mut offsets = cvn.is_var().then(|| vec![0u64]);
    let fill = tessera_schema::default_fill_value(t, cvn);
    for v in values {
        match (v, cvn) {
            (Some(b), _) => data.extend_from_slice(b),
            (None, CellValNum::Fixed(_)) => data.extend_from_slice(&fill),
            (None, CellValNum::Var) => {}
        }
        if let Some(o) = &mut offsets {
            o.push(data.len() as u64);
        }
    }
    Column {
        name: name.into(),
        is_dimension: dim,
        datatype: t,
        cell_val_num: cvn,
        data,
        offsets,
        validity: nullable.then(|| values.iter().map(|v| v.is_some() as u8).collect()),
    }
}

/// Every cell of a result as a sorted list of rows of field bytes.
fn rows(columns: &[Column], n: usize) -> Vec<Vec<Option<Vec<u8>>>> {
    let mut out: Vec<Vec<Option<Vec<u8>>>> = (0..n)
        .map(|i| {
            let mut names: Vec<&Column> = columns.iter().collect();
            names.sort_by(|a, b| a.name.cmp(&b.name));
            names
                .iter()
                .map(|c| {
                    c.validity
                        .as_ref()
                        .is_none_or(|v| v[i] != 0)
                        .then(|| c.value(i).to_vec())
                })
                .collect()
        })
        .collect();
    out.sort();
    out
}

/// The attributes both properties write: a nullable INT32, a nullable
/// var-sized UTF-8 string (ZSTD), two UINT8 values (BYTESHUFFLE, LZ4).
fn attributes() -> serde_json::Value {
    json!([
        {"name": "a", "type": "INT32", "nullable": true},
        {"name": "s", "type": "STRING_UTF8", "cell_val_num": "var", "nullable": true,
         "filters": [{"name": "zstd", "level": 1}]},
        {"name": "p", "type": "UINT8", "cell_val_num": 2,
         "filters": [{"name": "byteshuffle"}, {"name": "lz4"}]},
    ])
}

/// Columns of [`attributes`] for cells drawn as `(x, y)`: `a` is `x`
/// (null when `x % 5 == 0`), `s` names `x` (null when `y % 3 == 0`), `p`
/// is `y` and thrice `y`.
fn attribute_columns(draws: &[(i32, u8)]) -> Vec<Column> {
    let a: Vec<Option<Vec<u8>>> = draws
        .iter()
        .map(|&(x, _)| (x % 5 != 0).then(|| x.to_le_bytes().to_vec()))
        .collect();
    let s: Vec<Option<Vec<u8>>> = draws
        .iter()
        .map(|&(x, y)| (y % 3 != 0).then(|| format!("v{}", x % 1000).into_bytes()))
        .collect();
    let p: Vec<Option<Vec<u8>>> = draws
        .iter()
        .map(|&(_, y)| Some(vec![y, y.wrapping_mul(3)]))
        .collect();
    vec![
        column("a", false, Datatype::Int32, CellValNum::Fixed(1), &a, true),
        column("s", false, Datatype::StringUtf8, CellValNum::Var, &s, true),
        column("p", false, Datatype::UInt8, CellValNum::Fixed(2), &p, false),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn written_cells_read_back(
        dims in prop::collection::vec((dim(), any::<bool>()), 1..4),
        cell_order in prop_oneof![Just("row-major"), Just("col-major"), Just("hilbert")],
        tile_order in prop_oneof![Just("row-major"), Just("col-major")],
        capacity in 1u64..20,
        allows_duplicates in any::<bool>(),
        seeds in prop::collection::vec((any::<u64>(), any::<u64>(), any::<i32>(), any::<u8>()), 0..80),
    ) {
        let doc = schema_from_json(&json!({
            "array_type": "sparse",
            "cell_order": cell_order,
            "tile_order": tile_order,
            "capacity": capacity,
            "allows_duplicates": allows_duplicates,
            "dimensions": dims.iter().enumerate().map(|(j, (d, e))| d.json(j, *e)).collect::<Vec<_>>(),
            "attributes": attributes(),
        })).unwrap();
        let dir = std::env::temp_dir().join(format!("tessera-prop-{}-{}", std::process::id(), rand_suffix(&seeds)));
        let _ = std::fs::remove_dir_all(&dir);
        create_array(&dir, &doc, None, Some(1)).unwrap();
        // Coordinates, deduplicated unless duplicates are allowed.
        let mut seen = std::collections::HashSet::new();
        let cells: Vec<_> = seeds
            .iter()
            .map(|&(s1, s2, a, p)| {
                let coords: Vec<Vec<u8>> = dims.iter().enumerate().map(|(j, (d, _))| d.value(s1.rotate_left(13 * j as u32) ^ s2)).collect();
                (coords, a, p)
            })
            .filter(|(c, _, _)| allows_duplicates || seen.insert(c.clone()))
            .collect();
        let n = cells.len();
        let mut columns: Vec<Column> = dims
            .iter()
            .enumerate()
            .map(|(j, (d, _))| {
                let cvn = if matches!(d, Dim::Text) { CellValNum::Var } else { CellValNum::Fixed(1) };
                let vals: Vec<Option<Vec<u8>>> = cells.iter().map(|c| Some(c.0[j].clone())).collect();
                column(&format!("d{j}"), true, d.datatype(), cvn, &vals, false)
            })
            .collect();
        columns.extend(attribute_columns(&cells.iter().map(|c| (c.1, c.2)).collect::<Vec<_>>()));
        let mut w = FragmentWriter::try_new(&dir, WriteOptions { timestamp: Some(1), ..Default::default() }).unwrap();
        // In two batches, to cover appending.
        let (first, second) = split(&columns, n / 2);
        w.write(&first).unwrap();
        w.write(&second).unwrap();
        let written = w.finish().unwrap();
        prop_assert_eq!(written.len(), usize::from(n > 0));
        let array = Arc::new(OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap());
        let r = ReadSession::new(Arc::new(LocalFs), array.clone()).execute(&ReadRequest::new()).unwrap();
        prop_assert_eq!(r.cell_count as usize, n);
        prop_assert_eq!(rows(&r.columns, n), rows(&columns, n));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A dense dimension: (domain start, domain length, tile extent).
fn dense_dim() -> impl Strategy<Value = (i64, i64, i64)> {
    (0i64..30, 1i64..12, 1i64..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn written_dense_boxes_read_back(
        datatype in prop_oneof![Just("INT8"), Just("INT64"), Just("UINT16")],
        dims in prop::collection::vec((dense_dim(), any::<u64>(), any::<u64>()), 1..4),
        cell_order in prop_oneof![Just("row-major"), Just("col-major")],
        tile_order in prop_oneof![Just("row-major"), Just("col-major")],
        shuffle in any::<u64>(),
    ) {
        // Each dimension's domain [lo, lo + len - 1] (UINT16 from 0 up), and
        // a box inside it.
        let axes: Vec<Axis> = dims
            .iter()
            .map(|&((lo, len, extent), a, b)| {
                let name = datatype;
                let lo = if name == "UINT16" { lo } else { lo - 15 };
                let (a, b) = ((a % len as u64) as i64, (b % len as u64) as i64);
                let datatype = match name {
                    "INT8" => Datatype::Int8,
                    "INT64" => Datatype::Int64,
                    _ => Datatype::UInt16,
                };
                Axis { datatype, name, lo, len, extent: extent.min(len), box_lo: lo + a.min(b), box_hi: lo + a.max(b) }
            })
            .collect();
        let doc = schema_from_json(&json!({
            "array_type": "dense",
            "cell_order": cell_order,
            "tile_order": tile_order,
            "dimensions": axes.iter().enumerate().map(|(j, a)| json!({
                "name": format!("d{j}"), "type": a.name, "domain": [a.lo, a.lo + a.len - 1], "tile_extent": a.extent,
            })).collect::<Vec<_>>(),
            "attributes": attributes(),
        })).unwrap();
        let dir = std::env::temp_dir().join(format!("tessera-prop-dense-{}-{shuffle:x}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        create_array(&dir, &doc, None, Some(1)).unwrap();
        // Every cell of the box, in a shuffled order.
        let boxes: Vec<(i64, i64)> = axes.iter().map(|a| (a.box_lo, a.box_hi)).collect();
        let mut cells: Vec<Vec<i64>> = vec![vec![]];
        for &(lo, hi) in &boxes {
            cells = cells.into_iter().flat_map(|c| (lo..=hi).map(move |v| [c.clone(), vec![v]].concat())).collect();
        }
        let key = |c: &Vec<i64>| c.iter().fold(shuffle, |h, v| (h ^ *v as u64).wrapping_mul(0x100000001b3));
        cells.sort_by_key(key);
        let n = cells.len();
        let mut columns: Vec<Column> = axes
            .iter()
            .enumerate()
            .map(|(j, a)| {
                let dt = a.datatype;
                let vals: Vec<Option<Vec<u8>>> = cells
                    .iter()
                    .map(|c| Some(c[j].to_le_bytes()[..dt.size() as usize].to_vec()))
                    .collect();
                column(&format!("d{j}"), true, dt, CellValNum::Fixed(1), &vals, false)
            })
            .collect();
        let h = |c: &Vec<i64>| key(c) as i32;
        columns.extend(attribute_columns(&cells.iter().map(|c| (h(c), (h(c) >> 8) as u8)).collect::<Vec<_>>()));
        let mut w = FragmentWriter::try_new(&dir, WriteOptions { timestamp: Some(1), ..Default::default() }).unwrap();
        let (first, second) = split(&columns, n / 2);
        w.write(&first).unwrap();
        w.write(&second).unwrap();
        prop_assert_eq!(w.finish().unwrap().len(), 1);
        let array = Arc::new(OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap());
        let q = boxes.iter().enumerate().fold(ReadRequest::new(), |q, (j, &(lo, hi))| {
            q.range(&format!("d{j}"), Value::Int(lo as i128), Value::Int(hi as i128))
        });
        let r = ReadSession::new(Arc::new(LocalFs), array).execute(&q).unwrap();
        prop_assert_eq!(r.cell_count, n);
        prop_assert_eq!(rows(&r.columns, n), rows(&columns, n));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// One dense dimension of a case: type, domain and tile extent, and the
/// box written along it.
struct Axis {
    datatype: Datatype,
    name: &'static str,
    lo: i64,
    len: i64,
    extent: i64,
    box_lo: i64,
    box_hi: i64,
}

/// Columns cut at cell `at`: the cells before, the cells from it.
fn split(columns: &[Column], at: usize) -> (Vec<Column>, Vec<Column>) {
    let n = columns[0].cell_count();
    (
        columns.iter().map(|c| c.slice(0..at)).collect(),
        columns.iter().map(|c| c.slice(at..n)).collect(),
    )
}

fn rand_suffix(seeds: &[(u64, u64, i32, u8)]) -> u64 {
    seeds
        .iter()
        .fold(0x9e37, |h, s| h.rotate_left(5) ^ s.0 ^ s.1)
}

/// A batch refused for one of its columns adds nothing: the writer's
/// fields stay the same length, and what was written before finishes.
#[test]
fn a_refused_batch_adds_nothing() {
    let doc = schema_from_json(&json!({
        "array_type": "sparse",
        "dimensions": [{"name": "d0", "type": "INT64", "domain": [0, 99], "tile_extent": 10}],
        "attributes": [
            {"name": "a", "type": "INT32", "nullable": true},
            {"name": "p", "type": "UINT8", "cell_val_num": 2},
        ],
    }))
    .unwrap();
    let dir = std::env::temp_dir().join(format!("tessera-refused-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    create_array(&dir, &doc, None, Some(1)).unwrap();
    let batch = |coords: &[i64], p: Vec<u8>, valid: Option<Vec<u8>>| {
        let some = |b: Vec<u8>| coords.iter().map(|_| Some(b.clone())).collect::<Vec<_>>();
        let d: Vec<Option<Vec<u8>>> = coords
            .iter()
            .map(|c| Some(c.to_le_bytes().to_vec()))
            .collect();
        vec![
            column("d0", true, Datatype::Int64, CellValNum::Fixed(1), &d, false),
            column(
                "a",
                false,
                Datatype::Int32,
                CellValNum::Fixed(1),
                &some(vec![1, 0, 0, 0]),
                true,
            ),
            Column {
                data: p,
                validity: valid,
                ..column(
                    "p",
                    false,
                    Datatype::UInt8,
                    CellValNum::Fixed(2),
                    &[],
                    false,
                )
            },
        ]
    };
    let mut w = FragmentWriter::try_new(&dir, WriteOptions::default()).unwrap();
    w.write(&batch(&[1, 2], vec![1, 2, 3, 4], None)).unwrap();
    // `p` is checked after `d0` and `a`, which must not be added either.
    let err = w
        .write(&batch(&[3, 4], vec![1, 2, 3, 4], Some(vec![1, 0])))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("field `p`: a null cell in a field that is not nullable"),
        "{err}"
    );
    assert_eq!(w.cells(), 2);
    assert_eq!(w.finish().unwrap().len(), 1);
    let array = Arc::new(OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap());
    let r = ReadSession::new(Arc::new(LocalFs), array.clone())
        .execute(&ReadRequest::new())
        .unwrap();
    assert_eq!(r.cell_count, 2);
    assert_eq!(r.columns[1].validity.as_deref(), Some(&[1u8, 1][..]));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A dense write whose space tiles would hold more cells than memory can
/// (a tile extent of 2^40) is refused before anything that size is made.
#[test]
fn a_dense_write_into_huge_tiles_is_refused() {
    let doc = schema_from_json(&json!({
        "array_type": "dense",
        "dimensions": [{"name": "d0", "type": "INT64", "domain": [0, 1i64 << 40], "tile_extent": 1i64 << 40}],
        "attributes": [{"name": "v", "type": "INT32"}],
    }))
    .unwrap();
    let dir = std::env::temp_dir().join(format!("tessera-huge-tiles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    create_array(&dir, &doc, None, Some(1)).unwrap();
    let mut w = FragmentWriter::try_new(&dir, WriteOptions::default()).unwrap();
    let d = [Some(5i64.to_le_bytes().to_vec())];
    let v = [Some(1i32.to_le_bytes().to_vec())];
    w.write(&[
        column("d0", true, Datatype::Int64, CellValNum::Fixed(1), &d, false),
        column("v", false, Datatype::Int32, CellValNum::Fixed(1), &v, false),
    ])
    .unwrap();
    let err = w.finish().unwrap_err().to_string();
    assert!(err.contains("which tessera does not hold at once"), "{err}");
    assert_eq!(std::fs::read_dir(dir.join("__commits")).unwrap().count(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}
