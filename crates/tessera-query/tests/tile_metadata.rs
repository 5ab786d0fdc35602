//! Tile metadata as libtiledb wrote it equals what the tiles hold: for every
//! fixture fragment of format 11 and later, every field's per-tile mins,
//! maxes, sums and null counts, and the fragment-level summary, are
//! recomputed from the decoded tiles and compared.

use std::path::Path;
use tessera_fragment::tile_metadata::compare_cells as compare;
use tessera_fragment::tile_metadata::trusted;
use tessera_fragment::{Field, FragmentMetadata, OpenArray, Sum};
use tessera_query::{read_field_tile, FieldSpec, FieldTile};
use tessera_schema::{CellValNum, Value};
use tessera_storage::LocalFs;
use tessera_tile::Datatype;

/// What libtiledb's tile metadata should say about some cells.
#[derive(Debug, Default)]
struct Expected {
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
    sum: Option<Sum>,
    nulls: u64,
    /// Whether a cell is NaN: libtiledb's running min and max then lose
    /// the numbers before it (`1, NaN, 600` keeps 600 as the min; a NaN
    /// last leaves NaN bounds), and its sum is NaN, or pinned at the
    /// float's bound where it stopped adding before the NaN.
    nan: bool,
}

impl Expected {
    /// Whether `bounds` and `sum` as stored are what libtiledb may write
    /// over cells holding a NaN: any bounds, and a sum NaN or pinned (the
    /// sums readers trust to show a tile holds no NaN).
    fn nan_allowed(&self, _t: Datatype, bounds: &[&[u8]], sum: Option<Sum>) -> bool {
        let spoilt_sum = |x: f64| x.is_nan() || x.abs() == f64::MAX;
        self.nan
            && match sum {
                Some(Sum::Float(x)) => bounds.is_empty() && spoilt_sum(x),
                _ => true,
            }
    }
}

fn add(sum: Option<Sum>, t: Datatype, v: &[u8]) -> Option<Sum> {
    let start = Sum::from_bits(t, 0)?;
    let acc = sum.unwrap_or(start);
    Some(match (acc, Value::decode(t, v)) {
        (Sum::Int(a), Value::Int(x)) => Sum::Int(a.saturating_add(x as i64)),
        (Sum::UInt(a), Value::Int(x)) => Sum::UInt(a.saturating_add(x as u64)),
        (Sum::Float(a), Value::Float(x)) => Sum::Float(a + x),
        (s, _) => s,
    })
}

fn observe(e: &mut Expected, spec: &FieldSpec, tile: &FieldTile, fixed_numeric: bool) {
    let (t, n) = (spec.datatype, spec.cell_val_num);
    for i in 0..tile.cells as usize {
        if !tile.valid(i) {
            e.nulls += 1;
            continue;
        }
        let v = tile.value(i);
        // NaN takes no part in bounds or sums (but see `Expected::nan`).
        if fixed_numeric && Value::decode(t, v).is_nan() {
            e.nan = true;
            continue;
        }
        if e.min.as_deref().is_none_or(|m| compare(t, n, v, m).is_lt()) {
            e.min = Some(v.to_vec());
        }
        if e.max.as_deref().is_none_or(|m| compare(t, n, v, m).is_gt()) {
            e.max = Some(v.to_vec());
        }
        if fixed_numeric {
            e.sum = add(e.sum, t, v);
        }
    }
}

