//! A request checked against an array's schema before anything is read:
//! the fields it names exist, its ranges hold values of their dimension's
//! kind, and its conditions compare fields with values of their width.

use crate::QueryError;
use tessera_cells::Expr;
use tessera_fragment::condition::CompareOp;
use tessera_schema::{ArraySchema, CellValNum, Value};
use tessera_tile::datatype::Physical;
use tessera_tile::Datatype;

fn unknown(kind: &'static str, name: &str) -> QueryError {
    QueryError::UnknownField {
        kind,
        name: name.to_owned(),
    }
}

fn ill_typed(what: &'static str, field: &str, message: String) -> QueryError {
    QueryError::IllTyped {
        what,
        field: field.to_owned(),
        message,
    }
}

/// Every attribute selected is the array's.
pub(super) fn attributes(names: &[String], schema: &ArraySchema) -> Result<(), QueryError> {
    match names.iter().find(|a| schema.attribute(a).is_none()) {
        Some(a) => Err(unknown("attribute", a)),
        None => Ok(()),
    }
}

/// Every dimension selected is the array's.
pub(super) fn dimensions(names: &[String], schema: &ArraySchema) -> Result<(), QueryError> {
    match names.iter().find(|d| schema.dimension(d).is_none()) {
        Some(d) => Err(unknown("dimension", d)),
        None => Ok(()),
    }
}

/// Every range is on one of the array's dimensions, with bounds of its
/// kind: numbers for number dimensions, bytes for string ones.
pub(super) fn ranges(
    ranges: &[(String, Value, Value)],
    schema: &ArraySchema,
) -> Result<(), QueryError> {
    for (name, lo, hi) in ranges {
        let d = schema
            .dimension(name)
            .ok_or_else(|| unknown("dimension", name))?;
        for bound in [lo, hi] {
            let fits = match (d.datatype.physical(), bound) {
                (Physical::Bytes, Value::Bytes(_)) => true,
                (Physical::Bytes, _) | (_, Value::Bytes(_)) => false,
                _ => true,
            };
            if !fits {
                let message = format!(
                    "a bound of {} for a dimension of {}",
                    kind_of(bound),
                    d.datatype.name()
                );
                return Err(ill_typed("range", name, message));
            }
        }
    }
    Ok(())
}

/// Every field `condition` names is the array's, and each value it
/// compares a fixed-sized number field with has that field's cell width
/// (strings compare whatever their length, as libtiledb's do).
pub(super) fn condition(condition: &Expr, schema: &ArraySchema) -> Result<(), QueryError> {
    let mut named = Vec::new();
    condition.fields(&mut named);
    if let Some(n) = named.iter().find(|n| field_type(schema, n).is_none()) {
        return Err(unknown("field", n));
    }
    let mut comparisons = Vec::new();
    condition.comparisons(&mut comparisons);
    for (field, op, values) in comparisons {
        if matches!(op, CompareOp::AlwaysTrue | CompareOp::AlwaysFalse) {
            continue;
        }
        let Some((datatype, CellValNum::Fixed(n))) = field_type(schema, field) else {
            continue;
        };
        if datatype.physical() == Physical::Bytes {
            continue;
        }
        let width = datatype.size() * u64::from(n);
        if let Some(v) = values.iter().find(|v| v.len() as u64 != width) {
            let message = format!(
                "compared with a value of {} bytes; its cells are {width} bytes ({} × {n})",
                v.len(),
                datatype.name()
            );
            return Err(ill_typed("condition", field, message));
        }
        if values.is_empty() && !matches!(op, CompareOp::In | CompareOp::NotIn) {
            return Err(ill_typed(
                "condition",
                field,
                "compared with no value".into(),
            ));
        }
    }
    Ok(())
}

/// The datatype and cell size of the attribute or dimension `name`.
fn field_type(schema: &ArraySchema, name: &str) -> Option<(Datatype, CellValNum)> {
    match (schema.attribute(name), schema.dimension(name)) {
        (Some(a), _) => Some((a.datatype, a.cell_val_num)),
        (None, Some(d)) => Some((d.datatype, d.cell_val_num)),
        (None, None) => None,
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Int(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Bytes(_) => "bytes",
    }
}
