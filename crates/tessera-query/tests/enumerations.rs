//! Enumerated attributes read as their values: for every fixture version
//! with enumerations, each cell's value is the one its key (as TileDB-Py
//! read it) names in the enumeration (as TileDB-Py listed it).

use std::path::Path;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{ReadRequest, ReadSession};
use tessera_schema::Value;
use tessera_storage::LocalFs;

#[test]
fn enumerated_attributes_read_as_values() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut checked = 0;
    for version in std::fs::read_dir(&root).unwrap().flatten() {
        let case = version.path().join("enumerations");
        let Ok(text) = std::fs::read_to_string(case.join("expected.json")) else {
            continue;
        };
        let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
        let array =
            Arc::new(OpenArray::open(&LocalFs, &case.join("array"), 0, u64::MAX, None).unwrap());
        let keys = ReadSession::new(Arc::new(LocalFs), array.clone())
            .execute(&ReadRequest::new())
            .unwrap();
        let values = ReadSession::new(Arc::new(LocalFs), array.clone())
            .execute(&ReadRequest::new().enumeration_values(true))
            .unwrap();
        assert_eq!(keys.cell_count, values.cell_count);
        let rows = expected["queries"][0]["rows"].as_array().unwrap();
        assert_eq!(rows.len(), values.cell_count);
        for attr in expected["schema"]["attrs"].as_array().unwrap() {
            let (name, label) = (
                attr["name"].as_str().unwrap(),
                attr["enum_label"].as_str().unwrap(),
            );
            let listed = expected["enumerations"][label]["values"]
                .as_array()
                .unwrap();
            let col = values.column(name).unwrap();
            for (i, row) in rows.iter().enumerate() {
                let key = row[name].as_u64().unwrap() as usize;
                let got = Value::decode(col.datatype, col.value(i)).to_json();
                let want = &listed[key];
                let same = match (got.as_f64(), want.as_f64()) {
                    (Some(a), Some(b)) => a == b,
                    _ => &got == want,
                };
                assert!(
                    same,
                    "{} {name} cell {i}: {got} for key {key}, want {want}",
                    case.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 12, "only {checked} cells checked");
}

/// Reads of one open array read each enumeration file once, not once a
/// read: a read in batches runs one read per batch, and each maps its keys.
#[test]
fn reads_of_an_open_array_read_each_enumeration_once() {
    use tessera_storage::Recording;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/enumerations/array");
    let rec = Arc::new(Recording::new(LocalFs, &root));
    let array = Arc::new(OpenArray::open(&*rec, &root, 0, u64::MAX, None).unwrap());
    let whole = ReadSession::new(rec.clone(), array.clone())
        .execute(&ReadRequest::new().enumeration_values(true))
        .unwrap();
    // The cells one at a time, as batches of one cell would be read.
    for d in 0..whole.cell_count as i64 {
        let one = ReadSession::new(rec.clone(), array.clone())
            .execute(&ReadRequest::new().enumeration_values(true).range(
                "d",
                tessera_query::Value::Int(d as i128),
                tessera_query::Value::Int(d as i128),
            ))
            .unwrap();
        for col in &one.columns {
            let all = whole.column(&col.name).unwrap();
            assert_eq!(col.value(0), all.value(d as usize), "{} cell {d}", col.name);
        }
    }
    let reads = rec
        .requests()
        .iter()
        .filter(|r| r.contains("__enumerations"))
        .count();
    assert_eq!(
        reads,
        array.schema.enumerations.len(),
        "{:?}",
        rec.requests()
    );
}
