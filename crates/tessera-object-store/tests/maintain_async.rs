//! Consolidation and vacuum on an object store, awaited on the caller's
//! single-threaded runtime (`tessera_write::maintain_async`): the same
//! objects as the synchronous functions leave, no runtime of the
//! storage's own, and a vacuum's removals in the synchronous order.

use std::path::Path;
use std::sync::Arc;
use tessera_object_store::{ListableStorage, ObjectStorage, ReadableStorage, WritableStorage};
use tessera_storage::{AsyncLocation, Location};
use tessera_write::{commits, consolidate, fragment_meta, maintain_async};

/// Every object below `folder`, by path below it (UUIDs of new names
/// replaced), with its bytes.
fn objects(storage: &ObjectStorage, folder: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let dir = Path::new(folder).join(&rel);
        for e in storage.list(&dir).unwrap() {
            let name = Path::new(&rel).join(&e.name).to_string_lossy().into_owned();
            match e.is_dir {
                true => stack.push(name),
                false => out.push((
                    without_uuids(&name),
                    storage.read_all(&dir.join(&e.name)).unwrap(),
                )),
            }
        }
    }
    out.sort();
    out
}

/// A name with each 32-hex-digit part (a UUID) replaced by `U`.
fn without_uuids(name: &str) -> String {
    let hex = |p: &str| p.len() >= 32 && p[..32].chars().all(|c| c.is_ascii_hexdigit());
    name.split('_')
        .map(|p| match hex(p) {
            true => format!("U{}", &p[32..]),
            false => p.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// The local folder `from`, put below `to`.
fn upload(storage: &ObjectStorage, from: &Path, to: &str) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let to = format!("{to}/{}", e.file_name().to_string_lossy());
        match e.path().is_dir() {
            true => upload(storage, &e.path(), &to),
            false => storage
                .put(Path::new(&to), &std::fs::read(e.path()).unwrap())
                .unwrap(),
        }
    }
}

#[test]
fn maintenance_awaited_leaves_the_sync_objects() {
    let storage = ObjectStorage::for_uri("memory://m").unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/deletes_consolidated/array");
    let (sync, asynced) = ("memory://m/sync", "memory://m/async");
    upload(&storage, &fixture, sync);
    upload(&storage, &fixture, asynced);

    let at = Location::new(Arc::new(storage.clone()), sync);
    let con = commits::consolidate_commits(at.clone(), None).unwrap();
    let meta = fragment_meta::consolidate_fragment_meta(at.clone(), None).unwrap();
    let fragments = consolidate::vacuum_fragments(at.clone(), None, &mut |_| {}).unwrap();
    let removed = commits::vacuum_commits(at, None).unwrap();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let on = storage.fresh().on_runtime(rt.handle().clone());
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
    let fresh = storage.fresh();
    assert!(
        objects(&fresh, sync) == objects(&fresh, asynced),
        "the same objects"
    );

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
