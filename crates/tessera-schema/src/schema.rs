//! The array schema (`format_spec/array_schema.md`).

use crate::gates;
use crate::value::Value;
use crate::SchemaError;
use serde::Serialize;
use tessera_filters::FilterPipeline;
use tessera_tile::parse::{bytes, parse, u64_le, FieldError, PResult};
use tessera_tile::{ArrayType, Datatype, FormatVersion, Layout, Reader};

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
    fn from_raw(v: u32) -> CellValNum {
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

fn name_u32(r: &mut Reader<'_>, field: &str) -> Result<String, SchemaError> {
    let n = r.u32(&format!("{field} length"))?;
    Ok(r.string(field, n as u64)?)
}

fn datatype(r: &mut Reader<'_>, field: &str) -> Result<Datatype, SchemaError> {
    let at = r.position();
    let id = r.u8(field)?;
    Datatype::from_id(id).ok_or_else(|| {
        r.invalid_at(at, field, format!("unknown datatype id {id}"))
            .into()
    })
}

fn layout(r: &mut Reader<'_>, field: &str, allowed: &[Layout]) -> Result<Layout, SchemaError> {
    let at = r.position();
    let id = r.u8(field)?;
    match Layout::from_id(id) {
        Some(l) if allowed.contains(&l) => Ok(l),
        _ => Err(r
            .invalid_at(at, field, format!("invalid layout id {id}"))
            .into()),
    }
}

/// Reads an NDRectangle / MBR: per dimension a fixed range (2 values) or a
/// var range (`range size: u64, start size: u64, bytes`). See [`ndrange`].
pub fn read_ndrange(r: &mut Reader<'_>, dims: &[Dimension]) -> Result<Vec<Range1D>, SchemaError> {
    let (ranges, used) =
        parse(r.rest(), r.structure(), r.file_offset(), ndrange(dims)).map_err(|e| {
            match r.file() {
                Some(f) => e.in_file(f),
                None => e,
            }
        })?;
    r.skip("range", used as u64)?;
    Ok(ranges)
}

/// An NDRectangle / MBR as a nom parser: per dimension a fixed range (its
/// minimum then maximum, each a coordinate) or a var range (`range size:
/// u64, start size: u64`, then the minimum's and the maximum's bytes).
pub fn ndrange<'a>(dims: &'a [Dimension]) -> impl Fn(&'a [u8]) -> PResult<'a, Vec<Range1D>> {
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
    /// Parses the unfiltered payload of an array schema generic tile.
    /// `name` is the file name (its timestamps are taken from it).
    pub fn parse(payload: &[u8], name: &str) -> Result<ArraySchema, SchemaError> {
        let mut r = Reader::new(payload, "array schema");
        let at = r.position();
        let version = FormatVersion::new(r.u32("array version")?);
        if !version.is_known() {
            return Err(r
                .invalid_at(
                    at,
                    "array version",
                    format!(
                        "format version {version} is not supported (known: 1 to {})",
                        FormatVersion::LATEST
                    ),
                )
                .into());
        }
        let allows_dups = if version.has(gates::PER_DIMENSION_TYPES) {
            r.bool("allows dups")?
        } else {
            false
        };
        let at = r.position();
        let array_type = ArrayType::from_id(r.u8("array type")?)
            .ok_or_else(|| r.invalid_at(at, "array type", "not dense (0) or sparse (1)"))?;
        let tile_order = layout(&mut r, "tile order", &[Layout::RowMajor, Layout::ColMajor])?;
        let cell_order = layout(
            &mut r,
            "cell order",
            &[Layout::RowMajor, Layout::ColMajor, Layout::Hilbert],
        )?;
        let capacity = r.u64("capacity")?;
        r.set_structure("coords filters");
        let coords_filters = FilterPipeline::parse(&mut r, version, Datatype::UInt64)?;
        r.set_structure("offsets filters");
        let offsets_filters = FilterPipeline::parse(&mut r, version, Datatype::UInt64)?;
        let validity_filters = if version.has(gates::NULLABLE) {
            r.set_structure("validity filters");
            FilterPipeline::parse(&mut r, version, Datatype::UInt8)?
        } else {
            FilterPipeline::empty()
        };

        r.set_structure("domain");
        let shared_type = if version.has(gates::PER_DIMENSION_TYPES) {
            None
        } else {
            Some(datatype(&mut r, "domain datatype")?)
        };
        let n_dims = r.u32("number of dimensions")?;
        let n_dims = r.check_count("number of dimensions", n_dims as u64, 6)?;
        if n_dims == 0 {
            return Err(r
                .invalid(
                    "number of dimensions",
                    "a domain needs at least one dimension",
                )
                .into());
        }
        let mut dimensions = Vec::with_capacity(n_dims);
        for _ in 0..n_dims {
            dimensions.push(parse_dimension(
                &mut r,
                version,
                shared_type,
                &coords_filters,
            )?);
        }

        r.set_structure("array schema");
        let n_attrs = r.u32("number of attributes")?;
        let n_attrs = r.check_count("number of attributes", n_attrs as u64, 9)?;
        let mut attributes = Vec::with_capacity(n_attrs);
        for _ in 0..n_attrs {
            attributes.push(parse_attribute(&mut r, version)?);
        }

        let dimension_labels = if version.has(gates::DIMENSION_LABELS) {
            parse_dimension_labels(&mut r)?
        } else {
            Vec::new()
        };

        let mut enumerations = Vec::new();
        if version.has(gates::ENUMERATIONS) {
            r.set_structure("array schema");
            let n = r.u32("number of enumerations")?;
            let n = r.check_count("number of enumerations", n as u64, 8)?;
            for _ in 0..n {
                let name = name_u32(&mut r, "enumeration name")?;
                let path = name_u32(&mut r, "enumeration filename")?;
                enumerations.push(EnumerationRef { name, path });
            }
        }

        let current_domain = if version.has(gates::CURRENT_DOMAIN) {
            Some(parse_current_domain(&mut r, &dimensions)?)
        } else {
            None
        };
        r.set_structure("array schema");
        r.finish()?;

        let schema = ArraySchema {
            name: name.to_owned(),
            timestamp_range: parse_timestamps(name),
            version,
            allows_dups,
            array_type,
            tile_order,
            cell_order,
            capacity,
            coords_filters,
            offsets_filters,
            validity_filters,
            dimensions,
            attributes,
            dimension_labels,
            enumerations,
            current_domain,
        };
        schema.validate()?;
        Ok(schema)
    }

    /// Checks what the bytes alone cannot: cross-field consistency.
    pub fn validate(&self) -> Result<(), SchemaError> {
        let mut names = std::collections::HashSet::new();
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
                if lo.compare(&hi) == std::cmp::Ordering::Greater {
                    return Err(SchemaError::invalid(
                        field,
                        "domain lower bound exceeds upper bound",
                    ));
                }
                let span = match (&lo, &hi, &ext) {
                    (Value::Int(l), Value::Int(h), Value::Int(e)) => {
                        Some((*h as i128 - *l as i128 + 1, *e as i128))
                    }
                    (Value::UInt(l), Value::UInt(h), Value::UInt(e)) => {
                        Some((*h as i128 - *l as i128 + 1, *e as i128))
                    }
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
/// One dimension of the domain, as format `version` stores it: before
/// per-dimension types, every dimension has the domain's `shared_type`
/// and the coordinates' filters.
fn parse_dimension(
    r: &mut Reader<'_>,
    version: FormatVersion,
    shared_type: Option<Datatype>,
    coords_filters: &FilterPipeline,
) -> Result<Dimension, SchemaError> {
    r.set_structure("dimension");
    let name = name_u32(r, "dimension name")?;
    let (datatype, cell_val_num, filters, filters_inherited) = match shared_type {
        None => {
            let dt = datatype(r, "dimension datatype")?;
            let cvn = CellValNum::from_raw(r.u32("cell val num")?);
            let f = FilterPipeline::parse(r, version, dt)?;
            match f.filters.is_empty() {
                true => (dt, cvn, retyped(coords_filters, dt, version), true),
                false => (dt, cvn, f, false),
            }
        }
        Some(dt) => {
            let cvn = if dt.is_string() {
                CellValNum::Var
            } else {
                CellValNum::Fixed(1)
            };
            (dt, cvn, retyped(coords_filters, dt, version), true)
        }
    };
    let domain_size = if shared_type.is_none() {
        r.u64("domain size")?
    } else {
        2 * datatype.size()
    };
    let domain = if domain_size == 0 {
        None
    } else {
        if domain_size != 2 * datatype.size() {
            return Err(r
                .invalid(
                    "domain size",
                    format!("{domain_size} bytes is not two {datatype} values"),
                )
                .into());
        }
        let b = r.bytes("domain", domain_size)?;
        let half = (domain_size / 2) as usize;
        Some((b[..half].to_vec(), b[half..].to_vec()))
    };
    let null_extent = r.u8("null tile extent")?;
    let tile_extent = if null_extent == 0 {
        Some(r.bytes("tile extent", datatype.size())?.to_vec())
    } else {
        None
    };
    Ok(Dimension {
        name,
        datatype,
        cell_val_num,
        filters,
        filters_inherited,
        domain,
        tile_extent,
    })
}

/// One attribute, as format `version` stores it.
fn parse_attribute(r: &mut Reader<'_>, version: FormatVersion) -> Result<Attribute, SchemaError> {
    r.set_structure("attribute");
    let name = name_u32(r, "attribute name")?;
    let datatype = datatype(r, "attribute datatype")?;
    let cvn_at = r.position();
    let cell_val_num = CellValNum::from_raw(r.u32("cell val num")?);
    if let CellValNum::Fixed(n) = cell_val_num {
        // A cell is materialized whole (fill values, results): refuse absurd sizes.
        if n as u64 * datatype.size() > MAX_CELL_SIZE {
            return Err(r
                .invalid_at(
                    cvn_at,
                    "cell val num",
                    format!("{n} values of {datatype} exceed {MAX_CELL_SIZE} bytes per cell"),
                )
                .into());
        }
    }
    let filters = FilterPipeline::parse(r, version, datatype)?;
    let fill_value = if version.has(gates::FILL_VALUE) {
        let n = r.u64("fill value size")?;
        r.bytes("fill value", n)?.to_vec()
    } else {
        crate::default_fill_value(datatype, cell_val_num)
    };
    let (nullable, fill_validity) = if version.has(gates::NULLABLE) {
        (r.bool("nullable")?, r.bool("fill value validity")?)
    } else {
        (false, false)
    };
    let order = if version.has(gates::ATTRIBUTE_ORDER) {
        r.u8("order")?
    } else {
        0
    };
    let enumeration = if version.has(gates::ENUMERATIONS) {
        let n = r.u32("enumeration name length")?;
        if n > 0 {
            Some(r.string("enumeration name", n as u64)?)
        } else {
            None
        }
    } else {
        None
    };
    Ok(Attribute {
        name,
        datatype,
        cell_val_num,
        filters,
        fill_value,
        nullable,
        fill_validity,
        order,
        enumeration,
    })
}

/// The dimension labels (format 18 and later).
fn parse_dimension_labels(r: &mut Reader<'_>) -> Result<Vec<DimensionLabel>, SchemaError> {
    let mut dimension_labels = Vec::new();
    r.set_structure("dimension label");
    let n = r.u32("number of labels")?;
    let n = r.check_count("number of labels", n as u64, 23)?;
    for _ in 0..n {
        let dimension = r.u32("dimension index")?;
        let name = name_u32(r, "label name")?;
        let relative_uri = r.bool("relative uri")?;
        let ul = r.u64("uri length")?;
        let uri = r.string("uri", ul)?;
        let attribute = name_u32(r, "label attribute name")?;
        let order = r.u8("label order")?;
        let datatype = datatype(r, "label datatype")?;
        let cell_val_num = CellValNum::from_raw(r.u32("label cell val num")?);
        let external = r.bool("is external")?;
        dimension_labels.push(DimensionLabel {
            dimension,
            name,
            relative_uri,
            uri,
            attribute,
            order,
            datatype,
            cell_val_num,
            external,
        });
    }
    Ok(dimension_labels)
}

/// The current domain (format 22 and later).
fn parse_current_domain(
    r: &mut Reader<'_>,
    dimensions: &[Dimension],
) -> Result<CurrentDomain, SchemaError> {
    r.set_structure("current domain");
    let version = r.u32("version number")?;
    let empty = r.bool("empty")?;
    let ndrectangle = if empty {
        None
    } else {
        let at = r.position();
        let ty = r.u8("type")?;
        if ty != 0 {
            return Err(r
                .invalid_at(at, "type", format!("unknown current domain type {ty}"))
                .into());
        }
        Some(read_ndrange(r, dimensions)?)
    };
    Ok(CurrentDomain {
        version,
        ndrectangle,
    })
}

fn retyped(p: &FilterPipeline, t: Datatype, version: FormatVersion) -> FilterPipeline {
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
