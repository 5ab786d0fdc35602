//! Creating an array: its folders, its schema file and its enumeration
//! files, as libtiledb creates them. A reader never sees half an array:
//! on local disk it is built in a hidden folder beside its destination
//! and renamed into place when complete (a failed create leaves nothing);
//! on an object store, which has no folders to rename, its files are
//! written in place with the schema last, and the array exists from then.

use crate::name::{enumeration_name, now_ms, schema_name};
use crate::WriteError;
use std::path::{Path, PathBuf};
use tessera_filters::{write_generic_tile, EncryptionKey, Filter, FilterKind, FilterPipeline};
use tessera_schema::json::SchemaDocument;
use tessera_schema::ArraySchema;
use tessera_storage::Location;
use tessera_tile::Datatype;

/// The folders of a new array (format 12 and later): schemas, fragments,
/// their commits, consolidated fragment metadata and array metadata.
const FOLDERS: &[&str] = &[
    "__schema",
    "__fragments",
    "__commits",
    "__fragment_meta",
    "__meta",
];

/// Where enumeration files go, under `__schema`.
const ENUMERATIONS: &str = "__schema/__enumerations";

/// The pipeline libtiledb filters generic tiles (schemas, enumerations,
/// fragment metadata) with: GZIP at level 1.
pub fn generic_tile_pipeline() -> FilterPipeline {
    let gzip = Filter::new(FilterKind::Gzip { level: 1 }, Datatype::Char);
    FilterPipeline::new(
        vec![gzip],
        tessera_filters::pipeline::DEFAULT_MAX_CHUNK_SIZE,
    )
}

/// Creates the array `doc` describes at `path`, its schema named with
/// `timestamp` (milliseconds; now when `None`), encrypted with `key` when
/// given. `path` must not exist, or be an empty folder; its parent must
/// exist. Returns the schema as written (with its file name, and the
/// enumerations' file names).
///
/// ```
/// use tessera_schema::json::schema_from_json;
/// let doc = schema_from_json(&serde_json::json!({
///     "array_type": "sparse",
///     "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 99], "tile_extent": 10}],
///     "attributes": [{"name": "v", "type": "FLOAT64"}],
/// })).unwrap();
/// let dir = std::env::temp_dir().join(format!("tessera-doc-create-{}", std::process::id()));
/// let schema = tessera_write::create_array(&dir, &doc, None, None).unwrap();
/// assert!(dir.join("__schema").join(&schema.name).is_file());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn create_array(
    path: impl Into<Location>,
    doc: &SchemaDocument,
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<ArraySchema, WriteError> {
    let path = path.into();
    doc.schema.validate()?;
    check_destination(&path)?;
    let timestamp = timestamp.unwrap_or_else(now_ms);
    let (schema, enumerations) = named(doc, timestamp)?;
    if doc.labels.len() != schema.dimension_labels.len() {
        return Err(WriteError::Input(format!(
            "{} label array schemas for {} dimension labels",
            doc.labels.len(),
            schema.dimension_labels.len()
        )));
    }
    let staging = Staging::new(&path)?;
    // The label arrays first: the array's own schema, written last, is
    // what makes it an array on an object store.
    for (label, label_doc) in schema.dimension_labels.iter().zip(&doc.labels) {
        label_doc.schema.validate()?;
        let (label_schema, label_enumerations) = named(label_doc, timestamp)?;
        stage_array(
            &staging,
            &label.uri,
            &label_schema,
            &label_enumerations,
            key,
        )?;
    }
    stage_array(&staging, "", &schema, &enumerations, key)?;
    staging.publish(&path)?;
    Ok(schema)
}

/// Writes an array's folders, enumerations and schema (last) under `rel`
/// in `staging` (`""`: the array itself).
fn stage_array(
    staging: &Staging,
    rel: &str,
    schema: &ArraySchema,
    enumerations: &[tessera_schema::Enumeration],
    key: Option<EncryptionKey>,
) -> Result<(), WriteError> {
    let at = |p: &str| {
        if rel.is_empty() {
            p.to_owned()
        } else {
            format!("{rel}/{p}")
        }
    };
    if !rel.is_empty() {
        staging.folder(rel)?;
    }
    for f in FOLDERS {
        staging.folder(&at(f))?;
    }
    let pipeline = generic_tile_pipeline();
    let tile = |payload: &[u8]| write_generic_tile(payload, &pipeline, schema.version, key);
    if !enumerations.is_empty() {
        staging.folder(&at(ENUMERATIONS))?;
    }
    for e in enumerations {
        let file = at(&format!("{ENUMERATIONS}/{}", e.path_name));
        staging.file(&file, &tile(&e.encode())?)?;
    }
    let file = at(&format!("__schema/{}", schema.name));
    staging.file(&file, &tile(&schema.encode()?)?)
}

