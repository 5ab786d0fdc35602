//! Fragment metadata: the footer, read eagerly, and the sections it points
//! to, read lazily and one field at a time.

use crate::footer::{computed_footer_size, has_footer_length, peek_schema_name, Footer};
use crate::rtree::RTree;
use crate::tile_metadata::{parse_summary, FieldSummary, TileBounds};
use crate::{gates, FragmentError, TimestampedName};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use tessera_filters::{read_generic_tile, EncryptionKey};
use tessera_schema::ArraySchema;
use tessera_storage::Storage;
use tessera_tile::generic::BASE_SIZE;
use tessera_tile::FormatVersion;

mod batch;
mod legacy;
mod sections;

pub use batch::SectionWants;

/// The fragment metadata file name.
pub const FRAGMENT_METADATA_FILE: &str = "__fragment_metadata.tdb";

/// Which file of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Fixed-sized values, or the offsets of var-sized ones.
    Fixed,
    /// Var-sized values.
    Var,
    /// Validity bytes.
    Validity,
}

/// A field of a fragment, by its position in the footer arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// Attribute `i` of the fragment's schema.
    Attribute(usize),
    /// Dimension `j`.
    Dimension(usize),
    /// The legacy zipped coordinates (`__coords.tdb`, before version 5).
    Coords,
    /// Per-cell timestamps (`t.tdb`).
    Timestamps,
    /// Delete timestamps (`dt.tdb`).
    DeleteTimestamps,
    /// Delete condition indexes (`dci.tdb`).
    DeleteConditionIndex,
}

/// Everything known about one fragment without reading its data.
#[derive(Debug)]
pub struct FragmentMetadata {
    /// Fragment folder name.
    pub name: String,
    /// Path of the fragment folder.
    pub path: PathBuf,
    /// The parsed folder name.
    pub timestamped_name: TimestampedName,
    /// The footer.
    pub footer: Footer,
    /// The schema the fragment was written with.
    pub schema: Arc<ArraySchema>,
    key: Option<EncryptionKey>,
    metadata_file_size: u64,
    rtree: OnceLock<RTree>,
    /// Per field: tile offsets, var offsets, validity offsets, var sizes,
    /// sums, null counts.
    offsets: Vec<[OnceLock<Arc<Vec<u64>>>; 6]>,
    /// Per field: tile mins, tile maxes.
    bounds: Vec<[OnceLock<Arc<TileBounds>>; 2]>,
    /// Per dimension: tile global order mins, maxes (format 23).
    global_order: Vec<[OnceLock<Arc<TileBounds>>; 2]>,
    summary: OnceLock<Vec<FieldSummary>>,
    processed: OnceLock<Vec<String>>,
    /// Sections being read, so that concurrent readers read each once.
    reads: SectionReads,
}

/// The sections of one fragment metadata file being read, by offset: which
/// thread reads each, and the bytes read until their value is kept.
///
/// Only the reading waits for another thread, never the decoding: a large
/// section decodes its chunks in parallel, and a rayon thread waiting for
/// them may run a job needing another section of the same fragment; had it
/// to wait for a thread that waits for it, neither would go on.
#[derive(Debug, Default)]
struct SectionReads {
    state: std::sync::Mutex<ReadState>,
    done: std::sync::Condvar,
}

#[derive(Debug, Default)]
struct ReadState {
    reading: std::collections::HashMap<u64, std::thread::ThreadId>,
    read: std::collections::HashMap<u64, Arc<Vec<u8>>>,
}

impl SectionReads {
    fn lock(&self) -> std::sync::MutexGuard<'_, ReadState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl FragmentMetadata {
    /// Reads a fragment's footer. `schemas` finds a schema by name (the
    /// legacy schema answers to `__array_schema.tdb`).
    pub fn load(
        storage: &dyn Storage,
        path: &Path,
        schemas: &dyn Fn(&str) -> Option<Arc<ArraySchema>>,
        key: Option<EncryptionKey>,
    ) -> Result<FragmentMetadata, FragmentError> {
        Self::load_with_footer(storage, path, schemas, key, None)
    }

