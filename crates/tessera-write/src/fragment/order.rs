//! Attributes whose data has an order (a dimension label's `label`
//! attribute, increasing or decreasing): libtiledb refuses a write whose
//! cells break it, and its label readers search such data as sorted.

use crate::WriteError;
use tessera_cells::Column;
use tessera_schema::value::Value;
use tessera_schema::Attribute;

/// Checks that `col`'s cells keep `a`'s order (equal neighbours allowed).
pub(super) fn check_order(a: &Attribute, col: &Column) -> Result<(), WriteError> {
    check_cells(a, col.cell_count(), |i| col.value(i), None).map(|_| ())
}

/// Checks that the `n` cells `value` gives keep `a`'s order, following
/// `previous` (the last cell of a band written before); returns the last
/// cell (none where `a` has no order).
pub(super) fn check_cells<'c>(
    a: &Attribute,
    n: usize,
    value: impl Fn(usize) -> &'c [u8],
    previous: Option<Value>,
) -> Result<Option<Value>, WriteError> {
    let increasing = match a.order {
        1 => true,
        2 => false,
        _ => return Ok(None),
    };
    let mut previous = previous;
    for i in 0..n {
        let v = Value::decode(a.datatype, value(i));
        if let Some(p) = &previous {
            let kept = if increasing { p <= &v } else { p >= &v };
            if !kept {
                let order = if increasing {
                    "increasing"
                } else {
                    "decreasing"
                };
                return Err(WriteError::Input(format!(
                    "attribute `{}`: its data must be {order}, and cell {i} is not",
                    a.name
                )));
            }
        }
        previous = Some(v);
    }
    Ok(previous)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_schema::CellValNum;
    use tessera_tile::Datatype;

    fn label(order: u8) -> Attribute {
        Attribute {
            name: "label".into(),
            datatype: Datatype::Float64,
            cell_val_num: CellValNum::Fixed(1),
            filters: tessera_filters::FilterPipeline::new(Vec::new(), 65536),
            fill_value: vec![0; 8],
            nullable: false,
            fill_validity: false,
            order,
            enumeration: None,
        }
    }

    fn column(values: &[f64]) -> Column {
        let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Column::fixed("label", Datatype::Float64, data)
    }

    #[test]
    fn ordered_data_is_checked_both_ways() {
        let up = column(&[-1.0, 0.0, 0.0, 2.5]);
        assert!(check_order(&label(1), &up).is_ok());
        let err = check_order(&label(2), &up).unwrap_err().to_string();
        assert!(
            err.contains("decreasing") && err.contains("cell 1"),
            "{err}"
        );
        let down = column(&[3.0, 1.0, -2.0]);
        assert!(check_order(&label(2), &down).is_ok());
        assert!(check_order(&label(1), &down).is_err());
        assert!(check_order(&label(0), &down).is_ok());
        // A band continues the one before it.
        let last = check_cells(&label(1), 2, |i| up.value(i), None).unwrap();
        assert_eq!(last, Some(Value::Float(0.0)));
        assert!(check_cells(&label(1), 3, |i| down.value(i), last).is_err());
    }
}
