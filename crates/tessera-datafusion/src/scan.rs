//! The scan of a tessera table: what DataFusion pushed down (projection,
//! ranges, condition, limit) as plain data, cut into partitions along the
//! first dimension (`partition`) so DataFusion reads them in parallel, each read
//! streamed in bounded memory by `tessera_query::stream`.

use crate::describe::{Bound, ScanDescription};
use crate::error::external;
use crate::filter::Effect;
use crate::partition_read::PartitionRead;
use crate::table::TesseraTable;
use crate::tokens;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning,
    PlanProperties, ReplaceChildrenOptions,
};
use futures::{StreamExt, TryStreamExt};
use std::fmt;
use std::sync::Arc;
use tessera::fragment::OpenArray;
use tessera::query::extent;
use tessera::query::partition::{self, intersect, Ranges};
use tessera::query::ReadRequest;
use tessera::query::{Expr as Condition, Value};
use tessera::tile::Layout;

/// Memory for each partition's read of a dense array: batches of about
/// this many bytes, a space tile or a few (a tile is decoded straight into
/// its batch).
const DENSE_PARTITION_BUDGET: u64 = 16 << 20;

/// Memory for each partition's read of a sparse array: a few data tiles
/// decoded beside the batch they fill.
const SPARSE_PARTITION_BUDGET: u64 = 32 << 20;

/// What the table hands its scan.
pub(crate) struct ScanSpec {
    pub table: TesseraTable,
    /// The projected columns.
    pub schema: SchemaRef,
    pub effects: Vec<Effect>,
    pub limit: Option<usize>,
    pub target_partitions: usize,
    /// The projected columns' indices in the table.
    pub projection: Vec<usize>,
}

/// A scan of a tessera array.
#[derive(Clone)]
pub struct TesseraScan {
    table: TesseraTable,
    schema: SchemaRef,
    /// The read every partition makes, but for its ranges.
    plan: ReadRequest,
    /// The condition's text, for EXPLAIN.
    condition: Option<String>,
    /// The prune condition's text, for EXPLAIN.
    prune: Option<String>,
    /// Each partition's ranges; none at all when the filters select nothing.
    partitions: Vec<Ranges>,
    limit: Option<usize>,
    /// The projected columns' indices in the table: its statistics' order.
    projection: Vec<usize>,
    /// Whether filters narrow the read (the table's statistics then only bound it).
    narrowed: bool,
    /// With [`TesseraScan::with_partition_tokens`]: the child naming, in
    /// each of its partitions, the partitions of the read to make there.
    tokens: Option<Arc<dyn ExecutionPlan>>,
    properties: Arc<PlanProperties>,
}

impl fmt::Debug for TesseraScan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TesseraScan({})", self.table.uri())
    }
}

impl TesseraScan {
    pub(crate) fn try_new(spec: ScanSpec) -> Result<TesseraScan> {
        let array = spec.table.shared_array().clone();
        let schema = &array.schema;
        let extent = extent(&array).map_err(external)?;
        // Ranges: each filter's intersected, per dimension, within what a
        // read covers.
        let mut per_dim: Vec<Option<Vec<(Value, Value)>>> = vec![None; schema.dimensions.len()];
        let mut conditions = Vec::new();
        let mut prunes = Vec::new();
        for e in &spec.effects {
            match e {
                Effect::Ranges {
                    dimension, ranges, ..
                } => {
                    let Some(j) = schema.dimensions.iter().position(|d| &d.name == dimension)
                    else {
                        continue;
                    };
                    per_dim[j] = Some(match per_dim[j].take() {
                        None => ranges.clone(),
                        Some(have) => intersect(&have, ranges),
                    });
                }
                Effect::Condition { text, .. } => conditions.push(format!("({text})")),
                Effect::Prune { text } => prunes.push(format!("({text})")),
            }
        }
        let nothing = !partition::within_extent(&array, &mut per_dim, &extent);
        let prune = (!prunes.is_empty()).then(|| prunes.join(" and "));
        let prune_condition = parsed(prune.as_ref(), &array)?;
        let partitions = if nothing {
            Vec::new()
        } else {
            partition::cut(
                &array,
                spec.table.storage().as_ref(),
                &per_dim,
                &extent,
                spec.target_partitions.max(1),
                prune_condition.as_ref(),
            )
        };
        Self::assemble(Parts {
            table: spec.table,
            schema: spec.schema,
            condition: (!conditions.is_empty()).then(|| conditions.join(" and ")),
            prune,
            partitions,
            limit: spec.limit,
            projection: spec.projection,
            narrowed: !spec.effects.is_empty(),
        })
    }

