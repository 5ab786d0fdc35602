//! Array metadata: putting and deleting keys, as libtiledb writes them. One
//! write is one file `__meta/__t_t_<uuid>` (a generic tile of the entries,
//! [`encode_entries`]), written under a name no reader takes for metadata
//! and renamed when complete, as libtiledb does on local storage; readers
//! replay the files in timestamp order, so a later put or delete of a key
//! wins.

use crate::atomic::write_whole;
use crate::create::generic_tile_pipeline;
use crate::name::{now_ms, uuid};
use crate::rows::scalar;
use crate::WriteError;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use tessera_filters::{write_generic_tile, EncryptionKey};
use tessera_fragment::array_metadata::{
    encode_entries, metadata_files, replay_metadata, MetadataValue, METADATA_FOLDER,
};
use tessera_storage::{listing_again, Location};
use tessera_tile::Datatype;

/// Puts (`Some`) and deletes (`None`) keys of the array at `array`'s
/// metadata, at `timestamp` (milliseconds; default now); returns the name
/// of the file written. The generic tile is written at the array's format
/// version, so the libtiledb release that wrote the array reads it.
///
/// ```
/// use std::collections::BTreeMap;
/// use tessera_write::metadata::{put_metadata, value_from_text};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-meta-{}", std::process::id()));
/// let doc = tessera_schema::json::schema_from_json(&serde_json::json!({
///     "array_type": "sparse",
///     "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9], "tile_extent": 5}],
///     "attributes": [{"name": "v", "type": "INT32"}],
/// })).unwrap();
/// tessera_write::create_array(&dir, &doc, None, None).unwrap();
/// let entries = BTreeMap::from([
///     ("unit".to_string(), Some(value_from_text("m/s", None).unwrap())),
///     ("scale".to_string(), Some(value_from_text("[1, 2]", None).unwrap())),
/// ]);
/// put_metadata(&dir, &entries, None, None).unwrap();
/// let array = tessera_fragment::OpenArray::open(&tessera_storage::LocalFs, &dir, 0, u64::MAX, None).unwrap();
/// let meta = array.metadata(&tessera_storage::LocalFs).unwrap();
/// assert_eq!(meta["unit"].to_json(), "m/s");
/// assert_eq!(meta["scale"].to_json(), serde_json::json!([1, 2]));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn put_metadata(
    array: impl Into<Location>,
    entries: &BTreeMap<String, Option<MetadataValue>>,
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<String, WriteError> {
    let array = &array.into();
    let opened = crate::open::open_array(array, key)?;
    write_metadata_file(array, opened.schema.version, entries, key, timestamp)
}

