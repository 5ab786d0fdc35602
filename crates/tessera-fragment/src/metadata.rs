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
use tessera_tile::generic::BASE_SIZE;
use tessera_tile::storage::Storage;
use tessera_tile::{FormatVersion, Reader};

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
            .map_err(|e| FragmentError::io(&file, e))?;
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
            storage
                .read_range(&file, r)
                .map_err(|e| FragmentError::io(&file, e))
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
        Self::assemble(name, path, tn, footer, schema, key, size)
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

    /// Formats 1 and 2: the whole metadata file is one generic tile holding
    /// the non-empty domain, the MBRs, the bounding coordinates (unused), the
    /// tile offsets, var offsets and var sizes per attribute (the legacy
    /// coordinates last among the offsets), the last tile cell number and the
    /// file sizes.
    fn load_v1_v2(
        storage: &dyn Storage,
        path: &Path,
        name: String,
        tn: TimestampedName,
        schema: Arc<ArraySchema>,
        key: Option<EncryptionKey>,
        dense: bool,
    ) -> Result<FragmentMetadata, FragmentError> {
        let file = path.join(FRAGMENT_METADATA_FILE);
        let bytes = storage
            .read_all(&file)
            .map_err(|e| FragmentError::io(&file, e))?;
        let within = |e: FragmentError| e.within(&name, "legacy fragment metadata");
        let tile = read_generic_tile(&bytes, key.as_ref(), 0).map_err(|e| within(e.into()))?;
        let mut r = Reader::new(&tile.data, "legacy fragment metadata");
        let p = |e: tessera_tile::ParseError| within(FragmentError::from(e));
        let version = FormatVersion::new(r.u32("version number").map_err(p)?);
        let dims = &schema.dimensions;
        let pair: u64 = dims.iter().map(|d| 2 * d.coord_size()).sum();
        let split = |b: &[u8]| -> Vec<tessera_schema::Range1D> {
            let mut out = Vec::new();
            let mut o = 0usize;
            for d in dims {
                let s = d.coord_size() as usize;
                out.push(tessera_schema::Range1D {
                    lo: b[o..o + s].to_vec(),
                    hi: b[o + s..o + 2 * s].to_vec(),
                });
                o += 2 * s;
            }
            out
        };
        let ned_size = r.u64("non-empty domain size").map_err(p)?;
        let ned = r.bytes("non-empty domain", ned_size).map_err(p)?;
        let non_empty_domain = if ned_size == 0 {
            None
        } else if ned_size == pair {
            Some(split(ned))
        } else {
            return Err(within(FragmentError::invalid(
                &name,
                format!("non-empty domain of {ned_size} bytes, expected {pair}"),
            )));
        };
        let n_mbrs = r.u64("number of MBRs").map_err(p)?;
        let n = r
            .check_count("number of MBRs", n_mbrs, pair.max(1))
            .map_err(p)?;
        let mut leaves = Vec::with_capacity(n);
        for _ in 0..n {
            leaves.push(split(r.bytes("MBR", pair).map_err(p)?));
        }
        let n_bounding = r.u64("number of bounding coords").map_err(p)?;
        r.skip("bounding coords", n_bounding.saturating_mul(pair))
            .map_err(p)?;
        let attrs = schema.attributes.len();
        let mut arrays = |count: usize, what: &str| -> Result<Vec<Vec<u64>>, FragmentError> {
            (0..count)
                .map(|_| {
                    let k = r.u64(what).map_err(p)?;
                    r.u64_array(what, k).map_err(p)
                })
                .collect()
        };
        let offsets = arrays(attrs + 1, "tile offsets")?;
        let var_offsets = arrays(attrs, "tile var offsets")?;
        let var_sizes = arrays(attrs, "tile var sizes")?;
        let last_tile_cell_num = r.u64("last tile cell num").map_err(p)?;
        let file_sizes = r.u64_array("file sizes", attrs as u64 + 1).map_err(p)?;
        let file_var_sizes = r.u64_array("file var sizes", attrs as u64).map_err(p)?;
        let footer = Footer {
            version,
            schema_name: None,
            dense,
            non_empty_domain,
            sparse_tile_num: if dense { 0 } else { n_mbrs },
            last_tile_cell_num,
            has_timestamps: false,
            has_delete_meta: false,
            file_sizes,
            file_var_sizes,
            file_validity_sizes: Vec::new(),
            rtree_offset: 0,
            tile_offsets: Vec::new(),
            tile_var_offsets: Vec::new(),
            tile_var_sizes: Vec::new(),
            tile_validity_offsets: Vec::new(),
            tile_min_offsets: Vec::new(),
            tile_max_offsets: Vec::new(),
            tile_sum_offsets: Vec::new(),
            tile_null_count_offsets: Vec::new(),
            fragment_summary_offset: None,
            processed_conditions_offset: None,
            tile_global_order_offsets: None,
            size: 0,
        };
        // The sections are already read: fill the lazy slots.
        let m = Self::assemble(name, path, tn, footer, schema, key, bytes.len() as u64)?;
        let slots = &m.offsets;
        for (i, o) in offsets.into_iter().enumerate() {
            let _ = slots[i][0].set(Arc::new(o));
        }
        for (i, o) in var_offsets.into_iter().enumerate() {
            let _ = slots[i][1].set(Arc::new(o));
        }
        for (i, o) in var_sizes.into_iter().enumerate() {
            let _ = slots[i][3].set(Arc::new(o));
        }
        let _ = m.rtree.set(RTree {
            fanout: 10,
            levels: vec![leaves],
        });
        Ok(m)
    }

    /// Coordinates are zipped (cell by cell) in a legacy `__coords.tdb` tile:
    /// in format 1 when the coords filters compress nothing; never later.
    pub fn coords_zipped(&self) -> bool {
        use tessera_filters::FilterType as T;
        !self.version().has(gates::UNZIPPED_COORDINATES)
            && !self.schema.coords_filters.filters.iter().any(|f| {
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

    /// Format version.
    pub fn version(&self) -> FormatVersion {
        self.footer.version
    }

    /// (t1, t2) of the fragment.
    pub fn timestamp_range(&self) -> (u64, u64) {
        (self.timestamped_name.t1, self.timestamped_name.t2)
    }

    /// This fragment's own field for `field` of `schema` (the array's
    /// schema, usually newer): a fragment's files and footer arrays are
    /// numbered by the schema it was written with, so attributes are
    /// matched by name (schema evolution adds and drops them; dimensions
    /// never change). `None` when the fragment lacks the attribute.
    pub fn own_field(&self, schema: &ArraySchema, field: Field) -> Option<Field> {
        match field {
            Field::Attribute(i) => {
                let name = &schema.attributes.get(i)?.name;
                self.schema
                    .attributes
                    .iter()
                    .position(|a| &a.name == name)
                    .map(Field::Attribute)
            }
            other => Some(other),
        }
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
        let v = self.version();
        let stem = match f {
            Field::Timestamps => "t".to_string(),
            Field::DeleteTimestamps => "dt".to_string(),
            Field::DeleteConditionIndex => "dci".to_string(),
            Field::Coords => "__coords".to_string(),
            Field::Attribute(i) if v.has(gates::FILES_BY_INDEX) => format!("a{i}"),
            Field::Dimension(j) if v.has(gates::FILES_BY_INDEX) => format!("d{j}"),
            Field::Attribute(i) => legacy_name(&self.schema.attributes[i].name, v),
            Field::Dimension(j) => legacy_name(&self.schema.dimensions[j].name, v),
        };
        self.path.join(format!("{stem}{suffix}.tdb"))
    }

    /// The bytes of the generic tile holding a section, as stored.
    fn read_section(
        &self,
        storage: &dyn Storage,
        offset: u64,
        section: &str,
    ) -> Result<Vec<u8>, FragmentError> {
        let file = self.path.join(FRAGMENT_METADATA_FILE);
        let within = |e: FragmentError| e.within(&self.name, section);
        let end = offset
            .checked_add(BASE_SIZE)
            .filter(|e| *e <= self.metadata_file_size)
            .ok_or_else(|| {
                within(FragmentError::invalid(
                    FRAGMENT_METADATA_FILE,
                    format!(
                        "section offset {offset} is past the end of the file ({} bytes)",
                        self.metadata_file_size
                    ),
                ))
            })?;
        // Sections lie back to back: the next known section (or the footer)
        // bounds this one, so one request usually reads it whole. The
        // header read from those bytes still decides its size.
        let hint = self.section_end(offset).unwrap_or(end).max(end);
        let head = storage
            .read_range(&file, offset..hint)
            .map_err(|e| within(FragmentError::io(&file, e)))?;
        let mut r = Reader::new(&head, "generic tile header").at_offset(offset);
        r.skip("version", 4)?;
        let persisted = r.u64("persisted size").map_err(|e| within(e.into()))?;
        r.skip("sizes", 8 + 1 + 8 + 1)
            .map_err(|e| within(e.into()))?;
        let fp = r
            .u32("filter pipeline size")
            .map_err(|e| within(e.into()))? as u64;
        let total = BASE_SIZE
            .checked_add(fp)
            .and_then(|x| x.checked_add(persisted));
        let stop = total
            .and_then(|t| offset.checked_add(t))
            .filter(|s| *s <= self.metadata_file_size)
            .ok_or_else(|| {
                within(FragmentError::invalid(
                    FRAGMENT_METADATA_FILE,
                    format!("generic tile at {offset} runs past the end of the file"),
                ))
            })?;
        Ok(if stop <= hint {
            let mut head = head;
            head.truncate((stop - offset) as usize);
            head
        } else {
            storage
                .read_range(&file, offset..stop)
                .map_err(|e| within(FragmentError::io(&file, e)))?
        })
    }

    /// The offset of the first section (or the footer) after `offset`, as
    /// the footer records them; the file's end if none is. `None` when
    /// neither is known (a consolidated footer leaves the file's size unasked).
    fn section_end(&self, offset: u64) -> Option<u64> {
        let known_size = self.metadata_file_size != u64::MAX;
        let f = &self.footer;
        let global = f
            .tile_global_order_offsets
            .iter()
            .flat_map(|(a, b)| a.iter().chain(b));
        [f.rtree_offset]
            .iter()
            .chain(&f.tile_offsets)
            .chain(&f.tile_var_offsets)
            .chain(&f.tile_var_sizes)
            .chain(&f.tile_validity_offsets)
            .chain(&f.tile_min_offsets)
            .chain(&f.tile_max_offsets)
            .chain(&f.tile_sum_offsets)
            .chain(&f.tile_null_count_offsets)
            .chain(&f.fragment_summary_offset)
            .chain(&f.processed_conditions_offset)
            .chain(global)
            .copied()
            .chain(known_size.then(|| self.metadata_file_size.saturating_sub(f.size)))
            .filter(|&o| o > offset && o <= self.metadata_file_size)
            .min()
            .or(known_size.then_some(self.metadata_file_size))
    }

    /// The value of the section at `offset`, read and decoded on first use
    /// and kept. A thread asking while another reads it waits for those
    /// bytes rather than reading them again (unless it is the reading
    /// thread itself, come back through a rayon job); threads asking at
    /// once may each decode them, and the first value is kept.
    fn lazy<'s, T>(
        &self,
        storage: &dyn Storage,
        slot: &'s OnceLock<T>,
        offset: u64,
        section: &str,
        parse: impl FnOnce(&[u8]) -> Result<T, FragmentError>,
    ) -> Result<&'s T, FragmentError> {
        if let Some(v) = slot.get() {
            return Ok(v);
        }
        let me = std::thread::current().id();
        let mut state = self.reads.lock();
        let bytes = loop {
            // Checked under the lock: the value is kept before its bytes
            // are dropped, so a thread finding neither reads them itself.
            if let Some(v) = slot.get() {
                return Ok(v);
            }
            if let Some(b) = state.read.get(&offset) {
                break b.clone();
            }
            match state.reading.get(&offset) {
                Some(t) if *t != me => {
                    state = self
                        .reads
                        .done
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner())
                }
                reading => {
                    let mine = reading.is_none();
                    if mine {
                        state.reading.insert(offset, me);
                    }
                    drop(state);
                    let read = self.read_section(storage, offset, section);
                    state = self.reads.lock();
                    if mine {
                        state.reading.remove(&offset);
                    }
                    self.reads.done.notify_all();
                    let b = Arc::new(read?);
                    state.read.insert(offset, b.clone());
                    break b;
                }
            }
        };
        drop(state);
        let value = read_generic_tile(&bytes, self.key.as_ref(), offset)
            .map_err(|e| FragmentError::from(e).within(&self.name, section))
            .and_then(|tile| parse(&tile.data));
        let kept = value.map(|v| slot.get_or_init(|| v));
        self.reads.lock().read.remove(&offset);
        kept
    }

    /// The R-tree (read on first use).
    pub fn rtree(&self, storage: &dyn Storage) -> Result<&RTree, FragmentError> {
        let offset = self.footer.rtree_offset;
        self.lazy(storage, &self.rtree, offset, "R-tree", |data| {
            RTree::parse(data, self.version(), &self.schema.dimensions)
                .map_err(|e| e.within(&self.name, "R-tree"))
        })
    }

    fn u64_section(
        &self,
        storage: &dyn Storage,
        field: usize,
        which: usize,
        offsets: &[u64],
        section: &'static str,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        let slot = &self
            .offsets
            .get(field)
            .ok_or_else(|| FragmentError::invalid(&self.name, format!("no field {field}")))?[which];
        if let Some(v) = slot.get() {
            // Formats before the footer fill these when the metadata loads.
            return Ok(v.clone());
        }
        let off = *offsets.get(field).ok_or_else(|| {
            FragmentError::invalid(&self.name, format!("no {section} for field {field}"))
        })?;
        self.lazy(storage, slot, off, section, |data| {
            let mut r = Reader::new(data, section);
            let n = r
                .u64("number of values")
                .map_err(|e| FragmentError::from(e).within(&self.name, section))?;
            let v = r
                .u64_array("values", n)
                .map_err(|e| FragmentError::from(e).within(&self.name, section))?;
            Ok(Arc::new(v))
        })
        .cloned()
    }

    /// Names of the delete and update commits already applied to this
    /// fragment (format 16 and later; read on first use).
    pub fn processed_conditions(&self, storage: &dyn Storage) -> Result<&[String], FragmentError> {
        let Some(off) = self.footer.processed_conditions_offset else {
            return Ok(self.processed.get_or_init(Vec::new));
        };
        let section = "processed conditions";
        self.lazy(storage, &self.processed, off, section, |data| {
            let parse = || -> Result<Vec<String>, tessera_tile::ParseError> {
                let mut r = Reader::new(data, section);
                let n = r.u64("number of processed conditions")?;
                let mut names = Vec::new();
                for _ in 0..r.check_count("number of processed conditions", n, 8)? {
                    let len = r.u64("condition size")?;
                    names.push(r.string("condition", len)?);
                }
                Ok(names)
            };
            parse().map_err(|e| FragmentError::from(e).within(&self.name, section))
        })
        .map(Vec::as_slice)
    }

    /// Bytes of one value of a field's tile bounds; `None` when var-sized.
    fn bound_cell_size(&self, f: Field) -> Result<Option<u64>, FragmentError> {
        Ok(match f {
            Field::Attribute(i) => {
                let a = &self.schema.attributes[i];
                (!a.is_var()).then(|| a.cell_size())
            }
            Field::Dimension(j) => {
                let d = &self.schema.dimensions[j];
                (!d.is_var()).then(|| d.coord_size())
            }
            Field::Timestamps | Field::DeleteTimestamps | Field::DeleteConditionIndex => Some(8),
            Field::Coords => {
                return Err(FragmentError::invalid(
                    &self.name,
                    "zipped coordinates have no tile metadata",
                ))
            }
        })
    }

    fn checked_field(&self, f: Field) -> Result<usize, FragmentError> {
        self.field_index(f)
            .ok_or_else(|| FragmentError::invalid(&self.name, format!("no field {f:?}")))
    }

    fn bounds_section(
        &self,
        storage: &dyn Storage,
        f: Field,
        which: usize,
    ) -> Result<Arc<TileBounds>, FragmentError> {
        let i = self.checked_field(f)?;
        let cell_size = self.bound_cell_size(f)?;
        let (offsets, section) = if which == 0 {
            (&self.footer.tile_min_offsets, "tile mins")
        } else {
            (&self.footer.tile_max_offsets, "tile maxes")
        };
        let Some(&off) = offsets.get(i) else {
            // Before format 11 there is no tile metadata.
            return Ok(Arc::default());
        };
        self.bounds_slot(storage, &self.bounds[i][which], off, cell_size, section)
    }

    /// A section of per-tile values (mins, maxes, global order bounds) at
    /// `offset`, loaded once into `slot`.
    fn bounds_slot(
        &self,
        storage: &dyn Storage,
        slot: &OnceLock<Arc<TileBounds>>,
        offset: u64,
        cell_size: Option<u64>,
        section: &str,
    ) -> Result<Arc<TileBounds>, FragmentError> {
        self.lazy(storage, slot, offset, section, |data| {
            TileBounds::parse(data, cell_size)
                .map(Arc::new)
                .map_err(|e| FragmentError::from(e).within(&self.name, section))
        })
        .cloned()
    }

    /// Per-tile minimum values of a field (format 11 and later; empty before,
    /// and for fields libtiledb keeps none for). Read on first use.
    pub fn tile_mins(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Arc<TileBounds>, FragmentError> {
        self.bounds_section(storage, f, 0)
    }

    /// Per-tile maximum values of a field; see [`tile_mins`](Self::tile_mins).
    pub fn tile_maxes(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Arc<TileBounds>, FragmentError> {
        self.bounds_section(storage, f, 1)
    }

    /// A field's per-tile u64 section (sums, null counts); empty before
    /// format 11, which has no tile metadata.
    fn tile_counts(
        &self,
        storage: &dyn Storage,
        f: Field,
        which: usize,
        offsets: &[u64],
        section: &'static str,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        let i = self.checked_field(f)?;
        if offsets.is_empty() {
            return Ok(Arc::default());
        }
        self.u64_section(storage, i, which, offsets, section)
    }

    /// Per-tile sums of a field, as stored bits (read them with
    /// [`Sum::from_bits`](crate::tile_metadata::Sum::from_bits)); empty before format 11.
    pub fn tile_sums(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        self.tile_counts(storage, f, 4, &self.footer.tile_sum_offsets, "tile sums")
    }

    /// Per-tile null counts of a field; empty before format 11.
    pub fn tile_null_counts(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        self.tile_counts(
            storage,
            f,
            5,
            &self.footer.tile_null_count_offsets,
            "tile null counts",
        )
    }

    /// Fragment-level min, max, sum and null count of every field, in
    /// footer order (format 12 and later; empty before). Read on first use.
    pub fn fragment_summary(
        &self,
        storage: &dyn Storage,
    ) -> Result<&[FieldSummary], FragmentError> {
        let Some(off) = self.footer.fragment_summary_offset else {
            return Ok(self.summary.get_or_init(Vec::new));
        };
        let section = "fragment min max sum null count";
        self.lazy(storage, &self.summary, off, section, |data| {
            parse_summary(data, self.footer.tile_offsets.len())
                .map_err(|e| FragmentError::from(e).within(&self.name, section))
        })
        .map(Vec::as_slice)
    }

    /// One field's fragment-level summary.
    pub fn field_summary(
        &self,
        storage: &dyn Storage,
        f: Field,
    ) -> Result<Option<&FieldSummary>, FragmentError> {
        let i = self.checked_field(f)?;
        Ok(self.fragment_summary(storage)?.get(i))
    }

    /// The first and last coordinates in global order of each tile, for
    /// dimension `dim` (format 23 sparse fragments; `None` when absent).
    pub fn tile_global_order_bounds(
        &self,
        storage: &dyn Storage,
        dim: usize,
    ) -> Result<Option<GlobalOrderBounds>, FragmentError> {
        let Some((mins, maxes)) = &self.footer.tile_global_order_offsets else {
            return Ok(None);
        };
        let d = self
            .schema
            .dimensions
            .get(dim)
            .ok_or_else(|| FragmentError::invalid(&self.name, format!("no dimension {dim}")))?;
        let cell_size = (!d.is_var()).then(|| d.coord_size());
        let load = |which: usize, offsets: &[u64], section: &'static str| {
            let off = *offsets.get(dim).ok_or_else(|| {
                FragmentError::invalid(&self.name, format!("no {section} for dimension {dim}"))
            })?;
            self.bounds_slot(
                storage,
                &self.global_order[dim][which],
                off,
                cell_size,
                section,
            )
        };
        let lo = load(0, mins, "tile global order mins")?;
        let hi = load(1, maxes, "tile global order maxes")?;
        Ok(Some((lo, hi)))
    }

    /// Offsets of the tiles of a field's file.
    pub fn tile_offsets(
        &self,
        storage: &dyn Storage,
        field: usize,
        kind: FileKind,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        match kind {
            FileKind::Fixed => {
                self.u64_section(storage, field, 0, &self.footer.tile_offsets, "tile offsets")
            }
            FileKind::Var => self.u64_section(
                storage,
                field,
                1,
                &self.footer.tile_var_offsets,
                "tile var offsets",
            ),
            FileKind::Validity => self.u64_section(
                storage,
                field,
                2,
                &self.footer.tile_validity_offsets,
                "tile validity offsets",
            ),
        }
    }

    /// Unfiltered sizes of a var-sized field's value tiles.
    pub fn tile_var_sizes(
        &self,
        storage: &dyn Storage,
        field: usize,
    ) -> Result<Arc<Vec<u64>>, FragmentError> {
        self.u64_section(
            storage,
            field,
            3,
            &self.footer.tile_var_sizes,
            "tile var sizes",
        )
    }

    /// Size of a field's file, from the footer.
    pub fn file_size(&self, field: usize, kind: FileKind) -> u64 {
        let v = match kind {
            FileKind::Fixed => &self.footer.file_sizes,
            FileKind::Var => &self.footer.file_var_sizes,
            FileKind::Validity => &self.footer.file_validity_sizes,
        };
        v.get(field).copied().unwrap_or(0)
    }

    /// The byte range of tile `t` in a field's file.
    pub fn tile_range(
        &self,
        storage: &dyn Storage,
        field: usize,
        kind: FileKind,
        t: u64,
    ) -> Result<std::ops::Range<u64>, FragmentError> {
        let offs = self.tile_offsets(storage, field, kind)?;
        let t = t as usize;
        let start = *offs.get(t).ok_or_else(|| {
            FragmentError::invalid(
                &self.name,
                format!("tile {t} is past the {} tile offsets", offs.len()),
            )
        })?;
        let end = offs
            .get(t + 1)
            .copied()
            .unwrap_or_else(|| self.file_size(field, kind));
        if end < start {
            return Err(FragmentError::invalid(
                &self.name,
                format!("tile offsets decrease at tile {t} ({start} then {end})"),
            ));
        }
        // Readers allocate what a range spans before reading it: a range
        // no tile can fill is corruption, not a request for that memory.
        if end - start > MAX_FILTERED_TILE {
            return Err(FragmentError::invalid(
                &self.name,
                format!(
                    "tile {t} spans {} bytes on disk ({start}..{end}), more than a tile may hold",
                    end - start
                ),
            ));
        }
        Ok(start..end)
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
const FOOTER_READ: u64 = 16 << 10;

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
        tessera_schema::Value::Int(x) => *x as i128,
        tessera_schema::Value::UInt(x) => *x as i128,
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
