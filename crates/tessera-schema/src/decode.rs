//! Reading an array schema: nom parser functions of the format version,
//! one per structure, each field read where the version has it
//! (`cond(version.has(GATE), ...)`). [`ArraySchema::encode`] mirrors them
//! field by field.

use crate::gates;
use crate::schema::{
    ndrange, parse_timestamps, retyped, Attribute, CellValNum, CurrentDomain, Dimension,
    DimensionLabel, EnumerationRef, MAX_CELL_SIZE,
};
use crate::{ArraySchema, SchemaError};
use nom::combinator::cond;
use tessera_filters::FilterPipeline;
use tessera_tile::parse::{
    bytes, fits, flag, parse, sized_text, text, u32_le, u64_le, u8_le, within, FieldError, PResult,
};
use tessera_tile::{ArrayType, Datatype, FormatVersion, Layout};

impl ArraySchema {
    /// Parses the unfiltered payload of an array schema generic tile.
    /// `name` is the file name (its timestamps are taken from it).
    pub fn parse(payload: &[u8], name: &str) -> Result<ArraySchema, SchemaError> {
        let whole = |i| {
            let (rest, schema) = array_schema(i)?;
            if !rest.is_empty() {
                let why = format!("{} unexpected trailing bytes", rest.len());
                return Err(FieldError::invalid(rest, "end", why));
            }
            Ok((rest, schema))
        };
        let (mut schema, _) = parse(payload, "array schema", 0, whole)?;
        schema.name = name.to_owned();
        schema.timestamp_range = parse_timestamps(name);
        schema.validate()?;
        Ok(schema)
    }
}

/// A name as a `uint32_t` length and UTF-8 bytes; `field` names both.
fn name_u32(field: &'static str, length: &'static str) -> impl Fn(&[u8]) -> PResult<'_, String> {
    move |i| {
        let (i, n) = u32_le(length)(i)?;
        text(field, n as u64)(i)
    }
}

/// A datatype id.
fn datatype(field: &'static str) -> impl Fn(&[u8]) -> PResult<'_, Datatype> {
    move |i| {
        let (rest, id) = u8_le(field)(i)?;
        match Datatype::from_id(id) {
            Some(t) => Ok((rest, t)),
            None => Err(FieldError::invalid(
                i,
                field,
                format!("unknown datatype id {id}"),
            )),
        }
    }
}

/// A layout id, one of `allowed`.
fn layout<'l>(
    field: &'static str,
    allowed: &'l [Layout],
) -> impl Fn(&[u8]) -> PResult<'_, Layout> + 'l {
    move |i| {
        let (rest, id) = u8_le(field)(i)?;
        match Layout::from_id(id) {
            Some(l) if allowed.contains(&l) => Ok((rest, l)),
            _ => Err(FieldError::invalid(
                i,
                field,
                format!("invalid layout id {id}"),
            )),
        }
    }
}

/// A `uint32_t` number of values per cell (`u32::MAX`: var-sized).
fn cell_val_num(field: &'static str) -> impl Fn(&[u8]) -> PResult<'_, CellValNum> {
    move |i| {
        let (i, v) = u32_le(field)(i)?;
        Ok((i, CellValNum::from_raw(v)))
    }
}

/// A filter pipeline for fields of `datatype`, in format `version`.
fn pipeline<'a>(
    version: FormatVersion,
    datatype: Datatype,
) -> impl Fn(&'a [u8]) -> PResult<'a, FilterPipeline> {
    tessera_filters::pipeline::pipeline(version, datatype)
}

/// The format version a schema starts with: one tessera knows.
fn schema_version(i: &[u8]) -> PResult<'_, FormatVersion> {
    let (rest, n) = u32_le("array version")(i)?;
    let version = FormatVersion::new(n);
    if !version.is_known() {
        let why = format!(
            "format version {version} is not supported (known: 1 to {})",
            FormatVersion::LATEST
        );
        return Err(FieldError::invalid(i, "array version", why));
    }
    Ok((rest, version))
}

