//! Consolidation and vacuum on an object store, awaited on the caller's
//! single-threaded runtime (`tessera_write::maintain_async`): the same
//! objects as the synchronous functions leave, no runtime of the
//! storage's own, and a vacuum's removals in the synchronous order.

use std::path::Path;
use std::sync::Arc;
mod common;

use common::{objects, stored, without_uuids};
use tessera_object_store::ListableStorage;
use tessera_storage::{AsyncLocation, Location};
use tessera_write::{commits, consolidate, fragment_meta, maintain_async};

#[test]
fn maintenance_awaited_leaves_the_sync_objects() {
    // Two copies of the fixture, each in a store of its own.
    let (storage, sync) = stored("deletes_consolidated");
    let (other, asynced) = stored("deletes_consolidated");
    let (sync, asynced) = (sync.as_str(), asynced.as_str());
    let at = Location::new(Arc::new(storage.clone()), sync);
    let con = commits::consolidate_commits(at.clone(), None).unwrap();
    let meta = fragment_meta::consolidate_fragment_meta(at.clone(), None).unwrap();
    let fragments = consolidate::vacuum_fragments(at.clone(), None, &mut |_| {}).unwrap();
    let removed = commits::vacuum_commits(at, None).unwrap();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let on = other.on_runtime(rt.handle().clone());
    let at = AsyncLocation::new(Arc::new(on.clone()), asynced);
    let awaited = rt.block_on(async {
        let con = maintain_async::consolidate_commits(&at, None).await?;
        let meta = maintain_async::consolidate_fragment_meta(&at, None).await?;
        on.record_requests();
        let fragments = maintain_async::vacuum_fragments(&at, None, None).await?;
        let sent: Vec<String> = on.requests().iter().map(|r| r.to_string()).collect();
        let removed = maintain_async::vacuum_commits(&at, None).await?;
        Ok::<_, tessera_write::WriteError>((con, meta, fragments, removed, sent))
    });
    let (con_a, meta_a, fragments_a, removed_a, sent) = awaited.unwrap();
    assert!(!on.started_own_runtime());

    let name = |n: Option<String>| n.map(|n| without_uuids(&n));
    assert_eq!((name(con_a), name(meta_a)), (name(con), name(meta)));
    assert_eq!((fragments_a, removed_a), (fragments, removed));
    // Three fragments replaced (their commits went with them); the write
    // and the delete left.
    assert_eq!((fragments, removed), (3, 2));
    // Each store read afresh (both arrays have the same URI, each in a
    // store of its own).
    let fresh = storage.fresh();
    let objects_sync = objects(&fresh, sync);
    assert!(
        objects_sync == objects(&other.fresh(), asynced),
        "the same objects"
    );
    assert!(objects_sync.iter().any(|(n, _)| n.ends_with(".con")));

    // Each replaced fragment's commit goes before its folder's objects,
    // the vacuum file last.
    let deletes: Vec<&String> = sent.iter().filter(|r| r.starts_with("DELETE")).collect();
    assert!(deletes.last().unwrap().ends_with(".vac"), "{sent:?}");
    let position = |what: &str| sent.iter().position(|r| r.contains(what)).unwrap();
    let vacuumed = fresh.list(&Path::new(sync).join("__commits")).unwrap();
    assert!(vacuumed.iter().all(|e| !e.name.ends_with(".wrt")));
    for r in sent
        .iter()
        .filter(|r| r.starts_with("DELETE") && r.ends_with(".wrt"))
    {
        let fragment = r.rsplit('/').next().unwrap().trim_end_matches(".wrt");
        let first_object = position(&format!("__fragments/{fragment}/"));
        assert!(position(r) < first_object, "{r}: {sent:?}");
    }
}
