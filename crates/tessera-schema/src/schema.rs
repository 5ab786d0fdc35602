//! The array schema (`format_spec/array_schema.md`).

use crate::gates;
use crate::value::Value;
use crate::SchemaError;
use serde::Serialize;
use tessera_filters::FilterPipeline;
use tessera_tile::parse::{bytes, u64_le, FieldError, PResult};
use tessera_tile::{ArrayType, Datatype, FormatVersion, Layout};

/// Largest fixed-sized cell accepted, in bytes.
pub const MAX_CELL_SIZE: u64 = 1 << 20;

/// The number of values per cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CellValNum {
    /// A fixed number of values.
    Fixed(u32),
    /// Variable-sized (`u32::MAX` on disk).
    Var,
}

impl CellValNum {
    pub(crate) fn from_raw(v: u32) -> CellValNum {
        if v == u32::MAX {
            CellValNum::Var
        } else {
            CellValNum::Fixed(v)
        }
    }
    /// True for var-sized cells.
    pub fn is_var(self) -> bool {
        self == CellValNum::Var
    }
}

/// A dimension of the domain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dimension {
    /// Name.
    pub name: String,
    /// Datatype of the coordinates.
    pub datatype: Datatype,
    /// Values per coordinate (var-sized for string dimensions).
    pub cell_val_num: CellValNum,
    /// Filters of the coordinate tiles (the coords filters when the dimension has none).
    pub filters: FilterPipeline,
    /// Whether `filters` are the coords filters because the dimension
    /// stores none (always so before per-dimension types): a writer then
    /// stores none again.
    #[serde(skip)]
    pub filters_inherited: bool,
    /// Lower and upper bound, raw bytes (absent for var-sized dimensions).
    pub domain: Option<(Vec<u8>, Vec<u8>)>,
    /// Space tile extent, raw bytes, if set.
    pub tile_extent: Option<Vec<u8>>,
}

impl Dimension {
    /// True for var-sized (string) dimensions.
    pub fn is_var(&self) -> bool {
        self.cell_val_num.is_var()
    }
    /// Size of one coordinate in bytes (fixed-sized dimensions).
    pub fn coord_size(&self) -> u64 {
        self.datatype.size()
    }
    /// The domain bounds as values.
    pub fn domain_values(&self) -> Option<(Value, Value)> {
        self.domain.as_ref().map(|(lo, hi)| {
            (
                Value::decode(self.datatype, lo),
                Value::decode(self.datatype, hi),
            )
        })
    }
    /// The tile extent as a value.
    pub fn tile_extent_value(&self) -> Option<Value> {
        self.tile_extent
            .as_ref()
            .map(|t| Value::decode(self.datatype, t))
    }
}

/// An attribute.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attribute {
    /// Name.
    pub name: String,
    /// Datatype of the values.
    pub datatype: Datatype,
    /// Values per cell.
    pub cell_val_num: CellValNum,
    /// Filters of the attribute's data tiles.
    pub filters: FilterPipeline,
    /// Fill value for cells never written (one cell's worth of bytes).
    pub fill_value: Vec<u8>,
    /// Whether cells can be null.
    pub nullable: bool,
    /// Validity of the fill value.
    pub fill_validity: bool,
    /// Data order (0 unordered, 1 increasing, 2 decreasing).
    pub order: u8,
    /// The enumeration this attribute's values index, if any.
    pub enumeration: Option<String>,
}

impl Attribute {
    /// True for var-sized attributes.
    pub fn is_var(&self) -> bool {
        self.cell_val_num.is_var()
    }
    /// Bytes of one fixed-sized cell.
    pub fn cell_size(&self) -> u64 {
        match self.cell_val_num {
            CellValNum::Fixed(n) => n as u64 * self.datatype.size(),
            CellValNum::Var => self.datatype.size(),
        }
    }
}

/// A dimension label (from version 18).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DimensionLabel {
    /// Index of the labelled dimension.
    pub dimension: u32,
    /// Label name.
    pub name: String,
    /// Whether `uri` is relative to the array.
    pub relative_uri: bool,
    /// Where the label array lives.
    pub uri: String,
    /// The label array's attribute holding the labels.
    pub attribute: String,
    /// Label order.
    pub order: u8,
    /// Label datatype.
    pub datatype: Datatype,
    /// Label values per cell.
    pub cell_val_num: CellValNum,
    /// Whether the label array lives outside the array.
    pub external: bool,
}

