//! A read returning some of the dimensions
//! ([`ReadRequest::dimension_names`]) returns what a read of all of them
//! returns less the others' columns, whether the others cut tiles (a range
//! on them) or are tested (a condition on them), on every fixture; a name
//! the array lacks fails as the read is built (`direct.rs` shows that a
//! read reads no file of the others where nothing needs them).

mod common;

use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{Expr, QueryError, ReadRequest, ReadResult, ReadSession, Value};
use tessera_storage::LocalFs;

/// `r` with no dimension column but `kept`'s.
fn less_other_dimensions(mut r: ReadResult, kept: &str) -> ReadResult {
    r.columns.retain(|c| !c.is_dimension || c.name == kept);
    r
}

/// The requests each fixture is read with: everything; the first half of
/// its first dimension; a condition on the first dimension.
fn requests(a: &OpenArray) -> Vec<(&'static str, ReadRequest)> {
    let mut out = vec![("everything", ReadRequest::new())];
    let first = &a.schema.dimensions[0].name;
    if let Some((lo, hi)) = common::first_dim_span(a) {
        let mid = lo + (hi - lo) / 2;
        let half = ReadRequest::new().range(first, Value::Int(lo), Value::Int(mid));
        out.push(("first half", half));
        if let Ok(c) = Expr::parse(&format!("{first} >= {mid}"), &a.schema) {
            out.push(("condition", ReadRequest::new().condition(c)));
        }
    }
    out
}

#[test]
fn a_read_of_the_last_dimension_is_a_full_read_less_the_others() {
    let mut compared = std::collections::BTreeMap::new();
    for (path, a) in common::fixture_arrays() {
        if a.schema.dimensions.len() < 2 {
            continue;
        }
        let last = a.schema.dimensions.last().unwrap().name.clone();
        let session = ReadSession::new(Arc::new(LocalFs), a.clone());
        for (name, request) in requests(&a) {
            let full = session.execute(&request);
            let full = full.map(|r| less_other_dimensions(r, &last));
            let some = session.execute(&request.dimension_names([last.clone()]));
            let what = format!("{}: {name}", path.display());
            common::assert_same_outcome(&what, &full, &some);
            *compared.entry(name).or_insert(0) += 1;
        }
    }
    assert!(
        compared.values().all(|&n| n > 50),
        "{compared:?} reads compared"
    );
}

#[test]
fn a_dimension_the_array_lacks_fails_as_the_read_is_built() {
    let (_, a) = (common::fixture_arrays().into_iter())
        .find(|(p, _)| p.ends_with("tiledb-0.36.1/sparse_2d/array"))
        .unwrap();
    let session = ReadSession::new(Arc::new(LocalFs), a);
    let request = ReadRequest::new().dimension_names(["x", "z"]);
    match session.execute(&request) {
        Err(QueryError::UnknownField { kind, name }) => {
            assert_eq!((kind, name.as_str()), ("dimension", "z"));
        }
        other => panic!("{other:?}"),
    }
}

/// A dense read computes the coordinates its condition tests, returned or
/// not, and holds them until the condition has run: within a memory
/// budget it is cut into the batches of the same read returning them.
#[test]
fn a_dense_read_in_batches_counts_the_dimensions_its_condition_tests() {
    let mut compared = 0;
    for (path, a) in common::fixture_arrays() {
        if !a.schema.is_dense() || a.schema.dimensions.len() < 2 {
            continue;
        }
        let Some((lo, _)) = common::first_dim_span(&a) else {
            continue;
        };
        let (first, second) = (&a.schema.dimensions[0].name, &a.schema.dimensions[1].name);
        // A condition every cell passes: the batches' cells are the pieces'.
        let Ok(every) = Expr::parse(&format!("{first} >= {lo}"), &a.schema) else {
            continue;
        };
        let session = ReadSession::new(Arc::new(LocalFs), a.clone());
        let cells = |names: Vec<String>| -> Vec<usize> {
            let request = ReadRequest::new()
                .dimension_names(names)
                .condition(every.clone())
                .budget(4 << 10);
            (session.batches(&request).unwrap())
                .map(|b| b.unwrap().cell_count)
                .collect()
        };
        let tested = cells(vec![second.clone()]);
        let returned = cells(vec![first.clone(), second.clone()]);
        assert_eq!(tested, returned, "{}", path.display());
        compared += (tested.len() > 1) as usize;
    }
    assert!(compared > 10, "{compared} arrays read in several batches");
}
