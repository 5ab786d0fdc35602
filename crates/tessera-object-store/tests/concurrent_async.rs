//! Many writers on one object store, awaited: two asynchronous fragment
//! writers, the asynchronous maintenance (fragments, commits and fragment
//! metadata consolidated, every vacuum) on a runtime of the caller's, a
//! synchronous fragment consolidator, and a reader, all at once on one
//! sparse array. Every read sees whole writes only, never loses one it
//! saw, and at the end every cell written is there once: in memory, on
//! moto, a real S3 server, and on Azurite, Azure's storage emulator
//! (`tessera_emulators`; CI sets `TESSERA_MOTO_SERVER` and
//! `TESSERA_AZURITE`). Not on fake-gcs-server: it ignores the condition of
//! the conditional puts object_store sends (`x-goog-if-generation-match:
//! 0` on an XML upload), so two writers there can both take one name,
//! which GCS refuses (docs/ROBUSTNESS.md).

mod common;

use common::fixed;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tessera_cells::Column;
use tessera_object_store::ObjectStorage;
use tessera_query::{QuerySource, ReadRequest, ReadSession};
use tessera_schema::json::schema_from_json;
use tessera_storage::{AsyncLocation, Location};
use tessera_tile::Datatype;
use tessera_write::consolidate::{consolidate_fragments, ConsolidateOptions};
use tessera_write::{create_array, latest_schema, maintain_async, AsyncFragmentWriter};

const WRITES: i64 = 40;
const CELLS: i64 = 10;

/// Write `k` of writer `w`: cells `x` in `[(w * WRITES + k) * CELLS, +CELLS)`,
/// `v = x` (so a read shows which writes it holds, and whole).
fn cells(w: i64, k: i64) -> Vec<Column> {
    let first = (w * WRITES + k) * CELLS;
    let x: Vec<i64> = (first..first + CELLS).rev().collect();
    vec![
        fixed(
            "x",
            Datatype::Int64,
            x.iter().flat_map(|i| i.to_le_bytes()).collect(),
        ),
        fixed(
            "v",
            Datatype::Int64,
            x.iter().flat_map(|i| i.to_le_bytes()).collect(),
        ),
    ]
}

/// The writes a read of the array holds (by `x / CELLS`), each checked
/// whole and once, its values its own.
fn writes_seen(storage: &ObjectStorage, uri: &str) -> BTreeSet<i64> {
    let session = ReadSession::open(Arc::new(storage.fresh()), Path::new(uri), None).unwrap();
    let read = session.execute(&ReadRequest::new()).unwrap();
    let ints = |c: &Column| -> Vec<i64> {
        (c.data.chunks_exact(8))
            .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
            .collect()
    };
    let x = ints(&read.columns[0]);
    let v = ints(&read.columns[1]);
    assert_eq!(x, v, "values are the cells' own");
    let mut sorted = x.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), x.len(), "no cell twice");
    let seen: BTreeSet<i64> = x.iter().map(|x| x / CELLS).collect();
    for write in &seen {
        let whole = (write * CELLS..(write + 1) * CELLS).all(|x| sorted.binary_search(&x).is_ok());
        assert!(whole, "write {write} seen in part: {sorted:?}");
    }
    seen
}

#[test]
fn async_writers_maintenance_consolidation_and_a_reader_at_once_in_memory() {
    let storage = ObjectStorage::for_uri("memory://concurrent").unwrap();
    all_at_once(storage, "memory://concurrent/a");
}

#[test]
fn async_writers_maintenance_consolidation_and_a_reader_at_once_on_s3() {
    let Some(moto) = tessera_emulators::moto::moto() else {
        return;
    };
    let storage = moto.with_env(|| ObjectStorage::for_uri(&moto.root).unwrap());
    all_at_once(storage, &format!("{}/concurrent/a", moto.root));
}

#[test]
fn async_writers_maintenance_consolidation_and_a_reader_at_once_on_azure() {
    let Some(azurite) = tessera_emulators::azurite::azurite() else {
        return;
    };
    let storage = azurite.with_env(|| ObjectStorage::for_uri(&azurite.root).unwrap());
    all_at_once(storage, &format!("{}/concurrent/a", azurite.root));
}

