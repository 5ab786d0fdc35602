//! `tessera consolidate --mode fragments` and `tessera vacuum --mode
//! fragments` (`cargo xtask check-writes` compares them with libtiledb's
//! own consolidation, read by each TileDB-Py release): reads are the same
//! before and after, at the latest time and (with timestamps) at every
//! time; a kill after any step leaves an array that reads the same; reads
//! running beside consolidation and vacuum never see a partial state.

mod common;

use common::{copy_dir, tessera, testdata};
use std::path::{Path, PathBuf};

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fixture(dir: &Path, release: &str, case: &str) -> PathBuf {
    let to = dir.join(format!("{release}-{case}"));
    copy_dir(
        &testdata().join(format!("tiledb-{release}/{case}/array")),
        &to,
    );
    to
}

/// Cells read at `timestamp` (latest when `None`), sorted.
fn cells(array: &Path, timestamp: Option<u64>) -> Vec<String> {
    let a = array.display().to_string();
    let t = timestamp.map(|t| t.to_string());
    let mut args = vec!["read", a.as_str()];
    if let Some(t) = &t {
        args.extend(["--timestamp", t]);
    }
    let (ok, out, err) = tessera(&args);
    assert!(ok, "{a}: {err}");
    let mut lines: Vec<String> = out.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

fn fragments(array: &Path) -> usize {
    let (ok, out, err) = tessera(&["fragments", &array.display().to_string()]);
    assert!(ok, "{err}");
    out.lines().count()
}

fn run(args: &[&str]) {
    let (ok, _, err) = tessera(args);
    assert!(ok, "{args:?}: {err}");
}

#[test]
fn consolidated_fragments_read_as_before() {
    let dir = scratch("tessera-consolidate");
    let releases = ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"];
    let cases = [
        ("random_sparse", &[][..]),
        ("random_sparse", &["--without-timestamps"][..]),
        // Deletes after the first fragment: kept as delete metadata.
        ("deletes", &[][..]),
        ("deletes_consolidated", &[][..]),
        ("random_sparse", &["--with-timestamps"][..]),
        ("random_dense", &[][..]),
        ("dense_3d_overlaps", &[][..]),
        ("sparse_dups", &["--with-timestamps"][..]),
        ("deletes", &["--with-timestamps"][..]),
        ("deletes_overwritten", &["--with-timestamps"][..]),
        ("deletes_overwritten", &["--purge-deleted"][..]),
        // Purged in batches of a few cells: the reads with and without
        // the deletes walked side by side across batches.
        (
            "deletes_overwritten",
            &["--purge-deleted", "--budget", "600"][..],
        ),
        ("deletes", &["--purge-deleted", "--budget", "600"][..]),
        ("sparse_strings", &[][..]),
        // Batches of a few KiB: the fragment written tile by tile over many.
        (
            "random_sparse",
            &["--with-timestamps", "--budget", "12K"][..],
        ),
        ("sparse_long_strings", &["--budget", "12K"][..]),
        ("sparse_large", &["--budget", "64K"][..]),
    ];
    for release in releases {
        for (case, flags) in cases {
            if !testdata().join(format!("tiledb-{release}/{case}")).is_dir() {
                continue;
            }
            let a = fixture(&dir, release, case);
            let s = a.display().to_string();
            let before = cells(&a, None);
            let times: Vec<Option<u64>> = (1..=5).map(Some).collect();
            let before_at: Vec<Vec<String>> = times.iter().map(|t| cells(&a, *t)).collect();
            let n = fragments(&a);
            let mut args = vec!["consolidate", s.as_str()];
            args.extend(flags);
            run(&args);
            assert_eq!(cells(&a, None), before, "{release} {case} {flags:?}");
            run(&["vacuum", &s]);
            assert_eq!(
                cells(&a, None),
                before,
                "{release} {case} {flags:?} vacuumed"
            );
            assert_eq!(fragments(&a), n.min(1), "{release} {case}");
            // Sparse consolidations keep timestamps unless told not to
            // (a purge removes what earlier times saw).
            let sparse = !case.contains("dense");
            let purged = flags.contains(&"--purge-deleted");
            if sparse && !purged && !flags.contains(&"--without-timestamps") {
                for (t, want) in times.iter().zip(&before_at) {
                    assert_eq!(&cells(&a, *t), want, "{release} {case} at {t:?}");
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The files of the one fragment of `array`, by name.
fn fragment_files(array: &Path) -> Vec<(String, Vec<u8>)> {
    let frags: Vec<PathBuf> = std::fs::read_dir(array.join("__fragments"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(frags.len(), 1, "{}", array.display());
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&frags[0])
        .unwrap()
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// A dense consolidation under a budget of a few cells reads and writes
/// its box one row of space tiles at a time (along the first dimension
/// for row-major tile order, the last for col-major): the fragment is
/// byte for byte the one written from the whole box at once.
#[test]
fn dense_consolidation_in_bands_writes_the_whole_box_bytes() {
    let dir = scratch("tessera-consolidate-bands");
    for release in ["0.19.1", "0.36.1"] {
        for case in ["random_dense", "dense_3d_overlaps", "dense_1d_fragments"] {
            let whole = fixture(&dir, release, case);
            let banded = dir.join(format!("{release}-{case}-banded"));
            copy_dir(&whole, &banded);
            let (w, b) = (whole.display().to_string(), banded.display().to_string());
            let before = cells(&whole, None);
            run(&["consolidate", &w]);
            run(&["consolidate", &b, "--budget", "100"]);
            run(&["vacuum", &w]);
            run(&["vacuum", &b]);
            assert_eq!(cells(&banded, None), before, "{release} {case}");
            let (fw, fb) = (fragment_files(&whole), fragment_files(&banded));
            assert_eq!(
                fw.iter().map(|f| &f.0).collect::<Vec<_>>(),
                fb.iter().map(|f| &f.0).collect::<Vec<_>>()
            );
            for ((name, a), (_, b)) in fw.iter().zip(&fb) {
                assert!(
                    a == b,
                    "{release} {case}: {name} differs when written in bands"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn consolidation_is_refused_where_it_would_read_differently() {
    let dir = scratch("tessera-consolidate-refused");
    let deletes = fixture(&dir, "0.36.1", "deletes");
    let s = deletes.display().to_string();
    // Newest versions alone: a delete among the fragments would delete
    // them again.
    let (ok, _, err) = tessera(&["consolidate", &s, "--without-timestamps"]);
    assert!(!ok && err.contains("--purge-deleted"), "{err}");
    let dense = fixture(&dir, "0.36.1", "random_dense");
    let d = dense.display().to_string();
    let (ok, _, err) = tessera(&["consolidate", &d, "--with-timestamps"]);
    assert!(!ok && err.contains("sparse fragments only"), "{err}");
    // A window leaving out an older fragment the box overlaps.
    let overlaps = fixture(&dir, "0.36.1", "dense_3d_overlaps");
    let o = overlaps.display().to_string();
    let (ok, _, err) = tessera(&["consolidate", &o, "--timestamp", "2:3"]);
    assert!(!ok && err.contains("overlaps the older fragment"), "{err}");
    let (ok, _, err) = tessera(&["consolidate", &s, "--mode", "fragment"]);
    assert!(!ok && err.contains("expected fragments, commits"), "{err}");
    // Nothing written by a refusal.
    assert_eq!(fragments(&deletes), 2);
    assert!(!std::fs::read_dir(deletes.join("__commits"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().ends_with(".vac")));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The process aborted (as a kill would stop it) after each step of
/// consolidation and of vacuum: the array reads the same, at the latest
/// time and at every time (timestamps kept), and finishing the work
/// afterwards leaves it reading the same.
#[test]
fn a_kill_after_any_step_leaves_the_array_reading_the_same() {
    let dir = scratch("tessera-consolidate-crash");
    let tessera_bin = env!("CARGO_BIN_EXE_tessera");
    let killed = |args: &[&str], step: &str| {
        let out = std::process::Command::new(tessera_bin)
            .args(args)
            .env("TESSERA_CRASH_AFTER", step)
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "{args:?} was not stopped after {step}"
        );
    };
    let original = fixture(&dir, "0.36.1", "random_sparse");
    let times: Vec<Option<u64>> = [None].into_iter().chain((1..=5).map(Some)).collect();
    let want: Vec<Vec<String>> = times.iter().map(|t| cells(&original, *t)).collect();
    let check = |a: &Path, what: &str| {
        for (t, w) in times.iter().zip(&want) {
            assert_eq!(&cells(a, *t), w, "{what}: at {t:?}");
        }
    };
    for step in ["FragmentWritten", "Committed", "VacuumListed"] {
        let a = dir.join(format!("c-{step}"));
        copy_dir(&original, &a);
        let s = a.display().to_string();
        killed(&["consolidate", &s, "--with-timestamps"], step);
        check(&a, step);
        // Finishing afterwards: consolidating again (a half-done
        // consolidation left nothing visible to redo) and vacuuming.
        if step == "FragmentWritten" {
            run(&["consolidate", &s, "--with-timestamps"]);
        }
        run(&["vacuum", &s]);
        check(&a, &format!("{step}, then finished"));
    }
    for step in ["CommitRemoved", "FolderRemoved", "VacuumListRemoved"] {
        let a = dir.join(format!("v-{step}"));
        copy_dir(&original, &a);
        let s = a.display().to_string();
        run(&["consolidate", &s, "--with-timestamps"]);
        killed(&["vacuum", &s], step);
        check(&a, step);
        run(&["vacuum", &s]);
        check(&a, &format!("{step}, then vacuumed"));
        assert_eq!(fragments(&a), 1);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--recursive`: every array of a SOMA experiment consolidated, then
/// vacuumed, a line per array; each reads as before with one fragment.
/// A member that cannot be done is named, the others done, and the run
/// fails saying to run it again.
#[test]
fn a_group_tree_is_consolidated_and_vacuumed_array_by_array() {
    let dir = scratch("tessera-tree");
    let exp = dir.join("experiment");
    copy_dir(
        &testdata().join("soma/experiment_appended/experiment"),
        &exp,
    );
    let e = exp.display().to_string();
    let arrays = ["obs", "ms/RNA/var", "ms/RNA/X/data", "ms/RNA/X/counts"];
    let before: Vec<Vec<String>> = arrays.iter().map(|a| cells(&exp.join(a), None)).collect();
    assert!(fragments(&exp.join("obs")) > 1);
    for command in ["consolidate", "vacuum"] {
        let (ok, _, err) = tessera(&[command, &e, "--recursive", "--jobs", "3"]);
        assert!(ok, "{command}: {err}");
        assert!(err.starts_with("6 arrays\n"), "{err}");
        assert_eq!(
            err.lines().filter(|l| l.starts_with('[')).count(),
            6,
            "{err}"
        );
    }
    for (a, cells_before) in arrays.iter().zip(&before) {
        assert_eq!(&cells(&exp.join(a), None), cells_before, "{a}");
        assert_eq!(fragments(&exp.join(a)), 1, "{a}");
    }
    let (ok, _, err) = tessera(&["vacuum", &e, "--recursive", "--mode", "fragments"]);
    assert!(ok && err.contains("fragments: nothing to vacuum"), "{err}");
    std::fs::remove_dir_all(exp.join("obs/__schema")).unwrap();
    let (ok, _, err) = tessera(&["consolidate", &e, "--recursive"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("obs") && err.contains("FAILED") && err.contains("run again"),
        "{err}"
    );
    assert!(err.contains("[") && err.contains("ms/RNA/var"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
