//! Dense reads place bands of tiles in parallel, each into its own region
//! of the result, a band's rows in parallel slabs, and the bands of
//! fragments whose regions are apart from each other's all at once. The
//! fixtures are small, so by default every read is one band a fragment
//! (in slabs); here every band also stands apart (`dense_band_bytes(0)`),
//! and both must equal the reference, one band a fragment placed on one
//! thread, fragment after fragment (`u64::MAX`), cell for cell,
//! for subarrays that cut tiles, several ranges (in order, out of order,
//! overlapping) and both result layouts. Reads that describe their
//! coordinates by a grid must equal it too, once the grid builds its columns.

mod common;

use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{ReadRequest, ReadResult, ReadSession, Value};
use tessera_storage::{LocalFs, Recording};
use tessera_tile::Layout;

type Setup<'s> = dyn Fn(ReadRequest) -> ReadRequest + 's;

fn read(a: &Arc<OpenArray>, band_bytes: u64, setup: &Setup<'_>) -> Result<ReadResult, String> {
    ReadSession::new(Arc::new(LocalFs), a.clone())
        .execute(&setup(
            ReadRequest::new().tune(|t| t.dense_band_bytes = band_bytes),
        ))
        .map_err(|e| e.to_string())
}

/// Checks a dense read's coordinate grid (walked with its cursor and
/// indexed cell by cell) against the columns it builds, and returns the
/// result with those columns.
fn walk_grid(what: &str, mut r: ReadResult) -> ReadResult {
    let grid = r.grid.clone().unwrap_or_else(|| panic!("{what}: no grid"));
    assert_eq!(grid.cell_count(), r.cell_count, "{what}");
    r.materialize_coordinates();
    assert!(r.grid.is_none());
    let mut cell = grid.cursor();
    for i in 0..r.cell_count {
        for (j, d) in grid.dimensions.iter().enumerate() {
            let col = r.column(&d.name).expect("built");
            let v = Value::decode(d.datatype, col.value(i)).as_int();
            assert_eq!(
                v,
                Some(cell.coordinates()[j]),
                "{what}: cell {i}, `{}`",
                d.name
            );
        }
        assert_eq!(grid.coordinates(i), cell.coordinates(), "{what}: cell {i}");
        cell.advance();
    }
    r
}

