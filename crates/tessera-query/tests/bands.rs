//! Dense reads place bands of tiles in parallel, each into its own region
//! of the result, and a band's rows in parallel slabs. The fixtures are
//! small, so by default every read is one band (in slabs); here every band
//! also stands apart (`dense_band_bytes(0)`), and both must equal the
//! reference, one band placed on one thread (`u64::MAX`), cell for cell,
//! for subarrays that cut tiles, several ranges (in order, out of order,
//! overlapping) and both result layouts.

mod common;

use tessera_fragment::OpenArray;
use tessera_query::{Key, Query, ReadResult};
use tessera_tile::storage::LocalFs;
use tessera_tile::Layout;

type Setup<'s> = dyn Fn(Query<'_>) -> Query<'_> + 's;

fn read(a: &OpenArray, band_bytes: u64, setup: &Setup<'_>) -> Result<ReadResult, String> {
    setup(Query::new(&LocalFs, a).dense_band_bytes(band_bytes))
        .execute()
        .map_err(|e| e.to_string())
}

#[test]
fn banded_dense_reads_equal_one_band_reads() {
    let mut compared = 0;
    for (path, a) in common::fixture_arrays() {
        if !a.schema.is_dense() {
            continue;
        }
        let Some((lo, hi)) = common::first_dim_span(&a) else {
            continue;
        };
        let d0 = a.schema.dimensions[0].name.clone();
        let last = a
            .schema
            .dimensions
            .last()
            .expect("a dimension")
            .name
            .clone();
        let mid = lo + (hi - lo) / 2;
        fn range<'q>(q: Query<'q>, d: &str, x: i128, y: i128) -> Query<'q> {
            q.range(d, Key::Int(x), Key::Int(y))
        }
        let cases: Vec<(&str, Box<Setup<'_>>)> = vec![
            ("full", Box::new(|q| q)),
            ("column-major", Box::new(|q| q.layout(Layout::ColMajor))),
            (
                "cut tiles",
                Box::new(|q| range(q, &d0, lo + (hi - lo) / 3, hi - (hi - lo) / 4)),
            ),
            (
                "two ranges",
                Box::new(|q| range(range(q, &d0, lo, lo + (mid - lo) / 2), &d0, mid + 1, hi)),
            ),
            (
                "two ranges out of order",
                Box::new(|q| range(range(q, &d0, mid + 1, hi), &d0, lo, mid)),
            ),
            (
                "overlapping ranges",
                Box::new(|q| range(range(q, &d0, lo, mid), &d0, lo + (mid - lo) / 2, hi)),
            ),
            (
                "column-major, ranges on the last dimension",
                Box::new(|q| {
                    let q = q.layout(Layout::ColMajor);
                    match common::dim_span(&a, a.schema.dimensions.len() - 1) {
                        Some((x, y)) => range(
                            range(q, &last, x, x + (y - x) / 3),
                            &last,
                            y - (y - x) / 3,
                            y,
                        ),
                        None => q,
                    }
                }),
            ),
        ];
        for (name, setup) in &cases {
            let one = read(&a, u64::MAX, setup.as_ref());
            for bytes in [0, 8 << 20] {
                let banded = read(&a, bytes, setup.as_ref());
                let what = format!(
                    "{}: {name}: one band and bands of {bytes} bytes",
                    path.display()
                );
                common::assert_same_outcome(&what, &one, &banded);
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "only {compared} reads compared");
}
