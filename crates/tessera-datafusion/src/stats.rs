//! A table's statistics from fragment metadata, no tile decoded: the row
//! count, each dimension's least and greatest value (the union of the
//! fragments' non-empty domains; a dense table's extent) and each
//! single-valued attribute's, with its null count (the fragments'
//! summaries, format 12 and later, of sparse arrays).
//!
//! Exact only where no cell can be dropped or shadowed (`ReadSession::
//! field_bounds`, the table's row count) and never for floats, whose
//! metadata passes over NaN (`field_bounds` gives no bounds where it is
//! NaN, over some tiles holding one); DataFusion answers `min`/`max`/`count`
//! from exact statistics without a scan, so an exact value must be the
//! answer.

use datafusion::arrow::datatypes::{DataType, Field, SchemaRef};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, ScalarValue, Statistics};
use std::sync::Arc;
use tessera::fragment::OpenArray;
use tessera::query::{extent, ReadSession, Value};
use tessera::storage::Storage;

/// The statistics of every column of the table of `array` read through
/// `storage`, whose columns are `schema` and which has `rows` rows.
pub(crate) fn table_statistics(
    storage: &Arc<dyn Storage>,
    array: &Arc<OpenArray>,
    schema: &SchemaRef,
    rows: Precision<usize>,
) -> Statistics {
    let exact_rows = matches!(rows, Precision::Exact(_));
    let mut columns = Vec::with_capacity(schema.fields().len());
    // Dense: the extent is the table's; sparse: the union of the
    // fragments' non-empty domains, which bounds every cell.
    let extent = extent(array).ok();
    for j in 0..array.schema.dimensions.len() {
        let field = schema.field(j);
        let bounds = extent.as_ref().and_then(|e| e.get(j).cloned().flatten());
        columns.push(match bounds {
            Some((lo, hi)) => with_bounds(field, &lo, &hi, exact_rows, 0),
            None => ColumnStatistics::new_unknown(),
        });
    }
    let session = ReadSession::new(storage.clone(), array.clone());
    for a in &array.schema.attributes {
        let field = schema.field(columns.len());
        let stats = match session.field_bounds(&a.name) {
            Ok(Some(b)) => match (&b.min, &b.max) {
                (Some(lo), Some(hi)) => with_bounds(
                    field,
                    &Value::decode(b.datatype, lo),
                    &Value::decode(b.datatype, hi),
                    b.exact && exact_rows,
                    b.null_count,
                ),
                _ => ColumnStatistics::new_unknown()
                    .with_null_count(precision(b.exact && exact_rows, b.null_count)),
            },
            _ => ColumnStatistics::new_unknown(),
        };
        columns.push(stats);
    }
    Statistics {
        num_rows: rows,
        total_byte_size: Precision::Absent,
        column_statistics: columns,
    }
}

fn precision(exact: bool, n: u64) -> Precision<usize> {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    if exact {
        Precision::Exact(n)
    } else {
        Precision::Inexact(n)
    }
}

/// A column's statistics with these bounds, exact when `exact` and the
/// column holds no floats.
fn with_bounds(field: &Field, lo: &Value, hi: &Value, exact: bool, nulls: u64) -> ColumnStatistics {
    let (Some(lo), Some(hi)) = (scalar(lo, field.data_type()), scalar(hi, field.data_type()))
    else {
        return ColumnStatistics::new_unknown().with_null_count(precision(exact, nulls));
    };
    let exact_values = exact && !matches!(lo, ScalarValue::Float32(_) | ScalarValue::Float64(_));
    let value = |v: ScalarValue| {
        if exact_values {
            Precision::Exact(v)
        } else {
            Precision::Inexact(v)
        }
    };
    ColumnStatistics::new_unknown()
        .with_min_value(value(lo))
        .with_max_value(value(hi))
        .with_null_count(precision(exact, nulls))
}

/// `k` as a value of the column's Arrow type, where it is a number (or a
/// datetime); `None` for anything else.
fn scalar(k: &Value, t: &DataType) -> Option<ScalarValue> {
    let v = match k {
        Value::Int(i) => match i64::try_from(*i) {
            Ok(i) => ScalarValue::Int64(Some(i)),
            Err(_) => ScalarValue::UInt64(Some(u64::try_from(*i).ok()?)),
        },
        Value::Float(f) => ScalarValue::Float64(Some(*f)),
        Value::Bytes(_) => return None,
    };
    let numeric = t.is_integer() || t.is_floating() || matches!(t, DataType::Timestamp(..));
    let v = v.cast_to(t).ok().filter(|_| numeric)?;
    (v.data_type() == *t).then_some(v)
}
