//! Aggregates equal the same aggregates computed cell by cell from a read:
//! for every fixture array (whose reads equal TileDB-Py's), over the whole
//! array, over a subarray that cuts tiles, and under a condition. Metadata
//! answers most of the sparse fragments and tiles; a whole-array aggregate
//! of a single-fragment sparse array decodes nothing.

mod common;

use std::sync::Arc;
use tessera_fragment::condition::CompareOp;
use tessera_fragment::tile_metadata::compare_cells as order;
use tessera_fragment::Sum;
use tessera_query::{Aggregate, AggregateValue, Expr, ReadRequest, ReadResult, ReadSession, Value};
use tessera_schema::CellValNum;
use tessera_storage::LocalFs;
use tessera_tile::datatype::Physical;
use tessera_tile::Datatype;

/// The aggregates of one field over cells `keep` of `r`.
fn expected(
    r: &ReadResult,
    keep: &[usize],
    field: &str,
    nullable: bool,
    summable: bool,
) -> [AggregateValue; 5] {
    let col = r.column(field).unwrap();
    let (t, n) = (col.datatype, col.cell_val_num);
    let (mut nulls, mut seen) = (0u64, 0u64);
    let (mut isum, mut usum, mut fsum) = (0i128, 0u128, 0f64);
    let (mut min, mut max): (Option<&[u8]>, Option<&[u8]>) = (None, None);
    for &i in keep {
        if !col.is_valid(i) {
            nulls += 1;
            continue;
        }
        let v = col.value(i);
        let value = Value::decode(t, v);
        if n == CellValNum::Fixed(1) && value.is_nan() {
            continue;
        }
        seen += 1;
        if min.is_none_or(|m| order(t, n, v, m).is_lt()) {
            min = Some(v);
        }
        if max.is_none_or(|m| order(t, n, v, m).is_gt()) {
            max = Some(v);
        }
        match value {
            Value::Int(x) if matches!(t.physical(), Physical::UInt(_)) => usum += x as u128,
            Value::Int(x) => isum += x,
            Value::Float(x) => fsum += x,
            _ => {}
        }
    }
    // No value: null for a nullable field, 0 otherwise (as libtiledb).
    let none = seen == 0 && nullable;
    let (sum, mean) = if !summable {
        (AggregateValue::Null, AggregateValue::Null)
    } else {
        let (s, total) = match Sum::from_bits(t, 0).unwrap() {
            // Sums saturate, as libtiledb's; means do not.
            Sum::Int(_) => (
                AggregateValue::Int(isum.clamp(i64::MIN as i128, i64::MAX as i128) as i64),
                isum as f64,
            ),
            Sum::UInt(_) => (
                AggregateValue::UInt(usum.min(u64::MAX as u128) as u64),
                usum as f64,
            ),
            Sum::Float(_) => (AggregateValue::Float(fsum), fsum),
        };
        let mean = if seen == 0 {
            AggregateValue::Null
        } else {
            AggregateValue::Float(total / seen as f64)
        };
        (if none { AggregateValue::Null } else { s }, mean)
    };
    let bound = |b: Option<&[u8]>| {
        b.map_or(AggregateValue::Null, |v| {
            AggregateValue::Value(t, v.to_vec())
        })
    };
    [
        sum,
        bound(min),
        bound(max),
        AggregateValue::UInt(nulls),
        mean,
    ]
}