    /// The scan `description` describes, on the array opened anew (its
    /// fragments pinned to the description's).
    pub fn from_description(description: &ScanDescription) -> Result<TesseraScan> {
        let table = TesseraTable::from_description(&description.table)?;
        let all = table.schema();
        let projection = description
            .fields
            .iter()
            .map(|n| all.index_of(n))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let schema = Arc::new(all.project(&projection)?);
        let partitions = description
            .partitions
            .iter()
            .map(|p| {
                p.iter()
                    .map(|(d, lo, hi)| Ok((d.clone(), lo.to_key()?, hi.to_key()?)))
                    .collect::<std::result::Result<Ranges, String>>()
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(DataFusionError::Plan)?;
        Self::assemble(Parts {
            table,
            schema,
            condition: description.condition.clone(),
            prune: description.prune.clone(),
            partitions,
            limit: description.limit,
            projection,
            narrowed: description.narrowed,
        })
    }

    /// The scan as plain data: what [`TesseraScan::from_description`]
    /// makes the same scan from in another process.
    pub fn description(&self) -> ScanDescription {
        ScanDescription {
            table: self.table.description(),
            fields: self
                .schema
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect(),
            condition: self.condition.clone(),
            prune: self.prune.clone(),
            partitions: self
                .partitions
                .iter()
                .map(|p| {
                    p.iter()
                        .map(|(d, lo, hi)| (d.clone(), Bound::from(lo), Bound::from(hi)))
                        .collect()
                })
                .collect(),
            limit: self.limit,
            narrowed: self.narrowed,
        }
    }

    /// The same scan with its partitions named by a child plan, a
    /// partition of which holds the numbers of the read's partitions to
    /// make there ([`tokens`]). A distributed engine that hands each task
    /// a slice of a stage's partitions by cutting the stage's leaves
    /// (Ballista cuts in-memory sources, not nodes it does not know) then
    /// cuts this scan's work too: each partition read once, by one task.
    pub fn with_partition_tokens(&self) -> Result<TesseraScan> {
        let tokens = tokens::plan(self.partitions.len().max(1))?;
        Ok(self.clone().read_by(tokens))
    }

    /// This scan reading, in its partition `p`, the partitions of the read
    /// that partition `p` of `tokens` names (a plan as
    /// [`TesseraScan::with_partition_tokens`] makes, perhaps cut since).
    pub fn read_by(mut self, tokens: Arc<dyn ExecutionPlan>) -> TesseraScan {
        let n = tokens.properties().output_partitioning().partition_count();
        self.properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(self.schema.clone()),
            Partitioning::UnknownPartitioning(n),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        self.tokens = Some(tokens);
        self
    }

    /// Partition `i` of the read, in batches of at most `rows` rows.
    fn read_partition(&self, i: usize, rows: usize) -> Result<SendableRecordBatchStream> {
        let batches = match self.partitions.get(i) {
            Some(ranges) => PartitionRead {
                storage: self.table.storage().clone(),
                awaited: self.table.awaited().cloned(),
                array: self.table.shared_array().clone(),
                schema: self.schema.clone(),
                plan: self.plan.clone().with_ranges(ranges.clone()),
                limit: self.limit,
                rows: rows.max(1),
            }
            .batches()
            .left_stream(),
            None => futures::stream::empty().right_stream(),
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            batches,
        )))
    }

