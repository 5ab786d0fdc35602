//! R-tree lookups agree with a brute-force scan of the leaves.

use proptest::prelude::*;
use tessera_fragment::{OpenArray, Overlap};
use tessera_schema::Range1D;
use tessera_storage::LocalFs;

fn int(b: &[u8]) -> i64 {
    i32::from_le_bytes(b[..4].try_into().unwrap()) as i64
}

fn overlap(mbr: &[Range1D], q: &[(i64, i64)]) -> Overlap {
    let mut full = true;
    for (r, (a, b)) in mbr.iter().zip(q) {
        let (lo, hi) = (int(&r.lo), int(&r.hi));
        if hi < *a || lo > *b {
            return Overlap::None;
        }
        full &= *a <= lo && hi <= *b;
    }
    if full {
        Overlap::Full
    } else {
        Overlap::Partial
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn tiles_overlapping_matches_a_scan(x0 in 0i64..10000, w in 0i64..4000, y0 in 0i64..10000, h in 0i64..4000) {
        let array = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/sparse_large/array");
        let a = OpenArray::open(&LocalFs, &array, 0, u64::MAX, None).unwrap();
        let f = &a.fragments[0];
        let rt = f.rtree(&LocalFs).unwrap();
        prop_assert!(rt.levels.len() >= 3, "the fixture should have a deep tree");
        let q = [(x0, x0 + w), (y0, y0 + h)];
        let mut walked: Vec<u64> = rt.tiles_overlapping(&|m| overlap(m, &q)).into_iter().map(|(t, _)| t).collect();
        walked.sort_unstable();
        let scanned: Vec<u64> = rt.leaves().iter().enumerate().filter(|(_, m)| overlap(m, &q) != Overlap::None).map(|(i, _)| i as u64).collect();
        prop_assert_eq!(walked, scanned);
    }
}