    /// Like [`load`](Self::load), but with the footer's bytes already at
    /// hand (from a consolidated fragment metadata file), so the fragment's
    /// own metadata file is not touched until a section is needed. Used for
    /// formats 10 and later, whose footers name their schema.
    pub fn load_with_footer(
        storage: &dyn Storage,
        path: &Path,
        schemas: &dyn Fn(&str) -> Option<Arc<ArraySchema>>,
        key: Option<EncryptionKey>,
        consolidated: Option<&[u8]>,
    ) -> Result<FragmentMetadata, FragmentError> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tn = TimestampedName::parse(&name)
            .ok_or_else(|| FragmentError::invalid(&name, "not a timestamped fragment name"))?;
        let name_version = tn.implied_version();
        if name_version > FormatVersion::LATEST {
            return Err(FragmentError::invalid(&name, format!("format version {name_version} in the fragment name is not supported (known: 1 to {})", FormatVersion::LATEST)));
        }
        let file = path.join(FRAGMENT_METADATA_FILE);
        // The schema a footer of format 10 or later names.
        let named_schema = |head: &[u8], within: &dyn Fn(FragmentError) -> FragmentError| {
            let (_, sname) = peek_schema_name(head).map_err(within)?;
            let sname = sname.unwrap_or_default();
            schemas(&sname).ok_or_else(|| {
                FragmentError::invalid(
                    &name,
                    format!("written with schema {sname}, which the array does not have"),
                )
            })
        };
        if let (Some(bytes), true) = (consolidated, name_version.has(gates::SCHEMA_NAME)) {
            let within = |e: FragmentError| e.within(&name, "consolidated footer");
            let schema = named_schema(bytes, &within)?;
            let footer = Footer::parse(bytes, &schema, 0).map_err(within)?;
            // The file's size is not asked for: section reads are bounded by the storage instead.
            return Self::assemble(name, path, tn, footer, schema, key, u64::MAX);
        }
        if !name_version.has(gates::FOOTER) {
            let schema = schemas(tessera_schema::LEGACY_SCHEMA_FILE).ok_or_else(|| {
                FragmentError::invalid(&name, "no legacy array schema for a format 1 or 2 fragment")
            })?;
            let dense = !storage.exists(&path.join("__coords.tdb"));
            return Self::load_v1_v2(storage, path, name, tn, schema, key, dense)
                .map_err(|e| e.in_file_hint(&file));
        }
        // One request for the file's size and end, which usually holds the
        // whole footer (three round trips on an object store otherwise).
        let (size, tail_bytes) = storage
            .read_tail(&file, FOOTER_READ)
            .map_err(FragmentError::from)?;
        let tail_start = size.checked_sub(tail_bytes.len() as u64).ok_or_else(|| {
            FragmentError::invalid(&name, "the storage returned more bytes than the file holds")
        })?;
        let legacy = || {
            schemas(tessera_schema::LEGACY_SCHEMA_FILE).ok_or_else(|| {
                FragmentError::invalid(&name, "no legacy array schema for a pre-10 fragment")
            })
        };
        let within = |e: FragmentError| e.within(&name, "footer");
        let range = |r: std::ops::Range<u64>| -> Result<Vec<u8>, FragmentError> {
            if r.start >= tail_start && r.start <= r.end && r.end <= size {
                let (a, b) = (
                    (r.start - tail_start) as usize,
                    (r.end - tail_start) as usize,
                );
                return Ok(tail_bytes[a..b].to_vec());
            }
            storage.read_range(&file, r).map_err(FragmentError::from)
        };
        // The footer length that ends the file.
        let footer_length = || -> Result<u64, FragmentError> {
            if size < 8 {
                return Err(FragmentError::invalid(
                    file.display().to_string(),
                    format!("{size} bytes is too short for a footer"),
                ));
            }
            Ok(u64::from_le_bytes(
                range(size - 8..size)?.try_into().expect("8 bytes"),
            ))
        };
        // Locate the footer: its length ends the file from version 10 (and
        // before that when a dimension is var-sized); else compute it.
        let (footer_offset, schema) = if name_version.has(gates::SCHEMA_NAME) {
            let tail = footer_length().map_err(within)?;
            let off = tail
                .checked_add(8)
                .and_then(|n| size.checked_sub(n))
                .ok_or_else(|| {
                    FragmentError::invalid(
                        &name,
                        format!("footer length {tail} exceeds the file ({size} bytes)"),
                    )
                })?;
            let head = range(off..size - 8)?;
            (off, named_schema(&head, &within)?)
        } else {
            let schema = legacy()?;
            let v = name_version;
            let off = if has_footer_length(&schema, v) {
                let tail = footer_length().map_err(within)?;
                tail.checked_add(8).and_then(|n| size.checked_sub(n))
            } else {
                size.checked_sub(computed_footer_size(&schema, v))
            }
            .ok_or_else(|| FragmentError::invalid(&name, "footer larger than the metadata file"))?;
            (off, schema)
        };
        let bytes = range(footer_offset..size)?;
        let footer = Footer::parse(&bytes, &schema, footer_offset)
            .map_err(|e| e.in_file_hint(&file))
            .map_err(within)?;
        let fragment = Self::assemble(name, path, tn, footer, schema, key, size)?;
        // Where a request costs a round trip, the sections the tail read
        // holds (all of a small file) are kept rather than read again.
        if storage.prefers_batches() {
            fragment.hold_sections_in(tail_start, &tail_bytes);
        }
        Ok(fragment)
    }

    /// A fragment from its parsed footer, once the footer agrees with the
    /// version the fragment's name implies.
    fn assemble(
        name: String,
        path: &Path,
        tn: TimestampedName,
        footer: Footer,
        schema: Arc<ArraySchema>,
        key: Option<EncryptionKey>,
        metadata_file_size: u64,
    ) -> Result<FragmentMetadata, FragmentError> {
        let name_version = tn.implied_version();
        if tn.version.is_some() && footer.version != name_version {
            return Err(FragmentError::invalid(
                &name,
                format!(
                    "footer says format version {} but the name says {name_version}",
                    footer.version
                ),
            ));
        }
        let n = footer.tile_offsets.len().max(footer.file_sizes.len());
        let dims = schema.dimensions.len();
        Ok(FragmentMetadata {
            name,
            path: path.to_path_buf(),
            timestamped_name: tn,
            footer,
            schema,
            key,
            metadata_file_size,
            rtree: OnceLock::new(),
            offsets: (0..n).map(|_| Default::default()).collect(),
            bounds: (0..n).map(|_| Default::default()).collect(),
            global_order: (0..dims).map(|_| Default::default()).collect(),
            summary: OnceLock::new(),
            processed: OnceLock::new(),
            reads: SectionReads::default(),
        })
    }

    /// Coordinates are zipped (cell by cell) in a legacy `__coords.tdb` tile:
    /// in format 1 when the coords filters compress nothing; never later.
    pub fn coords_zipped(&self) -> bool {
        coords_zipped(self.version(), &self.schema.coords_filters)
    }

    /// Format version.
    pub fn version(&self) -> FormatVersion {
        self.footer.version
    }

    /// The non-empty domain, per dimension its bounds decoded by the
    /// fragment's schema; `None` for a fragment that wrote nothing.
    pub fn non_empty_domain(&self) -> Option<Vec<(tessera_schema::Value, tessera_schema::Value)>> {
        let ned = self.footer.non_empty_domain.as_ref()?;
        let dims = &self.schema.dimensions;
        let decode =
            |d: &tessera_schema::Dimension, b: &[u8]| tessera_schema::Value::decode(d.datatype, b);
        Some(
            ned.iter()
                .zip(dims)
                .map(|(r, d)| (decode(d, &r.lo), decode(d, &r.hi)))
                .collect(),
        )
    }

    /// (t1, t2) of the fragment.
    pub fn timestamp_range(&self) -> (u64, u64) {
        (self.timestamped_name.t1, self.timestamped_name.t2)
    }

    /// This fragment's own field for `field` of `schema` (the array's
    /// schema, usually newer): a fragment's files and footer arrays are
    /// numbered by the schema it was written with, so attributes are
    /// matched by name (schema evolution adds and drops them; dimensions
    /// never change). `None` when the fragment lacks the attribute, or has
    /// one of that name with other cells (dropped, then added back with
    /// another type, cell size or nullability: as libtiledb from 2.27, the
    /// fragment holds none of the new attribute's values).
    pub fn own_field(&self, schema: &ArraySchema, field: Field) -> Option<Field> {
        match field {
            Field::Attribute(i) => self
                .own_attribute(schema.attributes.get(i)?)
                .map(Field::Attribute),
            other => Some(other),
        }
    }

    /// The index in this fragment's schema of the attribute `wanted` (one
    /// of the array's schema): same name and same cells (type, values a
    /// cell, nullability); see [`FragmentMetadata::own_field`].
    pub fn own_attribute(&self, wanted: &tessera_schema::Attribute) -> Option<usize> {
        self.schema.attributes.iter().position(|a| {
            a.name == wanted.name
                && a.datatype == wanted.datatype
                && a.cell_val_num == wanted.cell_val_num
                && a.nullable == wanted.nullable
        })
    }

    /// Index of a field in the footer arrays.
    pub fn field_index(&self, f: Field) -> Option<usize> {
        let attrs = self.schema.attributes.len();
        let dims = if self.version().has(gates::SPLIT_COORDINATES) {
            self.schema.dimensions.len()
        } else {
            0
        };
        let base = attrs + 1 + dims;
        let i = match f {
            Field::Attribute(i) if i < attrs => i,
            Field::Coords => attrs,
            Field::Dimension(j) if j < dims => attrs + 1 + j,
            Field::Timestamps if self.footer.has_timestamps => base,
            Field::DeleteTimestamps if self.footer.has_delete_meta => {
                base + self.footer.has_timestamps as usize
            }
            Field::DeleteConditionIndex if self.footer.has_delete_meta => {
                base + self.footer.has_timestamps as usize + 1
            }
            _ => return None,
        };
        Some(i)
    }

    /// Number of data tiles.
    pub fn tile_count(&self) -> u64 {
        if self.footer.dense {
            self.dense_tile_count()
        } else {
            self.footer.sparse_tile_num
        }
    }

    fn dense_tile_count(&self) -> u64 {
        let Some(ned) = &self.footer.non_empty_domain else {
            return 0;
        };
        let mut n = 1u64;
        for (d, r) in self.schema.dimensions.iter().zip(ned) {
            let (Some((lo, _)), Some(ext)) = (d.domain_values(), d.tile_extent_value()) else {
                return 0;
            };
            let (lo, ext) = (int(&lo), int(&ext));
            let a = int(&tessera_schema::Value::decode(d.datatype, &r.lo));
            let b = int(&tessera_schema::Value::decode(d.datatype, &r.hi));
            if ext <= 0 || b < a {
                return 0;
            }
            n = n.saturating_mul(((b - lo) / ext - (a - lo) / ext + 1) as u64);
        }
        n
    }

    /// Cells in data tile `t`.
    pub fn cell_num(&self, t: u64) -> u64 {
        if self.footer.dense {
            self.schema
                .dimensions
                .iter()
                .map(|d| d.tile_extent_value().map_or(1, |e| int(&e).max(1) as u64))
                .product()
        } else if t + 1 == self.footer.sparse_tile_num {
            self.footer.last_tile_cell_num
        } else {
            self.schema.capacity
        }
    }

    /// Total cells in the fragment.
    pub fn total_cell_num(&self) -> u64 {
        let n = self.tile_count();
        if n == 0 {
            return 0;
        }
        if self.footer.dense {
            n.saturating_mul(self.cell_num(0))
        } else {
            (n - 1)
                .saturating_mul(self.schema.capacity)
                .saturating_add(self.footer.last_tile_cell_num)
        }
    }

    /// The data file of a field.
    pub fn data_file(&self, f: Field, kind: FileKind) -> PathBuf {
        let suffix = match kind {
            FileKind::Fixed => "",
            FileKind::Var => "_var",
            FileKind::Validity => "_validity",
        };
        let stem = file_stem(&self.schema, f, self.version());
        self.path.join(format!("{stem}{suffix}.tdb"))
    }
}