    fn assemble(parts: Parts) -> Result<TesseraScan> {
        let array = parts.table.shared_array();
        let condition = parsed(parts.condition.as_ref(), array)?;
        let prune = parsed(parts.prune.as_ref(), array)?;
        let plan = read_plan(array, &parts.schema, condition, prune);
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(parts.schema.clone()),
            Partitioning::UnknownPartitioning(parts.partitions.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(TesseraScan {
            table: parts.table,
            schema: parts.schema,
            plan,
            condition: parts.condition,
            prune: parts.prune,
            partitions: parts.partitions,
            limit: parts.limit,
            projection: parts.projection,
            narrowed: parts.narrowed,
            tokens: None,
            properties,
        })
    }
}

/// A condition's text (the `--where` grammar) bound to `array`'s fields.
fn parsed(text: Option<&String>, array: &OpenArray) -> Result<Option<Condition>> {
    text.map(|t| Condition::parse(t, &array.schema))
        .transpose()
        .map_err(external)
}

/// What a scan is made of, from a table's filters or a description.
struct Parts {
    table: TesseraTable,
    schema: SchemaRef,
    condition: Option<String>,
    prune: Option<String>,
    partitions: Vec<Ranges>,
    limit: Option<usize>,
    projection: Vec<usize>,
    narrowed: bool,
}

/// The memory of each partition's read.
fn partition_budget(dense: bool) -> u64 {
    match dense {
        true => DENSE_PARTITION_BUDGET,
        false => SPARSE_PARTITION_BUDGET,
    }
}

/// The read the projected `schema` needs: the attributes and dimensions
/// it names. With no column at all (`count(*)`), the cheapest read that
/// still counts cells: the first dimension's coordinates of a sparse
/// array, the first attribute of a dense one.
fn read_plan(
    array: &OpenArray,
    schema: &SchemaRef,
    condition: Option<Condition>,
    prune: Option<Condition>,
) -> ReadRequest {
    let s = &array.schema;
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let mut dimensions: Vec<String> = (s.dimensions.iter())
        .filter(|d| names.contains(&d.name.as_str()))
        .map(|d| d.name.clone())
        .collect();
    let mut attributes: Vec<String> = s
        .attributes
        .iter()
        .filter(|a| names.contains(&a.name.as_str()))
        .map(|a| a.name.clone())
        .collect();
    if attributes.is_empty() && dimensions.is_empty() {
        match s.is_dense() {
            true => attributes.extend(s.attributes.first().map(|a| a.name.clone())),
            false => dimensions.extend(s.dimensions.first().map(|d| d.name.clone())),
        }
    }
    let request = ReadRequest::new()
        .attributes(attributes)
        .dimension_names(dimensions)
        .budget(partition_budget(s.is_dense()));
    // SQL asks no order of a scan: a batch of a dense array is whole
    // space tiles (read row-major, one would be at least a row of them).
    let request = request.layout(Layout::Unordered);
    let request = match condition {
        Some(c) => request.condition(c),
        None => request,
    };
    match prune {
        Some(c) => request.prune(c),
        None => request,
    }
}

impl DisplayAs for TesseraScan {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let fields: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        write!(
            f,
            "TesseraScan: uri={}, fields=[{}]",
            self.table.uri(),
            fields.join(", ")
        )?;
        // Per dimension, the ranges every partition reads, touching ones
        // merged (partitions cut one range into pieces).
        let mut by_dim: Vec<(String, Vec<(Value, Value)>)> = Vec::new();
        for (d, lo, hi) in self.partitions.iter().flatten() {
            match by_dim.iter_mut().find(|(n, _)| n == d) {
                Some((_, r)) => r.push((lo.clone(), hi.clone())),
                None => by_dim.push((d.clone(), vec![(lo.clone(), hi.clone())])),
            }
        }
        let ranges: Vec<String> = if self.partitions.is_empty() {
            vec!["none".into()]
        } else {
            by_dim
                .into_iter()
                .map(|(d, r)| {
                    let shown: Vec<String> = merged(r)
                        .iter()
                        .map(|(lo, hi)| format!("{} ..= {}", show(lo), show(hi)))
                        .collect();
                    format!("{d}: {}", shown.join(", "))
                })
                .collect()
        };
        write!(f, ", ranges=[{}]", ranges.join("; "))?;
        if let Some(c) = &self.condition {
            write!(f, ", condition={c}")?;
        }
        if let Some(c) = &self.prune {
            write!(f, ", prune={c}")?;
        }
        write!(f, ", partitions={}", self.partitions.len())?;
        if let Some(l) = self.limit {
            write!(f, ", limit={l}")?;
        }
        Ok(())
    }
}

