//! From which array format version each schema field exists
//! (`format_spec/array_schema.md`, `format_spec/array_format_history.md`).

use tessera_tile::gates::Gate;

/// Schema: `allows dups`; domain: per-dimension datatype, cell val num,
/// filters and domain size (before, one domain datatype for all dimensions).
pub const PER_DIMENSION_TYPES: Gate = Gate::since(5);
/// Attribute: fill value.
pub const FILL_VALUE: Gate = Gate::since(6);
/// Schema: validity filters; attribute: nullable and fill validity.
pub const NULLABLE: Gate = Gate::since(7);
/// Schemas live in `__schema/` with timestamped names.
pub const SCHEMA_FOLDER: Gate = Gate::since(10);
/// Attribute: data order.
pub const ATTRIBUTE_ORDER: Gate = Gate::since(17);
/// Schema: dimension labels.
pub const DIMENSION_LABELS: Gate = Gate::since(18);
/// Schema: enumerations; attribute: enumeration name.
pub const ENUMERATIONS: Gate = Gate::since(20);
/// Schema: current domain.
pub const CURRENT_DOMAIN: Gate = Gate::since(22);
