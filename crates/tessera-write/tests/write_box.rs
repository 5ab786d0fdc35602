//! Dense writes given as a box ([`FragmentWriter::write_box`]): what they
//! refuse, each with the array left as it was. (What they write is
//! compared with libtiledb's bytes in `rewrite.rs`.)

use std::path::PathBuf;
use tessera_cells::Column;
use tessera_schema::json::schema_from_json;
use tessera_schema::CellValNum;
use tessera_tile::Datatype;
use tessera_write::{create_array, FragmentWriter, WriteOptions};

/// A new array of `schema` (its JSON) in a fresh folder named by `tag`.
fn create(tag: &str, schema: &serde_json::Value) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-box-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    create_array(&dir, &schema_from_json(schema).unwrap(), None, None).unwrap();
    dir
}

fn array(tag: &str, current_domain: bool) -> PathBuf {
    let mut schema = serde_json::json!({
        "array_type": "dense",
        "dimensions": [
            {"name": "r", "type": "INT64", "domain": [0, 9], "tile_extent": 4},
            {"name": "c", "type": "INT64", "domain": [0, 9], "tile_extent": 4},
        ],
        "attributes": [{"name": "v", "type": "INT32"}, {"name": "n", "type": "INT32", "nullable": true}],
    });
    if current_domain {
        schema["current_domain"] = serde_json::json!([[0, 4], [0, 9]]);
    }
    create(tag, &schema)
}

/// The coordinates of cells `range` of the walk of rows 1-8, columns 2-9
/// (the box both row-major tests write), row-major, columns moved by
/// `shift`.
fn walk_coordinates(
    range: std::ops::Range<usize>,
    shift: i64,
) -> [(&'static str, arrow_array::ArrayRef); 2] {
    use arrow_array::Int64Array;
    let r: Vec<i64> = range.clone().map(|i| 1 + i as i64 / 8).collect();
    let c: Vec<i64> = range.map(|i| 2 + i as i64 % 8 + shift).collect();
    [
        ("r", std::sync::Arc::new(Int64Array::from(r))),
        ("c", std::sync::Arc::new(Int64Array::from(c))),
    ]
}

fn column(name: &str, values: &[i32]) -> Column {
    Column {
        name: name.into(),
        is_dimension: false,
        datatype: Datatype::Int32,
        cell_val_num: CellValNum::Fixed(1),
        data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        offsets: None,
        validity: None,
    }
}

/// The box both band tests write: rows 1-8, columns 2-9 of `array`'s
/// domain, `v` and the nullable `n`, written whole (`write_box`) first.
struct WholeBox {
    bounds: [(i128, i128); 2],
    v: Vec<i32>,
    n: Vec<Option<i32>>,
}

impl WholeBox {
    fn written(dir: &std::path::Path) -> WholeBox {
        let bounds = [(1, 8), (2, 9)];
        let v: Vec<i32> = (0..64).map(|i| i * 7 - 100).collect();
        let n: Vec<Option<i32>> = (0..64).map(|i| (i % 5 != 0).then_some(i)).collect();
        let mut w = FragmentWriter::try_new(dir, WriteOptions::default()).unwrap();
        let mut nulls = column("n", &n.iter().map(|x| x.unwrap_or(0)).collect::<Vec<_>>());
        nulls.validity = Some(n.iter().map(|x| x.is_some() as u8).collect());
        w.write_box(&bounds, vec![column("v", &v), nulls]).unwrap();
        w.finish().unwrap();
        WholeBox { bounds, v, n }
    }
}

/// The folder of the first fragment of `dir`.
fn first_fragment(dir: &std::path::Path) -> PathBuf {
    let f = std::fs::read_dir(dir.join("__fragments")).unwrap();
    f.map(|e| e.unwrap().path()).next().unwrap()
}

/// The attributes' data files of two fragments of the box: equal bytes.
fn same_data_files(a: &std::path::Path, b: &std::path::Path) {
    for file in ["a0.tdb", "a1.tdb", "a1_validity.tdb"] {
        let read = |f: &std::path::Path| std::fs::read(f.join(file)).unwrap();
        assert_eq!(read(a), read(b), "{file}");
    }
}

fn fragments(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("__fragments")).map_or(0, |d| d.count())
}