/// Puts and deletes keys of the group at `group`'s metadata (the format
/// array metadata has), as [`put_metadata`] does for arrays. The generic
/// tile is written at the newest format version the group's own files
/// carry (its details and metadata files), so the release that wrote the
/// group reads it; 22 for a group with none.
pub fn put_group_metadata(
    group: impl Into<Location>,
    entries: &BTreeMap<String, Option<MetadataValue>>,
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<String, WriteError> {
    let group = &group.into();
    // A store that does not answer is an error of reading, not a folder
    // taken for no group.
    let is_group = tessera_fragment::group::is_group(group.reader(), group.path())
        .map_err(WriteError::read(group.path()))?;
    if !is_group {
        return Err(WriteError::refused(group.path(), "not a TileDB group"));
    }
    let version = crate::group::group_format_version(group);
    write_metadata_file(group, version, entries, key, timestamp)
}

/// Writes one metadata file of `entries` into `root/__meta/`, a generic
/// tile at `version`.
fn write_metadata_file(
    root: &Location,
    version: tessera_tile::FormatVersion,
    entries: &BTreeMap<String, Option<MetadataValue>>,
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<String, WriteError> {
    let payload = encode_entries(entries);
    let tile = write_generic_tile(&payload, &generic_tile_pipeline(), version, key)?;
    let dir = root.join(METADATA_FOLDER);
    let newest = crate::group::next_after_newest(&dir);
    let t = timestamp.unwrap_or_else(|| now_ms().max(newest));
    let name = format!("__{t}_{t}_{}", uuid()?);
    crate::folder::create(&dir)?;
    write_whole(&dir, &name, &tile)?;
    Ok(name)
}

/// Consolidates the array metadata of `array`, as libtiledb's array
/// metadata consolidator does: the metadata as readers see it (keys
/// deleted gone) written as one file named for the first and last files'
/// timestamps, then `<that name>.vac` listing the files it replaces
/// (`/__meta/<name>` from format 19, as libtiledb writes them; absolute
/// `file://` ones before). Returns the new file's name, or `None` when
/// there were fewer than two files. Readers see the same metadata at
/// every step: the new file replays to what the old ones did.
pub fn consolidate_metadata(
    array: impl Into<Location>,
    key: Option<EncryptionKey>,
) -> Result<Option<String>, WriteError> {
    let at = &array.into();
    let opened = crate::open::open_array(at, key)?;
    consolidate_metadata_files(at, opened.schema.version, key)
}

/// [`consolidate_metadata`] for the metadata of the group at `group`
/// (written at the group's format version).
pub fn consolidate_group_metadata(
    group: impl Into<Location>,
    key: Option<EncryptionKey>,
) -> Result<Option<String>, WriteError> {
    let at = &group.into();
    let version = crate::group::group_format_version(at);
    consolidate_metadata_files(at, version, key)
}

/// Writes what the metadata files of the array or group at `at` replay
/// to (the metadata as readers see it) as one file, then the `.vac` list
/// of those files. The entries and the list come from one listing: a file
/// another writer adds meanwhile is neither merged nor listed, so it
/// stays (a second listing for the list would drop its entries).
fn consolidate_metadata_files(
    at: &Location,
    version: tessera_tile::FormatVersion,
    key: Option<EncryptionKey>,
) -> Result<Option<String>, WriteError> {
    let (storage, array) = (at.reader(), at.path());
    let dir = at.join(METADATA_FOLDER);
    let (files, merged) = listing_again(storage, |_| {
        let files = metadata_files(storage, array, (0, u64::MAX))?;
        let merged = replay_metadata(storage, array, &files, key.as_ref())?;
        Ok::<_, tessera_fragment::FragmentError>((files, merged))
    })
    .map_err(|e| WriteError::refused(array, e))?;
    let (Some(first), Some(last)) = (files.first(), files.last()) else {
        return Ok(None);
    };
    if files.len() < 2 {
        return Ok(None);
    }
    let entries: BTreeMap<String, Option<MetadataValue>> =
        merged.into_iter().map(|(k, v)| (k, Some(v))).collect();
    let tile = write_generic_tile(
        &encode_entries(&entries),
        &generic_tile_pipeline(),
        version,
        key,
    )?;
    let name = format!("__{}_{}_{}", first.0.t1, last.0.t2, uuid()?);
    write_whole(&dir, &name, &tile)?;
    // From format 19 relative to the array: the array's URI cut off the
    // file's, leaving the `/` between them (as libtiledb writes them).
    let prefix = match version.has(crate::gates::RELATIVE_VACUUM_PATHS) {
        true => format!("/{METADATA_FOLDER}/"),
        false => {
            let uri = dir.storage().uri(dir.path());
            format!("{}/", uri.map_err(WriteError::from)?)
        }
    };
    let listed: String = files
        .iter()
        .map(|(_, n)| format!("{prefix}{n}\n"))
        .collect();
    write_whole(&dir, &format!("{name}.vac"), listed.as_bytes())?;
    Ok(Some(name))
}

/// Removes the metadata files `.vac` files list, then the `.vac` files;
/// returns how many files it removed. `key`, when given, must open the
/// array.
pub fn vacuum_metadata(
    array: impl Into<Location>,
    key: Option<EncryptionKey>,
) -> Result<usize, WriteError> {
    let array = &array.into();
    crate::open::check_key(array, key)?;
    vacuum_metadata_files(&array.join(METADATA_FOLDER))
}

/// [`vacuum_metadata`] for the metadata of the group at `group`.
pub fn vacuum_group_metadata(group: impl Into<Location>) -> Result<usize, WriteError> {
    vacuum_metadata_files(&group.into().join(METADATA_FOLDER))
}

/// Removes the files the `.vac` files in `dir` list, then those lists.
fn vacuum_metadata_files(dir: &Location) -> Result<usize, WriteError> {
    let names = crate::folder::entry_names(dir)?;
    let vacs: Vec<&String> = names.iter().filter(|n| n.ends_with(".vac")).collect();
    let paths: Vec<_> = vacs.iter().map(|n| dir.path().join(n)).collect();
    let mut removed = 0;
    for text in dir.reader().read_files(&paths) {
        let text = text.map_err(WriteError::from)?;
        for line in String::from_utf8_lossy(&text).lines() {
            let name = line.rsplit('/').next().unwrap_or(line);
            removed += usize::from(crate::folder::remove_if_present(&dir.join(name))?);
        }
    }
    // The lists last: while one stays, the files it lists stay hidden.
    for vac in vacs {
        removed += usize::from(crate::folder::remove_if_present(&dir.join(vac))?);
    }
    Ok(removed)
}

/// A metadata value from text, as `tessera meta --set KEY=VALUE [--type
/// T]` takes it. With a datatype: text for string types, hex for BLOB, a
/// number or a JSON list of numbers otherwise. Without, as TileDB-Py types
/// Python values: a JSON integer (or list of integers) is INT64, a number
/// with a fraction (or a list holding one) FLOAT64, anything else the text
/// itself, STRING_UTF8.
pub fn value_from_text(text: &str, datatype: Option<Datatype>) -> Result<MetadataValue, String> {
    let t = match datatype {
        Some(t) => t,
        None => infer(text),
    };
    let bytes = if t.is_string() || t == Datatype::Char {
        text.as_bytes().to_vec()
    } else if t.is_blob() || t == Datatype::Any {
        tessera_tile::hex::decode(text)?
    } else {
        let json: Json = serde_json::from_str(text)
            .map_err(|_| format!("expected {t} values, found {text:?}"))?;
        match &json {
            Json::Array(items) => {
                let mut out = Vec::new();
                for x in items {
                    out.extend(scalar(t, x)?);
                }
                out
            }
            one => scalar(t, one)?,
        }
    };
    let count = bytes.len() as u64 / t.size().max(1);
    Ok(MetadataValue {
        datatype: t,
        count: u32::try_from(count).map_err(|_| format!("{count} values are too many"))?,
        bytes,
    })
}

/// TileDB-Py's datatype for a value written from Python.
fn infer(text: &str) -> Datatype {
    let number = |j: &Json| match j {
        Json::Number(n) if n.is_i64() || n.is_u64() => Some(Datatype::Int64),
        Json::Number(_) => Some(Datatype::Float64),
        _ => None,
    };
    match serde_json::from_str::<Json>(text) {
        Ok(Json::Array(items)) if !items.is_empty() => {
            let types: Option<Vec<Datatype>> = items.iter().map(number).collect();
            match types {
                Some(t) if t.contains(&Datatype::Float64) => Datatype::Float64,
                Some(_) => Datatype::Int64,
                None => Datatype::StringUtf8,
            }
        }
        Ok(j) => number(&j).unwrap_or(Datatype::StringUtf8),
        Err(_) => Datatype::StringUtf8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::tests::Down;
    use std::sync::Arc;

    #[test]
    fn group_metadata_on_a_store_that_does_not_answer_is_not_called_no_group() {
        let group = Location::new(Arc::new(Down), "elsewhere/g");
        let e = put_group_metadata(group, &BTreeMap::new(), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("503 Slow Down"), "{e}");
        assert!(!e.contains("not a TileDB group"), "{e}");
    }
}
