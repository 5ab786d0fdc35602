//! The whole schema document, both ways: [`schema_to_json`] and
//! [`schema_from_json`] mirror each other field by field.

use super::datatype_from_name;
use super::fields::{invalid, Fields};
use super::filters::{pipeline_from_json, pipeline_to_json};
use super::values::{cell_from_json, cell_to_json, value_from_json, value_to_json};
use crate::schema::{
    ArraySchema, Attribute, CellValNum, CurrentDomain, Dimension, EnumerationRef, Range1D,
};
use crate::{default_fill_value, Enumeration, SchemaError};
use serde_json::{json, Map, Value as Json};
use tessera_filters::{Filter, FilterKind, FilterPipeline};
use tessera_tile::{ArrayType, Datatype, FormatVersion, Layout};

/// The format version new arrays are written at: what libtiledb 2.30
/// writes and 2.25 reads.
pub const WRITTEN_VERSION: FormatVersion = FormatVersion::new(22);

/// A schema read from its JSON form, with the enumerations it defines.
/// Enumeration file names are left empty: the writer names them.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaDocument {
    /// The schema, at [`WRITTEN_VERSION`].
    pub schema: ArraySchema,
    /// The enumerations, in the order the schema lists them.
    pub enumerations: Vec<Enumeration>,
    /// The schemas of the label arrays, in the order of
    /// `schema.dimension_labels`.
    pub labels: Vec<SchemaDocument>,
}

/// The schema and its loaded enumerations as JSON.
pub fn schema_to_json(s: &ArraySchema, enumerations: &[Enumeration]) -> Json {
    let mut o = Map::new();
    o.insert("format_version".into(), s.version.number().into());
    o.insert("array_type".into(), s.array_type.to_string().into());
    o.insert("cell_order".into(), s.cell_order.name().into());
    o.insert("tile_order".into(), s.tile_order.name().into());
    o.insert("capacity".into(), s.capacity.into());
    o.insert("allows_duplicates".into(), s.allows_dups.into());
    let dims: Vec<Json> = s.dimensions.iter().map(dimension_to_json).collect();
    o.insert("dimensions".into(), dims.into());
    let attrs: Vec<Json> = s.attributes.iter().map(attribute_to_json).collect();
    o.insert("attributes".into(), attrs.into());
    o.insert("coords_filters".into(), pipeline_to_json(&s.coords_filters));
    o.insert(
        "offsets_filters".into(),
        pipeline_to_json(&s.offsets_filters),
    );
    o.insert(
        "validity_filters".into(),
        pipeline_to_json(&s.validity_filters),
    );
    if !enumerations.is_empty() {
        let e: Vec<Json> = enumerations.iter().map(enumeration_to_json).collect();
        o.insert("enumerations".into(), e.into());
    }
    if let Some(r) = s
        .current_domain
        .as_ref()
        .and_then(|c| c.ndrectangle.as_ref())
    {
        let ranges: Vec<Json> = r
            .iter()
            .zip(&s.dimensions)
            .map(|(r, d)| {
                json!([
                    value_to_json(d.datatype, &r.lo),
                    value_to_json(d.datatype, &r.hi)
                ])
            })
            .collect();
        o.insert("current_domain".into(), ranges.into());
    }
    if !s.dimension_labels.is_empty() {
        let labels: Vec<Json> = s
            .dimension_labels
            .iter()
            .map(super::labels::label_to_json)
            .collect();
        o.insert("dimension_labels".into(), labels.into());
    }
    o.into()
}

fn cell_val_num_to_json(c: CellValNum) -> Json {
    match c {
        CellValNum::Var => "var".into(),
        CellValNum::Fixed(n) => n.into(),
    }
}

