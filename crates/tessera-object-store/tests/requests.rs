//! The exact requests tessera sends an object store to open an array and
//! to read it (an in-memory store: the same code as S3, deterministic).
//! Requests one storage call sends are in flight together: they are
//! listed sorted within each call. Any change shows in review.

use std::path::Path;
use tessera_fragment::OpenArray;
use tessera_object_store::{ObjectStorage, Request};
use tessera_query::{Key, Query};

/// `case` of TileDB-Py 0.36.1 copied into a memory store.
fn stored(case: &str) -> (ObjectStorage, String) {
    let storage = ObjectStorage::for_uri("memory://fixtures").unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1")
        .join(case)
        .join("array");
    let uri = format!("memory://fixtures/{case}");
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(&root).unwrap();
                let key = Path::new(&uri).join(rel);
                storage.put(&key, std::fs::read(&p).unwrap()).unwrap();
            }
        }
    }
    (storage.fresh(), uri)
}

/// The requests as lines, `call: METHOD key range`, the storage's calls
/// numbered from 0 and sorted within each.
fn plan(requests: Vec<Request>) -> Vec<String> {
    let mut r = requests;
    let mut calls: Vec<usize> = r.iter().map(|q| q.call).collect();
    calls.dedup();
    r.sort_by(|a, b| (a.call, &a.key, &a.range).cmp(&(b.call, &b.key, &b.range)));
    r.iter()
        .map(|q| {
            let n = calls.iter().position(|c| *c == q.call).unwrap_or(0);
            format!("{n}: {q}")
        })
        .collect()
}

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
