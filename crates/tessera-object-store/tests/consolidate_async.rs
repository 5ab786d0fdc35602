//! Fragment consolidation on an object store, awaited on the caller's
//! single-threaded runtime (`tessera_write::maintain_async::consolidate_fragments`):
//! the same objects as the synchronous consolidation leaves, for sparse
//! and dense arrays, with versions, delete metadata and a purge, in one
//! batch or many, and no runtime of the storage's own.

use std::sync::Arc;
mod common;

use common::{files, objects, stored_from, without_uuids};
use tessera_object_store::ObjectStorage;
use tessera_query::{QuerySource, ReadRequest, ReadSession};
use tessera_storage::{AsyncLocation, Location};
use tessera_write::consolidate::{self, ConsolidateOptions, Consolidation};
use tessera_write::maintain_async;

/// The cells of the array at `uri` as the reader gives them.
fn cells(storage: &ObjectStorage, uri: &str) -> usize {
    let session = ReadSession::open(Arc::new(storage.fresh()), uri.as_ref(), None).unwrap();
    session.execute(&ReadRequest::new()).unwrap().cell_count
}

/// `case` of `release` consolidated with `options` in two stores, waited
/// on in one and awaited in the other; checks both leave the same objects
/// and read the same cells as before.
fn consolidated_both_ways(release: &str, case: &str, options: ConsolidateOptions) -> Consolidation {
    let (storage, sync) = stored_from(release, case);
    let (other, asynced) = stored_from(release, case);
    let before = cells(&storage, &sync);
    let at = Location::new(Arc::new(storage.clone()), sync.as_str());
    let waited = consolidate::consolidate_fragments(at, &options, &QuerySource, &mut |_| {})
        .unwrap()
        .expect("fragments to consolidate");

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let on = other.on_runtime(rt.handle().clone());
    let at = AsyncLocation::new(Arc::new(on.clone()), asynced.as_str());
    let awaited = rt.block_on(maintain_async::consolidate_fragments(
        &at,
        &options,
        &QuerySource,
    ));
    let awaited = awaited.unwrap().expect("fragments to consolidate");
    assert!(!on.started_own_runtime());

    let what = format!("{release} {case} {options:?}");
    assert_eq!(
        without_uuids(&awaited.fragment),
        without_uuids(&waited.fragment),
        "{what}"
    );
    assert_eq!(
        (&awaited.replaced, awaited.cells),
        (&waited.replaced, waited.cells),
        "{what}"
    );
    // Each store read afresh (both arrays have the same URI, each in a
    // store of its own).
    let (fresh, other) = (storage.fresh(), other.fresh());
    assert!(
        objects(&fresh, &sync) == objects(&other, &asynced),
        "{what}: not the same objects"
    );
    assert!(
        files(&other, &asynced)
            .iter()
            .any(|(name, _)| name == &format!("__commits/{}.vac", awaited.fragment)),
        "{what}: no vacuum file"
    );
    assert_eq!(cells(&other, &asynced), before, "{what}");
    awaited
}

#[test]
fn sparse_consolidation_awaited_leaves_the_sync_objects() {
    let options = ConsolidateOptions::default();
    let done = consolidated_both_ways("0.36.1", "random_sparse", options);
    assert!(done.replaced.len() > 1);
    // Before format 19 the vacuum file names the array by its URI.
    consolidated_both_ways("0.19.1", "random_sparse", options);
    // Batches of a few tiles: the writer takes many steps.
    let small = ConsolidateOptions {
        budget: Some(48 << 10),
        ..options
    };
    consolidated_both_ways("0.36.1", "sparse_2d", small);
}

#[test]
fn consolidation_of_deletes_awaited_leaves_the_sync_objects() {
    // Delete metadata kept: the versions the deletes delete, marked.
    consolidated_both_ways("0.36.1", "deletes", ConsolidateOptions::default());
    // Purged: two reads side by side, then the kept versions written.
    let purge = ConsolidateOptions {
        purge_deleted: true,
        budget: Some(48 << 10),
        ..ConsolidateOptions::default()
    };
    consolidated_both_ways("0.36.1", "deletes", purge);
}

#[test]
fn dense_consolidation_awaited_leaves_the_sync_objects() {
    consolidated_both_ways(
        "0.36.1",
        "dense_1d_fragments",
        ConsolidateOptions::default(),
    );
    // Bands of a few tiles each.
    let small = ConsolidateOptions {
        budget: Some(16 << 10),
        ..ConsolidateOptions::default()
    };
    consolidated_both_ways("0.23.5", "dense_1d_fragments", small);
}

#[test]
fn nothing_to_consolidate_awaited_is_none() {
    let (storage, uri) = stored_from("0.36.1", "empty_sparse");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let on = storage.on_runtime(rt.handle().clone());
    let at = AsyncLocation::new(Arc::new(on), uri.as_str());
    let options = ConsolidateOptions::default();
    let got = rt.block_on(maintain_async::consolidate_fragments(
        &at,
        &options,
        &QuerySource,
    ));
    assert_eq!(got.unwrap(), None);
}
