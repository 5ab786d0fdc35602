//! Schema evolution, as libtiledb's `ArraySchemaEvolution` evolves an
//! array: attributes added and dropped in a copy of the latest schema,
//! written as a new schema file `__schema/__t_t_<uuid>` (appearing whole)
//! at the array's format version. Fragments keep the schema they were
//! written with: readers fill an added attribute with its fill value where
//! older fragments lack it, and no longer show a dropped one.

use crate::atomic::write_whole;
use crate::create::generic_tile_pipeline;
use crate::name::{now_ms, schema_name};
use crate::WriteError;
use std::path::Path;
use tessera_filters::{write_generic_tile, EncryptionKey};
use tessera_fragment::OpenArray;
use tessera_schema::{ArraySchema, Attribute};
use tessera_tile::storage::LocalFs;

/// What an evolution changes.
#[derive(Debug, Clone, Default)]
pub struct Evolution {
    /// Attributes to add (no enumerated ones yet).
    pub add_attributes: Vec<Attribute>,
    /// Names of the attributes to drop.
    pub drop_attributes: Vec<String>,
}

/// `schema` evolved by `evolution`, named for `timestamp` (milliseconds,
/// after the schema's own).
pub fn evolved_schema(
    schema: &ArraySchema,
    evolution: &Evolution,
    timestamp: u64,
) -> Result<ArraySchema, WriteError> {
    let refuse = |m: String| WriteError::Input(m);
    if timestamp <= schema.timestamp_range.1 {
        return Err(refuse(format!(
            "the evolved schema's timestamp {timestamp} must come after the current schema's ({})",
            schema.timestamp_range.1
        )));
    }
    let mut s = schema.clone();
    for name in &evolution.drop_attributes {
        let at = s.attributes.iter().position(|a| &a.name == name);
        let at = at.ok_or_else(|| refuse(format!("no attribute `{name}` to drop")))?;
        s.attributes.remove(at);
    }
    for a in &evolution.add_attributes {
        let taken = s.dimensions.iter().any(|d| d.name == a.name)
            || s.attributes.iter().any(|x| x.name == a.name);
        if taken {
            return Err(refuse(format!(
                "`{}` is already a field of the schema",
                a.name
            )));
        }
        if a.enumeration.is_some() {
            return Err(refuse(format!(
                "attribute `{}`: adding an enumerated attribute is not supported yet",
                a.name
            )));
        }
        s.attributes.push(a.clone());
    }
    if s.attributes.is_empty() {
        return Err(refuse("an evolution may not drop every attribute".into()));
    }
    // A dimension without filters of its own takes the coordinates'
    // (`filters_inherited`). libtiledb from 2.17 (format 20; 2.13, format
    // 16, did not) writes those into the evolved schema as the dimension's
    // own. Every release reads both forms alike.
    if s.version.number() >= 20 {
        for d in &mut s.dimensions {
            d.filters_inherited = false;
        }
    }
    s.name = schema_name(timestamp)?;
    s.timestamp_range = (timestamp, timestamp);
    s.validate()?;
    Ok(s)
}

/// Evolves the array at `array`: writes its evolved latest schema as a new
/// schema file; returns the new schema.
///
/// ```
/// use tessera_write::evolve::{evolve_array, Evolution};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-evolve-{}", std::process::id()));
/// let doc = tessera_schema::json::schema_from_json(&serde_json::json!({
///     "array_type": "sparse",
///     "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9], "tile_extent": 5}],
///     "attributes": [{"name": "v", "type": "INT32"}, {"name": "old", "type": "INT32"}],
/// })).unwrap();
/// let created = tessera_write::create_array(&dir, &doc, None, Some(1)).unwrap();
/// let added = tessera_schema::json::attribute_from_json(
///     &serde_json::json!({"name": "w", "type": "FLOAT64", "fill_value": 0.5}),
///     "attribute", &[], created.version,
/// ).unwrap();
/// let evolution = Evolution { add_attributes: vec![added], drop_attributes: vec!["old".into()] };
/// let evolved = evolve_array(&dir, &evolution, None, Some(2)).unwrap();
/// let names: Vec<&str> = evolved.attributes.iter().map(|a| a.name.as_str()).collect();
/// assert_eq!(names, ["v", "w"]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn evolve_array(
    array: &Path,
    evolution: &Evolution,
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<ArraySchema, WriteError> {
    let opened =
        OpenArray::open(&LocalFs, array, 0, u64::MAX, key).map_err(|e| WriteError::Refused {
            path: array.into(),
            message: e.to_string(),
        })?;
    let s = evolved_schema(&opened.schema, evolution, timestamp.unwrap_or_else(now_ms))?;
    let tile = write_generic_tile(&s.encode()?, &generic_tile_pipeline(), s.version, key)?;
    write_whole(&array.join("__schema"), &s.name, &tile)?;
    Ok(s)
}