/// An enumeration reference in the schema (from version 20).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnumerationRef {
    /// Enumeration name.
    pub name: String,
    /// File name under `__schema/__enumerations/`.
    pub path: String,
}

/// A 1D range: raw bytes of the bounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Range1D {
    /// Lower bound.
    pub lo: Vec<u8>,
    /// Upper bound.
    pub hi: Vec<u8>,
}

/// The current domain (from version 22).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurrentDomain {
    /// Current domain format version.
    pub version: u32,
    /// The hyperrectangle, one range per dimension; `None` when empty.
    pub ndrectangle: Option<Vec<Range1D>>,
}

/// An array schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArraySchema {
    /// Schema file name (`__array_schema.tdb` or a timestamped name).
    pub name: String,
    /// Timestamp range from the file name (0, 0 for the legacy file).
    pub timestamp_range: (u64, u64),
    /// Array format version of the schema.
    pub version: FormatVersion,
    /// Whether sparse cells may share coordinates.
    pub allows_dups: bool,
    /// Dense or sparse.
    pub array_type: ArrayType,
    /// Order of space tiles.
    pub tile_order: Layout,
    /// Order of cells within a tile.
    pub cell_order: Layout,
    /// Cells per data tile of sparse fragments.
    pub capacity: u64,
    /// Default filters of coordinate tiles (also used for `t`, `dt`, `dci`).
    pub coords_filters: FilterPipeline,
    /// Filters of var-sized offsets tiles.
    pub offsets_filters: FilterPipeline,
    /// Filters of validity tiles.
    pub validity_filters: FilterPipeline,
    /// The dimensions.
    pub dimensions: Vec<Dimension>,
    /// The attributes.
    pub attributes: Vec<Attribute>,
    /// Dimension labels.
    pub dimension_labels: Vec<DimensionLabel>,
    /// Enumerations.
    pub enumerations: Vec<EnumerationRef>,
    /// Current domain.
    pub current_domain: Option<CurrentDomain>,
}

/// An NDRectangle / MBR as a nom parser: per dimension a fixed range (its
/// minimum then maximum, each a coordinate) or a var range (`range size:
/// u64, start size: u64`, then the minimum's and the maximum's bytes).
pub fn ndrange<'a, 'd>(
    dims: &'d [Dimension],
) -> impl Fn(&'a [u8]) -> PResult<'a, Vec<Range1D>> + 'd {
    move |mut i| {
        let mut out = Vec::with_capacity(dims.len());
        for d in dims {
            let range = if d.is_var() {
                let (j, size) = u64_le("range size")(i)?;
                let (j, start) = u64_le("range start size")(j)?;
                if start > size {
                    let why = format!("{start} exceeds the range size {size}");
                    return Err(FieldError::invalid(j, "range start size", why));
                }
                let (j, b) = bytes("range", size)(j)?;
                i = j;
                Range1D {
                    lo: b[..start as usize].to_vec(),
                    hi: b[start as usize..].to_vec(),
                }
            } else {
                let s = d.coord_size();
                let (j, lo) = bytes("range minimum", s)(i)?;
                let (j, hi) = bytes("range maximum", s)(j)?;
                i = j;
                Range1D {
                    lo: lo.to_vec(),
                    hi: hi.to_vec(),
                }
            };
            out.push(range);
        }
        Ok((i, out))
    }
}

/// Writes an NDRectangle / MBR as [`ndrange`] reads it.
pub fn encode_ndrange(ranges: &[Range1D], dims: &[Dimension], out: &mut Vec<u8>) {
    for (r, d) in ranges.iter().zip(dims) {
        if d.is_var() {
            out.extend_from_slice(&((r.lo.len() + r.hi.len()) as u64).to_le_bytes());
            out.extend_from_slice(&(r.lo.len() as u64).to_le_bytes());
        }
        out.extend_from_slice(&r.lo);
        out.extend_from_slice(&r.hi);
    }
}

