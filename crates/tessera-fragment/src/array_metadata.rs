//! Array metadata (`format_spec/metadata.md`): key-value entries in generic
//! tiles under `__meta/`, merged in timestamp order, deletions applied.

use crate::name::{base_name, ext, list};
use crate::{FragmentError, TimestampedName};
use serde::Serialize;
use std::collections::BTreeMap;
use std::collections::HashSet;
use std::path::Path;
use tessera_filters::{read_generic_tile, EncryptionKey};
use tessera_storage::Storage;
use tessera_tile::parse::{bytes, flag, parse, u32_le, u8_le, FieldError, PResult};
use tessera_tile::Datatype;

/// One metadata value: its datatype and raw bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetadataValue {
    /// Datatype of the values.
    pub datatype: Datatype,
    /// Number of values.
    pub count: u32,
    /// The value bytes.
    pub bytes: Vec<u8>,
}

/// The entries of one metadata file, in file order: each key with its
/// value, or `None` where the file deletes it.
pub fn decode_entries(
    payload: &[u8],
) -> Result<Vec<(String, Option<MetadataValue>)>, FragmentError> {
    Ok(parse(payload, "array metadata", 0, entries)?.0)
}

/// Entries until the payload ends (no count is stored).
fn entries(mut i: &[u8]) -> PResult<'_, Vec<(String, Option<MetadataValue>)>> {
    let mut out = Vec::new();
    while !i.is_empty() {
        let (rest, e) = entry(i)?;
        out.push(e);
        i = rest;
    }
    Ok((i, out))
}

/// One entry: a `u32` key length, the key, a deletion byte, and unless
/// deleted the value's datatype id, `u32` number of values and the bytes.
fn entry(i: &[u8]) -> PResult<'_, (String, Option<MetadataValue>)> {
    let (i, n) = u32_le("key length")(i)?;
    let (i, key) = bytes("key", n as u64)(i)?;
    let key = String::from_utf8_lossy(key).into_owned();
    let (i, deleted) = flag("deletion")(i)?;
    if deleted {
        return Ok((i, (key, None)));
    }
    let (rest, id) = u8_le("value type")(i)?;
    let datatype = Datatype::from_id(id)
        .ok_or_else(|| FieldError::invalid(i, "value type", format!("unknown datatype id {id}")))?;
    let (i, count) = u32_le("number of values")(rest)?;
    let len = (count as u64)
        .checked_mul(datatype.size())
        .ok_or_else(|| FieldError::invalid(i, "number of values", "too large"))?;
    let (i, value) = bytes("value", len)(i)?;
    let value = MetadataValue {
        datatype,
        count,
        bytes: value.to_vec(),
    };
    Ok((i, (key, Some(value))))
}

/// Applies the entries of one metadata file to `map`.
pub fn apply_entries(
    payload: &[u8],
    map: &mut BTreeMap<String, MetadataValue>,
) -> Result<(), FragmentError> {
    for (key, value) in decode_entries(payload)? {
        match value {
            Some(v) => map.insert(key, v),
            None => map.remove(&key),
        };
    }
    Ok(())
}

/// The payload of one metadata file, as libtiledb writes it: the entries in
/// key order, each a `u32` key length, the key, a deletion byte, and unless
/// deleted the value's datatype id, `u32` number of values and the bytes.
/// An entry of `None` deletes its key. [`apply_entries`] reads it back.
///
/// ```
/// use std::collections::BTreeMap;
/// use tessera_fragment::array_metadata::{apply_entries, encode_entries, MetadataValue};
/// use tessera_tile::Datatype;
/// let mut put = BTreeMap::new();
/// let v = MetadataValue { datatype: Datatype::Int64, count: 1, bytes: 7i64.to_le_bytes().to_vec() };
/// put.insert("n".to_string(), Some(v.clone()));
/// put.insert("gone".to_string(), None);
/// let mut map = BTreeMap::from([("gone".to_string(), v.clone())]);
/// apply_entries(&encode_entries(&put), &mut map).unwrap();
/// assert_eq!(map, BTreeMap::from([("n".to_string(), v)]));
/// ```
pub fn encode_entries(entries: &BTreeMap<String, Option<MetadataValue>>) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in entries {
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.push(value.is_none() as u8);
        if let Some(v) = value {
            out.push(v.datatype as u8);
            out.extend_from_slice(&v.count.to_le_bytes());
            out.extend_from_slice(&v.bytes);
        }
    }
    out
}