/// Ranges sorted, overlapping and adjacent integer ones merged.
fn merged(mut r: Vec<(Value, Value)>) -> Vec<(Value, Value)> {
    r.sort();
    let mut out: Vec<(Value, Value)> = Vec::new();
    for (lo, hi) in r {
        if let Some(last) = out.last_mut() {
            let touches = match (&last.1, &lo) {
                (Value::Int(a), Value::Int(b)) => *b <= a.saturating_add(1),
                (a, b) => b <= a,
            };
            if touches {
                last.1 = last.1.clone().max(hi);
                continue;
            }
        }
        out.push((lo, hi));
    }
    out
}

fn show(k: &Value) -> String {
    match k {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Bytes(b) => format!("{:?}", String::from_utf8_lossy(b)),
    }
}

impl ExecutionPlan for TesseraScan {
    fn name(&self) -> &str {
        "TesseraScan"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.tokens.iter().collect()
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false; self.tokens.iter().count()]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match children.into_iter().next() {
            Some(tokens) if self.tokens.is_some() => {
                Ok(Arc::new(self.as_ref().clone().read_by(tokens)))
            }
            _ => Ok(self),
        }
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let rows = context.session_config().batch_size();
        let Some(tokens) = &self.tokens else {
            return self.read_partition(partition, rows);
        };
        // The partitions of the read this partition makes: named by the
        // tokens child, then read one after the other.
        let named = tokens.execute(partition, context)?;
        let this = self.clone();
        let batches = futures::stream::once(async move {
            let batches: Vec<RecordBatch> = named.try_collect().await?;
            let reads = tokens::indices(&batches)?
                .into_iter()
                .map(|i| {
                    // Tokens name partitions of this very scan (one, even
                    // when the filters select nothing).
                    if i >= this.partitions.len().max(1) {
                        return Err(DataFusionError::Internal(format!(
                            "partition token {i} of a scan of {} partitions",
                            this.partitions.len()
                        )));
                    }
                    this.read_partition(i, rows)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok::<_, DataFusionError>(futures::stream::iter(reads).flatten())
        })
        .map(|reads| match reads {
            Ok(r) => r.left_stream(),
            Err(e) => futures::stream::once(async { Err(e) }).right_stream(),
        })
        .flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            batches,
        )))
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        if partition.is_some() {
            return Ok(Arc::new(Statistics::new_unknown(&self.schema)));
        }
        let mut s = self
            .table
            .column_statistics()
            .clone()
            .project(Some(&self.projection));
        if self.narrowed {
            // The filters keep fewer cells: the table's values only bound them.
            s = s.to_inexact();
            s.num_rows = Precision::Absent;
        }
        if let Some(l) = self.limit {
            // Each partition stops at the limit; what a limit keeps is not exact.
            let rows = s.num_rows;
            if !matches!(rows, Precision::Exact(n) if n <= l) {
                s = s.to_inexact();
                let most = l.saturating_mul(self.partitions.len().max(1));
                s.num_rows = match rows {
                    Precision::Exact(n) | Precision::Inexact(n) => Precision::Inexact(n.min(most)),
                    Precision::Absent => Precision::Absent,
                };
            }
        }
        Ok(Arc::new(s))
    }
}