fn close(a: &AggregateValue, b: &AggregateValue) -> bool {
    match (a, b) {
        (AggregateValue::Float(x), AggregateValue::Float(y)) => {
            x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-9 * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

#[test]
fn aggregates_equal_cell_by_cell_results() {
    let (mut compared, mut from_metadata, mut decoded) = (0, 0u64, 0u64);
    let mut nothing_decoded = Vec::new();
    let mut failures = Vec::new();
    for (path, array) in common::fixture_arrays() {
        let schema = &array.schema;
        let mut aggs = vec![Aggregate::Count];
        let mut fields = Vec::new();
        for a in &schema.attributes {
            let (t, n) = (a.datatype, a.cell_val_num);
            let summable = n == CellValNum::Fixed(1) && Sum::from_bits(t, 0).is_some();
            let string = t.size() == 1
                && matches!(
                    t,
                    Datatype::Char | Datatype::StringAscii | Datatype::StringUtf8
                );
            if n != CellValNum::Fixed(1) && !string {
                continue;
            }
            let f = a.name.clone();
            aggs.push(if summable {
                Aggregate::Sum(f.clone())
            } else {
                Aggregate::Count
            });
            aggs.push(Aggregate::Min(f.clone()));
            aggs.push(Aggregate::Max(f.clone()));
            aggs.push(Aggregate::NullCount(f.clone()));
            aggs.push(if summable {
                Aggregate::Mean(f.clone())
            } else {
                Aggregate::Count
            });
            fields.push((f, a.nullable, summable));
        }
        // Whole array; two ranges on the first dimension (cutting
        // tiles); a condition on the first field.
        let d0 = &schema.dimensions[0];
        let mut queries: Vec<(String, ReadRequest, Option<Expr>)> =
            vec![("whole".into(), ReadRequest::new(), None)];
        if let Some((lo, hi)) = common::first_dim_span(&array) {
            if hi - lo >= 4 {
                let w = hi - lo;
                queries.push((
                    "ranges".into(),
                    ReadRequest::new()
                        .range(&d0.name, Value::Int(lo + 1), Value::Int(lo + w / 3))
                        .range(&d0.name, Value::Int(lo + w / 2), Value::Int(hi)),
                    None,
                ));
            }
        }
        if let Some((f, _, true)) = fields.first() {
            let whole = ReadSession::new(Arc::new(LocalFs), array.clone())
                .execute(&ReadRequest::new())
                .unwrap();
            let col = whole.column(f).unwrap();
            if whole.cell_count > 0 {
                let cond = Expr::Compare {
                    field: f.clone(),
                    op: CompareOp::Ge,
                    values: vec![col.value(whole.cell_count / 2).to_vec()],
                };
                queries.push((
                    format!("{f} >= middle"),
                    ReadRequest::new().condition(cond.clone()),
                    Some(cond),
                ));
            }
        }
        for (what, q, cond) in queries {
            let at = format!("{} ({what})", path.display());
            let got = match common::local(&array).aggregate(&q.clone().budget(1 << 20), &aggs) {
                Ok(g) => g,
                Err(e) => {
                    failures.push(format!("{at}: {e}"));
                    continue;
                }
            };
            from_metadata += got.tiles_from_metadata + got.fragments_from_metadata;
            decoded += got.cells_decoded;
            if what == "whole"
                && !schema.is_dense()
                && array.fragments.len() == 1
                && array.delete_conditions.is_empty()
                && got.cells_decoded == 0
            {
                nothing_decoded.push(at.clone());
            }
            // Expected: dense reads keep every cell and fill those
            // failing a condition; count those passing it instead.
            let (cells, keep): (ReadResult, Vec<usize>) = match (&cond, schema.is_dense()) {
                (Some(c), true) => {
                    let r = ReadSession::new(Arc::new(LocalFs), array.clone())
                        .execute(&ReadRequest::new())
                        .unwrap();
                    let keep = (0..r.cell_count)
                        .filter(|&i| {
                            c.eval(&|n: &str| {
                                r.column(n)
                                    .map(|col| (col.datatype, col.value(i), col.is_valid(i)))
                            })
                        })
                        .collect();
                    (r, keep)
                }
                _ => {
                    let r = common::local(&array).execute(&q).unwrap();
                    let keep = (0..r.cell_count).collect();
                    (r, keep)
                }
            };
            let count = AggregateValue::UInt(keep.len() as u64);
            let mut want = vec![count.clone()];
            for (f, nullable, summable) in &fields {
                let [sum, min, max, nulls, mean] = expected(&cells, &keep, f, *nullable, *summable);
                want.extend([
                    if *summable { sum } else { count.clone() },
                    min,
                    max,
                    nulls,
                    if *summable { mean } else { count.clone() },
                ]);
            }
            compared += want.len();
            for ((a, g), w) in aggs.iter().zip(&got.values).zip(&want) {
                if !close(g, w) {
                    failures.push(format!("{at}: {a:?} = {g:?}, cells give {w:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared > 2000, "only {compared} aggregates compared");
    assert!(
        from_metadata > 500,
        "metadata answered only {from_metadata} tiles and fragments"
    );
    assert!(
        nothing_decoded.len() > 10,
        "whole-array aggregates decoded nothing only for {nothing_decoded:?}"
    );
    println!(
        "{compared} aggregates; {from_metadata} tiles and fragments from metadata, {decoded} cells decoded; \
         {} single-fragment sparse arrays aggregated without decoding",
        nothing_decoded.len()
    );
}
