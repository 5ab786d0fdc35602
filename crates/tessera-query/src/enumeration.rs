//! Enumerated attributes read as their values: each cell's key (an index
//! into the attribute's enumeration) replaced by the value it names.

use crate::result::{ColumnBuilder, ReadResult};
use crate::QueryError;
use tessera_fragment::OpenArray;
use tessera_schema::Value;
use tessera_storage::Storage;

/// Replaces the keys of every enumerated attribute column of `r` by their
/// values. A key past the end of its enumeration is an error naming the
/// attribute and the key; null cells stay null (with an empty value).
pub(crate) fn apply(
    storage: &dyn Storage,
    array: &OpenArray,
    ctx: &crate::ReadContext,
    r: ReadResult,
) -> Result<ReadResult, QueryError> {
    let schema = &array.schema;
    let enumeration_of = |c: &crate::Column| {
        schema
            .attribute(&c.name)
            .filter(|_| !c.is_dimension)
            .and_then(|a| a.enumeration.clone())
    };
    if !r.columns.iter().any(|c| enumeration_of(c).is_some()) {
        return Ok(r);
    }
    let enums = array.enumerations(storage)?;
    let mut columns = Vec::with_capacity(r.columns.len());
    for col in r.columns {
        let Some(name) = enumeration_of(&col) else {
            columns.push(col);
            continue;
        };
        let e = enums.iter().find(|e| e.name == name).ok_or_else(|| {
            QueryError::Invalid(format!(
                "attribute `{}` names enumeration `{name}`, which the schema does not list",
                col.name
            ))
        })?;
        let mut b = ColumnBuilder::new(
            ctx,
            &col.name,
            false,
            e.datatype,
            e.cell_val_num,
            col.validity.is_some(),
            r.cell_count,
        );
        for i in 0..r.cell_count {
            if !col.is_valid(i) {
                // A null cell's key means nothing: an empty value of the right width.
                let width = match e.cell_val_num {
                    tessera_schema::CellValNum::Fixed(n) => n as usize * e.datatype.size() as usize,
                    tessera_schema::CellValNum::Var => 0,
                };
                b.push(&vec![0; width], false);
                continue;
            }
            let key = match Value::decode(col.datatype, col.value(i)) {
                Value::Int(k) => u64::try_from(k).ok(),
                _ => None,
            };
            let v = key
                .and_then(|k| e.values.get(usize::try_from(k).ok()?))
                .ok_or_else(|| {
                    QueryError::Invalid(format!(
                        "attribute `{}`: key {:?} is not in enumeration `{name}` ({} values)",
                        col.name,
                        Value::decode(col.datatype, col.value(i)),
                        e.values.len()
                    ))
                })?;
            b.push(v, true);
        }
        columns.push(b.col);
    }
    Ok(ReadResult {
        columns,
        cell_count: r.cell_count,
        grid: r.grid,
        context: r.context,
    })
}
