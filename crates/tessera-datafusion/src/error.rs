//! Tessera's errors as DataFusion's.

use datafusion::common::DataFusionError;

/// A tessera error as DataFusion's.
pub(crate) fn external(e: impl std::error::Error + Send + Sync + 'static) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
