//! Cells written twice at one coordinate into a sparse array that does not
//! allow duplicates: refused by default, or kept, or one kept (the first
//! given), as libtiledb's `sm.check_coord_dups` and `sm.dedup_coords`
//! have them; read back here (TileDB-Py reads them back in the Python
//! tests).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_cells::Column;
use tessera_query::{ReadRequest, ReadSession};
use tessera_schema::json::schema_from_json;
use tessera_storage::{LocalFs, Location};
use tessera_tile::Datatype;
use tessera_write::{create_array, Duplicates, FragmentWriter, WriteOptions};

fn array(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-dups-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let schema = serde_json::json!({
        "array_type": "sparse",
        "dimensions": [{"name": "x", "type": "INT32", "domain": [1, 100], "tile_extent": 10}],
        "attributes": [{"name": "v", "type": "INT32"}],
        "capacity": 2,
    });
    create_array(&dir, &schema_from_json(&schema).unwrap(), None, None).unwrap();
    dir
}

fn int32(name: &str, values: &[i32], dimension: bool) -> Column {
    let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    match dimension {
        true => Column::fixed_dimension(name, Datatype::Int32, data),
        false => Column::fixed(name, Datatype::Int32, data),
    }
}

/// Writes x = 3, 1, 3, 3 (v = 10, 20, 30, 40) with `duplicates`.
fn write(dir: &Path, duplicates: Duplicates) -> Result<Vec<String>, tessera_write::WriteError> {
    let options = WriteOptions {
        duplicates,
        ..WriteOptions::default()
    };
    let mut w = FragmentWriter::try_new(Location::local(dir), options)?;
    w.write(&[
        int32("x", &[3, 1, 3, 3], true),
        int32("v", &[10, 20, 30, 40], false),
    ])?;
    w.finish()
}

/// The cells read back, (x, v), sorted.
fn cells(dir: &Path) -> Vec<(i32, i32)> {
    let session = ReadSession::open(Arc::new(LocalFs), dir, None).unwrap();
    let r = session.execute(&ReadRequest::new()).unwrap();
    let ints = |name: &str| -> Vec<i32> {
        let c = r.column(name).unwrap();
        c.data
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .collect()
    };
    let mut out: Vec<(i32, i32)> = ints("x").into_iter().zip(ints("v")).collect();
    out.sort();
    out
}

#[test]
fn duplicates_are_refused_kept_or_dropped_as_asked() {
    let refused = array("refuse");
    let e = write(&refused, Duplicates::Refuse).unwrap_err().to_string();
    assert!(e.contains("two cells at x = 3"), "{e}");
    assert_eq!(cells(&refused), []);

    let kept = array("keep");
    write(&kept, Duplicates::Keep).unwrap();
    assert_eq!(cells(&kept), [(1, 20), (3, 10), (3, 30), (3, 40)]);

    let dropped = array("drop");
    write(&dropped, Duplicates::Drop).unwrap();
    assert_eq!(cells(&dropped), [(1, 20), (3, 10)]);
    for dir in [refused, kept, dropped] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}
