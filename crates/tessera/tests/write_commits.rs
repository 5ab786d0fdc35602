//! Commits consolidated and vacuumed: the array reads the same after each
//! step (the crash points between them included), a second consolidation
//! after a vacuum carries the deletes' conditions over from the first
//! `.con`, and vacuuming then leaves the newest `.con` alone.

mod common;

use common::copy_dir;
use std::path::Path;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{ReadRequest, ReadSession};
use tessera_storage::LocalFs;
use tessera_write::commits::{consolidate_commits, vacuum_commits};

fn cells(dir: &Path) -> Vec<String> {
    let array = Arc::new(OpenArray::open(&LocalFs, dir, 0, u64::MAX, None).unwrap());
    let r = ReadSession::new(Arc::new(LocalFs), array.clone())
        .execute(&ReadRequest::new())
        .unwrap();
    let mut rows: Vec<String> = (0..r.cell_count)
        .map(|i| {
            format!(
                "{:?}",
                r.columns
                    .iter()
                    .map(|c| c.value(i).to_vec())
                    .collect::<Vec<_>>()
            )
        })
        .collect();
    rows.sort();
    rows
}

fn commit_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("__commits"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn every_step_reads_the_same() {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/deletes/array");
    let dir = std::env::temp_dir().join(format!("tessera-commits-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&source, &dir);
    let want = cells(&dir);
    let first = consolidate_commits(&dir, None).unwrap().unwrap();
    assert_eq!(cells(&dir), want, "consolidated, not vacuumed");
    assert_eq!(vacuum_commits(&dir, None).unwrap(), 3);
    assert_eq!(commit_files(&dir), std::slice::from_ref(&first));
    assert_eq!(cells(&dir), want, "vacuumed");
    // A second consolidation: the delete's condition comes from the first
    // .con (its .del file is gone). libtiledb's vacuum reads a .con's raw
    // lines, so one holding a condition never names every commit: both
    // stay, as libtiledb leaves them.
    std::thread::sleep(std::time::Duration::from_millis(2));
    let second = consolidate_commits(&dir, None).unwrap().unwrap();
    let a = std::fs::read(dir.join("__commits").join(&first)).unwrap();
    let b = std::fs::read(dir.join("__commits").join(&second)).unwrap();
    assert_eq!(a, b, "the same commits, the same bytes");
    assert_eq!(cells(&dir), want, "two .con files");
    assert_eq!(vacuum_commits(&dir, None).unwrap(), 0);
    assert_eq!(commit_files(&dir).len(), 2);
    assert_eq!(cells(&dir), want, "two .con files, vacuumed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Without deletes, a .con naming every commit makes the others redundant:
/// the vacuum removes them.
#[test]
fn a_con_naming_every_commit_replaces_the_others() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/random_sparse/array");
    let dir = std::env::temp_dir().join(format!("tessera-commits-plain-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&source, &dir);
    let want = cells(&dir);
    let first = consolidate_commits(&dir, None).unwrap().unwrap();
    assert_eq!(vacuum_commits(&dir, None).unwrap(), 5);
    std::thread::sleep(std::time::Duration::from_millis(2));
    let second = consolidate_commits(&dir, None).unwrap().unwrap();
    assert_ne!(first, second);
    assert_eq!(vacuum_commits(&dir, None).unwrap(), 1);
    // The first complete one in name order stays, as libtiledb keeps it.
    let mut both = [first, second];
    both.sort();
    assert_eq!(commit_files(&dir), both[..1]);
    assert_eq!(cells(&dir), want);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A damaged consolidated commits file (a delete's condition size past
/// the file) is an error naming the file and the byte, not a panic.
#[test]
fn a_damaged_con_file_is_an_error() {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/deletes/array");
    let dir = std::env::temp_dir().join(format!("tessera-commits-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&source, &dir);
    let mut bytes = b"__commits/__2_2_0123456789abcdef0123456789abcdef_22.del\n".to_vec();
    let size_at = bytes.len(); // where the condition's size starts
    bytes.extend_from_slice(&u64::MAX.to_le_bytes());
    let name = "__2_2_fedcba9876543210fedcba9876543210_22.con";
    std::fs::write(dir.join("__commits").join(name), bytes).unwrap();
    let err = vacuum_commits(&dir, None).unwrap_err().to_string();
    let at = format!("byte {size_at}: the condition of");
    let past = err.contains("bytes) runs past the file");
    assert!(err.contains(name) && err.contains(&at) && past, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
