//! How a storage reads: wanted ranges merged into spans and fetched in
//! requests of the tuned size, each byte once; a range past the end of an
//! object the listings know is an error before any request.

use std::path::{Path, PathBuf};
use tessera_object_store::{
    ListableStorage, ObjectStorage, ReadableStorage, StoreTuning, WritableStorage,
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
    assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
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