fn dimension_to_json(d: &Dimension) -> Json {
    let mut o = json!({ "name": d.name, "type": d.datatype.name() });
    if d.is_var() {
        o["cell_val_num"] = "var".into();
    }
    if let Some((lo, hi)) = &d.domain {
        o["domain"] = json!([value_to_json(d.datatype, lo), value_to_json(d.datatype, hi)]);
    }
    if let Some(t) = &d.tile_extent {
        o["tile_extent"] = value_to_json(d.datatype, t);
    }
    if !d.filters_inherited {
        o["filters"] = pipeline_to_json(&d.filters);
    }
    o
}

fn attribute_to_json(a: &Attribute) -> Json {
    let mut o = json!({
        "name": a.name,
        "type": a.datatype.name(),
        "cell_val_num": cell_val_num_to_json(a.cell_val_num),
        "nullable": a.nullable,
        "fill_value": cell_to_json(a.datatype, &a.fill_value),
    });
    if a.nullable {
        o["fill_valid"] = a.fill_validity.into();
    }
    o["filters"] = pipeline_to_json(&a.filters);
    if let Some(e) = &a.enumeration {
        o["enumeration"] = e.as_str().into();
    }
    match a.order {
        1 => o["order"] = "increasing".into(),
        2 => o["order"] = "decreasing".into(),
        _ => {}
    }
    o
}

fn enumeration_to_json(e: &Enumeration) -> Json {
    let values: Vec<Json> = e
        .values
        .iter()
        .map(|v| cell_to_json(e.datatype, v))
        .collect();
    json!({
        "name": e.name,
        "type": e.datatype.name(),
        "cell_val_num": cell_val_num_to_json(e.cell_val_num),
        "ordered": e.ordered,
        "values": values,
    })
}

const SCHEMA_FIELDS: &[&str] = &[
    "format_version",
    "array_type",
    "cell_order",
    "tile_order",
    "capacity",
    "allows_duplicates",
    "dimensions",
    "attributes",
    "coords_filters",
    "offsets_filters",
    "validity_filters",
    "enumerations",
    "current_domain",
    "dimension_labels",
];

