//! Reads running while fragments are consolidated and vacuumed never see a
//! partial state: every read, from opening the array to its last cell,
//! returns the cells the array held before (a read whose files a vacuum
//! removed under it fails, and is retried: it never returns other cells).

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{QuerySource, ReadRequest, ReadSession};
use tessera_storage::LocalFs;
use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};

/// The array's cells, one string per cell, sorted; `None` when the read
/// failed.
fn cells(array: &Path) -> Option<Vec<String>> {
    let opened = Arc::new(OpenArray::open(&LocalFs, array, 0, u64::MAX, None).ok()?);
    let r = ReadSession::new(Arc::new(LocalFs), opened.clone())
        .execute(&ReadRequest::new())
        .ok()?;
    let mut out: Vec<String> = (0..r.cell_count)
        .map(|i| {
            r.columns
                .iter()
                .map(|c| format!("{:?}", c.value(i)))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    out.sort();
    Some(out)
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn reads_beside_consolidation_and_vacuum_see_the_same_cells() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1");
    for (case, with_timestamps) in [
        ("random_sparse", true),
        ("random_sparse", false),
        ("random_dense", false),
    ] {
        let array = scratch(&format!("tessera-concurrent-{case}-{with_timestamps}"));
        common::copy_dir(&testdata.join(case).join("array"), &array);
        let want = cells(&array).unwrap();
        let done = AtomicBool::new(false);
        let (reads, failed) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    while !done.load(Ordering::Relaxed) {
                        match cells(&array) {
                            Some(got) => {
                                assert_eq!(got, want, "{case}: a read saw other cells");
                                reads.fetch_add(1, Ordering::Relaxed);
                            }
                            None => {
                                failed.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
            // Each step held a while, so that reads run in every state.
            let pause = || std::thread::sleep(std::time::Duration::from_millis(30));
            pause();
            let options = ConsolidateOptions {
                with_timestamps: Some(with_timestamps),
                ..ConsolidateOptions::default()
            };
            consolidate_fragments(&array, &options, &QuerySource, &mut |_| pause())
                .unwrap()
                .unwrap();
            vacuum_fragments(&array, None, &mut |_| pause()).unwrap();
            pause();
            done.store(true, Ordering::Relaxed);
        });
        assert_eq!(cells(&array).unwrap(), want);
        let (reads, failed) = (reads.into_inner(), failed.into_inner());
        eprintln!("{case} (timestamps: {with_timestamps}): {reads} reads equal, {failed} failed and retried");
        assert!(
            reads >= 10,
            "{case}: only {reads} reads ran beside the work"
        );
        assert!(
            failed <= reads,
            "{case}: {failed} reads failed, {reads} succeeded"
        );
        std::fs::remove_dir_all(&array).unwrap();
    }
}
