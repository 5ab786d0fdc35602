//! Hostile input: truncate every file of several fixtures at many points and
//! flip bytes in every region; opening and reading must return an error or a
//! result, never panic. Reads are whole, and also picking: half the first
//! dimension with a condition on the first attribute, by both paths.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{Expr, ReadRequest, ReadSession, Value};
use tessera_storage::LocalFs;

const CASES: &[&str] = &[
    "tiledb-0.36.1/dense_1d_fragments",
    "tiledb-0.36.1/sparse_strings",
    "tiledb-0.36.1/filter_pipeline",
    "tiledb-0.36.1/filter_strings",
    "tiledb-0.36.1/consolidated",
    "tiledb-0.36.1/deletes",
    "tiledb-0.19.1/dense_nullable_var",
    "tiledb-0.19.1/filter_double_delta",
    "tiledb-0.23.5/enumerations",
    "tiledb-0.36.1/encrypted",
    "tiledb-0.36.1/sparse_long_strings",
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (s, d) = (e.path(), to.join(e.file_name()));
        if s.is_dir() {
            copy_dir(&s, &d);
        } else {
            std::fs::copy(&s, &d).unwrap();
        }
    }
}

/// Opens and reads everything; returns whether it succeeded. Panics propagate.
fn attempt(array: &Path, key: Option<[u8; 32]>) -> bool {
    match OpenArray::open(&LocalFs, array, 0, u64::MAX, key.map(Into::into)) {
        Ok(a) => {
            let a = Arc::new(a);
            // Also with every unfiltered tile read in place (by default,
            // only tiles of 64 KiB and more are; the fixtures' are smaller).
            let in_place = ReadSession::new(Arc::new(LocalFs), a.clone())
                .execute(&ReadRequest::new().tune(|t| t.direct_tile_bytes = 0))
                .is_ok();
            // Picking: tiles cut by the range, cells tested by the
            // condition (the results only need not panic).
            let d0 = a.schema.dimensions[0].name.clone();
            let span = common::first_dim_span(&a);
            let first_attr = a.schema.attributes.first().map(|x| x.name.clone());
            for direct in [true, false] {
                let mut q = ReadRequest::new().tune(|t| t.direct = direct);
                if let Some((lo, hi)) = span {
                    q = q.range(&d0, Value::Int(lo), Value::Int(lo + (hi - lo) / 2));
                }
                if let Some(f) = &first_attr {
                    q = q.condition(Expr::IsNull {
                        field: f.clone(),
                        negated: true,
                    });
                }
                let _ = ReadSession::new(Arc::new(LocalFs), a.clone()).execute(&q);
            }
            ReadSession::new(Arc::new(LocalFs), a.clone())
                .execute(&ReadRequest::new())
                .is_ok()
                && in_place
                && a.metadata(&LocalFs).is_ok()
        }
        Err(_) => false,
    }
}

