//! A read whose condition tests attributes it does not return: dense and
//! sparse alike, it returns the cells and values the same read returning
//! them gives, less their columns (dense: cells failing the condition as
//! fill values, sparse: those cells left out). The conditions are the
//! fixtures' own, which TileDB-Py ran (`expected.json`).

mod common;

use std::path::Path;
use std::sync::Arc;
use tessera_query::{Expr, ReadRequest, ReadResult, ReadSession};
use tessera_storage::LocalFs;

/// The conditions of `case`'s queries that TileDB-Py answered.
fn conditions(case: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(case.join("expected.json")) else {
        return Vec::new();
    };
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    (expected["queries"].as_array().unwrap().iter())
        .filter(|q| q.get("error").is_none())
        .filter_map(|q| q["cond"].as_str().map(str::to_owned))
        .collect()
}

/// `r` with the dimensions and `kept` only.
fn only(mut r: ReadResult, kept: &str) -> ReadResult {
    r.columns.retain(|c| c.is_dimension || c.name == kept);
    r
}

#[test]
fn an_attribute_only_the_condition_tests_is_tested_not_returned() {
    let (mut dense, mut sparse) = (0, 0);
    for (path, array) in common::fixture_arrays() {
        let session = ReadSession::new(Arc::new(LocalFs), array.clone());
        for cond in conditions(path.parent().unwrap()) {
            let Ok(expr) = Expr::parse(&cond, &array.schema) else {
                continue;
            };
            let mut tested = Vec::new();
            expr.fields(&mut tested);
            let full = session.execute(&ReadRequest::new().condition(expr.clone()));
            let full = full.map_err(|e| e.to_string());
            for a in &array.schema.attributes {
                if tested.contains(&a.name) {
                    continue;
                }
                let request =
                    (ReadRequest::new().attributes([a.name.clone()])).condition(expr.clone());
                let some = session.execute(&request).map_err(|e| e.to_string());
                let want = full.clone().map(|r| only(r, &a.name));
                let what = format!("{}: {} where {cond}", path.display(), a.name);
                common::assert_same_outcome(&what, &want, &some);
                match array.schema.is_dense() {
                    true => dense += 1,
                    false => sparse += 1,
                }
            }
        }
    }
    assert!(
        dense > 20 && sparse > 20,
        "{dense} dense and {sparse} sparse reads compared"
    );
}

/// A sparse read decodes the attributes its condition tests and does not
/// return: within a memory budget its batches hold their tiles too, so a
/// condition on long strings cuts a read of small numbers into more
/// batches than the same read without it, and no more than the read that
/// also returns the strings.
#[test]
fn a_sparse_read_in_batches_counts_the_tiles_its_condition_decodes() {
    let mut compared = 0;
    for (path, a) in common::fixture_arrays() {
        if !path.parent().unwrap().ends_with("sparse_long_strings") {
            continue;
        }
        let session = ReadSession::new(Arc::new(LocalFs), a.clone());
        let batches = |attrs: &[&str], cond: Option<&str>| -> usize {
            let mut request = ReadRequest::new()
                .attributes(attrs.to_vec())
                .budget(1 << 20);
            if let Some(c) = cond {
                request = request.condition(Expr::parse(c, &a.schema).unwrap());
            }
            let mut n = 0;
            for b in session.batches(&request).unwrap() {
                b.unwrap();
                n += 1;
            }
            n
        };
        // Every cell passes it: the cells are the same.
        let every = Some("s != 'no such string'");
        let (plain, tested, returned) = (
            batches(&["k"], None),
            batches(&["k"], every),
            batches(&["k", "s"], every),
        );
        let what = path.display();
        assert!(
            plain < tested && tested <= returned,
            "{what}: {plain}, {tested}, {returned} batches"
        );
        compared += 1;
    }
    assert!(compared >= 1, "{compared} arrays of long strings");
}
