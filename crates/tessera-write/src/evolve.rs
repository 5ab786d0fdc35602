//! Schema evolution, as libtiledb's `ArraySchemaEvolution` evolves an
//! array: attributes added and dropped and enumerations extended in a copy
//! of the latest schema, written as a new schema file
//! `__schema/__t_t_<uuid>` (appearing whole) at the array's format
//! version; an extended enumeration is a new enumeration file (the old
//! values, then the new), written before the schema that names it. Fragments keep the schema they were
//! written with: readers fill an added attribute with its fill value where
//! older fragments lack it, and no longer show a dropped one.

use crate::atomic::write_whole;
use crate::create::generic_tile_pipeline;
use crate::name::{enumeration_name, now_ms, schema_name};
use crate::WriteError;
use tessera_filters::{write_generic_tile, EncryptionKey};
use tessera_schema::{
    load_enumerations, ArraySchema, Attribute, CurrentDomain, Enumeration, EnumerationRef, Range1D,
    Value,
};
use tessera_storage::Location;
use tessera_tile::datatype::Physical;

/// What an evolution changes.
#[derive(Debug, Clone, Default)]
pub struct Evolution {
    /// Enumerations to add, which added attributes may name.
    pub add_enumerations: Vec<Enumeration>,
    /// Attributes to add.
    pub add_attributes: Vec<Attribute>,

    /// Names of the attributes to drop.
    pub drop_attributes: Vec<String>,
    /// Names of the enumerations to drop (no attribute may still use one).
    pub drop_enumerations: Vec<String>,
    /// Enumerations to extend: each name, and the values to append (each
    /// value's bytes).
    pub extend_enumerations: Vec<(String, Vec<Vec<u8>>)>,
    /// A larger current domain: one range per dimension, each holding the
    /// current one and inside the domain.
    pub expand_current_domain: Option<Vec<Range1D>>,
}

/// `schema` evolved by `evolution`, named for `timestamp` (milliseconds,
/// after the schema's own).
pub fn evolved_schema(
    schema: &ArraySchema,
    evolution: &Evolution,
    timestamp: u64,
) -> Result<ArraySchema, WriteError> {
    let refuse = |m: String| WriteError::Input(m);
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
        s.attributes.push(a.clone());
    }
    for e in &evolution.add_enumerations {
        if s.enumerations.iter().any(|r| r.name == e.name) {
            return Err(refuse(format!(
                "enumeration `{}` is already in the schema",
                e.name
            )));
        }
        // Its file is named when it is written.
        s.enumerations.push(EnumerationRef {
            name: e.name.clone(),
            path: String::new(),
        });
    }
    for name in &evolution.drop_enumerations {
        let at = s.enumerations.iter().position(|r| &r.name == name);
        let at = at.ok_or_else(|| refuse(format!("no enumeration `{name}` to drop")))?;
        if let Some(a) = s
            .attributes
            .iter()
            .find(|a| a.enumeration.as_ref() == Some(name))
        {
            return Err(refuse(format!(
                "Unable to drop enumeration `{name}`: attribute `{}` uses it",
                a.name
            )));
        }
        s.enumerations.remove(at);
    }
    for a in &s.attributes {
        if let Some(e) = &a.enumeration {
            if !s.enumerations.iter().any(|r| &r.name == e) {
                return Err(refuse(format!(
                    "attribute `{}` names enumeration `{e}`, which the evolved schema lacks",
                    a.name
                )));
            }
        }
    }
    if s.attributes.is_empty() {
        return Err(refuse("an evolution may not drop every attribute".into()));
    }
    if let Some(ranges) = &evolution.expand_current_domain {
        s.current_domain = Some(expanded(&s, ranges)?);
    }
    // A dimension without filters of its own takes the coordinates'
    // (`filters_inherited`). libtiledb from 2.17 (format 20; 2.13, format
    // 16, did not) writes those into the evolved schema as the dimension's
    // own. Every release reads both forms alike.
    if s.version.has(crate::gates::EVOLVED_DIMENSION_FILTERS) {
        for d in &mut s.dimensions {
            d.filters_inherited = false;
        }
    }
    s.name = schema_name(timestamp)?;
    s.timestamp_range = (timestamp, timestamp);
    s.validate()?;
    Ok(s)
}

