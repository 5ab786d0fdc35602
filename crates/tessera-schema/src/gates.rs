//! From which array format version each schema field exists
//! (`format_spec/array_schema.md`, `format_spec/array_format_history.md`).

/// Schema: `allows dups`; domain: per-dimension datatype, cell val num,
/// filters and domain size (before, one domain datatype for all dimensions).
pub const PER_DIMENSION_TYPES: u32 = 5;
/// Attribute: fill value.
pub const FILL_VALUE: u32 = 6;
/// Schema: validity filters; attribute: nullable and fill validity.
pub const NULLABLE: u32 = 7;
/// Schemas live in `__schema/` with timestamped names.
pub const SCHEMA_FOLDER: u32 = 10;
/// Attribute: data order.
pub const ATTRIBUTE_ORDER: u32 = 17;
/// Schema: dimension labels.
pub const DIMENSION_LABELS: u32 = 18;
/// Schema: enumerations; attribute: enumeration name.
pub const ENUMERATIONS: u32 = 20;
/// Schema: current domain.
pub const CURRENT_DOMAIN: u32 = 22;
