//! `ReadRequest::versions`: every version of each cell with its timestamp. On
//! the arrays libtiledb consolidated with timestamps (`consolidated_versions`,
//! each pinned release), the versions a read at time T would choose from
//! (those written at T or before, the newest of each coordinate) are what
//! libtiledb read at T; and every version is there.

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{ReadRequest, ReadSession, VERSION_TIMESTAMPS};
use tessera_storage::LocalFs;

fn i64_at(c: &tessera_query::Column, i: usize) -> i64 {
    let v = c.value(i);
    match v.len() {
        4 => i32::from_le_bytes(v.try_into().unwrap()) as i64,
        8 => i64::from_le_bytes(v.try_into().unwrap()),
        n => panic!("{n}-byte value"),
    }
}

#[test]
fn versions_hold_what_each_time_travel_read_chooses_from() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut checked = 0;
    for v in std::fs::read_dir(&root).unwrap().flatten() {
        let case = v.path().join("consolidated_versions");
        if !case.is_dir() {
            continue;
        }
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("expected.json")).unwrap())
                .unwrap();
        let array =
            Arc::new(OpenArray::open(&LocalFs, &case.join("array"), 0, u64::MAX, None).unwrap());
        let r = ReadSession::new(Arc::new(LocalFs), array.clone())
            .execute(&ReadRequest::new().versions(true))
            .unwrap();
        let cells: u64 = expected["fragments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["cell_num"].as_u64().unwrap())
            .sum();
        assert_eq!(r.cell_count as u64, cells, "{}", case.display());
        let (d, a) = (r.column("d").unwrap(), r.column("a").unwrap());
        let ts = r.column(VERSION_TIMESTAMPS).unwrap();
        for q in expected["queries"].as_array().unwrap() {
            // Reads at one time T (an integer timestamp): the newest version
            // at or before T of each coordinate.
            let at = match (q["name"].as_str().unwrap(), q["timestamp"].as_u64()) {
                ("all", _) => u64::MAX,
                (_, Some(t)) => t,
                _ => continue,
            };
            let mut newest: BTreeMap<i64, (u64, i64)> = BTreeMap::new();
            for i in 0..r.cell_count {
                let t = u64::from_le_bytes(ts.value(i).try_into().unwrap());
                if t > at {
                    continue;
                }
                let e = newest.entry(i64_at(d, i)).or_insert((t, i64_at(a, i)));
                if t >= e.0 {
                    *e = (t, i64_at(a, i));
                }
            }
            let got: Vec<(i64, i64)> = newest.into_iter().map(|(d, (_, a))| (d, a)).collect();
            let want: Vec<(i64, i64)> = q["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| (row["d"].as_i64().unwrap(), row["a"].as_i64().unwrap()))
                .collect();
            assert_eq!(got, want, "{}: {}", case.display(), q["name"]);
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} reads checked");
}