/// The most bytes a tile may span on disk: the largest unfiltered tile a
/// pipeline accepts, plus a sixteenth for what filters add (compressors
/// grow incompressible data by well under 1 %, chunk headers and
/// encryption by a few bytes a chunk).
pub const MAX_FILTERED_TILE: u64 = tessera_filters::pipeline::DEFAULT_MAX_TILE_SIZE
    + tessera_filters::pipeline::DEFAULT_MAX_TILE_SIZE / 16;

/// A dimension's first and last coordinates in global order, per tile.
pub type GlobalOrderBounds = (Arc<TileBounds>, Arc<TileBounds>);

/// Bytes read from the end of a fragment metadata file to find its footer.
pub(crate) const FOOTER_READ: u64 = 16 << 10;

/// The stem of a field's data file names in a fragment of version `v`
/// written with `schema`: by index from version 9, before by name
/// (percent-encoded in version 8).
fn file_stem(schema: &ArraySchema, f: Field, v: FormatVersion) -> String {
    match f {
        Field::Timestamps => "t".to_string(),
        Field::DeleteTimestamps => "dt".to_string(),
        Field::DeleteConditionIndex => "dci".to_string(),
        Field::Coords => "__coords".to_string(),
        Field::Attribute(i) if v.has(gates::FILES_BY_INDEX) => format!("a{i}"),
        Field::Dimension(j) if v.has(gates::FILES_BY_INDEX) => format!("d{j}"),
        Field::Attribute(i) => legacy_name(&schema.attributes[i].name, v),
        Field::Dimension(j) => legacy_name(&schema.dimensions[j].name, v),
    }
}

