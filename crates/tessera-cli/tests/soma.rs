//! Single-cell experiments written by real TileDB-SOMA (`testdata/soma/`,
//! `cargo xtask fixtures --case soma`): `tessera ls --recursive` lists the
//! tree tiledbsoma reports, and every array, found through the group's
//! members, reads equal to what tiledbsoma reads (rows compared as sets:
//! tiledbsoma returns them in its own order).

mod common;

use common::{tessera, testdata};
use serde_json::Value;
use std::collections::BTreeMap;

/// A row with its keys sorted, so that rows compare whatever the order.
fn row(v: &Value) -> BTreeMap<String, Value> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn sorted_rows(rows: impl Iterator<Item = Value>) -> Vec<String> {
    let mut out: Vec<String> = rows
        .map(|r| serde_json::to_string(&row(&r)).unwrap())
        .collect();
    out.sort();
    out
}

#[test]
fn experiments_list_and_read_as_tiledbsoma_reads_them() {
    let root = testdata().join("soma");
    let mut cases = 0;
    for c in std::fs::read_dir(&root).expect("testdata/soma").flatten() {
        cases += 1;
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(c.path().join("expected.json")).unwrap())
                .unwrap();
        let exp = c.path().join("experiment");
        let e = exp.display().to_string();
        let (ok, out, err) = tessera(&["ls", &e, "--recursive", "--json"]);
        assert!(ok, "{e}: {err}");
        let listed: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            listed,
            expected["members"].as_array().unwrap().clone(),
            "{e}"
        );
        // Each array where the group's members say it is.
        let group = tessera::open_group(&exp, None).unwrap();
        let members = group.list(&tessera::LocalFs, true).unwrap();
        let arrays = expected["arrays"].as_object().unwrap();
        assert!(arrays.len() >= 6, "{e}: {} arrays", arrays.len());
        for (path, want) in arrays {
            let m = members.iter().find(|m| &m.path == path).unwrap();
            let a = m.location.display().to_string();
            let (ok, out, err) = tessera(&["read", &a]);
            assert!(ok, "{a}: {err}");
            let got = sorted_rows(out.lines().map(|l| serde_json::from_str(l).unwrap()));
            let want_rows = want["rows"].as_array().unwrap();
            assert!(!want_rows.is_empty(), "{path}");
            assert_eq!(got, sorted_rows(want_rows.iter().cloned()), "{e}: {path}");
        }
    }
    assert!(cases >= 2, "{cases} SOMA cases");
}

/// `tessera info` on an experiment describes the group and its metadata
/// (SOMA's own keys).
#[test]
fn info_describes_an_experiment() {
    let exp = testdata().join("soma/experiment_appended/experiment");
    let (ok, out, err) = tessera(&["info", &exp.display().to_string()]);
    assert!(ok, "{err}");
    assert!(out.contains("soma_object_type"), "{out}");
    let (ok, out, err) = tessera(&["meta", &exp.display().to_string()]);
    assert!(ok, "{err}");
    assert!(out.contains("SOMAExperiment"), "{out}");
}