/// The schema and enumerations with their file names.
fn named(
    doc: &SchemaDocument,
    timestamp: u64,
) -> Result<(ArraySchema, Vec<tessera_schema::Enumeration>), WriteError> {
    let mut schema = doc.schema.clone();
    schema.name = schema_name(timestamp)?;
    schema.timestamp_range = (timestamp, timestamp);
    let mut enumerations = doc.enumerations.clone();
    for e in &mut enumerations {
        e.path_name = enumeration_name()?;
        let r = schema.enumerations.iter_mut().find(|r| r.name == e.name);
        let r = r.ok_or_else(|| {
            let why = format!("enumeration `{}` is not listed in the schema", e.name);
            tessera_schema::SchemaError::Invalid {
                field: "enumerations".into(),
                message: why,
            }
        })?;
        r.path.clone_from(&e.path_name);
    }
    Ok((schema, enumerations))
}

/// `path` may become the new array: absent, or an empty folder, and (where
/// folders exist) its parent a folder.
pub(crate) fn check_destination(path: &Location) -> Result<(), WriteError> {
    let (storage, p) = (path.storage(), path.path());
    let refuse = |message: &str| WriteError::Refused {
        path: p.to_path_buf(),
        message: message.into(),
    };
    if storage.renames_folders() && storage.exists(p) && !p.is_dir() {
        return Err(refuse("exists and is not a folder"));
    }
    let names = crate::folder::entry_names(path)?;
    let has = |n: &str| names.iter().any(|e| e == n);
    if has("__schema") || has("__array_schema.tdb") {
        return Err(refuse("already a TileDB array"));
    }
    if has("__group") || has("__tiledb_group.tdb") {
        return Err(refuse("already a TileDB group"));
    }
    if !names.is_empty() {
        return Err(refuse("exists and is not empty"));
    }
    if storage.renames_folders() {
        let parent = parent_of(p);
        if !storage.exists(&parent) {
            return Err(refuse(&format!(
                "its parent folder {} does not exist",
                parent.display()
            )));
        }
    }
    Ok(())
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Where a new array or group is written: a hidden folder beside the
/// destination, renamed into place when published (removed unless
/// published), where the storage renames folders; else the destination
/// itself, written in the caller's order (the file that makes it an
/// array or group last).
pub(crate) struct Staging {
    dir: Location,
    /// Whether `dir` is a hidden folder to rename.
    hidden: bool,
    published: bool,
}

impl Staging {
    pub(crate) fn new(dest: &Location) -> Result<Staging, WriteError> {
        if !dest.storage().renames_folders() {
            return Ok(Staging {
                dir: dest.clone(),
                hidden: false,
                published: false,
            });
        }
        let p = dest.path();
        let name = p
            .file_name()
            .map_or("array".into(), |n| n.to_string_lossy());
        let dir = dest.at(parent_of(p).join(format!(".{name}.tessera-{}", crate::name::uuid()?)));
        crate::folder::create(&dir)?;
        Ok(Staging {
            dir,
            hidden: true,
            published: false,
        })
    }

    pub(crate) fn folder(&self, rel: &str) -> Result<(), WriteError> {
        crate::folder::create(&self.dir.join(rel))
    }

    pub(crate) fn file(&self, rel: &str, bytes: &[u8]) -> Result<(), WriteError> {
        let at = self.dir.join(rel);
        at.storage()
            .put_new(at.path(), bytes)
            .map_err(WriteError::from)
    }

    /// Renames the finished array into place (over an empty folder too).
    pub(crate) fn publish(mut self, dest: &Location) -> Result<(), WriteError> {
        if self.hidden {
            dest.storage()
                .rename_folder(self.dir.path(), dest.path())
                .map_err(WriteError::from)?;
        }
        self.published = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.hidden && !self.published {
            let _ = self.dir.storage().delete_folder(self.dir.path());
        }
    }
}
