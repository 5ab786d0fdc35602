//! The sparse writer against libtiledb's own fragments: each single
//! fragment TileDB-Py 0.36.1 wrote into a sparse fixture is read back (in
//! global order) and written again by tessera into a copy of the array's
//! schema; every file tessera writes must be byte for byte the file
//! libtiledb wrote: the data files (tiles cut at the capacity, filtered),
//! and the fragment metadata (R-tree, tile offsets, tile mins, maxes, sums
//! and null counts, the fragment summary, the footer). Encrypted fixtures
//! are left out (random IVs): they are read back instead.

use std::path::{Path, PathBuf};
use tessera_fragment::OpenArray;
use tessera_query::Query;
use tessera_tile::storage::LocalFs;
use tessera_tile::{ArrayType, Layout};
use tessera_write::{FragmentWriter, WriteOptions};

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1");
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("array/__schema").is_dir())
        .collect();
    v.sort();
    v
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn rewritten_fragments_are_libtiledbs_bytes() {
    let scratch = std::env::temp_dir().join(format!("tessera-rewrite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let (mut checked, mut failures) = (Vec::new(), Vec::new());
    for case in fixtures() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let array = case.join("array");
        let Ok(opened) = OpenArray::open(&LocalFs, &array, 0, u64::MAX, None) else {
            continue; // encrypted
        };
        // Fragments of the latest schema, each alone at its timestamps.
        let updates = opened.delete_conditions.len();
        if opened.schema.array_type != ArrayType::Sparse || updates != 0 {
            continue;
        }
        for frag in &opened.fragments {
            let (t1, t2) = frag.timestamp_range();
            let alone = opened
                .fragments
                .iter()
                .filter(|f| f.timestamp_range() == (t1, t2))
                .count()
                == 1;
            let latest = frag.footer.schema_name.as_deref() == Some(opened.schema.name.as_str());
            if !alone || !latest || frag.footer.has_timestamps || frag.footer.has_delete_meta {
                continue;
            }
            let at = OpenArray::open(&LocalFs, &array, t1, t2, None).unwrap();
            let result = Query::new(&LocalFs, &at)
                .layout(Layout::GlobalOrder)
                .execute()
                .unwrap();
            let out = scratch.join(format!("{name}-{t1}"));
            copy_dir(&array.join("__schema"), &out.join("__schema"));
            let mut w = FragmentWriter::try_new(&out, WriteOptions::default()).unwrap();
            w.write(&result.columns).unwrap();
            let written = w.finish().unwrap().unwrap();
            let theirs = files(&array.join("__fragments").join(&frag.name));
            let ours = files(&out.join("__fragments").join(&written));
            let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
            if names(&theirs) != names(&ours) {
                failures.push(format!(
                    "{name}: files {:?}, libtiledb's {:?}",
                    names(&ours),
                    names(&theirs)
                ));
                continue;
            }
            for ((file, a), (_, b)) in ours.iter().zip(&theirs) {
                if a != b {
                    let at = a
                        .iter()
                        .zip(b)
                        .position(|(x, y)| x != y)
                        .unwrap_or(a.len().min(b.len()));
                    failures.push(format!(
                        "{name}-{t1}/{file}: {} bytes, libtiledb's {}; first difference at {at}",
                        a.len(),
                        b.len()
                    ));
                }
            }
            checked.push(format!("{name}@{t1}"));
        }
    }
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    assert!(
        failures.is_empty(),
        "checked {checked:?}\n{}",
        failures.join("\n")
    );
    assert!(checked.len() >= 10, "{checked:?}");
}
