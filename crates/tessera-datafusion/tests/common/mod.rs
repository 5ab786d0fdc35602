//! Helpers the test files share.

use datafusion::arrow::array::RecordBatch;
use datafusion::common::ScalarValue;

/// The batches' rows, each value in its display form.
pub fn display_rows(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for b in batches {
        for r in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .map(|c| ScalarValue::try_from_array(c, r).unwrap().to_string())
                    .collect(),
            );
        }
    }
    out
}