/// File stem of a field before version 9: its name, percent-encoded in version 8.
fn legacy_name(name: &str, v: FormatVersion) -> String {
    if !v.has(gates::PERCENT_ENCODED_NAMES) || v.has(gates::FILES_BY_INDEX) {
        return name.to_owned();
    }
    let mut out = String::new();
    for c in name.chars() {
        if "!#$%&'()*+,/:;=?@[]\"<>\\|".contains(c) {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn int(v: &tessera_schema::Value) -> i128 {
    match v {
        tessera_schema::Value::Int(x) => *x,
        tessera_schema::Value::Float(x) => *x as i128,
        tessera_schema::Value::Bytes(_) => 0,
    }
}

trait InFileHint {
    fn in_file_hint(self, file: &Path) -> FragmentError;
}
impl InFileHint for FragmentError {
    fn in_file_hint(self, file: &Path) -> FragmentError {
        match self {
            FragmentError::Parse(p) => FragmentError::Parse(p.in_file(file.display().to_string())),
            e => e,
        }
    }
}

/// Whether a fragment of `version` whose coords filters are `filters` stores
/// its legacy `__coords.tdb` tile zipped cell by cell: format 1 did when the
/// filters compress nothing, and no later format does.
fn coords_zipped(version: FormatVersion, filters: &tessera_filters::FilterPipeline) -> bool {
    use tessera_filters::FilterType as T;
    !version.has(gates::UNZIPPED_COORDINATES)
        && !filters.filters.iter().any(|f| {
            matches!(
                f.filter_type(),
                T::Gzip
                    | T::Zstd
                    | T::Lz4
                    | T::Rle
                    | T::Bzip2
                    | T::DoubleDelta
                    | T::Dictionary
                    | T::Delta
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_filters::{Filter, FilterKind, FilterPipeline};
    use tessera_tile::Datatype;

    #[test]
    fn coords_zipped_on_both_sides_of_its_gate() {
        let gate = gates::UNZIPPED_COORDINATES.version();
        let before = FormatVersion::new(gate.number() - 1);
        let plain = FilterPipeline::empty();
        let shuffled = FilterPipeline::new(
            vec![Filter::new(FilterKind::Byteshuffle, Datatype::Int64)],
            0,
        );
        let compressed = FilterPipeline::new(
            vec![Filter::new(FilterKind::Zstd { level: 3 }, Datatype::Int64)],
            0,
        );
        // Before the gate: zipped unless a filter compresses.
        assert!(coords_zipped(before, &plain));
        assert!(coords_zipped(before, &shuffled));
        assert!(!coords_zipped(before, &compressed));
        // From the gate on: never zipped.
        for filters in [&plain, &shuffled, &compressed] {
            assert!(!coords_zipped(gate, filters));
        }
    }

    /// The gates that change data file names, on both sides: names by
    /// index from version 9, percent-encoded names in version 8 only.
    #[test]
    fn file_names_on_both_sides_of_their_gates() {
        let array = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/tiledb-0.36.1/sparse_2d/array");
        let storage = tessera_storage::LocalFs;
        let files = tessera_schema::list_schemas(&storage, &array).unwrap();
        let mut schema = tessera_schema::load_schema(&storage, &array, &files[0], None).unwrap();
        schema.attributes[0].name = "a b/c".into();
        let names: Vec<String> = [7, 8, 9]
            .into_iter()
            .map(|v| {
                let v = FormatVersion::new(v);
                let stems: Vec<String> = [Field::Attribute(0), Field::Dimension(1), Field::Coords]
                    .into_iter()
                    .map(|f| file_stem(&schema, f, v))
                    .collect();
                format!("v{}: {}", v.number(), stems.join(" "))
            })
            .collect();
        insta::assert_snapshot!(names.join("\n"), @r"
        v7: a b/c y __coords
        v8: a b%2Fc y __coords
        v9: a0 d1 __coords
        ");
    }
}