impl MetadataValue {
    /// As JSON: numbers (a list when more than one), strings for text types, hex for blobs.
    pub fn to_json(&self) -> serde_json::Value {
        if self.datatype.is_blob() || matches!(self.datatype, Datatype::Any) {
            return tessera_tile::hex::encode(&self.bytes).into();
        }
        use tessera_schema::value::{scalar_or_list, values_to_json};
        scalar_or_list(values_to_json(self.datatype, &self.bytes))
    }
}

/// The folder of an array's or group's metadata.
pub const METADATA_FOLDER: &str = "__meta";

/// The metadata of the array or group at `path` (its `__meta/` folder) as
/// of the open window `(start, end)`: every file in the window not listed
/// by a vacuum file, replayed in timestamp order (later keys replace
/// earlier ones, deletions remove them).
pub fn read_metadata(
    storage: &dyn Storage,
    path: &Path,
    window: (u64, u64),
    key: Option<&EncryptionKey>,
) -> Result<BTreeMap<String, MetadataValue>, FragmentError> {
    replay_metadata(storage, path, &metadata_files(storage, path, window)?, key)
}

/// The metadata the files `files` of the array or group at `path` (as
/// [`metadata_files`] lists them, in replay order) replay to.
pub fn replay_metadata(
    storage: &dyn Storage,
    path: &Path,
    files: &[(TimestampedName, String)],
    key: Option<&EncryptionKey>,
) -> Result<BTreeMap<String, MetadataValue>, FragmentError> {
    let dir = path.join(METADATA_FOLDER);
    let mut map = BTreeMap::new();
    let names: Vec<&String> = files.iter().map(|(_, name)| name).collect();
    let paths: Vec<std::path::PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    for (name, bytes) in names.iter().zip(storage.read_files(&paths)) {
        let bytes = bytes?;
        let tile = read_generic_tile(&bytes, key, 0)
            .map_err(|e| FragmentError::from(e).within(name, "array metadata"))?;
        apply_entries(&tile.data, &mut map).map_err(|e| e.within(name, "array metadata"))?;
    }
    Ok(map)
}

/// The metadata files of the array or group at `path` that readers replay
/// in the open window `(start, end)`, in replay order: timestamped names
/// inside the window that no vacuum file lists.
pub fn metadata_files(
    storage: &dyn Storage,
    path: &Path,
    (start, end): (u64, u64),
) -> Result<Vec<(TimestampedName, String)>, FragmentError> {
    let dir = path.join(METADATA_FOLDER);
    let entries = list(storage, &dir)?;
    let mut vacuumed = HashSet::new();
    for e in entries.iter().filter(|e| ext(&e.name) == "vac") {
        let p = dir.join(&e.name);
        let text = storage.read_all(&p).map_err(FragmentError::from)?;
        for line in String::from_utf8_lossy(&text).lines() {
            vacuumed.insert(base_name(line).to_owned());
        }
    }
    let mut files: Vec<(TimestampedName, String)> = entries
        .iter()
        .filter(|e| !e.is_dir && ext(&e.name) != "vac" && !vacuumed.contains(&e.name))
        .filter_map(|e| TimestampedName::parse(&e.name).map(|t| (t, e.name.clone())))
        .filter(|(t, _)| t.t1 >= start && t.t2 <= end)
        .collect();
    files.sort_by(|a, b| (a.0.t1, a.0.t2, &a.1).cmp(&(b.0.t1, b.0.t2, &b.1)));
    Ok(files)
}