fn sums_equal(a: Sum, b: Sum) -> bool {
    match (a, b) {
        (Sum::Float(x), Sum::Float(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        _ => a == b,
    }
}

/// Checks one field of one fragment; returns how many tile values were compared.
fn check_field(frag: &FragmentMetadata, f: Field, failures: &mut Vec<String>) -> usize {
    let s = &LocalFs;
    let spec = FieldSpec::of(frag, f);
    let nullable = spec.nullable;
    let string_fixed = matches!(
        spec.datatype,
        Datatype::Char | Datatype::StringAscii | Datatype::StringUtf8
    ) && !spec.cell_val_num.is_var();
    if !trusted(frag.version(), frag.footer.dense, nullable, string_fixed) {
        return 0;
    }
    let fixed_numeric =
        spec.cell_val_num == CellValNum::Fixed(1) && Sum::from_bits(spec.datatype, 0).is_some();
    let at = |what: &str| format!("{} {f:?} {what}", frag.path.display());
    let mins = frag.tile_mins(s, f).unwrap();
    let maxes = frag.tile_maxes(s, f).unwrap();
    let sums = frag.tile_sums(s, f).unwrap();
    let nulls = frag.tile_null_counts(s, f).unwrap();
    let mut whole = Expected::default();
    let mut compared = 0;
    for t in 0..frag.tile_count() {
        let tile = read_field_tile(s, frag, &spec, t, None).unwrap();
        let mut e = Expected::default();
        observe(&mut e, &spec, &tile, fixed_numeric);
        observe(&mut whole, &spec, &tile, fixed_numeric);
        let t = t as usize;
        if !mins.is_empty() {
            compared += 2;
            if mins.get(t) != e.min.as_deref() || maxes.get(t) != e.max.as_deref() {
                // A tile of nulls only keeps no bounds of its own: libtiledb writes zeros.
                let all_null =
                    e.min.is_none() && mins.get(t).is_some_and(|m| m.iter().all(|b| *b == 0));
                let stored: Vec<&[u8]> =
                    [mins.get(t), maxes.get(t)].into_iter().flatten().collect();
                if !all_null && !e.nan_allowed(spec.datatype, &stored, None) {
                    failures.push(at(&format!(
                        "tile {t}: min/max {:?}/{:?}, cells give {:?}/{:?}",
                        mins.get(t),
                        maxes.get(t),
                        e.min,
                        e.max
                    )));
                }
            }
        }
        if fixed_numeric {
            if let (Some(bits), Some(want)) = (sums.get(t), e.sum) {
                compared += 1;
                let got = Sum::from_bits(spec.datatype, *bits).unwrap();
                if !sums_equal(got, want) && !e.nan_allowed(spec.datatype, &[], Some(got)) {
                    failures.push(at(&format!("tile {t}: sum {got:?}, cells give {want:?}")));
                }
            }
        }
        // libtiledb 2.13 to 2.30 write 0 as the null count of var-sized
        // nullable fields (seen in sparse_dim_types): only fixed-sized ones
        // can be checked, and only theirs can answer a null count.
        if nullable && !spec.cell_val_num.is_var() {
            if let Some(n) = nulls.get(t) {
                compared += 1;
                if *n != e.nulls {
                    failures.push(at(&format!("tile {t}: {n} nulls, cells give {}", e.nulls)));
                }
            }
        }
    }
    if let Some(sum) = frag.field_summary(s, f).unwrap() {
        if !sum.min.is_empty() {
            compared += 2;
            // A fragment of nulls only keeps libtiledb's starting bounds:
            // the type's largest value as min, its smallest as max (seen in
            // random_sparse_consolidated's first fragment, every version).
            let untouched = whole.min.is_none() && sum.null_count > 0 && {
                let n = sum.min.len();
                let ones = vec![0xffu8; n];
                let zeros = vec![0u8; n];
                let signed = |b: &[u8]| {
                    let mut v = b.to_vec();
                    if let Some(l) = v.last_mut() {
                        *l ^= 0x80;
                    }
                    v
                };
                (sum.min == ones && sum.max == zeros)
                    || (sum.min == signed(&ones) && sum.max == signed(&zeros))
            };
            let differs =
                Some(&sum.min) != whole.min.as_ref() || Some(&sum.max) != whole.max.as_ref();
            let nan = whole.nan_allowed(spec.datatype, &[&sum.min, &sum.max], None);
            if differs && !untouched && !nan {
                failures.push(at(&format!(
                    "fragment min/max {:?}/{:?}, cells give {:?}/{:?}",
                    sum.min, sum.max, whole.min, whole.max
                )));
            }
        }
        if nullable && !spec.cell_val_num.is_var() {
            compared += 1;
            if sum.null_count != whole.nulls {
                failures.push(at(&format!(
                    "fragment null count {}, cells give {}",
                    sum.null_count, whole.nulls
                )));
            }
        }
        if let (true, Some(want)) = (fixed_numeric, whole.sum) {
            compared += 1;
            let got = Sum::from_bits(spec.datatype, sum.sum).unwrap();
            if !sums_equal(got, want) && !whole.nan_allowed(spec.datatype, &[], Some(got)) {
                failures.push(at(&format!("fragment sum {got:?}, cells give {want:?}")));
            }
        }
    }
    compared
}

/// Dense tiles hold cells outside what the fragment wrote (and outside the
/// domain in edge tiles), which libtiledb leaves out of tile metadata; the
/// cells alone do not give its values, so only the shape is checked: a
/// value per tile, each min no greater than its max.
fn dense_shape(frag: &FragmentMetadata, f: Field, failures: &mut Vec<String>) {
    let s = &LocalFs;
    let spec = FieldSpec::of(frag, f);
    let mins = frag.tile_mins(s, f).unwrap();
    let maxes = frag.tile_maxes(s, f).unwrap();
    if mins.is_empty() {
        return;
    }
    let n = frag.tile_count() as usize;
    if mins.len() != n || maxes.len() != n {
        failures.push(format!(
            "{} {f:?}: {} mins, {} maxes for {n} tiles",
            frag.path.display(),
            mins.len(),
            maxes.len()
        ));
        return;
    }
    for t in 0..n {
        let (lo, hi) = (mins.get(t).unwrap(), maxes.get(t).unwrap());
        if !spec.cell_val_num.is_var() && compare(spec.datatype, spec.cell_val_num, lo, hi).is_gt()
        {
            failures.push(format!(
                "{} {f:?} tile {t}: min {lo:?} above max {hi:?}",
                frag.path.display()
            ));
        }
    }
}

#[test]
fn tile_metadata_matches_the_tiles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut fragments = 0;
    let mut versions: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.file_name().unwrap() != "bad")
        .collect();
    versions.sort();
    for v in versions {
        let mut cases: Vec<_> = std::fs::read_dir(&v)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        cases.sort();
        for case in cases {
            if case.ends_with("encrypted") {
                continue;
            }
            let Ok(a) = OpenArray::open(&LocalFs, &case.join("array"), 0, u64::MAX, None) else {
                continue;
            };
            for frag in &a.fragments {
                if !frag.version().has(tessera_fragment::gates::TILE_METADATA) {
                    continue;
                }
                fragments += 1;
                let s = &frag.schema;
                let fields = (0..s.attributes.len())
                    .map(Field::Attribute)
                    .chain((0..s.dimensions.len()).map(Field::Dimension));
                for f in fields {
                    if frag.footer.dense {
                        dense_shape(frag, f, &mut failures);
                        continue;
                    }
                    compared += check_field(frag, f, &mut failures);
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        fragments > 100 && compared > 1000,
        "only {compared} values in {fragments} fragments compared"
    );
    eprintln!("{compared} tile metadata values in {fragments} fragments agree with the tiles");
}
