//! Shared by the integration tests: the fixture arrays.
// Each test crate uses its own part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{ReadResult, ReadSession, Value};
use tessera_storage::{answer, AnswersFuture, AsyncStorage, LocalFs, Need};

/// Every fixture array of every TileDB-Py version, opened whole (arrays
/// that cannot be opened without a key are left out), with its path.
pub fn fixture_arrays() -> Vec<(PathBuf, Arc<OpenArray>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut out = Vec::new();
    for version in std::fs::read_dir(&root).unwrap().flatten() {
        if !version.file_name().to_string_lossy().starts_with("tiledb-") {
            continue;
        }
        for case in std::fs::read_dir(version.path()).unwrap().flatten() {
            let path = case.path().join("array");
            if let Ok(a) = OpenArray::open(&LocalFs, &path, 0, u64::MAX, None) {
                out.push((path, Arc::new(a)));
            }
        }
    }
    assert!(out.len() > 100, "only {} fixture arrays", out.len());
    out
}

/// Reads of `array` from the local filesystem.
pub fn local(array: &Arc<OpenArray>) -> ReadSession {
    ReadSession::new(Arc::new(LocalFs), array.clone())
}

/// The integer span of the first dimension over the first fragment with
/// cells (`None` for other dimension types and empty arrays), to cut
/// subarrays from.
pub fn first_dim_span(array: &OpenArray) -> Option<(i128, i128)> {
    dim_span(array, 0)
}

/// The same for dimension `j`.
pub fn dim_span(array: &OpenArray, j: usize) -> Option<(i128, i128)> {
    let d = &array.schema.dimensions[j];
    let ned = array
        .fragments
        .iter()
        .find_map(|f| f.footer.non_empty_domain.as_ref())?;
    match (
        Value::decode(d.datatype, &ned[j].lo),
        Value::decode(d.datatype, &ned[j].hi),
    ) {
        (Value::Int(lo), Value::Int(hi)) => Some((lo, hi)),
        _ => None,
    }
}

/// Two results hold the same cells, in the same order, column for column
/// (and the same coordinate grid, if any).
pub fn same_result(x: &ReadResult, y: &ReadResult) -> bool {
    x.cell_count == y.cell_count
        && x.grid == y.grid
        && x.columns.len() == y.columns.len()
        && x.columns.iter().zip(&y.columns).all(|(c, d)| {
            c.name == d.name
                && c.data == d.data
                && c.offsets == d.offsets
                && c.validity == d.validity
        })
}

/// Two ways of reading the same cells agree: equal results (by
/// [`same_result`]) or errors of equal messages. `what` names the case in
/// a failure.
pub fn assert_same_outcome<E: std::fmt::Display + std::fmt::Debug>(
    what: &str,
    x: &Result<ReadResult, E>,
    y: &Result<ReadResult, E>,
) {
    match (x, y) {
        (Ok(a), Ok(b)) => assert!(same_result(a, b), "{what}: the results differ"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
        _ => panic!("{what}: {x:?} against {y:?}"),
    }
}

/// Local files answered as an object store answers: owned answers, to be
/// awaited.
pub struct AwaitedLocal;

impl AsyncStorage for AwaitedLocal {
    fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
        Box::pin(async move { answer(&LocalFs, needs) })
    }
}
