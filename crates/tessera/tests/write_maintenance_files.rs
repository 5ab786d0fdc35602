//! What consolidation and vacuum leave, in libtiledb's own form: delete
//! metadata where delete commits come after the first fragment (cells
//! kept, marked with when and by which commit), and ignore files whose
//! lines read as the consolidated commits file's (libtiledb matches the
//! two as text). `cargo xtask check-writes` has libtiledb read these
//! arrays after every step; here the form is checked without Python.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{
    QuerySource, ReadRequest, ReadSession, DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS,
};
use tessera_storage::LocalFs;
use tessera_write::commits::consolidate_commits;
use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};

fn copy_of(release: &str, case: &str, tag: &str) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(format!("tiledb-{release}/{case}/array"));
    let to = std::env::temp_dir().join(format!("tessera-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&to);
    common::copy_dir(&from, &to);
    to
}

/// Every cell read at `end`, one string each, sorted.
fn cells_at(array: &Path, end: u64) -> Vec<String> {
    let opened = Arc::new(OpenArray::open(&LocalFs, array, 0, end, None).unwrap());
    let r = ReadSession::new(Arc::new(LocalFs), opened.clone())
        .execute(&ReadRequest::new())
        .unwrap();
    let mut out: Vec<String> = (0..r.cell_count)
        .map(|i| {
            format!(
                "{:?}",
                r.columns.iter().map(|c| c.value(i)).collect::<Vec<_>>()
            )
        })
        .collect();
    out.sort();
    out
}

fn u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn deletes_after_the_first_fragment_are_kept_as_delete_metadata() {
    for release in ["0.23.5", "0.36.1"] {
        let array = copy_of(release, "deletes", &format!("delete-meta-{release}"));
        let times = [1, 2, 3, u64::MAX];
        let before: Vec<Vec<String>> = times.iter().map(|&t| cells_at(&array, t)).collect();
        let done = consolidate_fragments(
            &array,
            &ConsolidateOptions::default(),
            &QuerySource,
            &mut |_| {},
        )
        .unwrap()
        .unwrap();
        vacuum_fragments(&array, None, &mut |_| {}).unwrap();
        // The fragment keeps timestamps and delete metadata, as libtiledb's.
        let folder = array.join("__fragments").join(&done.fragment);
        for file in ["t.tdb", "dt.tdb", "dci.tdb"] {
            assert!(folder.join(file).is_file(), "{release}: no {file}");
        }
        let opened = Arc::new(OpenArray::open(&LocalFs, &array, 0, u64::MAX, None).unwrap());
        let [fragment] = &opened.fragments[..] else {
            panic!("{release}: {} fragments", opened.fragments.len());
        };
        assert!(fragment.footer.has_delete_meta);
        let [delete] = &opened.delete_conditions[..] else {
            panic!("{release}: the delete commit stays");
        };
        let processed = fragment.processed_conditions(&LocalFs).unwrap();
        assert_eq!(processed, [format!("__commits/{}", delete.name)]);
        // Every time reads as before: the deleted versions are there,
        // marked, for reads before the delete.
        for (&t, want) in times.iter().zip(&before) {
            assert_eq!(&cells_at(&array, t), want, "{release} at {t}");
        }
        // The marks: the versions the delete removes carry its timestamp
        // and index, the others none.
        let all = ReadSession::new(Arc::new(LocalFs), opened.clone())
            .execute(&ReadRequest::new().versions(true).delete_metadata(true))
            .unwrap();
        let marks = u64s(&all.column(DELETE_TIMESTAMPS).unwrap().data);
        let indexes = u64s(&all.column(DELETE_CONDITION_INDEX).unwrap().data);
        let deleted = marks.iter().filter(|&&m| m != u64::MAX).count();
        assert_eq!(all.cell_count, done.cells);
        assert_eq!(all.cell_count - deleted, before[3].len(), "{release}");
        for (m, i) in marks.iter().zip(&indexes) {
            match *m {
                u64::MAX => assert_eq!(*i, u64::MAX),
                t => assert_eq!((t, *i), (delete.timestamp, 0)),
            }
        }
        std::fs::remove_dir_all(&array).unwrap();
    }
}

#[test]
fn ignore_lists_name_commits_as_consolidated_commits_files_do() {
    let array = copy_of("0.36.1", "random_sparse", "ignore-list");
    consolidate_commits(&array, None).unwrap().unwrap();
    let done = consolidate_fragments(
        &array,
        &ConsolidateOptions::default(),
        &QuerySource,
        &mut |_| {},
    )
    .unwrap()
    .unwrap();
    vacuum_fragments(&array, None, &mut |_| {}).unwrap();
    let commits = array.join("__commits");
    let names: Vec<String> = std::fs::read_dir(&commits)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let ign: Vec<&String> = names.iter().filter(|n| n.ends_with(".ign")).collect();
    let [ign] = &ign[..] else {
        panic!("ignore files: {ign:?}");
    };
    let text = std::fs::read_to_string(commits.join(ign)).unwrap();
    let mut want: Vec<String> = done
        .replaced
        .iter()
        .map(|f| format!("__commits/{f}.wrt"))
        .collect();
    want.sort();
    assert_eq!(text.lines().collect::<Vec<_>>(), want);
    // Named from the first commit's start to the last's end.
    let first = &done.replaced[0];
    assert!(
        ign.starts_with(&first[..first.find('_').unwrap() + 3]),
        "{ign}"
    );
    let con = names.iter().find(|n| n.ends_with(".con")).unwrap();
    let listed = std::fs::read_to_string(commits.join(con)).unwrap();
    for line in text.lines() {
        assert!(listed.lines().any(|l| l == line), "{line} not in {con}");
    }
    std::fs::remove_dir_all(&array).unwrap();
}

#[test]
fn a_wrong_key_is_refused_before_a_vacuum_removes_anything() {
    let array = copy_of("0.36.1", "encrypted_fragments", "vacuum-key");
    let key = tessera_filters::EncryptionKey::parse(
        "3031323334353637383961626364654630313233343536373839616263646546",
    )
    .unwrap();
    let options = ConsolidateOptions {
        key: Some(key),
        ..ConsolidateOptions::default()
    };
    consolidate_fragments(&array, &options, &QuerySource, &mut |_| {})
        .unwrap()
        .unwrap();
    let wrong = tessera_filters::EncryptionKey::parse(&"ab".repeat(32)).unwrap();
    let err = vacuum_fragments(&array, Some(wrong), &mut |_| {}).unwrap_err();
    assert!(
        err.to_string().contains("the key does not open the array"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(array.join("__fragments"))
            .unwrap()
            .count(),
        4
    );
    assert_eq!(vacuum_fragments(&array, Some(key), &mut |_| {}).unwrap(), 3);
    std::fs::remove_dir_all(&array).unwrap();
}