/// The reads every dense fixture is checked with: subarrays that cut
/// tiles, several ranges (in order, out of order, overlapping) and both
/// result layouts.
fn cases(a: &OpenArray) -> Vec<(&'static str, Box<Setup<'static>>)> {
    let Some((lo, hi)) = common::first_dim_span(a) else {
        return Vec::new();
    };
    let d0 = a.schema.dimensions[0].name.clone();
    let last = a
        .schema
        .dimensions
        .last()
        .expect("a dimension")
        .name
        .clone();
    let last_span = common::dim_span(a, a.schema.dimensions.len() - 1);
    let mid = lo + (hi - lo) / 2;
    fn range(q: ReadRequest, d: &str, x: i128, y: i128) -> ReadRequest {
        q.range(d, Value::Int(x), Value::Int(y))
    }
    let d = move || d0.clone();
    vec![
        ("full", Box::new(|q| q)),
        ("column-major", Box::new(|q| q.layout(Layout::ColMajor))),
        ("cut tiles", {
            let d = d();
            Box::new(move |q| range(q, &d, lo + (hi - lo) / 3, hi - (hi - lo) / 4))
        }),
        ("two ranges", {
            let d = d();
            Box::new(move |q| range(range(q, &d, lo, lo + (mid - lo) / 2), &d, mid + 1, hi))
        }),
        ("two ranges out of order", {
            let d = d();
            Box::new(move |q| range(range(q, &d, mid + 1, hi), &d, lo, mid))
        }),
        ("overlapping ranges", {
            let d = d();
            Box::new(move |q| range(range(q, &d, lo, mid), &d, lo + (mid - lo) / 2, hi))
        }),
        (
            "column-major, ranges on the last dimension",
            Box::new(move |q| {
                let q = q.layout(Layout::ColMajor);
                match last_span {
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
    ]
}

#[test]
fn banded_dense_reads_equal_one_band_reads() {
    let mut compared = 0;
    for (path, a) in common::fixture_arrays() {
        if !a.schema.is_dense() {
            continue;
        }
        let cases = cases(&a);
        for (name, setup) in &cases {
            let one = read(&a, u64::MAX, setup.as_ref());
            let described = ReadSession::new(Arc::new(LocalFs), a.clone())
                .execute(&setup(ReadRequest::new().coordinate_grid(true)))
                .map_err(|e| e.to_string())
                .map(|r| {
                    let what = format!("{}: {name}", path.display());
                    walk_grid(&what, r)
                });
            common::assert_same_outcome(
                &format!("{}: {name}: coordinate grid", path.display()),
                &one,
                &described,
            );
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

/// Bytes of data tiles read (fragment metadata excluded), from a recording.
fn tile_bytes(rec: &Recording<LocalFs>) -> u64 {
    rec.requests()
        .iter()
        .filter(|r| !r.contains("__fragment_metadata"))
        .filter_map(|r| {
            let (a, b) = r
                .strip_prefix("read ")?
                .rsplit_once(' ')?
                .1
                .split_once("..")?;
            Some(b.parse::<u64>().ok()? - a.parse::<u64>().ok()?)
        })
        .sum()
}

/// The dense fixtures, each opened through a recording of what it reads.
type Recorded = (std::path::PathBuf, Arc<Recording<LocalFs>>, Arc<OpenArray>);

fn recorded_dense_fixtures() -> Vec<Recorded> {
    common::fixture_arrays()
        .into_iter()
        .filter(|(_, a)| a.schema.is_dense())
        .map(|(path, _)| {
            let rec = Arc::new(Recording::new(LocalFs, &path));
            let a = OpenArray::open(&*rec, &path, 0, u64::MAX, None).expect("opened before");
            let a = Arc::new(a);
            (path, rec, a)
        })
        .collect()
}

/// Tiles a later dense fragment writes again are skipped: the result is
/// the same as reading every fragment, never with more bytes read, and
/// with fewer where fragments overlap.
#[test]
fn overwritten_tiles_are_skipped_with_the_same_result() {
    let (mut compared, mut fewer) = (0, 0);
    for (path, rec, a) in recorded_dense_fixtures() {
        let mut setups: Vec<Box<Setup<'_>>> =
            vec![Box::new(|q| q), Box::new(|q| q.layout(Layout::ColMajor))];
        if let Some((lo, hi)) = common::first_dim_span(&a) {
            let d0 = a.schema.dimensions[0].name.clone();
            setups.push(Box::new(move |q| {
                q.range(&d0, Value::Int(lo + (hi - lo) / 3), Value::Int(hi))
            }));
        }
        for setup in &setups {
            let read = |skip: bool| {
                let before = tile_bytes(&rec);
                let r = ReadSession::new(rec.clone(), a.clone())
                    .execute(&setup(
                        ReadRequest::new().tune(|t| t.skip_overwritten = skip),
                    ))
                    .map_err(|e| e.to_string());
                (r, tile_bytes(&rec) - before)
            };
            let (every, every_bytes) = read(false);
            let (skipped, skipped_bytes) = read(true);
            let what = format!("{}: skipping overwritten tiles", path.display());
            common::assert_same_outcome(&what, &every, &skipped);
            assert!(skipped_bytes <= every_bytes, "{what}: more bytes read");
            fewer += (skipped_bytes < every_bytes) as usize;
            compared += 1;
        }
    }
    assert!(compared > 50, "only {compared} reads compared");
    assert!(fewer > 5, "overwritten tiles skipped in {fewer} reads only");
}

/// Unfiltered tiles read straight into the result (every one, however
/// small, with `direct_tile_bytes(0)`; in bands apart or one band) give
/// what fetching, unfiltering and copying them gives, for every dense
/// fixture and case; the recording shows the scatter reads happened.
#[test]
fn unfiltered_tiles_read_in_place_equal_decoded_tiles() {
    let (mut compared, mut scattered) = (0, 0);
    for (path, rec, a) in recorded_dense_fixtures() {
        for (name, setup) in cases(&a) {
            let decoded = ReadSession::new(Arc::new(LocalFs), a.clone())
                .execute(&setup(ReadRequest::new().tune(|t| t.direct = false)))
                .map_err(|e| e.to_string());
            for bands in [0, 8 << 20] {
                let before = rec.requests().len();
                let direct = ReadSession::new(rec.clone(), a.clone())
                    .execute(&setup(
                        ReadRequest::new()
                            .tune(|t| t.direct_tile_bytes = 0)
                            .tune(|t| t.dense_band_bytes = bands),
                    ))
                    .map_err(|e| e.to_string());
                let what = format!("{}: {name}: bands of {bands} bytes", path.display());
                common::assert_same_outcome(&what, &decoded, &direct);
                scattered += rec.requests()[before..]
                    .iter()
                    .filter(|r| r.starts_with("read (scattered)"))
                    .count();
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "only {compared} reads compared");
    assert!(scattered > 1000, "only {scattered} scatter reads");
}
