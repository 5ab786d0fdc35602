//! Creating an array: its folders, its schema file and its enumeration
//! files, as libtiledb creates them. The array is built in a hidden folder
//! beside its destination and renamed into place when complete, so a
//! reader never sees half an array, and a failed create leaves nothing.

use crate::name::{enumeration_name, now_ms, schema_name};
use crate::WriteError;
use std::path::{Path, PathBuf};
use tessera_filters::{write_generic_tile, EncryptionKey, Filter, FilterKind, FilterPipeline};
use tessera_schema::json::SchemaDocument;
use tessera_schema::ArraySchema;
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
    path: &Path,
    doc: &SchemaDocument,
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<ArraySchema, WriteError> {
    doc.schema.validate()?;
    check_destination(path)?;
    let (schema, enumerations) = named(doc, timestamp.unwrap_or_else(now_ms))?;
    let staging = Staging::new(path)?;
    for f in FOLDERS {
        staging.folder(f)?;
    }
    let pipeline = generic_tile_pipeline();
    let tile = |payload: &[u8]| write_generic_tile(payload, &pipeline, schema.version, key);
    if !enumerations.is_empty() {
        staging.folder(ENUMERATIONS)?;
    }
    for e in &enumerations {
        staging.file(
            &format!("{ENUMERATIONS}/{}", e.path_name),
            &tile(&e.encode())?,
        )?;
    }
    staging.file(
        &format!("__schema/{}", schema.name),
        &tile(&schema.encode()?)?,
    )?;
    staging.publish(path)?;
    Ok(schema)
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

/// `path` may become the new array: absent, or an empty folder, and its
/// parent a folder.
pub(crate) fn check_destination(path: &Path) -> Result<(), WriteError> {
    let refuse = |message: &str| WriteError::Refused {
        path: path.to_path_buf(),
        message: message.into(),
    };
    match std::fs::read_dir(path) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_)
                if path.join("__schema").exists() || path.join("__array_schema.tdb").exists() =>
            {
                Err(refuse("already a TileDB array"))
            }
            Some(_)
                if path.join("__group").exists() || path.join("__tiledb_group.tdb").exists() =>
            {
                Err(refuse("already a TileDB group"))
            }
            Some(_) => Err(refuse("exists and is not empty")),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = parent_of(path);
            if parent.is_dir() {
                Ok(())
            } else {
                Err(refuse(&format!(
                    "its parent folder {} does not exist",
                    parent.display()
                )))
            }
        }
        Err(_) if path.exists() => Err(refuse("exists and is not a folder")),
        Err(e) => Err(WriteError::io(path)(e)),
    }
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A hidden folder beside the destination, removed unless published.
pub(crate) struct Staging {
    dir: PathBuf,
    published: bool,
}

impl Staging {
    pub(crate) fn new(dest: &Path) -> Result<Staging, WriteError> {
        let name = dest
            .file_name()
            .map_or("array".into(), |n| n.to_string_lossy());
        let dir = parent_of(dest).join(format!(".{name}.tessera-{}", crate::name::uuid()?));
        std::fs::create_dir(&dir).map_err(WriteError::io(&dir))?;
        Ok(Staging {
            dir,
            published: false,
        })
    }

    pub(crate) fn folder(&self, rel: &str) -> Result<(), WriteError> {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(&p).map_err(WriteError::io(p))
    }

    pub(crate) fn file(&self, rel: &str, bytes: &[u8]) -> Result<(), WriteError> {
        let p = self.dir.join(rel);
        std::fs::write(&p, bytes).map_err(WriteError::io(p))
    }

    /// Renames the finished array into place (over an empty folder too).
    pub(crate) fn publish(mut self, dest: &Path) -> Result<(), WriteError> {
        std::fs::rename(&self.dir, dest).map_err(WriteError::io(dest))?;
        self.published = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
