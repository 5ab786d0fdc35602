//! `tessera._native.create_group`, `change_members`, `put_metadata`,
//! `evolve` and `delete_cells`: groups made and changed, metadata put,
//! schemas evolved, cells deleted, each as libtiledb writes it, locally or
//! straight to an object store.

use crate::convert::{parse_key, StorageOptions};
use crate::error::{message, py_msg};
use crate::write::on_location;
use pyo3::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use tessera::fragment::array_metadata::MetadataValue;
use tessera::storage::{Location, Storage};
use tessera::tile::Datatype;
use tessera_write::evolve::Evolution;
use tessera_write::group::{MemberChange, MemberLookup};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Creates an empty group at `uri` (absent, or an empty folder).
#[pyfunction]
#[pyo3(signature = (uri, storage_options=StorageOptions::new()))]
pub fn create_group(py: Python<'_>, uri: &str, storage_options: StorageOptions) -> PyResult<()> {
    on_location(py, uri, &storage_options, |at| {
        Ok(tessera_write::group::create_group(at.clone())?)
    })
}

/// Adds members `(uri, name, relative)` (an empty name: an unnamed
/// member) to and removes members (by name or URI)
/// from the group at `uri`, as one change at `timestamp` (ms; now by
/// default); returns the details file's name.
#[pyfunction]
#[pyo3(signature = (uri, add, remove, key=None, storage_options=StorageOptions::new(), timestamp=None))]
pub fn change_members(
    py: Python<'_>,
    uri: &str,
    add: Vec<(String, String, bool)>,
    remove: Vec<String>,
    key: Option<&str>,
    storage_options: StorageOptions,
    timestamp: Option<u64>,
) -> PyResult<String> {
    let key = parse_key(key)?;
    let mut changes: Vec<MemberChange> = add
        .into_iter()
        .map(|(uri, name, relative)| MemberChange::Add {
            uri,
            name: (!name.is_empty()).then_some(name),
            relative,
        })
        .collect();
    changes.extend(remove.into_iter().map(MemberChange::Remove));
    // Members on other stores than the group's are looked up through a
    // storage of their own, made once per store for this call.
    let mut others: HashMap<Option<String>, Arc<dyn Storage>> = HashMap::new();
    for c in &changes {
        if let MemberChange::Add {
            uri: member,
            relative: false,
            ..
        } = c
        {
            let path = Path::new(member);
            let store = tessera::store_of(path);
            if tessera::is_uri(path) && !others.contains_key(&store) {
                let storage = tessera::storage_with(path, &storage_options)
                    .map_err(|e| py_msg(format!("{member}: {}", message(&e))))?;
                others.insert(store, storage);
            }
        }
    }
    on_location(py, uri, &storage_options, move |at| {
        let storage = |p: &Path| -> Result<Arc<dyn Storage>, String> {
            others
                .get(&tessera::store_of(p))
                .cloned()
                .ok_or_else(|| format!("{}: no storage for this member", p.display()))
        };
        let lookup = MemberLookup { storage: &storage };
        Ok(tessera_write::group::change_members_at(
            at, &lookup, &changes, key, timestamp,
        )?)
    })
}

/// The datatype named `name` (as [`Datatype::named`]).
fn datatype(name: &str) -> PyResult<Datatype> {
    Datatype::named(name)
        .ok_or_else(|| py_msg(format!("metadata: {name:?} is not a TileDB datatype")))
}

/// A metadata value of `datatype` from the hex of its bytes.
fn raw_value(hex: &str, datatype: Datatype) -> Result<MetadataValue, String> {
    let bytes = tessera::tile::hex::decode(hex)?;
    let count = bytes.len() as u64 / datatype.size().max(1);
    Ok(MetadataValue {
        datatype,
        count: u32::try_from(count).map_err(|_| format!("{count} values are too many"))?,
        bytes,
    })
}

/// Puts keys `(key, datatype, value)` (the value as `tessera meta --set`
/// takes it: text for strings, hex for BLOB, a JSON number or list of
/// numbers otherwise; a datatype named `<TYPE>:hex` takes the value's
/// bytes as hex) and deletes keys `delete` of the metadata of the
/// array or group at `uri`, as one metadata file; returns its name.
#[pyfunction]
#[pyo3(signature = (uri, put, delete, is_group, timestamp=None, key=None, storage_options=StorageOptions::new()))]
#[allow(clippy::too_many_arguments)]
pub fn put_metadata(
    py: Python<'_>,
    uri: &str,
    put: Vec<(String, String, String)>,
    delete: Vec<String>,
    is_group: bool,
    timestamp: Option<u64>,
    key: Option<&str>,
    storage_options: StorageOptions,
) -> PyResult<String> {
    let key = parse_key(key)?;
    let mut entries = BTreeMap::new();
    for (k, t, text) in put {
        let value = match t.strip_suffix(":hex") {
            Some(t) => raw_value(&text, datatype(t)?),
            None => tessera_write::metadata::value_from_text(&text, Some(datatype(&t)?)),
        };
        let value = value.map_err(|e| py_msg(format!("{uri}: metadata {k:?}: {e}")))?;
        entries.insert(k, Some(value));
    }
    for k in delete {
        if entries.insert(k.clone(), None).is_some() {
            return Err(py_msg(format!(
                "{uri}: metadata {k:?} is both put and deleted"
            )));
        }
    }
    on_location(py, uri, &storage_options, move |at| {
        Ok(match is_group {
            true => {
                tessera_write::metadata::put_group_metadata(at.clone(), &entries, key, timestamp)?
            }
            false => tessera_write::metadata::put_metadata(at.clone(), &entries, key, timestamp)?,
        })
    })
}

