//! The exact requests tessera sends an object store to open an array and
//! to read it (an in-memory store: the same code as S3, deterministic).
//! Requests one storage call sends are in flight together: they are
//! listed sorted within each call. Any change shows in review.
//!
//! Sparse reads fetch several fragments at once, each from a thread, so
//! their calls interleave in no set order: a read's snapshot is taken one
//! fragment at a time, after checking that the default sends the same
//! requests in as many calls.

use std::path::Path;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_object_store::ObjectStorage;
use tessera_query::{ReadRequest, ReadResult, ReadSession, Value};

mod common;
use common::{plan, plan_side_by_side, stored};

/// The plan of `read` with one fragment in flight at a time, and its
/// result; the default (fragments side by side) must send the same
/// requests in as many storage calls.
fn read_plan(
    storage: &ObjectStorage,
    array: &Arc<OpenArray>,
    request: ReadRequest,
) -> (Vec<String>, ReadResult) {
    let session = ReadSession::new(Arc::new(storage.clone()), array.clone());
    let unnumbered = |plan: &[String]| {
        let mut lines: Vec<String> = (plan.iter())
            .map(|l| l.split_once(": ").map_or(l.clone(), |(_, r)| r.to_owned()))
            .collect();
        lines.sort();
        lines
    };
    let calls = |plan: &[String]| {
        let mut n: Vec<&str> = plan.iter().filter_map(|l| l.split(':').next()).collect();
        n.dedup();
        n.len()
    };
    storage.record_requests();
    let result = session.execute(&request).unwrap();
    let side_by_side = plan(storage.requests());
    storage.record_requests();
    let one_by_one = session
        .execute(&request.tune(|t| t.fragments_in_flight = 1))
        .unwrap();
    let sequential = plan(storage.requests());
    assert_eq!(unnumbered(&side_by_side), unnumbered(&sequential));
    assert_eq!(calls(&side_by_side), calls(&sequential));
    assert_eq!(result.cell_count, one_by_one.cell_count);
    (sequential, result)
}

#[test]
fn opening_and_reading_a_sparse_array() {
    let (storage, uri) = stored("random_sparse");
    storage.record_requests();
    let array = Arc::new(OpenArray::open(&storage, Path::new(&uri), 0, u64::MAX, None).unwrap());
    let open = plan(storage.requests());
    insta::assert_snapshot!("open_random_sparse", open.join("\n"));
    // No byte range read twice while opening.
    let mut ranges: Vec<&String> = open.iter().collect();
    ranges.sort();
    ranges.dedup();
    assert_eq!(ranges.len(), open.len());
    let (read, all) = read_plan(&storage, &array, ReadRequest::new());
    assert!(all.cell_count > 0);
    insta::assert_snapshot!("read_random_sparse", read.join("\n"));
    let (read, some) = read_plan(
        &storage,
        &array,
        ReadRequest::new().range("x", Value::Int(1), Value::Int(20)),
    );
    assert!(some.cell_count < all.cell_count);
    insta::assert_snapshot!("read_random_sparse_subarray", read.join("\n"));
}

#[test]
fn opening_and_reading_a_dense_array_of_fragments() {
    let (storage, uri) = stored("dense_1d_fragments");
    storage.record_requests();
    let array = Arc::new(OpenArray::open(&storage, Path::new(&uri), 0, u64::MAX, None).unwrap());
    insta::assert_snapshot!(
        "open_dense_1d_fragments",
        plan(storage.requests()).join("\n")
    );
    storage.record_requests();
    let r = ReadSession::new(Arc::new(storage.clone()), array.clone())
        .execute(&ReadRequest::new())
        .unwrap();
    assert!(r.cell_count > 0);
    // The fragments' tiles are fetched side by side: their calls in no
    // set order.
    insta::assert_snapshot!(
        "read_dense_1d_fragments",
        plan_side_by_side(storage.requests()).join("\n")
    );
}
