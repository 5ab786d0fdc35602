//! Partition tokens: a small in-memory child of a scan whose partition
//! `p` holds the numbers of the read's partitions to make in partition
//! `p`. An engine that cuts a stage's in-memory sources to each task's
//! slice of partitions (Ballista) thereby cuts the scan's work as well.

use datafusion::arrow::array::{Array, AsArray, RecordBatch, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, UInt32Type};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;

/// The column holding the partition numbers.
const COLUMN: &str = "tessera_partition";

/// `n` partitions, partition `i` naming read partition `i`.
pub(crate) fn plan(n: usize) -> Result<Arc<dyn ExecutionPlan>> {
    let schema = Arc::new(Schema::new(vec![Field::new(
        COLUMN,
        DataType::UInt32,
        false,
    )]));
    let partitions = (0..n)
        .map(|i| {
            let i = u32::try_from(i)
                .map_err(|_| DataFusionError::Plan(format!("{n} partitions are too many")))?;
            let column = Arc::new(UInt32Array::from(vec![i]));
            Ok(vec![RecordBatch::try_new(schema.clone(), vec![column])?])
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(MemorySourceConfig::try_new_exec(&partitions, schema, None)?)
}

/// The partition numbers the batches of a token partition hold.
pub(crate) fn indices(batches: &[RecordBatch]) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    for b in batches {
        let column = b
            .column_by_name(COLUMN)
            .filter(|c| c.data_type() == &DataType::UInt32 && c.null_count() == 0)
            .ok_or_else(|| {
                DataFusionError::Internal(format!("partition tokens without a {COLUMN} column"))
            })?;
        out.extend(
            column
                .as_primitive::<UInt32Type>()
                .values()
                .iter()
                .map(|&i| i as usize),
        );
    }
    Ok(out)
}