/// Evolves the schema of the array at `uri` as the JSON object
/// `evolution` says, each key optional: `drop_attributes` and
/// `drop_enumerations` (names), `add_enumerations` and `add_attributes`
/// (in the schema's JSON form), `extend_enumerations` (name to the list of
/// values to append), `current_domain` (one inclusive `[lo, hi]` per
/// dimension, to grow to); the new schema is named for `timestamp` (ms;
/// now by default).
#[pyfunction]
#[pyo3(signature = (uri, evolution, key=None, storage_options=StorageOptions::new(), timestamp=None))]
pub fn evolve(
    py: Python<'_>,
    uri: &str,
    evolution: &str,
    key: Option<&str>,
    storage_options: StorageOptions,
    timestamp: Option<u64>,
) -> PyResult<()> {
    let key = parse_key(key)?;
    let doc: serde_json::Value = serde_json::from_str(evolution)
        .map_err(|e| py_msg(format!("{uri}: evolution: not JSON: {e}")))?;
    on_location(py, uri, &storage_options, move |at| {
        let opened = tessera::OpenArray::open(at.reader(), at.path(), 0, u64::MAX, key)?;
        let evolution = evolution_from_json(at, &opened, &doc, key)?;
        tessera_write::evolve::evolve_array(at.clone(), &evolution, key, timestamp)?;
        Ok(())
    })
}

/// An [`Evolution`] from its JSON form (see [`evolve`]).
fn evolution_from_json(
    at: &Location,
    opened: &tessera::OpenArray,
    doc: &serde_json::Value,
    key: Option<tessera::filters::EncryptionKey>,
) -> Result<Evolution, BoxError> {
    use tessera::schema::json::{attribute_from_json, enumeration_from_json};
    let list = |k: &str| {
        doc.get(k)
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let names = |k: &str| -> Vec<String> {
        list(k)
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let mut evolution = Evolution {
        drop_attributes: names("drop_attributes"),
        drop_enumerations: names("drop_enumerations"),
        ..Default::default()
    };
    for (i, e) in list("add_enumerations").iter().enumerate() {
        let path = format!("add_enumerations[{i}]");
        evolution
            .add_enumerations
            .push(enumeration_from_json(e, &path)?);
    }
    let extend = doc.get("extend_enumerations").and_then(|v| v.as_object());
    // The array's enumerations, read only when something needs them.
    let current = match list("add_attributes").is_empty() && extend.is_none() {
        true => Vec::new(),
        false => tessera::schema::load_enumerations(
            at.reader(),
            at.path(),
            &opened.schema,
            key.as_ref(),
        )?,
    };
    // An added attribute may name an enumeration added with it or one the
    // array holds already.
    let known: Vec<_> = (evolution.add_enumerations.iter())
        .chain((current.iter()).filter(|e| !evolution.drop_enumerations.contains(&e.name)))
        .cloned()
        .collect();
    for (i, a) in list("add_attributes").iter().enumerate() {
        let path = format!("add_attributes[{i}]");
        if let Some(e) = a.get("enumeration").and_then(|v| v.as_str()) {
            if !known.iter().any(|k| k.name == e) {
                return Err(
                    format!("{path}: Attribute refers to an unknown enumeration `{e}`").into(),
                );
            }
        }
        let attribute = attribute_from_json(a, &path, &known, opened.schema.version)?;
        evolution.add_attributes.push(attribute);
    }
    if let Some(extend) = extend {
        for (name, values) in extend {
            let e = current
                .iter()
                .find(|e| &e.name == name)
                .ok_or_else(|| format!("no enumeration `{name}` to extend"))?;
            let bytes = tessera_write::evolve::enumeration_values_from_json(e, values)?;
            evolution.extend_enumerations.push((name.clone(), bytes));
        }
    }
    if let Some(json) = doc.get("current_domain") {
        let dims = &opened.schema.dimensions;
        let cd = tessera::schema::json::current_domain_from_json(Some(json), dims)?;
        evolution.expand_current_domain = cd.ndrectangle;
    }
    Ok(evolution)
}

/// Deletes the cells of the sparse array at `uri` that `condition` (the
/// grammar of `tessera read --where`, dimensions too) selects, as one
/// delete commit libtiledb applies as its own, at `timestamp` (ms; now
/// by default); returns the commit's name.
#[pyfunction]
#[pyo3(signature = (uri, condition, key=None, storage_options=StorageOptions::new(), timestamp=None))]
pub fn delete_cells(
    py: Python<'_>,
    uri: &str,
    condition: &str,
    key: Option<&str>,
    storage_options: StorageOptions,
    timestamp: Option<u64>,
) -> PyResult<String> {
    let key = parse_key(key)?;
    on_location(py, uri, &storage_options, move |at| {
        let opened = tessera::OpenArray::open(at.reader(), at.path(), 0, u64::MAX, key)?;
        let condition = tessera::query::Expr::parse(condition, &opened.schema)?;
        Ok(tessera_write::delete::delete_cells(
            at.clone(),
            &condition,
            key,
            timestamp,
        )?)
    })
}
