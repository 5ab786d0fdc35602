//! Ballista's plan codecs with tessera's table and scan added.
//!
//! A client sends its logical plan to the scheduler, which sends stages of
//! the physical plan to executors; both are protobuf, and a node
//! DataFusion does not know travels as bytes an extension codec makes.
//! Tessera's bytes are a tag then the plain-data description
//! (`tessera_datafusion::describe`); everything else goes to Ballista's own
//! codecs, which the tags cannot be mistaken for: a protobuf message never
//! starts with the byte `t` (field 14, wire type 4, a group end).

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use std::sync::Arc;
use tessera_datafusion::{ScanDescription, TableDescription, TesseraScan, TesseraTable};

/// The tag before a table description.
const TABLE_TAG: &[u8] = b"tessera-table/1\n";
/// The tag before a scan description.
const SCAN_TAG: &[u8] = b"tessera-scan/1\n";

/// Ballista's logical codec, and tessera's tables.
#[derive(Debug, Default)]
pub struct TesseraLogicalCodec {
    ballista: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for TesseraLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.ballista.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.ballista.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let Some(bytes) = buf.strip_prefix(TABLE_TAG) else {
            return self
                .ballista
                .try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let description = TableDescription::from_bytes(bytes).map_err(DataFusionError::Plan)?;
        let table = TesseraTable::from_description(&description)?;
        // The table must be the one the plan was made against: a column
        // named in the plan and missing from the array would fail later,
        // far from its cause.
        if table.schema().fields() != schema.fields() {
            return Err(DataFusionError::Plan(format!(
                "table {table_ref} ({}): the array's columns differ from the plan's",
                description.uri
            )));
        }
        Ok(Arc::new(table))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        match node.downcast_ref::<TesseraTable>() {
            Some(table) => {
                buf.extend_from_slice(TABLE_TAG);
                buf.extend_from_slice(&table.description().to_bytes());
                Ok(())
            }
            None => self
                .ballista
                .try_encode_table_provider(table_ref, node, buf),
        }
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.ballista.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.ballista.try_encode_file_format(buf, node)
    }
}

/// Ballista's physical codec, and tessera's scans.
#[derive(Debug, Default)]
pub struct TesseraPhysicalCodec {
    ballista: BallistaPhysicalExtensionCodec,
}

impl PhysicalExtensionCodec for TesseraPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match buf.strip_prefix(SCAN_TAG) {
            Some(bytes) => {
                let description =
                    ScanDescription::from_bytes(bytes).map_err(DataFusionError::Plan)?;
                let scan = TesseraScan::from_description(&description)?;
                Ok(Arc::new(match inputs {
                    [] => scan,
                    [tokens] => scan.read_by(tokens.clone()),
                    _ => {
                        return Err(DataFusionError::Plan(format!(
                            "a tessera scan has at most one input, the plan gives {}",
                            inputs.len()
                        )))
                    }
                }))
            }
            None => self.ballista.try_decode(buf, inputs, ctx, proto_converter),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        match node.downcast_ref::<TesseraScan>() {
            Some(scan) => {
                buf.extend_from_slice(SCAN_TAG);
                buf.extend_from_slice(&scan.description().to_bytes());
                Ok(())
            }
            None => self.ballista.try_encode(node, buf, proto_converter),
        }
    }
}
