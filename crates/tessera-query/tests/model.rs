//! Property tests against a brute-force model: the `random_sparse` and
//! `random_dense` fixtures hold fragments of random sizes, places and
//! overlaps, written by every pinned libtiledb, with the writes recorded.
//! For random subarrays (several ranges per dimension; a dense read's in
//! any order, overlapping or not), layouts, open
//! timestamps and conditions, tessera returns exactly the cells the model
//! computes from the writes alone: newest write wins, conditions apply
//! after that, unwritten dense cells read as fill values. The
//! `random_sparse_consolidated` fixture holds such writes with fragments 2
//! to 4 consolidated (every version of a cell kept, with its timestamp) and
//! vacuumed: the same model answers it.

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_fragment::condition::CompareOp;
use tessera_fragment::OpenArray;
use tessera_query::{Expr, ReadRequest, ReadResult, ReadSession, Value};
use tessera_storage::LocalFs;
use tessera_tile::Layout;

fn cases(name: &str) -> Vec<(PathBuf, serde_json::Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut out = Vec::new();
    for v in std::fs::read_dir(&root).unwrap().flatten() {
        let dir = v.path().join(name);
        if let Ok(t) = std::fs::read_to_string(dir.join("expected.json")) {
            out.push((dir.join("array"), serde_json::from_str(&t).unwrap()));
        }
    }
    assert!(out.len() >= 5, "{name}: {} versions", out.len());
    out
}

/// Up to three disjoint inclusive ranges inside `[lo, hi]`, in order;
/// none means the whole domain.
fn ranges(lo: i64, hi: i64) -> impl Strategy<Value = Vec<(i64, i64)>> {
    prop::collection::vec((lo..=hi, 0..=(hi - lo)), 0..=3).prop_map(move |v| {
        let mut r: Vec<(i64, i64)> = v
            .into_iter()
            .map(|(a, w)| (a, (a + w / 3).min(hi)))
            .collect();
        r.sort();
        let mut out: Vec<(i64, i64)> = Vec::new();
        for (a, b) in r {
            match out.last_mut() {
                Some(l) if a <= l.1 + 1 => l.1 = l.1.max(b),
                _ => out.push((a, b)),
            }
        }
        out
    })
}

/// Up to three inclusive ranges inside `[lo, hi]` as a user may give
/// them to a dense read: half the time in order and apart, half the time
/// in any order, overlapping or repeated (a coordinate in two ranges has
/// two places in the result, as libtiledb gives it).
fn dense_ranges(lo: i64, hi: i64) -> impl Strategy<Value = Vec<(i64, i64)>> {
    let as_given = prop::collection::vec((lo..=hi, 0..=(hi - lo)), 0..=3).prop_map(move |v| {
        v.into_iter()
            .map(|(a, w)| (a, (a + w / 3).min(hi)))
            .collect()
    });
    prop_oneof![ranges(lo, hi), as_given]
}

fn inside(r: &[(i64, i64)], v: i64) -> bool {
    r.is_empty() || r.iter().any(|&(a, b)| a <= v && v <= b)
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::RowMajor),
        Just(Layout::ColMajor),
        Just(Layout::Unordered),
        Just(Layout::GlobalOrder)
    ]
}

fn int(r: &ReadResult, col: &str, i: usize) -> Option<i64> {
    let c = r.column(col).unwrap();
    if !c.is_valid(i) {
        return None;
    }
    match Value::decode(c.datatype, c.value(i)) {
        Value::Int(v) => Some(v as i64),
        v => panic!("{col}: {v:?}"),
    }
}

/// A sparse cell: (x, y, a, s, n).
type SparseCell = (i64, i64, i64, String, Option<i64>);

/// A random condition on `a`, `n` or `s`, and the model's test for it.
#[derive(Debug, Clone)]
enum Cond {
    AGreater(i32),
    NIsNull,
    SEquals(String),
}

impl Cond {
    fn expr(&self) -> Expr {
        match self {
            Cond::AGreater(k) => Expr::Compare {
                field: "a".into(),
                op: CompareOp::Gt,
                values: vec![k.to_le_bytes().to_vec()],
            },
            Cond::NIsNull => Expr::IsNull {
                field: "n".into(),
                negated: false,
            },
            Cond::SEquals(w) => Expr::Compare {
                field: "s".into(),
                op: CompareOp::Eq,
                values: vec![w.as_bytes().to_vec()],
            },
        }
    }

    fn holds(&self, c: &SparseCell) -> bool {
        match self {
            Cond::AGreater(k) => c.2 > *k as i64,
            Cond::NIsNull => c.4.is_none(),
            Cond::SEquals(w) => &c.3 == w,
        }
    }
}

