//! Batched reads: for every fixture array and layout, the batches read
//! within a small memory budget, concatenated, equal the one-shot read
//! (exactly where the layout fixes an order, as a multiset otherwise),
//! also when each batch's buffers are recycled into the next.

mod common;

use std::path::Path;
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{ReadContext, ReadRequest, ReadResult, ReadSession, Value};
use tessera_storage::LocalFs;
use tessera_tile::Layout;

/// Each cell as its field values, for multiset comparison.
fn rows(r: &ReadResult) -> Vec<Vec<(Vec<u8>, bool)>> {
    (0..r.cell_count)
        .map(|i| {
            r.columns
                .iter()
                .map(|c| (c.value(i).to_vec(), c.is_valid(i)))
                .collect()
        })
        .collect()
}

/// What the batched reads of arrays found: reads compared, split into
/// several batches, cut inside tiles; and what differed.
#[derive(Default)]
struct Found {
    compared: usize,
    split: usize,
    in_tiles: usize,
    problems: Vec<String>,
}

/// `array` (`case`: release/name) read in batches, in every layout, whole
/// and cut by two ranges, at several budgets, against its one-shot read.
fn batched_reads(case: &str, array: &Arc<OpenArray>) -> Found {
    let mut found = Found::default();
    let dense = array.schema.is_dense();
    let layouts: &[Layout] = if dense {
        &[Layout::RowMajor, Layout::ColMajor, Layout::GlobalOrder]
    } else {
        &[
            Layout::Unordered,
            Layout::RowMajor,
            Layout::ColMajor,
            Layout::GlobalOrder,
        ]
    };
    // Two ranges on the first dimension, when it has integers to cut.
    let d0 = &array.schema.dimensions[0];
    let ranges = match common::first_dim_span(array) {
        Some((lo, hi)) if hi - lo >= 4 => {
            let w = hi - lo;
            vec![(lo, lo + w / 3), (lo + w / 2, hi)]
        }
        _ => Vec::new(),
    };
    let query = || {
        let mut q = ReadRequest::new();
        for (a, b) in &ranges {
            q = q.range(&d0.name, Value::Int(*a), Value::Int(*b));
        }
        q
    };
    for (&layout, sub) in layouts.iter().flat_map(|l| [(l, false), (l, true)]) {
        if sub && ranges.is_empty() {
            continue;
        }
        let q = || {
            if sub {
                query()
            } else {
                ReadRequest::new()
            }
        };
        let session = common::local(array);
        let Ok(whole) = session.execute(&q().layout(layout)) else {
            continue;
        };
        // With every unfiltered tile read in place, dense reads of
        // unfiltered fixed-sized attributes cut within tiles.
        // (budget, tiles read in place, each batch's buffers
        // recycled into the next: stale bytes must all be written over).
        let runs: &[(u64, bool, bool)] = if dense {
            &[
                (1, false, false),
                (5000, false, false),
                (64, true, false),
                (5000, false, true),
            ]
        } else {
            &[(1, false, false), (5000, false, false), (5000, false, true)]
        };
        for &(budget, in_place, recycled) in runs {
            // Batches appended, or (recycled) each one's rows taken
            // before its buffers go to the next.
            let mut appended = ReadResult::default();
            let mut taken = Vec::new();
            let mut n = 0;
            let mut q = q().layout(layout);
            if in_place {
                q = q.tune(|t| t.direct_tile_bytes = 0);
            }
            // Recycled buffers go to a context of the test's own:
            // one a read makes itself is capped by its tiny budget.
            let session = match recycled {
                true => session.clone().context(Arc::new(ReadContext::new())),
                false => session.clone(),
            };
            let batches = session.batches(&q.budget(budget)).unwrap();
            for b in batches {
                let b = b.unwrap();
                if recycled {
                    taken.extend(rows(&b));
                    b.recycle();
                } else {
                    appended.append(b);
                }
                n += 1;
            }
            found.compared += 1;
            found.split += (n > 1) as usize;
            // More batches than a tile's worth of cells each: cut inside tiles.
            found.in_tiles += (in_place && n as u64 * 4 > whole.cell_count as u64) as usize;
            let what = format!(
                "{case} {layout:?} subarray {sub} budget {budget} in place {in_place} recycled {recycled} ({n} batches)"
            );
            let got = match recycled {
                true => taken,
                false => rows(&appended),
            };
            if got.len() != whole.cell_count {
                found.problems.push(format!(
                    "{what}: {} cells, one-shot {}",
                    got.len(),
                    whole.cell_count
                ));
                continue;
            }
            let (mut a, mut b) = (got, rows(&whole));
            if layout == Layout::Unordered {
                a.sort();
                b.sort();
            }
            if a != b {
                found.problems.push(format!("{what}: cells differ"));
            }
        }
    }
    found
}

/// Arrays side by side: most are small, read on one core.
#[test]
fn batches_concatenate_to_the_one_shot_read() {
    use rayon::prelude::*;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut arrays = Vec::new();
    for version in std::fs::read_dir(&root).unwrap().flatten() {
        let release = version.file_name().to_string_lossy().into_owned();
        if !release.starts_with("tiledb-") {
            continue;
        }
        for case in std::fs::read_dir(version.path()).unwrap().flatten() {
            let name = case.file_name().to_string_lossy().into_owned();
            if name.ends_with("_large") {
                continue; // thousands of pieces at these budgets; covered by the budget example
            }
            let Ok(array) =
                OpenArray::open(&LocalFs, &case.path().join("array"), 0, u64::MAX, None)
            else {
                continue; // encrypted without its key
            };
            arrays.push((format!("{release}/{name}"), Arc::new(array)));
        }
    }
    let found: Vec<Found> = (arrays.par_iter())
        .map(|(case, array)| batched_reads(case, array))
        .collect();
    let compared: usize = found.iter().map(|f| f.compared).sum();
    let split: usize = found.iter().map(|f| f.split).sum();
    let in_tiles: usize = found.iter().map(|f| f.in_tiles).sum();
    let problems: Vec<String> = found.into_iter().flat_map(|f| f.problems).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        compared > 300 && split > 200 && in_tiles > 20,
        "{compared} reads compared, {split} split, {in_tiles} cut inside tiles"
    );
}

/// Queries share buffers only through a context their caller gave them:
/// a query given none recycles into one of its own, never into another
/// caller's.
#[test]
fn queries_share_buffers_only_through_a_given_context() {
    use std::sync::Arc;
    use tessera_query::ReadContext;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/dense_2d_types/array");
    let array = Arc::new(OpenArray::open(&LocalFs, &path, 0, u64::MAX, None).unwrap());
    let held = |c: &ReadContext| {
        let text = format!("{c:?}");
        let at = text.find("result_bytes: ").expect("result_bytes") + "result_bytes: ".len();
        text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse::<usize>()
            .unwrap()
    };
    let mine = Arc::new(ReadContext::new());
    let given = common::local(&array).context(mine.clone());
    given.execute(&ReadRequest::new()).unwrap().recycle();
    let after_given = held(&mine);
    assert!(after_given > 0, "a given context gets the buffers back");
    for _ in 0..3 {
        ReadSession::new(Arc::new(LocalFs), array.clone())
            .execute(&ReadRequest::new())
            .unwrap()
            .recycle();
        for b in ReadSession::new(Arc::new(LocalFs), array.clone())
            .batches(&ReadRequest::new().budget(1 << 10))
            .unwrap()
        {
            b.unwrap().recycle();
        }
    }
    assert_eq!(
        held(&mine),
        after_given,
        "queries given no context left it alone"
    );
}
