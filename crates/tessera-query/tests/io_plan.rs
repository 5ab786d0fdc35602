//! The I/O plan: the exact files listed and byte ranges read to open an
//! array and to answer typical reads, snapshot-tested so that a change that
//! multiplies requests (costly on object stores) fails here. Requests made
//! in parallel are sorted; their number and ranges are what matter.

use std::path::Path;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{ReadRequest, ReadSession, Value};
use tessera_storage::{LocalFs, Recording};

fn plan(case: &str, read: impl Fn(&Arc<Recording<LocalFs>>, &Arc<OpenArray>)) -> String {
    let array = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(case)
        .join("array");
    let rec = Arc::new(Recording::new(LocalFs, &array));
    let a = Arc::new(OpenArray::open(&*rec, &array, 0, u64::MAX, None).unwrap());
    let mut open = rec.requests();
    open.sort();
    let n = open.len();
    read(&rec, &a);
    let mut reads = rec.requests().split_off(n);
    reads.sort();
    assert_neighbours_coalesced(&reads);
    format!(
        "open ({} requests):\n  {}\nread ({} requests):\n  {}\n",
        open.len(),
        open.join("\n  "),
        reads.len(),
        reads.join("\n  ")
    )
}

/// Tiles that lie back to back in a file are read with one request: no two
/// ranges read from a data file touch. (Metadata sections are read on
/// demand, one at a time, and are not checked here.)
fn assert_neighbours_coalesced(reads: &[String]) {
    let mut ranges: Vec<(&str, u64, u64)> = reads
        .iter()
        .filter_map(|r| {
            let (file, range) = r.strip_prefix("read ")?.rsplit_once(' ')?;
            let (a, b) = range.split_once("..")?;
            Some((file, a.parse().ok()?, b.parse().ok()?))
        })
        .filter(|(file, _, _)| !file.ends_with("__fragment_metadata.tdb"))
        .collect();
    ranges.sort();
    for w in ranges.windows(2) {
        assert!(
            !(w[0].0 == w[1].0 && w[0].2 == w[1].1),
            "neighbouring tiles of {} read apart: {}..{} and {}..{}",
            w[0].0,
            w[0].1,
            w[0].2,
            w[1].1,
            w[1].2
        );
    }
}

#[test]
fn consolidated_footers_spare_the_fragment_metadata_files() {
    let p = plan("tiledb-0.36.1/consolidated", |_, _| {});
    // Every fragment is listed in the consolidated .meta file: opening reads
    // no fragment's own metadata file.
    assert!(!p.contains("__fragment_metadata.tdb"), "{p}");
    insta::assert_snapshot!(p);
}

#[test]
fn sparse_subarray_read() {
    insta::assert_snapshot!(plan("tiledb-0.36.1/sparse_2d", |s, a| {
        let d = &a.schema.dimensions[0].name;
        ReadSession::new(s.clone(), a.clone())
            .execute(&ReadRequest::new().range(d, Value::Int(0), Value::Int(3)))
            .unwrap();
    }));
}

#[test]
fn dense_full_read_over_fragments() {
    insta::assert_snapshot!(plan("tiledb-0.36.1/dense_1d_fragments", |s, a| {
        ReadSession::new(s.clone(), a.clone())
            .execute(&ReadRequest::new())
            .unwrap();
    }));
}

#[test]
fn sparse_full_read_over_fragments_with_var_and_nullable_fields() {
    insta::assert_snapshot!(plan("tiledb-0.36.1/random_sparse", |s, a| {
        ReadSession::new(s.clone(), a.clone())
            .execute(&ReadRequest::new())
            .unwrap();
    }));
}