/// A schema from its JSON form, at [`WRITTEN_VERSION`]. `format_version`
/// is informational (what the schema was read from) and not kept.
pub fn schema_from_json(v: &Json) -> Result<SchemaDocument, SchemaError> {
    let version = WRITTEN_VERSION;
    let o = Fields::new(v, "", SCHEMA_FIELDS)?;
    let array_type = match o.str("array_type")?.map(str::to_ascii_lowercase).as_deref() {
        Some("dense") => ArrayType::Dense,
        Some("sparse") => ArrayType::Sparse,
        Some(t) => {
            return Err(invalid(
                "array_type",
                format!("`{t}` is neither dense nor sparse"),
            ))
        }
        None => return Err(invalid("array_type", "required: dense or sparse")),
    };
    let coords_filters = pipeline_from_json(
        o.get("coords_filters"),
        "coords_filters",
        Datatype::UInt64,
        version,
    )
    .map(|p| {
        default_if_absent(
            p,
            o.get("coords_filters"),
            FilterKind::Zstd { level: -1 },
            Datatype::UInt64,
        )
    })?;
    let offsets_filters = pipeline_from_json(
        o.get("offsets_filters"),
        "offsets_filters",
        Datatype::UInt64,
        version,
    )
    .map(|p| {
        default_if_absent(
            p,
            o.get("offsets_filters"),
            FilterKind::Zstd { level: -1 },
            Datatype::UInt64,
        )
    })?;
    let validity_filters = pipeline_from_json(
        o.get("validity_filters"),
        "validity_filters",
        Datatype::UInt8,
        version,
    )
    .map(|p| {
        default_if_absent(
            p,
            o.get("validity_filters"),
            FilterKind::Rle { level: -1 },
            Datatype::UInt8,
        )
    })?;
    let dense = array_type == ArrayType::Dense;
    let dimensions = o
        .list("dimensions")?
        .into_iter()
        .map(|(path, d)| dimension_from_json(d, &path, dense, &coords_filters, version))
        .collect::<Result<Vec<_>, _>>()?;
    if dimensions.is_empty() {
        return Err(invalid("dimensions", "required: at least one dimension"));
    }
    let enumerations = o
        .list("enumerations")?
        .into_iter()
        .map(|(path, e)| enumeration_from_json(e, &path))
        .collect::<Result<Vec<_>, _>>()?;
    let attributes = o
        .list("attributes")?
        .into_iter()
        .map(|(path, a)| attribute_from_json(a, &path, &enumerations, version))
        .collect::<Result<Vec<_>, _>>()?;
    let current_domain = current_domain_from_json(o.get("current_domain"), &dimensions)?;
    let (dimension_labels, label_docs) =
        super::labels::labels_from_json(o.get("dimension_labels"), &dimensions, &attributes)?;
    let labels = label_docs
        .iter()
        .enumerate()
        .map(|(i, doc)| {
            schema_from_json(doc).map_err(|e| {
                invalid(
                    &format!("dimension_labels[{i}]"),
                    format!("its label array: {e}"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let schema = ArraySchema {
        name: String::new(),
        timestamp_range: (0, 0),
        version,
        allows_dups: o.bool("allows_duplicates")?.unwrap_or(false),
        array_type,
        tile_order: layout(&o, "tile_order", &["row-major", "col-major"])?,
        cell_order: layout(&o, "cell_order", &["row-major", "col-major", "hilbert"])?,
        capacity: o.uint("capacity", u64::MAX)?.unwrap_or(10_000),
        coords_filters,
        offsets_filters,
        validity_filters,
        dimensions,
        attributes,
        dimension_labels,
        enumerations: enumerations
            .iter()
            .map(|e| EnumerationRef {
                name: e.name.clone(),
                path: String::new(),
            })
            .collect(),
        current_domain: Some(current_domain),
    };
    schema.validate()?;
    Ok(SchemaDocument {
        schema,
        enumerations,
        labels,
    })
}

/// libtiledb's default pipeline (one compressor) where the document names none.
fn default_if_absent(
    p: FilterPipeline,
    given: Option<&Json>,
    kind: FilterKind,
    t: Datatype,
) -> FilterPipeline {
    match given {
        Some(_) => p,
        None => FilterPipeline::new(vec![Filter::new(kind, t)], p.max_chunk_size),
    }
}

fn layout(o: &Fields<'_>, name: &str, allowed: &[&str]) -> Result<Layout, SchemaError> {
    let given = o.str(name)?.unwrap_or("row-major");
    let wanted = given.to_ascii_lowercase().replace('_', "-");
    let l = [Layout::RowMajor, Layout::ColMajor, Layout::Hilbert]
        .into_iter()
        .find(|l| l.name() == wanted && allowed.contains(&l.name()));
    l.ok_or_else(|| {
        invalid(
            &o.path(name),
            format!("`{given}` is not one of: {}", allowed.join(", ")),
        )
    })
}

fn cell_val_num(o: &Fields<'_>, default: CellValNum) -> Result<CellValNum, SchemaError> {
    match o.get("cell_val_num") {
        None => Ok(default),
        Some(Json::String(s)) if s.eq_ignore_ascii_case("var") => Ok(CellValNum::Var),
        Some(v) => match v.as_u64() {
            Some(n) if (1..u32::MAX as u64).contains(&n) => Ok(CellValNum::Fixed(n as u32)),
            _ => Err(invalid(
                &o.path("cell_val_num"),
                format!("expected a positive integer or \"var\", found {v}"),
            )),
        },
    }
}

const DIMENSION_FIELDS: &[&str] = &[
    "name",
    "type",
    "cell_val_num",
    "domain",
    "tile_extent",
    "filters",
];

fn dimension_from_json(
    v: &Json,
    path: &str,
    dense: bool,
    coords: &FilterPipeline,
    version: FormatVersion,
) -> Result<Dimension, SchemaError> {
    let o = Fields::new(v, path, DIMENSION_FIELDS)?;
    let name = o.required_str("name")?;
    let t = datatype_from_name(o.required_str("type")?, &o.path("type"))?;
    let var_default = if t == Datatype::StringAscii {
        CellValNum::Var
    } else {
        CellValNum::Fixed(1)
    };
    let cell_val_num = cell_val_num(&o, var_default)?;
    let domain = match (o.get("domain"), cell_val_num) {
        (None, CellValNum::Var) => None,
        (Some(_), CellValNum::Var) => {
            return Err(invalid(
                &o.path("domain"),
                "a var-sized dimension has no domain",
            ))
        }
        (None, _) => return Err(invalid(&o.path("domain"), "required: [lower, upper]")),
        (Some(d), _) => {
            let pair = d.as_array().filter(|a| a.len() == 2).ok_or_else(|| {
                invalid(
                    &o.path("domain"),
                    format!("expected [lower, upper], found {d}"),
                )
            })?;
            let p = o.path("domain");
            Some((
                value_from_json(t, &pair[0], &format!("{p}[0]"))?,
                value_from_json(t, &pair[1], &format!("{p}[1]"))?,
            ))
        }
    };
    let tile_extent = match (o.get("tile_extent"), &domain) {
        (Some(e), _) => Some(value_from_json(t, e, &o.path("tile_extent"))?),
        // libtiledb gives a dense array's dimension without one the whole domain.
        (None, Some((lo, hi))) if dense => {
            Some(whole_domain_extent(t, lo, hi, &o.path("tile_extent"))?)
        }
        (None, _) => None,
    };
    let explicit = pipeline_from_json(o.get("filters"), &o.path("filters"), t, version)?;
    let inherited = explicit.filters.is_empty();
    Ok(Dimension {
        name: name.to_owned(),
        datatype: t,
        cell_val_num,
        filters: if inherited {
            crate::schema::retyped(coords, t, version)
        } else {
            explicit
        },
        filters_inherited: inherited,
        domain,
        tile_extent,
    })
}

/// The tile extent covering a dense dimension's whole domain, as libtiledb
/// sets a missing one: `upper - lower + 1` for integers, an error when that
/// does not fit the type.
fn whole_domain_extent(
    t: Datatype,
    lo: &[u8],
    hi: &[u8],
    path: &str,
) -> Result<Vec<u8>, SchemaError> {
    use crate::value::Value;
    let too_big = || {
        invalid(
            path,
            "required: the domain's range does not fit the type, so no default extent exists",
        )
    };
    let v = match (Value::decode(t, lo), Value::decode(t, hi)) {
        (Value::Int(a), Value::Int(b)) => {
            let span = b - a + 1;
            if matches!(t.physical(), tessera_tile::datatype::Physical::UInt(_)) {
                json!(u64::try_from(span).map_err(|_| too_big())?)
            } else {
                json!(i64::try_from(span).map_err(|_| too_big())?)
            }
        }
        (Value::Float(a), Value::Float(b)) => json!(b - a),
        _ => return Err(invalid(path, "required for this datatype")),
    };
    value_from_json(t, &v, path).map_err(|_| too_big())
}

const ATTRIBUTE_FIELDS: &[&str] = &[
    "name",
    "type",
    "cell_val_num",
    "nullable",
    "fill_value",
    "fill_valid",
    "filters",
    "enumeration",
    "order",
];

/// One attribute from its JSON object (the form `attributes` holds in a
/// schema document), for a schema of format `version` whose enumerations
/// are `enumerations`: what schema evolution adds.
pub fn attribute_from_json(
    v: &Json,
    path: &str,
    enumerations: &[Enumeration],
    version: FormatVersion,
) -> Result<Attribute, SchemaError> {
    let o = Fields::new(v, path, ATTRIBUTE_FIELDS)?;
    let name = o.required_str("name")?;
    let t = datatype_from_name(o.required_str("type")?, &o.path("type"))?;
    let default_cvn = if t == Datatype::Any {
        CellValNum::Var
    } else {
        CellValNum::Fixed(1)
    };
    let cell_val_num = cell_val_num(&o, default_cvn)?;
    let fill_value = match o.get("fill_value") {
        None => default_fill_value(t, cell_val_num),
        Some(f) => cell_from_json(t, f, &o.path("fill_value"))?,
    };
    if let CellValNum::Fixed(n) = cell_val_num {
        let want = n as u64 * t.size();
        if fill_value.len() as u64 != want {
            let got = fill_value.len();
            return Err(invalid(
                &o.path("fill_value"),
                format!("{got} bytes, but a cell holds {want}"),
            ));
        }
    }
    let enumeration = o.str("enumeration")?.map(str::to_owned);
    if let Some(e) = &enumeration {
        if !enumerations.iter().any(|x| &x.name == e) {
            return Err(invalid(
                &o.path("enumeration"),
                format!("no enumeration `{e}` in `enumerations`"),
            ));
        }
    }
    let order = match o.str("order")? {
        None | Some("unordered") => 0,
        Some("increasing") => 1,
        Some("decreasing") => 2,
        Some(x) => {
            return Err(invalid(
                &o.path("order"),
                format!("`{x}` is not unordered, increasing or decreasing"),
            ))
        }
    };
    Ok(Attribute {
        name: name.to_owned(),
        datatype: t,
        cell_val_num,
        filters: pipeline_from_json(o.get("filters"), &o.path("filters"), t, version)?,
        fill_value,
        nullable: o.bool("nullable")?.unwrap_or(false),
        fill_validity: o.bool("fill_valid")?.unwrap_or(false),
        order,
        enumeration,
    })
}

const ENUMERATION_FIELDS: &[&str] = &["name", "type", "cell_val_num", "ordered", "values"];

/// An enumeration from its JSON form (as `enumerations` lists it in a schema
/// document); its file name is left empty, for the writer to give.
pub fn enumeration_from_json(v: &Json, path: &str) -> Result<Enumeration, SchemaError> {
    let o = Fields::new(v, path, ENUMERATION_FIELDS)?;
    let name = o.required_str("name")?;
    let t = datatype_from_name(o.required_str("type")?, &o.path("type"))?;
    let default_cvn = if t.is_string() {
        CellValNum::Var
    } else {
        CellValNum::Fixed(1)
    };
    let cell_val_num = cell_val_num(&o, default_cvn)?;
    let values = o
        .list("values")?
        .into_iter()
        .map(|(p, x)| cell_from_json(t, x, &p))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Enumeration {
        version: 0,
        name: name.to_owned(),
        path_name: String::new(),
        datatype: t,
        cell_val_num,
        ordered: o.bool("ordered")?.unwrap_or(false),
        values,
    })
}

/// A current domain from its JSON form (one `[lower, upper]` per
/// dimension, as `current_domain` holds it in a schema document); no value
/// is an empty current domain.
pub fn current_domain_from_json(
    v: Option<&Json>,
    dims: &[Dimension],
) -> Result<CurrentDomain, SchemaError> {
    let Some(v) = v else {
        return Ok(CurrentDomain {
            version: 0,
            ndrectangle: None,
        });
    };
    let ranges = v
        .as_array()
        .filter(|a| a.len() == dims.len())
        .ok_or_else(|| {
            invalid(
                "current_domain",
                format!(
                    "expected one [lower, upper] per dimension ({}), found {v}",
                    dims.len()
                ),
            )
        })?;
    let rect = ranges
        .iter()
        .zip(dims)
        .enumerate()
        .map(|(j, (r, d))| {
            let p = format!("current_domain[{j}]");
            let pair = r
                .as_array()
                .filter(|a| a.len() == 2)
                .ok_or_else(|| invalid(&p, format!("expected [lower, upper], found {r}")))?;
            Ok(Range1D {
                lo: value_from_json(d.datatype, &pair[0], &format!("{p}[0]"))?,
                hi: value_from_json(d.datatype, &pair[1], &format!("{p}[1]"))?,
            })
        })
        .collect::<Result<Vec<_>, SchemaError>>()?;
    Ok(CurrentDomain {
        version: 0,
        ndrectangle: Some(rect),
    })
}