/// The current domain of `s` expanded to `ranges`: refused unless each
/// range holds the current one and lies inside its dimension's domain.
fn expanded(s: &ArraySchema, ranges: &[Range1D]) -> Result<CurrentDomain, WriteError> {
    let refuse = |m: String| WriteError::Input(format!("current domain: {m}"));
    let current = s
        .current_domain
        .as_ref()
        .and_then(|c| c.ndrectangle.as_ref());
    let current = current.ok_or_else(|| refuse("the array has none to expand".into()))?;
    if ranges.len() != s.dimensions.len() {
        return Err(refuse(format!(
            "{} ranges for {} dimensions",
            ranges.len(),
            s.dimensions.len()
        )));
    }
    for ((d, new), old) in s.dimensions.iter().zip(ranges).zip(current) {
        let v = |b: &[u8]| Value::decode(d.datatype, b);
        let (lo, hi) = (v(&new.lo), v(&new.hi));
        let shrinks = lo.cmp(&v(&old.lo)).is_gt() || hi.cmp(&v(&old.hi)).is_lt();
        if shrinks {
            return Err(refuse(format!(
                "[{}, {}] on `{}` does not hold the current [{}, {}]",
                lo.display(),
                hi.display(),
                d.name,
                v(&old.lo).display(),
                v(&old.hi).display()
            )));
        }
        if let Some((dlo, dhi)) = d.domain_values() {
            if lo.cmp(&dlo).is_lt() || hi.cmp(&dhi).is_gt() {
                return Err(refuse(format!(
                    "[{}, {}] on `{}` leaves the domain [{}, {}]",
                    lo.display(),
                    hi.display(),
                    d.name,
                    dlo.display(),
                    dhi.display()
                )));
            }
        }
    }
    Ok(CurrentDomain {
        version: 0,
        ndrectangle: Some(ranges.to_vec()),
    })
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
/// let evolution = Evolution {
///     add_attributes: vec![added], drop_attributes: vec!["old".into()], ..Default::default()
/// };
/// let evolved = evolve_array(&dir, &evolution, None, Some(2)).unwrap();
/// let names: Vec<&str> = evolved.attributes.iter().map(|a| a.name.as_str()).collect();
/// assert_eq!(names, ["v", "w"]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn evolve_array(
    array: impl Into<Location>,
    evolution: &Evolution,
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<ArraySchema, WriteError> {
    let array = &array.into();
    let opened = crate::open::open_array(array, key)?;
    // By default now, or just after the current schema if that is later
    // (two evolutions within a millisecond).
    let after = opened.schema.timestamp_range.1.saturating_add(1);
    let t = timestamp.unwrap_or_else(|| now_ms().max(after));
    let mut s = evolved_schema(&opened.schema, evolution, t)?;
    let extended = if evolution.extend_enumerations.is_empty() {
        Vec::new()
    } else {
        let current =
            load_enumerations(array.reader(), array.path(), &opened.schema, key.as_ref())?;
        extended_enumerations(&mut s, &current, &evolution.extend_enumerations)?
    };
    let mut added = Vec::new();
    for e in &evolution.add_enumerations {
        let mut e = e.clone();
        e.path_name = enumeration_name()?;
        let r = s.enumerations.iter_mut().find(|r| r.name == e.name);
        r.expect("an added enumeration is listed")
            .path
            .clone_from(&e.path_name);
        added.push(e);
    }
    let pipeline = generic_tile_pipeline();
    let folder = array.join("__schema/__enumerations");
    if !(extended.is_empty() && added.is_empty()) {
        // An array made without enumerations has no folder for them.
        crate::folder::create(&folder)?;
    }
    for e in extended.iter().chain(&added) {
        let tile = write_generic_tile(&e.encode(), &pipeline, s.version, key)?;
        write_whole(&folder, &e.path_name, &tile)?;
    }
    let tile = write_generic_tile(&s.encode()?, &pipeline, s.version, key)?;
    write_whole(&array.join("__schema"), &s.name, &tile)?;
    Ok(s)
}

/// The enumerations of `current` that `extend` names, with its values
/// appended and a new file name each, which `schema` now refers to.
fn extended_enumerations(
    schema: &mut ArraySchema,
    current: &[Enumeration],
    extend: &[(String, Vec<Vec<u8>>)],
) -> Result<Vec<Enumeration>, WriteError> {
    let mut out = Vec::new();
    for (name, values) in extend {
        let mut e = current
            .iter()
            .find(|e| &e.name == name)
            .cloned()
            .ok_or_else(|| WriteError::Input(format!("no enumeration `{name}` to extend")))?;
        for v in values {
            if e.values.contains(v) {
                return Err(WriteError::Input(format!(
                    "enumeration `{name}` already holds {}",
                    String::from_utf8_lossy(v)
                )));
            }
            e.values.push(v.clone());
        }
        // Every attribute's keys must still reach every value.
        for a in schema
            .attributes
            .iter()
            .filter(|a| a.enumeration.as_ref() == Some(name))
        {
            let keys = match a.datatype.physical() {
                Physical::Int(w) => 1u128 << (8 * w as u32 - 1),
                Physical::UInt(w) => 1u128 << (8 * w as u32),
                _ => u128::MAX,
            };
            if e.values.len() as u128 > keys {
                return Err(WriteError::Input(format!(
                    "enumeration `{name}` would hold {} values; attribute `{}` ({}) has keys for {keys}",
                    e.values.len(),
                    a.name,
                    a.datatype
                )));
            }
        }
        e.path_name = enumeration_name()?;
        let r = schema.enumerations.iter_mut().find(|r| &r.name == name);
        r.expect("a loaded enumeration is listed")
            .path
            .clone_from(&e.path_name);
        out.push(e);
    }
    Ok(out)
}

/// The bytes of each value of `values` (a JSON list) as enumeration `e`
/// holds them: text for string types, numbers of its datatype otherwise.
pub fn enumeration_values_from_json(
    e: &Enumeration,
    values: &serde_json::Value,
) -> Result<Vec<Vec<u8>>, WriteError> {
    let items = values.as_array().ok_or_else(|| {
        WriteError::Input(format!("expected a JSON list of values, found {values}"))
    })?;
    items
        .iter()
        .map(|v| {
            let bad = |why: String| WriteError::Input(format!("enumeration `{}`: {why}", e.name));
            if e.datatype.is_string() || e.datatype == tessera_tile::Datatype::Char {
                let s = v
                    .as_str()
                    .ok_or_else(|| bad(format!("expected a string, found {v}")))?;
                return Ok(s.as_bytes().to_vec());
            }
            crate::rows::scalar(e.datatype, v).map_err(bad)
        })
        .collect()
}