/// The whole schema payload (its name and timestamps come from the file).
fn array_schema(i: &[u8]) -> PResult<'_, ArraySchema> {
    let (i, version) = schema_version(i)?;
    let has = |g| version.has(g);
    let (i, allows_dups) = cond(has(gates::PER_DIMENSION_TYPES), flag("allows dups"))(i)?;
    let (rest, type_id) = u8_le("array type")(i)?;
    let array_type = ArrayType::from_id(type_id)
        .ok_or_else(|| FieldError::invalid(i, "array type", "not dense (0) or sparse (1)"))?;
    let orders = [Layout::RowMajor, Layout::ColMajor];
    let (i, tile_order) = layout("tile order", &orders)(rest)?;
    let cells = [Layout::RowMajor, Layout::ColMajor, Layout::Hilbert];
    let (i, cell_order) = layout("cell order", &cells)(i)?;
    let (i, capacity) = u64_le("capacity")(i)?;
    let (i, coords_filters) = pipeline(version, Datatype::UInt64)(i)?;
    let (i, offsets_filters) = pipeline(version, Datatype::UInt64)(i)?;
    let validity = pipeline(version, Datatype::UInt8);
    let (i, validity_filters) = cond(has(gates::NULLABLE), validity)(i)?;
    let (i, dimensions) = within("domain", domain(version, &coords_filters))(i)?;
    let (i, attributes) = attributes(version)(i)?;
    let labels = within("dimension label", dimension_labels);
    let (i, dimension_labels) = cond(has(gates::DIMENSION_LABELS), labels)(i)?;
    let (i, enumerations) = cond(has(gates::ENUMERATIONS), enumeration_refs)(i)?;
    let current = within("current domain", current_domain(&dimensions));
    let (i, current_domain) = cond(has(gates::CURRENT_DOMAIN), current)(i)?;
    let schema = ArraySchema {
        name: String::new(),
        timestamp_range: (0, 0),
        version,
        allows_dups: allows_dups.unwrap_or(false),
        array_type,
        tile_order,
        cell_order,
        capacity,
        coords_filters,
        offsets_filters,
        validity_filters: validity_filters.unwrap_or_else(FilterPipeline::empty),
        dimensions,
        attributes,
        dimension_labels: dimension_labels.unwrap_or_default(),
        enumerations: enumerations.unwrap_or_default(),
        current_domain,
    };
    Ok((i, schema))
}

/// The domain: before per-dimension types one datatype for all, then the
/// dimensions (at least one).
fn domain<'a, 'c>(
    version: FormatVersion,
    coords_filters: &'c FilterPipeline,
) -> impl Fn(&'a [u8]) -> PResult<'a, Vec<Dimension>> + 'c {
    move |i| {
        let shared = !version.has(gates::PER_DIMENSION_TYPES);
        let (i, shared_type) = cond(shared, datatype("domain datatype"))(i)?;
        let (rest, n) = u32_le("number of dimensions")(i)?;
        let n = fits(rest, "number of dimensions", n as u64, 6)?;
        if n == 0 {
            let why = "a domain needs at least one dimension";
            return Err(FieldError::invalid(rest, "number of dimensions", why));
        }
        let mut i = rest;
        let mut dims = Vec::with_capacity(n);
        for _ in 0..n {
            let d = dimension(version, shared_type, coords_filters);
            let (j, d) = within("dimension", d)(i)?;
            dims.push(d);
            i = j;
        }
        Ok((i, dims))
    }
}

/// One dimension, as format `version` stores it: before per-dimension
/// types, every dimension has the domain's `shared_type` and the
/// coordinates' filters.
fn dimension<'a, 'c>(
    version: FormatVersion,
    shared_type: Option<Datatype>,
    coords_filters: &'c FilterPipeline,
) -> impl Fn(&'a [u8]) -> PResult<'a, Dimension> + 'c {
    move |i| {
        let (i, name) = name_u32("dimension name", "dimension name length")(i)?;
        let (i, datatype, cell_val_num, filters, filters_inherited) = match shared_type {
            None => {
                let (i, dt) = datatype("dimension datatype")(i)?;
                let (i, cvn) = cell_val_num("cell val num")(i)?;
                let (i, f) = pipeline(version, dt)(i)?;
                match f.filters.is_empty() {
                    true => (i, dt, cvn, retyped(coords_filters, dt, version), true),
                    false => (i, dt, cvn, f, false),
                }
            }
            Some(dt) => {
                let cvn = match dt.is_string() {
                    true => CellValNum::Var,
                    false => CellValNum::Fixed(1),
                };
                (i, dt, cvn, retyped(coords_filters, dt, version), true)
            }
        };
        let (j, domain_size) = match shared_type {
            None => u64_le("domain size")(i)?,
            Some(_) => (i, 2 * datatype.size()),
        };
        let (i, domain) = match domain_size {
            0 => (j, None),
            n if n != 2 * datatype.size() => {
                let why = format!("{n} bytes is not two {datatype} values");
                return Err(FieldError::invalid(j, "domain size", why));
            }
            n => {
                let (i, b) = bytes("domain", n)(j)?;
                let half = (n / 2) as usize;
                (i, Some((b[..half].to_vec(), b[half..].to_vec())))
            }
        };
        let (i, null_extent) = u8_le("null tile extent")(i)?;
        let (i, extent) = cond(null_extent == 0, bytes("tile extent", datatype.size()))(i)?;
        let dim = Dimension {
            name,
            datatype,
            cell_val_num,
            filters,
            filters_inherited,
            domain,
            tile_extent: extent.map(<[u8]>::to_vec),
        };
        Ok((i, dim))
    }
}

/// The attributes: a count, then each one.
fn attributes(version: FormatVersion) -> impl Fn(&[u8]) -> PResult<'_, Vec<Attribute>> {
    move |i| {
        let (rest, n) = u32_le("number of attributes")(i)?;
        let n = fits(rest, "number of attributes", n as u64, 9)?;
        let mut i = rest;
        let mut attrs = Vec::with_capacity(n);
        for _ in 0..n {
            let (j, a) = within("attribute", attribute(version))(i)?;
            attrs.push(a);
            i = j;
        }
        Ok((i, attrs))
    }
}

