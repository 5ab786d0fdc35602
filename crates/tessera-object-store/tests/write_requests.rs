//! Writing, consolidating and vacuuming an array on an object store (an
//! in-memory one: the same code as S3): the exact requests each sends, and
//! the array reads at every step as the same steps leave a local copy.

mod common;

use common::{plan_side_by_side, stored, without_uuids};
use std::path::Path;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{Column, QuerySource, ReadRequest, ReadSession};
use tessera_storage::{ListableStorage, LocalFs, Location};
use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};
use tessera_write::{FragmentWriter, WriteOptions};

/// Every cell of the array at `at`, each field's bytes.
fn cells(at: &Location) -> Vec<(String, Vec<u8>, Option<Vec<u64>>)> {
    let array = Arc::new(OpenArray::open(at.reader(), at.path(), 0, u64::MAX, None).unwrap());
    let read = ReadSession::new(at.shared(), array.clone())
        .execute(&ReadRequest::new())
        .unwrap();
    read.columns
        .into_iter()
        .map(|c: Column| (c.name, c.data, c.offsets))
        .collect()
}

/// The fragments the array at `at` reads.
fn fragment_count(at: &Location) -> usize {
    OpenArray::open(at.reader(), at.path(), 0, u64::MAX, None)
        .unwrap()
        .fragments
        .len()
}

/// A copy of fixture `case` in a fresh local folder.
fn local_copy(case: &str) -> Location {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1")
        .join(case)
        .join("array");
    let to = std::env::temp_dir().join(format!("tessera-write-requests-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&to);
    let mut stack = vec![from.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            let dest = to.join(p.strip_prefix(&from).unwrap());
            if p.is_dir() {
                std::fs::create_dir_all(&dest).unwrap();
                stack.push(p);
            } else {
                std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
                std::fs::copy(&p, &dest).unwrap();
            }
        }
    }
    Location::new(Arc::new(LocalFs), to)
}

/// Appends every cell again as a fragment at time 100.
fn append(at: &Location, columns: &[Column]) {
    let options = WriteOptions {
        timestamp: Some(100),
        ..WriteOptions::default()
    };
    let mut w = FragmentWriter::try_new(at, options).unwrap();
    w.write(columns).unwrap();
    assert_eq!(w.finish().unwrap().len(), 1);
}

#[test]
fn a_write_a_consolidation_and_a_vacuum_on_a_store() {
    let (storage, uri) = stored("random_sparse");
    let remote = Location::new(Arc::new(storage.clone()), &uri);
    let local = local_copy("random_sparse");
    let array = Arc::new(OpenArray::open(&storage, Path::new(&uri), 0, u64::MAX, None).unwrap());
    let columns = ReadSession::new(Arc::new(storage.clone()), array.clone())
        .execute(&ReadRequest::new())
        .unwrap()
        .columns;
    let before = fragment_count(&remote);
    let lines = |storage: &tessera_object_store::ObjectStorage| -> String {
        let p = plan_side_by_side(storage.requests());
        p.iter()
            .map(|l| without_uuids(l))
            .collect::<Vec<_>>()
            .join("\n")
    };

    storage.record_requests();
    append(&remote, &columns);
    insta::assert_snapshot!("write_random_sparse", lines(&storage));
    append(&local, &columns);
    assert_eq!(cells(&remote), cells(&local));
    assert_eq!(fragment_count(&remote), before + 1);

    storage.record_requests();
    let options = ConsolidateOptions::default();
    let done = consolidate_fragments(&remote, &options, &QuerySource, &mut |_| {})
        .unwrap()
        .unwrap();
    insta::assert_snapshot!("consolidate_random_sparse", lines(&storage));
    consolidate_fragments(&local, &options, &QuerySource, &mut |_| {})
        .unwrap()
        .unwrap();
    assert_eq!(done.replaced.len(), before + 1);
    assert_eq!(cells(&remote), cells(&local));

    storage.record_requests();
    assert_eq!(
        vacuum_fragments(&remote, None, &mut |_| {}).unwrap(),
        before + 1
    );
    insta::assert_snapshot!("vacuum_random_sparse", lines(&storage));
    vacuum_fragments(&local, None, &mut |_| {}).unwrap();
    assert_eq!(cells(&remote), cells(&local));
    assert_eq!(fragment_count(&remote), 1);
    // Nothing of the replaced fragments is left on the store.
    let left = storage
        .fresh()
        .list(&Path::new(&uri).join("__fragments"))
        .unwrap();
    assert_eq!(left.len(), 1);
    let _ = std::fs::remove_dir_all(local.path());
}