/// Two awaited writers, the awaited maintenance, a consolidator and a
/// reader at once on a new array at `uri` (see the module).
fn all_at_once(storage: ObjectStorage, uri: &str) {
    let doc = schema_from_json(&serde_json::json!({
        "array_type": "sparse",
        "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9_999], "tile_extent": 100}],
        "attributes": [{"name": "v", "type": "INT64"}],
    }))
    .unwrap();
    create_array(
        Location::new(Arc::new(storage.clone()), uri),
        &doc,
        None,
        None,
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let on = storage.fresh().on_runtime(rt.handle().clone());
    let writing = Arc::new(AtomicBool::new(true));

    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (on, uri) = (on.clone(), uri.to_owned());
            rt.spawn(async move {
                for k in 0..WRITES {
                    let schema = latest_schema(&on, Path::new(&uri), None).await?;
                    let options = tessera_write::WriteOptions::default();
                    let mut writer =
                        AsyncFragmentWriter::new(Arc::new(on.clone()), &uri, schema, options)?;
                    writer.write(cells(w, k)).await?;
                    writer.finish().await?;
                }
                Ok::<_, tessera_write::WriteError>(())
            })
        })
        .collect();
    let maintainer = {
        let (at, writing) = (
            AsyncLocation::new(Arc::new(on.clone()), uri),
            writing.clone(),
        );
        rt.spawn(async move {
            let (mut rounds, mut consolidated) = (0, 0);
            let options = ConsolidateOptions::default();
            while writing.load(Ordering::SeqCst) || rounds < 2 {
                let done = maintain_async::consolidate_fragments(&at, &options, &QuerySource);
                consolidated += done.await?.is_some() as usize;
                maintain_async::consolidate_commits(&at, None).await?;
                maintain_async::consolidate_fragment_meta(&at, None).await?;
                maintain_async::vacuum_fragments(&at, None, None).await?;
                maintain_async::vacuum_commits(&at, None).await?;
                maintain_async::vacuum_fragment_meta(&at, None).await?;
                rounds += 1;
            }
            Ok::<_, tessera_write::WriteError>((rounds, consolidated))
        })
    };
    let consolidator = {
        let (storage, writing, uri) = (storage.clone(), writing.clone(), uri.to_owned());
        std::thread::spawn(move || {
            let mut done = 0;
            while writing.load(Ordering::SeqCst) {
                let at = Location::new(Arc::new(storage.fresh()), &uri);
                let options = ConsolidateOptions::default();
                done += consolidate_fragments(at, &options, &QuerySource, &mut |_| {})
                    .unwrap()
                    .is_some() as usize;
            }
            done
        })
    };
    let reader = {
        let (storage, writing, uri) = (storage.clone(), writing.clone(), uri.to_owned());
        std::thread::spawn(move || {
            let mut before = BTreeSet::new();
            let mut reads = 0;
            while writing.load(Ordering::SeqCst) {
                let seen = writes_seen(&storage, &uri);
                assert!(
                    seen.is_superset(&before),
                    "a write seen was lost: {before:?} then {seen:?}"
                );
                before = seen;
                reads += 1;
            }
            reads
        })
    };

    for w in writers {
        rt.block_on(w).unwrap().unwrap();
    }
    writing.store(false, Ordering::SeqCst);
    let consolidations = consolidator.join().unwrap();
    let reads = reader.join().unwrap();
    let (rounds, awaited) = rt.block_on(maintainer).unwrap().unwrap();
    assert!(!on.started_own_runtime());
    let all: BTreeSet<i64> = (0..2 * WRITES).collect();
    assert_eq!(writes_seen(&storage, uri), all);
    assert!(
        reads > 0 && rounds >= 2,
        "{reads} reads, {rounds} rounds of maintenance"
    );
    assert!(
        awaited > 0,
        "the awaited maintenance consolidated no fragments"
    );
    eprintln!(
        "{consolidations} consolidations, {rounds} rounds of maintenance ({awaited} consolidations), {reads} reads"
    );
}
