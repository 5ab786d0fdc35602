//! Dimension labels in the schema's JSON form: each names the dimension
//! it labels, its order (`increasing` or `decreasing`) and the labels'
//! datatype. A label's data lives in an array of its own under the
//! array's `__labels/` folder (`__labels/l0`, `__labels/l1`, ...), as
//! libtiledb creates it: a dense array with one dimension `index` (the
//! labelled dimension's type, domain and tile extent unless `tile_extent`
//! is given) and one attribute `label` holding the labels in their order
//! (`filters` are its filters).

use super::datatype_from_name;
use super::fields::{invalid, Fields};
use super::values::value_to_json;
use crate::schema::{Attribute, CellValNum, Dimension, DimensionLabel};
use crate::SchemaError;
use serde_json::{json, Value as Json};
use tessera_tile::Datatype;

const LABEL_FIELDS: &[&str] = &[
    "dimension",
    "name",
    "order",
    "type",
    "tile_extent",
    "filters",
    // What `schema_to_json` adds; taken back as written.
    "uri",
    "attribute",
    "cell_val_num",
];

/// The attribute of a label array holding the labels (libtiledb's name).
const LABEL_ATTRIBUTE: &str = "label";

/// The labels `v` lists, with their arrays' schemas in JSON form, for a
/// schema of `dims` and `attrs` (whose names a label may not take).
pub(crate) fn labels_from_json(
    v: Option<&Json>,
    dims: &[Dimension],
    attrs: &[Attribute],
) -> Result<(Vec<DimensionLabel>, Vec<Json>), SchemaError> {
    let Some(v) = v else {
        return Ok((Vec::new(), Vec::new()));
    };
    let list = v
        .as_array()
        .ok_or_else(|| invalid("dimension_labels", format!("expected a list, found {v}")))?;
    let (mut labels, mut schemas) = (Vec::new(), Vec::new());
    for (i, l) in list.iter().enumerate() {
        let path = format!("dimension_labels[{i}]");
        let (label, schema) = label_from_json(l, &path, i, dims)?;
        let taken = dims.iter().any(|d| d.name == label.name)
            || attrs.iter().any(|a| a.name == label.name)
            || labels.iter().any(|x: &DimensionLabel| x.name == label.name);
        if taken {
            return Err(invalid(
                &path,
                format!(
                    "the name `{}` is already a dimension, attribute or label",
                    label.name
                ),
            ));
        }
        labels.push(label);
        schemas.push(schema);
    }
    Ok((labels, schemas))
}

fn label_from_json(
    v: &Json,
    path: &str,
    i: usize,
    dims: &[Dimension],
) -> Result<(DimensionLabel, Json), SchemaError> {
    let o = Fields::new(v, path, LABEL_FIELDS)?;
    let name = o.required_str("name")?;
    if name.is_empty() {
        return Err(invalid(&o.path("name"), "a label needs a name"));
    }
    let index = o.uint("dimension", u32::MAX as u64)?;
    let index =
        index.ok_or_else(|| invalid(&o.path("dimension"), "required: a dimension's index"))?;
    let dim = dims.get(index as usize).ok_or_else(|| {
        invalid(
            &o.path("dimension"),
            format!("no dimension {index}: the schema has {}", dims.len()),
        )
    })?;
    if !(dim.datatype.is_integer() && dim.domain.is_some()) {
        return Err(invalid(
            &o.path("dimension"),
            format!(
                "`{}` is {}; labels go on integer, datetime and time dimensions",
                dim.name, dim.datatype
            ),
        ));
    }
    let order = match o.str("order")?.unwrap_or("increasing") {
        "increasing" => 1,
        "decreasing" => 2,
        x => {
            return Err(invalid(
                &o.path("order"),
                format!(
                    "`{x}` is not increasing or decreasing (unordered labels are not supported)"
                ),
            ))
        }
    };
    let t = datatype_from_name(o.required_str("type")?, &o.path("type"))?;
    let valid = t.is_integer() || t.is_float() || t == Datatype::StringAscii;
    if !valid || t == Datatype::Bool {
        return Err(invalid(
            &o.path("type"),
            format!("{t} cannot be a label's type: a dimension's types are integers, floats, datetimes, times and STRING_ASCII"),
        ));
    }
    let cell_val_num = if t == Datatype::StringAscii {
        CellValNum::Var
    } else {
        CellValNum::Fixed(1)
    };
    let uri = format!("__labels/l{i}");
    if let Some(given) = o.str("uri")? {
        if given != uri {
            return Err(invalid(
                &o.path("uri"),
                format!("labels are stored at `{uri}` in the array; `{given}` cannot be chosen"),
            ));
        }
    }
    if let Some(a) = o.str("attribute")? {
        if a != LABEL_ATTRIBUTE {
            return Err(invalid(
                &o.path("attribute"),
                format!("a label array's attribute is `{LABEL_ATTRIBUTE}`, not `{a}`"),
            ));
        }
    }
    let schema = label_schema(dim, t, order, o.get("tile_extent"), o.get("filters"));
    let label = DimensionLabel {
        dimension: index as u32,
        name: name.to_owned(),
        relative_uri: true,
        uri,
        attribute: LABEL_ATTRIBUTE.into(),
        order,
        datatype: t,
        cell_val_num,
        external: false,
    };
    Ok((label, schema))
}

/// The label array's schema document: dense, one dimension `index` as
/// `dim`, one attribute `label`.
fn label_schema(
    dim: &Dimension,
    t: Datatype,
    order: u8,
    tile_extent: Option<&Json>,
    filters: Option<&Json>,
) -> Json {
    let (lo, hi) = dim
        .domain
        .as_ref()
        .expect("labelled dimensions have a domain");
    let mut index = json!({
        "name": "index",
        "type": dim.datatype.name(),
        "domain": [value_to_json(dim.datatype, lo), value_to_json(dim.datatype, hi)],
    });
    match (tile_extent, &dim.tile_extent) {
        (Some(e), _) => index["tile_extent"] = e.clone(),
        (None, Some(e)) => index["tile_extent"] = value_to_json(dim.datatype, e),
        (None, None) => {}
    }
    let mut label = json!({
        "name": LABEL_ATTRIBUTE,
        "type": t.name(),
        "order": if order == 1 { "increasing" } else { "decreasing" },
    });
    if t == Datatype::StringAscii {
        label["cell_val_num"] = "var".into();
    }
    if let Some(f) = filters {
        label["filters"] = f.clone();
    }
    json!({"array_type": "dense", "dimensions": [index], "attributes": [label]})
}

/// One label as the JSON form lists it.
pub(crate) fn label_to_json(l: &DimensionLabel) -> Json {
    let order = match l.order {
        1 => "increasing",
        2 => "decreasing",
        _ => "unordered",
    };
    let mut o = json!({
        "dimension": l.dimension,
        "name": l.name,
        "order": order,
        "type": l.datatype.name(),
        "uri": l.uri,
        "attribute": l.attribute,
    });
    if l.cell_val_num == CellValNum::Var {
        o["cell_val_num"] = "var".into();
    }
    o
}
