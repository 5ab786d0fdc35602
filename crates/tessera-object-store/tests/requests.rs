//! The exact requests tessera sends an object store to open an array and
//! to read it (an in-memory store: the same code as S3, deterministic).
//! Requests one storage call sends are in flight together: they are
//! listed sorted within each call. Any change shows in review.

use std::path::Path;
use tessera_fragment::OpenArray;
use tessera_query::{Key, Query};

mod common;
use common::{plan, stored};

#[test]
fn opening_and_reading_a_sparse_array() {
    let (storage, uri) = stored("random_sparse");
    storage.record_requests();
    let array = OpenArray::open(&storage, Path::new(&uri), 0, u64::MAX, None).unwrap();
    let open = plan(storage.requests());
    insta::assert_snapshot!("open_random_sparse", open.join("\n"));
    // No byte range read twice while opening.
    let mut ranges: Vec<&String> = open.iter().collect();
    ranges.sort();
    ranges.dedup();
    assert_eq!(ranges.len(), open.len());
    storage.record_requests();
    let all = Query::new(&storage, &array).execute().unwrap();
    assert!(all.cell_count > 0);
    insta::assert_snapshot!("read_random_sparse", plan(storage.requests()).join("\n"));
    storage.record_requests();
    let some = Query::new(&storage, &array)
        .range("x", Key::Int(1), Key::Int(20))
        .execute()
        .unwrap();
    assert!(some.cell_count < all.cell_count);
    insta::assert_snapshot!(
        "read_random_sparse_subarray",
        plan(storage.requests()).join("\n")
    );
}

#[test]
fn opening_and_reading_a_dense_array_of_fragments() {
    let (storage, uri) = stored("dense_1d_fragments");
    storage.record_requests();
    let array = OpenArray::open(&storage, Path::new(&uri), 0, u64::MAX, None).unwrap();
    insta::assert_snapshot!(
        "open_dense_1d_fragments",
        plan(storage.requests()).join("\n")
    );
    storage.record_requests();
    let r = Query::new(&storage, &array).execute().unwrap();
    assert!(r.cell_count > 0);
    insta::assert_snapshot!(
        "read_dense_1d_fragments",
        plan(storage.requests()).join("\n")
    );
}
