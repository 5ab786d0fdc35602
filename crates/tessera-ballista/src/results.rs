//! Results fetched from a cluster, as the plan says they are.
//!
//! Ballista hands a client its results over Arrow Flight, whose encoder
//! replaces dictionary columns by their values; an enumerated attribute
//! then arrives as its labels where the plan's schema (and a local run)
//! has a dictionary of the stored keys. [`restore_dictionaries`] makes
//! such a column a dictionary over the table's enumeration again, keyed
//! as stored.

use datafusion::arrow::array::{Array, ArrayRef, DictionaryArray, Int64Array, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type, SchemaRef};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use std::collections::HashMap;
use tessera_datafusion::TesseraTable;

/// `batches` with each column the plan's `schema` gives as a dictionary,
/// but which arrived as its values, made that dictionary again: over the
/// enumeration of the one table column of that name and type, keyed as
/// the array stores it. A column no table names (renamed by the query)
/// or several name differently is left as its values.
pub fn restore_dictionaries(
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
    tables: &[&TesseraTable],
) -> Result<Vec<RecordBatch>> {
    let mut lookups: HashMap<usize, Lookup> = HashMap::new();
    for (i, field) in schema.fields().iter().enumerate() {
        let DataType::Dictionary(key, value) = field.data_type() else {
            continue;
        };
        let found: Vec<ArrayRef> = tables
            .iter()
            .filter_map(|t| t.dictionary_values(field.name()))
            .filter(|v| v.data_type() == value.as_ref())
            .collect();
        if let [values] = found.as_slice() {
            lookups.insert(i, Lookup::new(values.clone(), key.as_ref().clone())?);
        }
    }
    if lookups.is_empty() {
        return Ok(batches);
    }
    batches
        .into_iter()
        .map(|b| {
            let mut columns = b.columns().to_vec();
            let mut fields: Vec<_> = b.schema().fields().iter().cloned().collect();
            for (i, lookup) in &lookups {
                let (Some(column), Some(field)) = (columns.get(*i), schema.fields().get(*i)) else {
                    continue;
                };
                if column.data_type() == lookup.values.data_type() {
                    columns[*i] = lookup.keyed(column)?;
                    fields[*i] = field.clone();
                }
            }
            let schema =
                std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new_with_metadata(
                    fields,
                    b.schema().metadata().clone(),
                ));
            Ok(RecordBatch::try_new(schema, columns)?)
        })
        .collect()
}

/// An enumeration's values, and each value's key.
struct Lookup {
    values: ArrayRef,
    keys: HashMap<ScalarValue, i64>,
    key_type: DataType,
}

impl Lookup {
    fn new(values: ArrayRef, key_type: DataType) -> Result<Lookup> {
        let mut keys = HashMap::with_capacity(values.len());
        for k in 0..values.len() {
            // The first of equal values: the key libtiledb would match.
            keys.entry(ScalarValue::try_from_array(&values, k)?)
                .or_insert(k as i64);
        }
        Ok(Lookup {
            values,
            keys,
            key_type,
        })
    }

    /// `column`'s values as a dictionary over the enumeration.
    fn keyed(&self, column: &ArrayRef) -> Result<ArrayRef> {
        let mut keys = Vec::with_capacity(column.len());
        for r in 0..column.len() {
            if column.is_null(r) {
                keys.push(None);
                continue;
            }
            let v = ScalarValue::try_from_array(column, r)?;
            let k = self.keys.get(&v).ok_or_else(|| {
                DataFusionError::Execution(format!("value {v} is not in the column's enumeration"))
            })?;
            keys.push(Some(*k));
        }
        // Built with i64 keys (checked against the values), then cast to
        // the key type the plan gives: a dictionary cast keeps every key.
        let wide =
            DictionaryArray::<Int64Type>::try_new(Int64Array::from(keys), self.values.clone())?;
        let target = DataType::Dictionary(
            Box::new(self.key_type.clone()),
            Box::new(self.values.data_type().clone()),
        );
        Ok(cast(&wide, &target)?)
    }
}