#[test]
fn refused_boxes_name_what_is_wrong_and_write_nothing() {
    let dir = array("refused", false);
    let refused = |bounds: &[(i128, i128)], cols: Vec<Column>| -> String {
        let mut w = FragmentWriter::try_new(&dir, WriteOptions::default()).unwrap();
        let e = w.write_box(bounds, cols).unwrap_err().to_string();
        assert!(w.finish().unwrap().is_empty(), "{e}");
        e
    };
    let e = refused(&[(0, 1), (0, 1)], vec![column("v", &[1, 2, 3])]);
    assert!(e.contains("does not hold the 3 cells"), "{e}");
    let e = refused(&[(8, 10), (0, 0)], vec![column("v", &[1, 2, 3])]);
    assert!(
        e.contains("dimension `r`") && e.contains("not inside the domain [0, 9]"),
        "{e}"
    );
    let e = refused(
        &[(0, 0), (0, 0)],
        vec![column("r", &[1]), column("v", &[1])],
    );
    assert!(
        e.contains("column `r`") && e.contains("dimensions take no column"),
        "{e}"
    );
    let e = refused(&[(0, 0), (0, 0)], vec![column("n", &[1])]);
    assert!(e.contains("field `v` is missing"), "{e}");
    let e = refused(&[(0, 0)], vec![column("v", &[1])]);
    assert!(e.contains("a box of 1 dimensions for an array of 2"), "{e}");
    // After a box, nothing else joins the fragment.
    let mut w = FragmentWriter::try_new(&dir, WriteOptions::default()).unwrap();
    w.write_box(&[(0, 0), (0, 1)], vec![column("v", &[1, 2])])
        .unwrap();
    let e = w
        .write_box(&[(1, 1), (0, 0)], vec![column("v", &[3])])
        .unwrap_err();
    assert!(e.to_string().contains("only write"), "{e}");
    assert_eq!(fragments(&dir), 0);
    assert_eq!(w.finish().unwrap().len(), 1);
    assert_eq!(fragments(&dir), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_box_stays_in_the_current_domain() {
    let dir = array("current", true);
    let mut w = FragmentWriter::try_new(&dir, WriteOptions::default()).unwrap();
    let e = w
        .write_box(&[(3, 5), (0, 0)], vec![column("v", &[1, 2, 3])])
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside the current domain [0, 4]"), "{e}");
    w.write_box(&[(2, 4), (0, 0)], vec![column("v", &[1, 2, 3])])
        .unwrap();
    assert_eq!(w.finish().unwrap().len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A box written band by band from Arrow batches (numbers read where they
/// lie, a nullable attribute converted) makes the files the same box
/// written whole makes, byte for byte; a batch that does not fit its
/// band is refused by name.
#[test]
fn box_bands_from_arrow_batches_write_the_whole_box_bytes() {
    use arrow_array::{ArrayRef, Int32Array, RecordBatch};
    use std::sync::Arc;
    use tessera_write::BoxWriter;
    let (whole, banded) = (array("whole", false), array("banded", false));
    let WholeBox { bounds, v, n } = WholeBox::written(&whole);
    // 9 bytes a cell: bands of one row of tiles (rows 1-3, 4-7, 8).
    let options = WriteOptions {
        budget: Some(3 * 9 * 32),
        ..WriteOptions::default()
    };
    let mut b = BoxWriter::try_new(&banded, options, &bounds).unwrap();
    assert_eq!(b.bands().len(), 3, "{:?}", b.bands());
    let batch = RecordBatch::try_from_iter([
        ("v", Arc::new(Int32Array::from(v.clone())) as ArrayRef),
        ("n", Arc::new(Int32Array::from(n.clone())) as ArrayRef),
    ])
    .unwrap();
    let rows = b.band_rows(0).unwrap();
    let e = b
        .write_band_batch(&batch.slice(rows.start, rows.len() + 1))
        .unwrap_err();
    assert!(
        e.to_string().contains("holds 24 cells, the batch 25"),
        "{e}"
    );
    for i in 0..b.bands().len() {
        let rows = b.band_rows(i).unwrap();
        b.write_band_batch(&batch.slice(rows.start, rows.len()))
            .unwrap();
    }
    b.finish().unwrap();
    let (fw, fb) = (first_fragment(&whole), first_fragment(&banded));
    same_data_files(&fw, &fb);
    let meta = |f: &std::path::Path| {
        std::fs::read(f.join("__fragment_metadata.tdb"))
            .unwrap()
            .len()
    };
    assert_eq!(meta(&fw), meta(&fb));
    for dir in [whole, banded] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// Cells with their coordinates, row-major over a box, in batches that
/// cut the bands anywhere: the same files the box written whole makes; a
/// cell out of turn stops the walk (nothing taken), cells that end early
/// are refused naming the first missing one, and neither leaves anything.
#[test]
fn row_major_cells_write_the_whole_box_bytes() {
    use arrow_array::{ArrayRef, Int32Array, RecordBatch};
    use std::sync::Arc;
    use tessera_write::{RowMajorWriter, Walk};
    let (whole, streamed) = (array("rm-whole", false), array("rm-streamed", false));
    let WholeBox { bounds, v, n } = WholeBox::written(&whole);
    let cells = |range: std::ops::Range<usize>, shift: i64| {
        let values: [(&str, ArrayRef); 2] = [
            ("v", Arc::new(Int32Array::from(v[range.clone()].to_vec()))),
            ("n", Arc::new(Int32Array::from(n[range.clone()].to_vec()))),
        ];
        RecordBatch::try_from_iter(walk_coordinates(range, shift).into_iter().chain(values))
            .unwrap()
    };
    // Bands of one row of tiles (rows 1-3, 4-7, 8); batches of 5 cells.
    let options = WriteOptions {
        budget: Some(3 * 9 * 32),
        ..WriteOptions::default()
    };
    let mut s = RowMajorWriter::try_new(&streamed, options, &bounds).unwrap();
    assert_eq!(s.write(&cells(0..10, 0)).unwrap(), Walk::Continued);
    assert_eq!(s.write(&cells(10..15, 1)).unwrap(), Walk::Strayed(10));
    assert_eq!(s.write(&cells(10..15, 0)).unwrap(), Walk::Continued);
    for start in (15..64).step_by(5) {
        assert_eq!(
            s.write(&cells(start..(start + 5).min(64), 0)).unwrap(),
            Walk::Continued
        );
    }
    assert_eq!(s.write(&cells(60..64, 0)).unwrap(), Walk::Strayed(64));
    s.finish().unwrap();
    same_data_files(&first_fragment(&whole), &first_fragment(&streamed));
    // Cells that end early: refused, nothing left behind.
    let mut s = RowMajorWriter::try_new(&streamed, options, &bounds).unwrap();
    assert_eq!(s.write(&cells(0..30, 0)).unwrap(), Walk::Continued);
    let e = s.finish().unwrap_err().to_string();
    assert!(e.contains("no cell at r = 4, c = 8"), "{e}");
    assert_eq!(fragments(&streamed), 1);
    for dir in [whole, streamed] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// Attributes that are all plain numbers, in batches smaller than a band:
/// each band's tiles read the batches where they lie (no copy of the band
/// first), padding included, and make the same files as the box written
/// whole, byte for byte.
#[test]
fn bands_read_across_batches_write_the_whole_box_bytes() {
    use arrow_array::{ArrayRef, Float64Array, Int32Array, RecordBatch};
    use std::sync::Arc;
    use tessera_write::{RowMajorWriter, Walk};
    let schema = serde_json::json!({
        "array_type": "dense",
        "dimensions": [
            {"name": "r", "type": "INT64", "domain": [0, 9], "tile_extent": 4},
            {"name": "c", "type": "INT64", "domain": [0, 9], "tile_extent": 4},
        ],
        "attributes": [{"name": "v", "type": "INT32"}, {"name": "f", "type": "FLOAT64"}],
    });
    let (whole, streamed) = (
        create("pieces-whole", &schema),
        create("pieces-streamed", &schema),
    );
    let bounds = [(1, 8), (2, 9)];
    let v: Vec<i32> = (0..64).map(|i| i * 7 - 100).collect();
    let f: Vec<f64> = (0..64).map(|i| i as f64 / 3.0).collect();
    let mut fcol = column("f", &[]);
    (fcol.datatype, fcol.data) = (
        Datatype::Float64,
        f.iter().flat_map(|x| x.to_le_bytes()).collect(),
    );
    let mut w = FragmentWriter::try_new(&whole, WriteOptions::default()).unwrap();
    w.write_box(&bounds, vec![column("v", &v), fcol]).unwrap();
    w.finish().unwrap();
    // Bands of one row of tiles (rows 1-3, 4-7, 8: 24, 32 and 8 cells),
    // batches of 5 cells: every band but the last spans several.
    let options = WriteOptions {
        budget: Some(3 * 12 * 32),
        ..WriteOptions::default()
    };
    let mut s = RowMajorWriter::try_new(&streamed, options, &bounds).unwrap();
    for start in (0..64).step_by(5) {
        let range = start..(start + 5).min(64);
        let values: [(&str, ArrayRef); 2] = [
            ("v", Arc::new(Int32Array::from(v[range.clone()].to_vec()))),
            ("f", Arc::new(Float64Array::from(f[range.clone()].to_vec()))),
        ];
        let batch =
            RecordBatch::try_from_iter(walk_coordinates(range, 0).into_iter().chain(values))
                .unwrap();
        assert_eq!(s.write(&batch).unwrap(), Walk::Continued);
    }
    s.finish().unwrap();
    let (a, b) = (first_fragment(&whole), first_fragment(&streamed));
    for file in ["a0.tdb", "a1.tdb"] {
        let read = |d: &std::path::Path| std::fs::read(d.join(file)).unwrap();
        assert_eq!(read(&a), read(&b), "{file}");
    }
    for dir in [whole, streamed] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}
