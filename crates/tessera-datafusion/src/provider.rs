//! The table as DataFusion sees it: its columns, which filters it takes,
//! its statistics, and the scan it plans.

use crate::filter::{effect, Effect};
use crate::scan::{ScanSpec, TesseraScan};
use crate::table::TesseraTable;
use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{Result, Statistics};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;

#[async_trait]
impl TableProvider for TesseraTable {
    fn schema(&self) -> SchemaRef {
        self.schema_ref().clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let effects: Vec<Effect> = filters
            .iter()
            .filter_map(|f| effect(f, self.array()))
            .collect();
        let projection = projection
            .cloned()
            .unwrap_or_else(|| (0..self.schema_ref().fields().len()).collect());
        let spec = ScanSpec {
            table: self.clone(),
            schema: Arc::new(self.schema_ref().project(&projection)?),
            effects,
            limit,
            target_partitions: state.config().target_partitions(),
            projection,
        };
        Ok(Arc::new(TesseraScan::try_new(spec)?))
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match effect(f, self.array()) {
                Some(e) => e.pushdown(),
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        Some(self.column_statistics().clone())
    }
}