#[test]
fn corrupted_fixtures_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let work = std::env::temp_dir().join(format!("tessera-corruption-{}", std::process::id()));
    let mut tried = 0usize;
    let mut panics = Vec::new();
    for case in CASES {
        let src = root.join(case).join("array");
        if !src.exists() {
            continue;
        }
        let key = case
            .ends_with("encrypted")
            .then_some(*b"0123456789abcdeF0123456789abcdeF");
        let mut all = Vec::new();
        files(&src, &mut all);
        let label = case.to_string();
        sweep(
            (&src, &all),
            key,
            &label,
            24,
            &work,
            &mut tried,
            &mut panics,
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(tried > 100, "only {tried} corruptions tried");
    assert!(
        panics.is_empty(),
        "{} of {tried} corruptions panicked:\n{}",
        panics.len(),
        panics.join("\n")
    );
}

/// Truncates each of `targets` (files of the array at `src`) at about
/// `points` places spread over it, ends included, and flips bytes there,
/// one edit at a time on a copy; counts the edits tried and names those
/// that panicked.
fn sweep(
    (src, targets): (&Path, &[PathBuf]),
    key: Option<[u8; 32]>,
    case: &str,
    points: usize,
    work: &Path,
    tried: &mut usize,
    panics: &mut Vec<String>,
) {
    for f in targets {
        let rel = f.strip_prefix(src).unwrap().to_path_buf();
        let original = std::fs::read(f).unwrap();
        let n = original.len();
        // Truncation points and byte flips spread over the file, ends included.
        let mut edits: Vec<(&str, usize)> = Vec::new();
        let step = (n / points).max(1);
        for p in (0..n)
            .step_by(step)
            .chain([n.saturating_sub(1), n.saturating_sub(8)])
        {
            edits.push(("truncate", p));
            edits.push(("flip", p));
        }
        for (kind, at) in edits {
            let dst = work.join("a");
            let _ = std::fs::remove_dir_all(&dst);
            copy_dir(src, &dst);
            let mut bytes = original.clone();
            match kind {
                "truncate" => bytes.truncate(at),
                _ if at < n => bytes[at] ^= 0xA5,
                _ => continue,
            }
            std::fs::write(dst.join(&rel), &bytes).unwrap();
            *tried += 1;
            let r = std::panic::catch_unwind(|| attempt(&dst, key));
            if r.is_err() {
                panics.push(format!("{case}/{} {kind} at {at}", rel.display()));
            }
        }
    }
}

/// What tessera's writers produce, corrupted: each fixture consolidated
/// (a fragment written by tessera's fragment writer, its commit and
/// vacuum file), its commits and fragment metadata consolidated, two
/// metadata files written and consolidated, then vacuumed; every file tessera wrote is
/// swept as above. (Schema files tessera writes are byte for byte
/// libtiledb's, which the sweep above covers.)
#[test]
fn what_tessera_writes_corrupted_never_panics() {
    use tessera_query::QuerySource;
    use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let work = std::env::temp_dir().join(format!("tessera-corruption-w-{}", std::process::id()));
    let (mut tried, mut panics) = (0usize, Vec::new());
    let cases = [
        "tiledb-0.36.1/dense_1d_fragments",
        "tiledb-0.36.1/random_sparse",
        "tiledb-0.36.1/deletes",
        "tiledb-0.36.1/schema_evolution",
    ];
    for case in cases {
        let fixture = root.join(case).join("array");
        let src = work.join("written");
        let _ = std::fs::remove_dir_all(&src);
        copy_dir(&fixture, &src);
        // Two metadata files, written by tessera, to consolidate.
        for (k, v) in [("a", 1i64), ("b", 2)] {
            let value = tessera_fragment::array_metadata::MetadataValue {
                datatype: tessera_tile::Datatype::Int64,
                count: 1,
                bytes: v.to_le_bytes().to_vec(),
            };
            let entries = [(k.to_owned(), Some(value))].into_iter().collect();
            tessera_write::metadata::put_metadata(&src, &entries, None, None).unwrap();
        }
        let options = ConsolidateOptions::default();
        let done = consolidate_fragments(&src, &options, &QuerySource, &mut |_| {}).unwrap();
        assert!(done.is_some(), "{case}: nothing consolidated");
        tessera_write::commits::consolidate_commits(&src, None).unwrap();
        tessera_write::fragment_meta::consolidate_fragment_meta(&src, None).unwrap();
        tessera_write::metadata::consolidate_metadata(&src, None).unwrap();
        vacuum_fragments(&src, None, &mut |_| {}).unwrap();
        let mut all = Vec::new();
        files(&src, &mut all);
        let written: Vec<PathBuf> = all
            .into_iter()
            .filter(|f| {
                let before = fixture.join(f.strip_prefix(&src).unwrap());
                std::fs::read(&before).ok() != std::fs::read(f).ok()
            })
            .collect();
        assert!(written.len() >= 4, "{case}: {written:?}");
        let label = format!("{case} (tessera)");
        sweep(
            (&src, &written),
            None,
            &label,
            8,
            &work,
            &mut tried,
            &mut panics,
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(tried > 300, "only {tried} corruptions tried");
    assert!(
        panics.is_empty(),
        "{} of {tried} corruptions panicked:\n{}",
        panics.len(),
        panics.join("\n")
    );
}
