//! Groups written by every pinned TileDB-Py (`testdata/groups/`): `tessera
//! ls` lists what TileDB-Py lists, recursively or not, and `tessera meta`
//! prints each group's metadata as TileDB-Py reads it.

mod common;

use common::{tessera, testdata};
use serde_json::Value;
use std::path::PathBuf;

fn group_cases() -> Vec<(PathBuf, Value)> {
    let root = testdata().join("groups");
    let mut out = Vec::new();
    for v in std::fs::read_dir(&root).expect("testdata/groups").flatten() {
        for c in std::fs::read_dir(v.path()).unwrap().flatten() {
            let text = std::fs::read_to_string(c.path().join("expected.json")).unwrap();
            out.push((c.path().join("group"), serde_json::from_str(&text).unwrap()));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 10, "{} group cases", out.len());
    out
}

fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn ls_lists_what_tiledb_py_lists() {
    for (group, expected) in group_cases() {
        let g = group.display().to_string();
        let want = expected["members"].as_array().unwrap().clone();
        let (ok, out, err) = tessera(&["ls", &g, "--recursive", "--json"]);
        assert!(ok, "{g}: {err}");
        assert_eq!(lines(&out), want, "{g}: recursive listing");
        // Without --recursive: the group's own members only.
        let (ok, out, err) = tessera(&["ls", &g, "--json"]);
        assert!(ok, "{g}: {err}");
        let direct: Vec<Value> = want
            .iter()
            .filter(|m| !m["path"].as_str().unwrap().contains('/'))
            .cloned()
            .collect();
        assert_eq!(lines(&out), direct, "{g}: listing");
    }
}

#[test]
fn meta_prints_each_groups_metadata() {
    for (group, expected) in group_cases() {
        for (path, meta) in expected["metadata"].as_object().unwrap() {
            let dir = if path.is_empty() {
                group.clone()
            } else {
                group.join(path)
            };
            let d = dir.display().to_string();
            let (ok, out, err) = tessera(&["meta", &d, "--json"]);
            assert!(ok, "{d}: {err}");
            let got: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(&got, meta, "{d}");
        }
    }
}

#[test]
fn groups_and_arrays_are_told_apart() {
    let group = testdata().join("groups/tiledb-0.36.1/group_nested/group");
    let g = group.display().to_string();
    let (ok, out, _) = tessera(&["info", &g]);
    assert!(ok);
    assert!(out.contains("members: 3 (2 arrays, 1 groups"), "{out}");
    let (ok, _, err) = tessera(&["read", &g]);
    assert!(!ok);
    assert!(err.contains("a TileDB group, not an array"), "{err}");
    let array = testdata().join("tiledb-0.36.1/sparse_2d/array");
    let (ok, _, err) = tessera(&["ls", &array.display().to_string()]);
    assert!(!ok);
    assert!(err.contains("an array, not a TileDB group"), "{err}");
}