/// One attribute, as format `version` stores it.
fn attribute(version: FormatVersion) -> impl Fn(&[u8]) -> PResult<'_, Attribute> {
    move |i| {
        let has = |g| version.has(g);
        let (i, name) = name_u32("attribute name", "attribute name length")(i)?;
        let (i, datatype) = datatype("attribute datatype")(i)?;
        let (j, cell_val_num) = cell_val_num("cell val num")(i)?;
        if let CellValNum::Fixed(n) = cell_val_num {
            // A cell is materialized whole (fill values, results): refuse absurd sizes.
            if n as u64 * datatype.size() > MAX_CELL_SIZE {
                let why = format!("{n} values of {datatype} exceed {MAX_CELL_SIZE} bytes per cell");
                return Err(FieldError::invalid(i, "cell val num", why));
            }
        }
        let (i, filters) = pipeline(version, datatype)(j)?;
        let fill = |i| {
            let (i, n) = u64_le("fill value size")(i)?;
            bytes("fill value", n)(i)
        };
        let (i, fill_value) = cond(has(gates::FILL_VALUE), fill)(i)?;
        let (i, nullable) = cond(has(gates::NULLABLE), flag("nullable"))(i)?;
        let (i, fill_validity) = cond(has(gates::NULLABLE), flag("fill value validity"))(i)?;
        let (i, order) = cond(has(gates::ATTRIBUTE_ORDER), u8_le("order"))(i)?;
        let enumeration = name_u32("enumeration name", "enumeration name length");
        let (i, enumeration) = cond(has(gates::ENUMERATIONS), enumeration)(i)?;
        let attribute = Attribute {
            name,
            datatype,
            cell_val_num,
            filters,
            fill_value: fill_value.map_or_else(
                || crate::default_fill_value(datatype, cell_val_num),
                <[u8]>::to_vec,
            ),
            nullable: nullable.unwrap_or(false),
            fill_validity: fill_validity.unwrap_or(false),
            order: order.unwrap_or(0),
            enumeration: enumeration.filter(|e| !e.is_empty()),
        };
        Ok((i, attribute))
    }
}

/// The dimension labels (format 18 and later).
fn dimension_labels(i: &[u8]) -> PResult<'_, Vec<DimensionLabel>> {
    let (rest, n) = u32_le("number of labels")(i)?;
    let n = fits(rest, "number of labels", n as u64, 23)?;
    let mut i = rest;
    let mut labels = Vec::with_capacity(n);
    for _ in 0..n {
        let (j, dimension) = u32_le("dimension index")(i)?;
        let (j, name) = name_u32("label name", "label name length")(j)?;
        let (j, relative_uri) = flag("relative uri")(j)?;
        let (j, uri) = sized_text("uri length", "uri")(j)?;
        let (j, attribute) = name_u32("label attribute name", "label attribute name length")(j)?;
        let (j, order) = u8_le("label order")(j)?;
        let (j, datatype) = datatype("label datatype")(j)?;
        let (j, cell_val_num) = cell_val_num("label cell val num")(j)?;
        let (j, external) = flag("is external")(j)?;
        labels.push(DimensionLabel {
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
        i = j;
    }
    Ok((i, labels))
}

/// The enumerations a schema lists (format 20 and later): names and files.
fn enumeration_refs(i: &[u8]) -> PResult<'_, Vec<EnumerationRef>> {
    let (rest, n) = u32_le("number of enumerations")(i)?;
    let n = fits(rest, "number of enumerations", n as u64, 8)?;
    let mut i = rest;
    let mut refs = Vec::with_capacity(n);
    for _ in 0..n {
        let (j, name) = name_u32("enumeration name", "enumeration name length")(i)?;
        let (j, path) = name_u32("enumeration filename", "enumeration filename length")(j)?;
        refs.push(EnumerationRef { name, path });
        i = j;
    }
    Ok((i, refs))
}

/// The current domain (format 22 and later): empty, or an NDRectangle.
fn current_domain<'a, 'd>(
    dimensions: &'d [Dimension],
) -> impl Fn(&'a [u8]) -> PResult<'a, CurrentDomain> + 'd {
    move |i| {
        let (i, version) = u32_le("version number")(i)?;
        let (i, empty) = flag("empty")(i)?;
        let rectangle = |i: &'a [u8]| {
            let (j, ty) = u8_le("type")(i)?;
            if ty != 0 {
                let why = format!("unknown current domain type {ty}");
                return Err(FieldError::invalid(i, "type", why));
            }
            ndrange(dimensions)(j)
        };
        let (i, ndrectangle) = cond(!empty, rectangle)(i)?;
        Ok((
            i,
            CurrentDomain {
                version,
                ndrectangle,
            },
        ))
    }
}