fn condition() -> impl Strategy<Value = Option<Cond>> {
    prop_oneof![
        Just(None),
        (-1000i32..1000).prop_map(|k| Some(Cond::AGreater(k))),
        Just(Some(Cond::NIsNull)),
        "[a-c]{0,2}".prop_map(|w| Some(Cond::SEquals(w))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn sparse_reads_equal_the_model(
        xr in ranges(-20, 43),
        yr in ranges(0, 63),
        at in 1u64..=5,
        from in 1u64..=5,
        layout in layout(),
        cond in condition(),
    ) {
        // Open windows [from, at]: a later start hides older writes.
        let from = from.min(at);
        // Also with fragments 2 to 4 consolidated into one that keeps every
        // version of a cell (reads at 2 and 3 travel into it).
        let all = cases("random_sparse").into_iter().chain(cases("random_sparse_consolidated"));
        for (path, expected) in all {
            // The model: per coordinate, the newest write in `[from, at]`.
            let mut cells: BTreeMap<(i64, i64), SparseCell> = BTreeMap::new();
            for w in expected["writes"].as_array().unwrap() {
                let t = w["timestamp"].as_u64().unwrap();
                if t > at || t < from {
                    continue;
                }
                for i in 0..w["x"].as_array().unwrap().len() {
                    let (x, y) = (w["x"][i].as_i64().unwrap(), w["y"][i].as_i64().unwrap());
                    let c = (x, y, w["a"][i].as_i64().unwrap(), w["s"][i].as_str().unwrap().to_owned(), w["n"][i].as_i64());
                    cells.insert((x, y), c);
                }
            }
            let mut want: Vec<SparseCell> = cells
                .into_values()
                .filter(|c| inside(&xr, c.0) && inside(&yr, c.1))
                .filter(|c| cond.as_ref().is_none_or(|k| k.holds(c)))
                .collect();
            let array = Arc::new(OpenArray::open(&LocalFs, &path, from, at, None).unwrap());
            let mut q = ReadRequest::new().layout(layout);
            for &(a, b) in &xr {
                q = q.range("x", Value::Int(a as i128), Value::Int(b as i128));
            }
            for &(a, b) in &yr {
                q = q.range("y", Value::Int(a as i128), Value::Int(b as i128));
            }
            if let Some(c) = &cond {
                q = q.condition(c.expr());
            }
            let r = ReadSession::new(Arc::new(LocalFs), array).execute(&q).unwrap();
            let mut got: Vec<SparseCell> = (0..r.cell_count)
                .map(|i| {
                    let s = String::from_utf8(r.column("s").unwrap().value(i).to_vec()).unwrap();
                    (int(&r, "x", i).unwrap(), int(&r, "y", i).unwrap(), int(&r, "a", i).unwrap(), s, int(&r, "n", i))
                })
                .collect();
            match layout {
                Layout::RowMajor => {}
                Layout::ColMajor => want.sort_by_key(|c| (c.1, c.0)),
                _ => {
                    got.sort_by_key(|c| (c.0, c.1));
                }
            }
            prop_assert_eq!(&got, &want, "{} at {}..={} {:?} x {:?} y {:?} {:?}", path.display(), from, at, layout, xr, yr, cond);
        }
    }

    #[test]
    fn dense_reads_equal_the_model(
        xr in dense_ranges(0, 29),
        yr in dense_ranges(3, 22),
        at in 1u64..=5,
        col_major in any::<bool>(),
    ) {
        for (path, expected) in cases("random_dense") {
            // The model: fill values, then each write at or before `at` in turn.
            let mut grid: BTreeMap<(i64, i64), (i64, u32)> = BTreeMap::new();
            for x in 0..=29 {
                for y in 3..=22 {
                    grid.insert((x, y), (i32::MIN as i64, f32::NAN.to_bits()));
                }
            }
            for w in expected["writes"].as_array().unwrap() {
                if w["timestamp"].as_u64().unwrap() > at {
                    continue;
                }
                let bx = &w["box"];
                let (x0, x1) = (bx[0][0].as_i64().unwrap(), bx[0][1].as_i64().unwrap());
                let (y0, y1) = (bx[1][0].as_i64().unwrap(), bx[1][1].as_i64().unwrap());
                let mut i = 0;
                for x in x0..=x1 {
                    for y in y0..=y1 {
                        let f = w["f"][i].as_f64().unwrap() as f32;
                        grid.insert((x, y), (w["a"][i].as_i64().unwrap(), f.to_bits()));
                        i += 1;
                    }
                }
            }
            // Subarray order: ranges as given, row- or column-major.
            let span = |r: &[(i64, i64)], lo: i64, hi: i64| -> Vec<i64> {
                if r.is_empty() { (lo..=hi).collect() } else { r.iter().flat_map(|&(a, b)| a..=b).collect() }
            };
            let (xs, ys) = (span(&xr, 0, 29), span(&yr, 3, 22));
            let mut want = Vec::new();
            if col_major {
                for &y in &ys { for &x in &xs { want.push((x, y, grid[&(x, y)])); } }
            } else {
                for &x in &xs { for &y in &ys { want.push((x, y, grid[&(x, y)])); } }
            }
            let array = Arc::new(OpenArray::open(&LocalFs, &path, 0, at, None).unwrap());
            let layout = if col_major { Layout::ColMajor } else { Layout::RowMajor };
            let mut q = ReadRequest::new().layout(layout);
            for &(a, b) in &xr {
                q = q.range("x", Value::Int(a as i128), Value::Int(b as i128));
            }
            for &(a, b) in &yr {
                q = q.range("y", Value::Int(a as i128), Value::Int(b as i128));
            }
            let r = ReadSession::new(Arc::new(LocalFs), array).execute(&q).unwrap();
            let got: Vec<(i64, i64, (i64, u32))> = (0..r.cell_count)
                .map(|i| {
                    let f = r.column("f").unwrap().value(i);
                    let f = u32::from_le_bytes(f.try_into().unwrap());
                    (int(&r, "x", i).unwrap(), int(&r, "y", i).unwrap(), (int(&r, "a", i).unwrap(), f))
                })
                .collect();
            prop_assert_eq!(&got, &want, "{} at {} x {:?} y {:?}", path.display(), at, xr, yr);
        }
    }
}
