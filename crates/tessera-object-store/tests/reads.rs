//! How a storage reads: wanted ranges merged into spans and fetched in
//! requests of the tuned size, each byte once; a range past the end of an
//! object the listings know is an error before any request.

mod common;

use common::stored;
use std::path::{Path, PathBuf};
use tessera_object_store::{
    ListableStorage, ObjectStorage, ReadableStorage, StorageErrorKind, StoreTuning, WritableStorage,
};

#[test]
fn spans_come_whole_from_requests_of_the_tuned_size() {
    let tuning = StoreTuning {
        request_size: Some(1000),
        concurrency: 3,
        ..StoreTuning::for_scheme("s3")
    };
    let s = ObjectStorage::for_uri("memory://b")
        .unwrap()
        .with_tuning(tuning);
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    s.put(Path::new("memory://b/f.tdb"), &bytes).unwrap();
    s.record_requests();
    let f = PathBuf::from("memory://b/f.tdb");
    let wanted = [
        (f.clone(), 0..4500),
        (f.clone(), 4000..4200),
        (f, 9000..10_000),
    ];
    let got = s.read_batch(&wanted).unwrap();
    for ((_, r), g) in wanted.iter().zip(&got) {
        assert_eq!(g.as_slice(), &bytes[r.start as usize..r.end as usize]);
    }
    // Within the coalesce gap: one span, 0..10000, in ten requests of
    // 1000 bytes that fetch each byte once.
    let mut ranges: Vec<(u64, u64)> = s
        .requests()
        .iter()
        .map(|r| {
            assert_eq!(r.method, "GET");
            let (a, b) = r.range.split_once("..").expect("a ranged GET");
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    ranges.sort_unstable();
    assert_eq!(ranges.len(), 10);
    assert!(ranges.windows(2).all(|w| w[0].1 == w[1].0));
    assert_eq!((ranges[0].0, ranges[9].1), (0, 10_000));
}

/// Each failure names the object and says what kind it is: a missing
/// object, a key of another bucket, a conditional put that found one, a
/// folder where an object was asked for; a missing folder lists empty.
#[test]
fn failures_name_the_object_and_their_kind() {
    let s = ObjectStorage::for_uri("memory://b").unwrap();
    s.put(Path::new("memory://b/a/f.tdb"), b"bytes").unwrap();
    let kind_and_key = |e: tessera_object_store::StorageError| (e.kind(), e.key().to_owned());
    let missing = s.read_all(Path::new("memory://b/a/gone.tdb")).unwrap_err();
    assert!(
        missing.is_not_found() && missing.to_string().contains("gone.tdb"),
        "{missing}"
    );
    assert!(tessera_storage::is_missing_file(&missing));
    let missing = s.read_range(Path::new("memory://b/a/gone.tdb"), 0..2);
    assert_eq!(
        kind_and_key(missing.unwrap_err()),
        (StorageErrorKind::NotFound, "memory://b/a/gone.tdb".into())
    );
    let size = s.size(Path::new("memory://b/a/gone.tdb")).unwrap_err();
    assert_eq!(size.kind(), StorageErrorKind::NotFound);
    let folder = s.size(Path::new("memory://b/a")).unwrap_err();
    assert_eq!(
        kind_and_key(folder),
        (StorageErrorKind::InvalidKey, "memory://b/a".into())
    );
    let elsewhere = s.read_all(Path::new("memory://other/f.tdb")).unwrap_err();
    assert_eq!(
        kind_and_key(elsewhere),
        (StorageErrorKind::InvalidKey, "memory://other/f.tdb".into())
    );
    let again = s
        .put_new(Path::new("memory://b/a/f.tdb"), b"other")
        .unwrap_err();
    assert_eq!(again.kind(), StorageErrorKind::AlreadyExists, "{again}");
    assert_eq!(
        s.read_all(Path::new("memory://b/a/f.tdb")).unwrap(),
        b"bytes"
    );
    assert!(s.list(Path::new("memory://b/none")).unwrap().is_empty());
}

#[test]
fn a_range_past_a_listed_object_is_an_error_before_any_request() {
    let s = ObjectStorage::for_uri("memory://b").unwrap();
    s.put(Path::new("memory://b/a/f.tdb"), &[7; 100]).unwrap();
    // The folder's listing is kept from here on: it knows the size.
    assert_eq!(s.list(Path::new("memory://b/a")).unwrap().len(), 1);
    s.record_requests();
    let err = s
        .read_batch(&[("memory://b/a/f.tdb".into(), 50..(1u64 << 60))])
        .unwrap_err();
    assert_eq!(err.kind(), tessera_storage::StorageErrorKind::OutOfRange);
    assert_eq!(err.key(), "memory://b/a/f.tdb");
    assert!(
        err.to_string().contains("asked of an object of 100 bytes"),
        "{err}"
    );
    assert!(s.requests().is_empty());
    assert_eq!(
        s.read_range(Path::new("memory://b/a/f.tdb"), 90..100)
            .unwrap(),
        [7; 10]
    );
}

/// Fixtures of each kind: dense, sparse, nullable var-sized, enumerated.
const CASES: [&str; 4] = [
    "dense_large",
    "sparse_2d",
    "dense_nullable_var",
    "enumerations",
];

/// `case` in a memory store: the storage, the array's URI, a session over
/// a storage of its own, and a request of small batches.
fn case_read(
    case: &str,
) -> (
    ObjectStorage,
    String,
    tessera_query::ReadSession,
    tessera_query::ReadRequest,
) {
    let (storage, uri) = stored(case);
    let request = tessera_query::ReadRequest::new().budget(4 << 10);
    let fresh = std::sync::Arc::new(storage.fresh());
    let session = tessera_query::ReadSession::open(fresh, uri.as_ref(), None).unwrap();
    (storage, uri, session, request)
}

/// On the caller's runtime (`on_runtime`), a read awaited as a stream
/// returns what the synchronous read over the storage's own runtime
/// does, and the storage starts no runtime: on a current-thread runtime
/// (the array opened on a thread of its own, the batches awaited on the
/// runtime's one thread) and on a multi-thread one (opened inside a task);
/// and so does the read that awaits the store (`ReadSession::awaiting`),
/// decoding on rayon's pool.
#[test]
fn a_read_awaited_on_the_callers_runtime_starts_no_runtime_of_its_own() {
    use futures::StreamExt;
    use std::sync::Arc;
    use tessera_query::stream::{stream, stream_async};
    use tessera_query::ReadSession;
    for case in CASES {
        let (storage, uri, session, request) = case_read(case);
        let want: Vec<_> = stream(session, request.clone())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        if case == "dense_large" || case == "sparse_2d" {
            assert!(want.len() > 1, "{case}: {} batches", want.len());
        }
        let current = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        for rt in [current, multi] {
            let flavor = format!("{:?}", rt.handle().runtime_flavor());
            let current =
                rt.handle().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread;
            let on = storage.fresh().on_runtime(rt.handle().clone());
            let (on2, uri, request) = (on.clone(), uri.clone(), request.clone());
            let awaited: Arc<dyn tessera_storage::AsyncStorage> = Arc::new(on.clone());
            let (got, got_awaited): (Vec<_>, Vec<_>) = rt.block_on(async move {
                let open = move || ReadSession::open(Arc::new(on2), uri.as_ref(), None).unwrap();
                let session = match current {
                    true => {
                        let (tx, rx) = futures::channel::oneshot::channel();
                        std::thread::spawn(move || tx.send(open()));
                        rx.await.unwrap()
                    }
                    false => tokio::spawn(async move { open() }).await.unwrap(),
                };
                let batches = stream_async(session.clone(), request.clone())
                    .await
                    .unwrap();
                let got = batches.map(Result::unwrap).collect().await;
                // Awaited: decoded on rayon's pool, the store's answers
                // awaited on the runtime.
                let session = session.awaiting(awaited);
                let batches = stream_async(session, request).await.unwrap();
                (got, batches.map(Result::unwrap).collect().await)
            });
            assert_eq!(got, want, "{case} on {flavor}");
            assert_eq!(got_awaited, want, "{case} on {flavor}, awaited");
            assert!(!on.started_own_runtime(), "{case} on {flavor}");
        }
    }
}

/// The push decoder, which does no I/O, answered by the storage awaited
/// on a current-thread runtime (`AsyncStorage`), reads what the read over
/// the storage reads, and the storage starts no runtime of its own.
#[test]
fn a_push_decoder_awaits_the_storage_on_the_callers_runtime() {
    use futures::StreamExt;
    use std::sync::Arc;
    use tessera_query::push::PushDecoder;
    for case in CASES {
        let (storage, uri, session, request) = case_read(case);
        let want: Vec<_> = session
            .batches(&request)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let on = storage.fresh().on_runtime(rt.handle().clone());
        let decoder = PushDecoder::new(uri.as_ref(), None, request);
        let got: Vec<_> = rt.block_on(decoder.stream_from(Arc::new(on.clone())).collect());
        assert_eq!(got.len(), want.len(), "{case}");
        for (g, w) in got.into_iter().zip(&want) {
            let g = g.unwrap();
            assert_eq!(g.cell_count, w.cell_count, "{case}");
            let same = g.columns.len() == w.columns.len()
                && g.columns.iter().zip(&w.columns).all(|(a, b)| {
                    a.name == b.name
                        && a.data == b.data
                        && a.offsets == b.offsets
                        && a.validity == b.validity
                });
            assert!(same, "{case}");
        }
        assert!(!on.started_own_runtime(), "{case}");
    }
}
