//! The scheduler's rule that lets Ballista share a scan's partitions out.
//!
//! Ballista gives each task a slice of a stage's partitions by cutting the
//! stage's leaves it knows (file scans, in-memory sources, shuffle
//! readers) to that slice; a leaf it does not know stays whole, and every
//! task would read all of it. So on the scheduler each tessera scan gets
//! partition tokens (`TesseraScan::with_partition_tokens`): an in-memory
//! child Ballista cuts, naming the partitions each task reads.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;
use tessera_datafusion::TesseraScan;

/// Gives every tessera scan without them partition tokens.
#[derive(Debug, Default)]
pub struct DistributeScans;

impl PhysicalOptimizerRule for DistributeScans {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|p| match p.downcast_ref::<TesseraScan>() {
            Some(scan) if p.children().is_empty() => {
                Ok(Transformed::yes(Arc::new(scan.with_partition_tokens()?)))
            }
            _ => Ok(Transformed::no(p)),
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "tessera_distribute_scans"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
