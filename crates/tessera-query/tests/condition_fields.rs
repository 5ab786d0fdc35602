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