impl ArraySchema {
    /// Checks what the bytes alone cannot: cross-field consistency.
    pub fn validate(&self) -> Result<(), SchemaError> {
        let mut names = std::collections::HashSet::new();
        let first = self.dimensions.first().map(|d| d.datatype);
        if let Some(d) = self.dimensions.iter().find(|d| Some(d.datatype) != first) {
            if self.array_type == ArrayType::Dense {
                // libtiledb refuses such a domain (`ArraySchema::set_domain`).
                return Err(SchemaError::invalid(
                    format!("dimension `{}`", d.name),
                    format!(
                        "in dense arrays all dimensions have one datatype; this one is {}, the first {}",
                        d.datatype,
                        first.expect("a first dimension")
                    ),
                ));
            }
        }
        for d in &self.dimensions {
            let field = format!("dimension `{}`", d.name);
            if !names.insert(d.name.as_str()) {
                return Err(SchemaError::invalid(field, "duplicate name"));
            }
            if self.array_type == ArrayType::Dense && !(d.datatype.is_integer()) {
                return Err(SchemaError::invalid(
                    field,
                    format!("dense arrays need integer dimensions, not {}", d.datatype),
                ));
            }
            if d.is_var() && !matches!(d.datatype, Datatype::StringAscii) {
                return Err(SchemaError::invalid(
                    field,
                    format!(
                        "var-sized dimensions must be STRING_ASCII, not {}",
                        d.datatype
                    ),
                ));
            }
            if let (Some((lo, hi)), Some(ext)) = (d.domain_values(), d.tile_extent_value()) {
                if lo > hi {
                    return Err(SchemaError::invalid(
                        field,
                        "domain lower bound exceeds upper bound",
                    ));
                }
                let span = match (&lo, &hi, &ext) {
                    (Value::Int(l), Value::Int(h), Value::Int(e)) => Some((h - l + 1, *e)),
                    _ => None,
                };
                if let Some((span, e)) = span {
                    if e <= 0 {
                        return Err(SchemaError::invalid(field, "tile extent must be positive"));
                    }
                    if e > span
                        && self.array_type == ArrayType::Dense
                        && self.version.has(gates::PER_DIMENSION_TYPES)
                    {
                        return Err(SchemaError::invalid(
                            field,
                            format!("tile extent {e} exceeds the domain range {span}"),
                        ));
                    }
                }
            }
            if self.array_type == ArrayType::Dense && d.tile_extent.is_none() && d.domain.is_some()
            {
                // libtiledb sets a default extent for dense arrays; a missing one is tolerated.
            }
        }
        for a in &self.attributes {
            let field = format!("attribute `{}`", a.name);
            if !names.insert(a.name.as_str()) {
                return Err(SchemaError::invalid(
                    field,
                    "name repeats a dimension or attribute",
                ));
            }
            if a.cell_val_num == CellValNum::Fixed(0) {
                return Err(SchemaError::invalid(field, "cell val num 0"));
            }
            if let Some(e) = &a.enumeration {
                if !self.enumerations.iter().any(|x| &x.name == e) {
                    return Err(SchemaError::invalid(
                        field,
                        format!("names enumeration `{e}` which the schema does not list"),
                    ));
                }
            }
        }
        if self.array_type == ArrayType::Dense && self.attributes.is_empty() {
            return Err(SchemaError::invalid(
                "attributes",
                "dense arrays need at least one attribute",
            ));
        }
        Ok(())
    }

    /// The attribute with this name.
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// The dimension with this name.
    pub fn dimension(&self, name: &str) -> Option<&Dimension> {
        self.dimensions.iter().find(|d| d.name == name)
    }

    /// True for dense arrays.
    pub fn is_dense(&self) -> bool {
        self.array_type == ArrayType::Dense
    }
}

/// A copy of `p` whose filters receive `t` (for the coords filters given to a dimension).
pub(crate) fn retyped(p: &FilterPipeline, t: Datatype, version: FormatVersion) -> FilterPipeline {
    let mut out = p.clone();
    let mut cur = t;
    for f in &mut out.filters {
        f.input_type = cur;
        if version.has(tessera_filters::gates::FILTER_DATATYPE_CHAINING) {
            cur = f.output_type(cur);
        }
    }
    out
}

/// `(t1, t2)` of a timestamped name `__t1_t2_uuid[_v]`, or `(0, 0)`.
pub fn parse_timestamps(name: &str) -> (u64, u64) {
    let parts: Vec<&str> = name.trim_start_matches("__").split('_').collect();
    match (
        parts.first().and_then(|s| s.parse().ok()),
        parts.get(1).and_then(|s| s.parse().ok()),
    ) {
        (Some(a), Some(b)) if parts.len() >= 3 => (a, b),
        _ => (0, 0),
    }
}
