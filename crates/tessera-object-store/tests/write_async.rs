//! A fragment written on an object store by awaiting it on the caller's
//! runtime (`AsyncFragmentWriter` over `AsyncWritableStorage`): the
//! synchronous writer's files, uploaded in parts as they fill, committed
//! last, and no runtime of the storage's own.

mod common;

use common::{files, fixed};
use std::path::Path;
use std::sync::Arc;
use tessera_cells::Column;
use tessera_object_store::{ListableStorage, ObjectStorage, ReadableStorage, WritableStorage};
use tessera_schema::json::schema_from_json;
use tessera_storage::Location;
use tessera_tile::Datatype;
use tessera_write::{
    create_array, latest_schema, AsyncFragmentWriter, FragmentWriter, WriteOptions,
};

/// 1,200,000 cells: 9.6 MB of attribute values (above one 8 MiB part).
fn columns() -> Vec<Column> {
    let n = 1_200_000i64;
    vec![
        fixed(
            "x",
            Datatype::Int64,
            (0..n).rev().flat_map(|i| i.to_le_bytes()).collect(),
        ),
        fixed(
            "v",
            Datatype::Float64,
            (0..n).flat_map(|i| (i as f64).to_le_bytes()).collect(),
        ),
    ]
}

#[test]
fn an_async_write_uploads_the_sync_writers_files_and_commits_last() {
    let storage = ObjectStorage::for_uri("memory://w").unwrap();
    let doc = schema_from_json(&serde_json::json!({
        "array_type": "sparse",
        "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9_999_999], "tile_extent": 100_000}],
        "attributes": [{"name": "v", "type": "FLOAT64"}],
    }))
    .unwrap();
    let (sync, asynced) = ("memory://w/sync", "memory://w/async");
    create_array(
        Location::new(Arc::new(storage.clone()), sync),
        &doc,
        None,
        None,
    )
    .unwrap();
    // The same schema file for both (its name is in fragment metadata).
    for (rel, bytes) in files(&storage, sync) {
        storage.put(&Path::new(asynced).join(rel), &bytes).unwrap();
    }
    let options = WriteOptions {
        timestamp: Some(7),
        ..WriteOptions::default()
    };
    let at = Location::new(Arc::new(storage.clone()), sync);
    let mut w = FragmentWriter::try_new(at, options).unwrap();
    w.write_owned(columns()).unwrap();
    w.finish().unwrap();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let on = storage.fresh().on_runtime(rt.handle().clone());
    on.record_requests();
    let names = rt
        .block_on(async {
            let schema = latest_schema(&on, Path::new(asynced), None).await?;
            let mut w = AsyncFragmentWriter::new(Arc::new(on.clone()), asynced, schema, options)?;
            w.write(columns()).await?;
            w.finish().await
        })
        .unwrap();
    assert_eq!(names.len(), 1);
    assert!(!on.started_own_runtime());

    let fresh = storage.fresh();
    let (want, got) = (files(&fresh, sync), files(&fresh, asynced));
    let without = |files: Vec<(String, Vec<u8>)>, name: &str| -> Vec<(String, Vec<u8>)> {
        let uuid = name.split('_').nth(4).unwrap().to_string();
        files
            .into_iter()
            .map(|(n, b)| (n.replace(&uuid, "UUID"), b))
            .collect()
    };
    let sync_name = fresh.list(&Path::new(sync).join("__fragments")).unwrap()[0]
        .name
        .clone();
    assert!(
        without(got, &names[0]) == without(want, &sync_name),
        "the same files"
    );

    let sent: Vec<String> = on
        .requests()
        .iter()
        .map(|r| r.to_string())
        .filter(|r| !r.starts_with("LIST") && !r.starts_with("GET"))
        .collect();
    // The attribute's 9.6 MB in two parts; the coordinates, which their
    // filters shrink under one part, in one PUT.
    let of = |file: &str, what: &str| sent.iter().any(|r| r.contains(file) && r.contains(what));
    assert!(
        of("a0.tdb", "(start multipart)") && of("a0.tdb", "part 2"),
        "{sent:?}"
    );
    assert!(
        of("a0.tdb", "(complete multipart)") && !of("d0.tdb", "multipart"),
        "{sent:?}"
    );
    let last = sent.last().unwrap();
    assert!(
        last.contains("__commits/") && last.contains("(if none match)"),
        "{sent:?}"
    );
    let metadata = sent
        .iter()
        .position(|r| r.contains("__fragment_metadata.tdb"))
        .unwrap();
    let completed = sent
        .iter()
        .rposition(|r| r.contains("(complete multipart)"))
        .unwrap();
    assert!(
        completed < metadata,
        "files land before the metadata: {sent:?}"
    );
}

/// An upload dropped before it completes (a write given up, or its
/// future dropped) is aborted on the runtime, unawaited: nothing of it
/// appears. One completed appears whole.
#[test]
fn an_upload_dropped_unfinished_is_aborted() {
    use tessera_storage::AsyncWritableStorage;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let storage = ObjectStorage::for_uri("memory://u").unwrap();
    let on = storage.on_runtime(rt.handle().clone());
    on.record_requests();
    let (dropped, done) = (
        Path::new("memory://u/a/dropped"),
        Path::new("memory://u/a/done"),
    );
    rt.block_on(async {
        let mut up = on.upload(dropped.into()).await.unwrap();
        up.part(vec![1; 6 << 20]).await.unwrap();
        drop(up);
        let mut up = on.upload(done.into()).await.unwrap();
        up.part(vec![2; 6 << 20]).await.unwrap();
        up.part(vec![3; 10]).await.unwrap();
        up.complete().await.unwrap();
        // The abort runs as a task of its own.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    });
    let sent: Vec<String> = on.requests().iter().map(|r| r.to_string()).collect();
    assert!(
        sent.contains(&"DELETE a/dropped (abort multipart)".to_string()),
        "{sent:?}"
    );
    let fresh = storage.fresh();
    assert!(!fresh.exists(dropped));
    assert_eq!(fresh.read_all(done).unwrap().len(), (6 << 20) + 10);
}
