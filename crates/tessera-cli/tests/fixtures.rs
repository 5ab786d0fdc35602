//! End to end: `tessera read` on every fixture in `testdata/` must return
//! what TileDB-Py read from the same array (`expected.json`).
//!
//! Rows are compared exactly, key order included. Where the layout fixes an
//! order, the sequence of coordinates must match; cells sharing coordinates
//! (arrays with duplicates) may come in any order, as they do in libtiledb.

use serde_json::Value;
use std::collections::BTreeMap;
mod common;

use common::{cases, testdata};
use std::path::Path;
use std::process::Command;

fn args_for(case: &Value, q: &Value, array: &Path) -> Vec<String> {
    let mut a = vec!["read".to_string(), array.display().to_string()];
    if let Some(attrs) = q["attrs"].as_array() {
        a.push("--attrs".into());
        a.push(
            attrs
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    if let Some(sub) = q["subarray"].as_object() {
        for (dim, ranges) in sub {
            let rs: Vec<String> = ranges
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    let s = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    format!("{}:{}", s(&r[0]), s(&r[1]))
                })
                .collect();
            a.push("--subarray".into());
            a.push(format!("{dim}={}", rs.join(",")));
        }
    }
    if let Some(l) = q["layout"].as_str() {
        a.push("--layout".into());
        a.push(if l == "global-order" {
            "global".into()
        } else {
            l.to_string()
        });
    }
    match &q["timestamp"] {
        Value::Array(t) => {
            a.push("--timestamp".into());
            a.push(format!("{}:{}", t[0], t[1]));
        }
        Value::Number(t) => {
            a.push("--timestamp".into());
            a.push(t.to_string());
        }
        _ => {}
    }
    if let Some(c) = q["cond"].as_str() {
        a.push("--where".into());
        a.push(c.to_string());
    }
    if let Some(k) = case["case"]["key"].as_str() {
        a.push("--key".into());
        a.push(k.to_string());
    }
    a
}

fn coords(row: &Value, dims: &[String]) -> String {
    dims.iter()
        .map(|d| row[d].to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Compares rows; returns a description of the first difference.
pub fn compare(got: &[Value], exp: &[Value], ordered: bool, dims: &[String]) -> Option<String> {
    if got.len() != exp.len() {
        return Some(format!("{} rows, expected {}", got.len(), exp.len()));
    }
    let keys = |r: &Value| {
        r.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    if let (Some(g), Some(e)) = (got.first(), exp.first()) {
        if keys(g) != keys(e) {
            return Some(format!("keys {:?}, expected {:?}", keys(g), keys(e)));
        }
    }
    let canon = |rows: &[Value]| -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for r in rows {
            *m.entry(r.to_string()).or_default() += 1;
        }
        m
    };
    if ordered {
        for (i, (g, e)) in got.iter().zip(exp).enumerate() {
            if coords(g, dims) != coords(e, dims) {
                return Some(format!("row {i}: {g}, expected {e}"));
            }
        }
    }
    if canon(got) != canon(exp) {
        let (cg, ce) = (canon(got), canon(exp));
        let extra = cg.keys().find(|k| !ce.contains_key(*k));
        let missing = ce.keys().find(|k| !cg.contains_key(*k));
        return Some(format!(
            "rows differ: unexpected {extra:?}, missing {missing:?}"
        ));
    }
    None
}

/// Every query of `case` (at `path`) run by `bin`, whole and in the
/// smallest batches: the number of reads and what differed.
fn case_reads(bin: &str, path: &Path) -> (usize, Vec<String>) {
    let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let array = path.parent().unwrap().join("array");
    let dims: Vec<String> = case["schema"]["dims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect();
    let (mut checked, mut failures) = (0, Vec::new());
    // Each query whole, and again in the smallest batches the memory
    // budget allows (one tile each), which must concatenate to the same rows.
    let queries = case["queries"].as_array().unwrap();
    for (q, budget) in queries.iter().flat_map(|q| [(q, "1G"), (q, "1")]) {
        // A query TileDB-Py errored on has no rows to compare; one the
        // case marks `libtiledb_inconsistent` contradicts libtiledb's own
        // answer to another query of the case (see testdata/README.md).
        if q.get("error").is_some() || q.get("libtiledb_inconsistent").is_some() {
            continue;
        }
        let out = Command::new(bin)
            .args(args_for(&case, q, &array))
            .args(["--budget", budget])
            .output()
            .unwrap();
        let name = format!(
            "{} / {} (budget {budget})",
            path.parent()
                .unwrap()
                .strip_prefix(testdata())
                .unwrap()
                .display(),
            q["name"]
        );
        checked += 1;
        if !out.status.success() {
            failures.push(format!(
                "{name}: exit {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            continue;
        }
        let got: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let exp = q["rows"].as_array().unwrap();
        if let Some(d) = compare(&got, exp, q["ordered"].as_bool().unwrap_or(false), &dims) {
            failures.push(format!("{name}: {d}"));
        }
    }
    (checked, failures)
}

/// Cases side by side (a process each): most of a read's time is the
/// process starting, on one core.
#[test]
fn reads_match_tiledb_py() {
    use rayon::prelude::*;
    let bin = env!("CARGO_BIN_EXE_tessera");
    let all = cases();
    assert!(!all.is_empty(), "no fixtures under testdata/");
    let done: Vec<(usize, Vec<String>)> = all.par_iter().map(|p| case_reads(bin, p)).collect();
    let checked: usize = done.iter().map(|(n, _)| n).sum();
    let failures: Vec<String> = done.into_iter().flat_map(|(_, f)| f).collect();
    assert!(
        failures.is_empty(),
        "{} of {checked} reads differ from TileDB-Py:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{checked} reads match TileDB-Py");
}
