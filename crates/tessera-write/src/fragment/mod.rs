//! Writing a fragment: cells in any order, given as columns (the shape
//! `tessera read` returns them in), laid out as the array type asks (sparse:
//! sorted into the global order, tiles cut at the capacity; dense: the box
//! written, in whole space tiles padded with fill values), each field's
//! tiles filtered into its data files, and the fragment metadata (R-tree,
//! tile offsets, tile metadata, summary, footer) written after them. The
//! commit file `__commits/<name>.wrt` is written last: until it exists no
//! reader sees the fragment, so a crash leaves nothing visible.
//!
//! One concern a file: `buffer` (the cells held), `sparse` and `dense` (the
//! two layouts), `boxed` (a dense write given as a box), `stats` (tile
//! metadata as libtiledb computes it), `files` (tiles filtered into data
//! files), `metadata` (the fragment metadata file), `stream` and `bands`
//! (a sparse fragment written as its sorted cells come, a dense one band
//! of tiles after another), over `appended` (tiles appended as they come);
//! `on_store` (the same writer driven asynchronously).

mod appended;
mod bands;
mod boxed;
mod buffer;
mod commit;
mod dense;
mod files;
mod metadata;
mod on_store;
mod order;
mod placement;
mod row_major;
mod sparse;
mod stats;
mod stream;

use crate::name::now_ms;
use crate::WriteError;
use appended::{AppendedFragment, Facts};
pub(crate) use bands::cell_bytes;
pub use bands::BoxWriter;
use buffer::{FieldBuffer, FieldInfo};
use commit::{commit, FragmentFolder};
use dense::{box_tiles, dense_tiles, DensePlan};
use files::FieldFiles;
use metadata::{fragment_metadata, FragmentFacts, Slot};
pub use on_store::{latest_schema, AsyncFragmentWriter};
pub(crate) use on_store::{on_pool, OnStore};
use rayon::prelude::*;
pub use row_major::{RowMajorWriter, Walk};
pub use sparse::Duplicates;
use stats::{field_summary, TileStats};
use std::ops::Range;
use std::sync::Arc;
pub use stream::SortedFragmentWriter;
use tessera_cells::Column;
use tessera_filters::gates::LibtiledbRelease;
use tessera_filters::EncryptionKey;
use tessera_fragment::{FieldSummary, RTree};
use tessera_schema::json::WRITTEN_VERSION;
use tessera_schema::{ArraySchema, Range1D, Value};
use tessera_storage::Location;
use tessera_tile::ArrayType;

/// The R-tree fanout libtiledb writes (`constants::rtree_fanout`).
const RTREE_FANOUT: u32 = 10;

/// How a fragment is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// The fragment's timestamp, milliseconds since the epoch (default: now).
    pub timestamp: Option<u64>,
    /// The array's AES-256-GCM key.
    pub key: Option<EncryptionKey>,
    /// Filter tiles as this libtiledb release does (default: the newest,
    /// 2.30). Releases differ only in the double-delta filter's bit width
    /// (from 2.29), which every release reads; set it to reproduce an older
    /// release's bytes exactly.
    pub libtiledb: Option<LibtiledbRelease>,
    /// Memory for the write, in bytes (default: none set). A sparse write
    /// whose cells outgrow a third of it (sorting copies them once, and
    /// their tiles are filtered beside them) writes them as a fragment and
    /// goes on with the next cells: the write becomes several fragments,
    /// committed together. Duplicates are then refused within each
    /// fragment only; cells given twice in different fragments are both
    /// kept, and a read takes either. A dense write holds its whole box
    /// until it finishes, and is refused when that outgrows the budget; a
    /// [`BoxWriter`] takes the box a band of tiles at a time instead.
    pub budget: Option<u64>,
    /// What a sparse write does with cells given twice at one coordinate
    /// in an array that does not allow duplicates (default: refuses the
    /// write).
    pub duplicates: Duplicates,
}

/// Where a sparse fragment's cells go, before they are filtered.
struct Layout {
    /// Each field's cells in the global order.
    cells: Vec<FieldBuffer>,
    /// Each tile's cells.
    tiles: Vec<Range<usize>>,
    rtree: RTree,
}

/// A dense fragment's R-tree: none (the space tiles place the cells).
fn dense_rtree() -> RTree {
    RTree {
        fanout: RTREE_FANOUT,
        levels: Vec::new(),
    }
}

/// Writes one fragment (or, past a memory budget, several committed
/// together) into an existing array, as arrow-rs' `ArrowWriter` writes a
/// file: [`FragmentWriter::try_new`], then
/// [`write`](FragmentWriter::write) as many times as there are batches of
/// cells, then [`finish`](FragmentWriter::finish).
///
/// ```
/// use tessera_cells::Column;
/// use tessera_schema::json::schema_from_json;
/// use tessera_write::{create_array, FragmentWriter, WriteOptions};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-write-{}", std::process::id()));
/// let doc = schema_from_json(&serde_json::json!({
///     "array_type": "sparse",
///     "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 99], "tile_extent": 10}],
///     "attributes": [{"name": "v", "type": "INT32"}],
/// })).unwrap();
/// create_array(&dir, &doc, None, None).unwrap();
/// let column = |name: &str, t, data: Vec<u8>| Column {
///     name: name.into(), is_dimension: name == "x", datatype: t,
///     cell_val_num: tessera_schema::CellValNum::Fixed(1), data, offsets: None, validity: None,
/// };
/// let mut w = FragmentWriter::try_new(&dir, WriteOptions::default()).unwrap();
/// w.write(&[
///     column("x", tessera_tile::Datatype::Int64, [7i64, 3].iter().flat_map(|v| v.to_le_bytes()).collect()),
///     column("v", tessera_tile::Datatype::Int32, [70i32, 30].iter().flat_map(|v| v.to_le_bytes()).collect()),
/// ]).unwrap();
/// w.finish().unwrap();
/// let array = tessera_fragment::OpenArray::open(&tessera_storage::LocalFs, &dir, 0, u64::MAX, None).unwrap();
/// assert_eq!(array.fragments.len(), 1);
/// assert_eq!(array.fragments[0].total_cell_num(), 2);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct FragmentWriter {
    array: Location,
    schema: Arc<ArraySchema>,
    key: Option<EncryptionKey>,
    release: LibtiledbRelease,
    timestamp: u64,
    /// The schema's dimensions, then its attributes.
    fields: Vec<FieldInfo>,
    buffers: Vec<FieldBuffer>,
    /// Cells held, not yet written.
    cells: usize,
    budget: Option<u64>,
    /// Cells given twice at one coordinate (sparse, no duplicates allowed).
    duplicates: Duplicates,
    /// Fragments written, not yet committed, and their cells.
    parts: Vec<FragmentFolder>,
    written: usize,
    /// Set when the fragment replaces others (consolidation).
    consolidated: Option<Consolidated>,
    /// The box of a dense write given without coordinates
    /// ([`FragmentWriter::write_box`]).
    dense_box: Option<Vec<(i128, i128)>>,
}

/// What a fragment that replaces others (consolidation) carries besides
/// its cells.
#[derive(Debug, Clone, Default)]
pub(crate) struct Consolidated {
    /// The fragment's timestamp range: the replaced fragments'.
    pub range: (u64, u64),
    /// Whether each cell keeps its timestamp (a column
    /// `tessera_cells::VERSION_TIMESTAMPS`; every version of a cell kept).
    pub timestamps: bool,
    /// Delete metadata: each cell's delete timestamp and commit index
    /// (columns `tessera_cells::DELETE_TIMESTAMPS` and
    /// `DELETE_CONDITION_INDEX`, after the timestamps), and the delete
    /// commits they account for (`__commits/<name>`), which readers then
    /// do not apply to the fragment again.
    pub delete_meta: Option<Vec<String>>,
}

impl FragmentWriter {
    /// A writer of a new fragment of the array at `array` (its latest schema).
    pub fn try_new(
        array: impl Into<Location>,
        options: WriteOptions,
    ) -> Result<FragmentWriter, WriteError> {
        let array = array.into();
        let schema = crate::open::open_array(&array, options.key)?.schema;
        FragmentWriter::with_schema(array, schema, options)
    }

    /// A writer of a new fragment of the array at `array`, whose latest
    /// schema is `schema` (the caller opened it).
    fn with_schema(
        array: Location,
        schema: Arc<ArraySchema>,
        options: WriteOptions,
    ) -> Result<FragmentWriter, WriteError> {
        let refuse = |message: String| WriteError::Refused {
            path: array.path().into(),
            message,
        };
        let oldest = crate::gates::WRITTEN_FRAGMENTS;
        if !schema.version.has(oldest) || schema.version > WRITTEN_VERSION {
            return Err(refuse(format!(
                "the array's format version is {}; tessera writes fragments at versions {} to {} (libtiledb 2.13 to 2.30)",
                schema.version,
                oldest.version(),
                WRITTEN_VERSION
            )));
        }
        let dims = schema.dimensions.iter().map(|d| FieldInfo {
            name: d.name.clone(),
            datatype: d.datatype,
            cell_val_num: d.cell_val_num,
            nullable: false,
            is_dimension: true,
        });
        let attrs = schema.attributes.iter().map(|a| FieldInfo {
            name: a.name.clone(),
            datatype: a.datatype,
            cell_val_num: a.cell_val_num,
            nullable: a.nullable,
            is_dimension: false,
        });
        let fields: Vec<FieldInfo> = dims.chain(attrs).collect();
        Ok(FragmentWriter {
            array,
            buffers: fields.iter().map(FieldBuffer::new).collect(),
            fields,
            schema,
            key: options.key,
            release: options.libtiledb.unwrap_or(LibtiledbRelease::LATEST),
            timestamp: options.timestamp.unwrap_or_else(now_ms),
            cells: 0,
            budget: options.budget,
            duplicates: options.duplicates,
            parts: Vec::new(),
            written: 0,
            consolidated: None,
            dense_box: None,
        })
    }

    /// A writer of the fragment that replaces others (consolidation):
    /// named with their timestamp range, with per-cell timestamps when
    /// asked (sparse arrays).
    pub(crate) fn consolidating(
        array: &Location,
        schema: Arc<ArraySchema>,
        options: WriteOptions,
        consolidated: Consolidated,
    ) -> Result<FragmentWriter, WriteError> {
        let mut w = FragmentWriter::with_schema(array.clone(), schema, options)?;
        let mut extra = Vec::new();
        if consolidated.timestamps {
            extra.push(tessera_cells::VERSION_TIMESTAMPS);
        }
        if consolidated.delete_meta.is_some() {
            extra.extend([
                tessera_cells::DELETE_TIMESTAMPS,
                tessera_cells::DELETE_CONDITION_INDEX,
            ]);
        }
        for name in extra {
            let f = FieldInfo {
                name: name.into(),
                datatype: tessera_tile::Datatype::UInt64,
                cell_val_num: tessera_schema::CellValNum::Fixed(1),
                nullable: false,
                is_dimension: false,
            };
            w.buffers.push(FieldBuffer::new(&f));
            w.fields.push(f);
        }
        w.timestamp = consolidated.range.1;
        w.consolidated = Some(consolidated);
        Ok(w)
    }

    /// Whether cells carry their own timestamps (the last field).
    fn has_timestamps(&self) -> bool {
        self.consolidated.as_ref().is_some_and(|c| c.timestamps)
    }

    /// The delete commits the cells' delete metadata accounts for, when
    /// the fragment keeps delete metadata.
    fn processed_conditions(&self) -> Option<&[String]> {
        self.consolidated.as_ref()?.delete_meta.as_deref()
    }

    /// The schema the fragment is written with (the array's latest).
    pub fn schema(&self) -> &ArraySchema {
        &self.schema
    }

    /// Cells written so far.
    pub fn cells(&self) -> usize {
        self.written + self.cells
    }

    /// Bytes of the cells held.
    fn held_bytes(&self) -> u64 {
        let held = |b: &FieldBuffer| {
            b.data.len()
                + b.offsets.as_ref().map_or(0, |o| 8 * o.len())
                + b.validity.as_ref().map_or(0, Vec::len)
        };
        self.buffers.iter().map(held).sum::<usize>() as u64
    }

    /// Within the budget: a sparse write's cells written as a fragment
    /// when they outgrow it, a dense write refused.
    fn keep_to_budget(&mut self) -> Result<(), WriteError> {
        let Some(budget) = self.budget else {
            return Ok(());
        };
        let held = self.held_bytes();
        if held.saturating_mul(3) <= budget {
            return Ok(());
        }
        if self.schema.array_type == ArrayType::Dense {
            return Err(WriteError::Input(format!(
                "a dense write holds its box until it finishes: {held} bytes of cells need a budget of {} or more; write the box as several smaller boxes",
                held.saturating_mul(3)
            )));
        }
        let part = self.write_part()?;
        self.parts.push(part);
        self.written += self.cells;
        self.cells = 0;
        self.buffers = self.fields.iter().map(FieldBuffer::new).collect();
        Ok(())
    }

    /// Adds cells: one column per dimension and attribute, by name, all of
    /// the same number of cells. A nullable attribute left out is null.
    /// Columns that do not fit the schema add nothing.
    pub fn write(&mut self, columns: &[Column]) -> Result<(), WriteError> {
        self.check_no_box()?;
        let n = self.check_fields(columns, true)?;
        for (f, buf) in self.fields.iter().zip(&mut self.buffers) {
            match columns.iter().find(|c| c.name == f.name) {
                Some(c) => buf.append(c, n),
                None => buf.append(&null_column(f, n), n),
            }
        }
        self.cells += n;
        self.keep_to_budget()
    }

    /// As [`write`](Self::write), taking the columns: the first batch's
    /// buffers are held as they are, not copied (a whole file read as one
    /// batch is not copied again).
    pub fn write_owned(&mut self, mut columns: Vec<Column>) -> Result<(), WriteError> {
        self.check_no_box()?;
        let n = self.check_fields(&columns, true)?;
        for (f, buf) in self.fields.iter().zip(&mut self.buffers) {
            match columns.iter().position(|c| c.name == f.name) {
                Some(i) => buf.append_owned(columns.swap_remove(i), n),
                None => buf.append(&null_column(f, n), n),
            }
        }
        self.cells += n;
        self.keep_to_budget()
    }

    /// Cells with coordinates do not join a box written without them.
    fn check_no_box(&self) -> Result<(), WriteError> {
        match self.dense_box {
            Some(_) => Err(WriteError::Input(
                "a box write is the only write of its fragment writer".into(),
            )),
            None => Ok(()),
        }
    }

    /// The number of cells `columns` add, each checked against its field;
    /// `with_dimensions`: dimension columns are required.
    fn check_fields(&self, columns: &[Column], with_dimensions: bool) -> Result<usize, WriteError> {
        let Some(first) = columns.first() else {
            return Ok(0);
        };
        let n = first.cell_count();
        if let Some(c) = columns
            .iter()
            .find(|c| !self.fields.iter().any(|f| f.name == c.name))
        {
            return Err(WriteError::Input(format!(
                "no field `{}` in the schema",
                c.name
            )));
        }
        for (f, buf) in self.fields.iter().zip(&self.buffers) {
            match columns.iter().find(|c| c.name == f.name) {
                Some(c) if c.cell_count() != n => {
                    return Err(WriteError::Input(format!(
                        "field `{}`: {} cells, `{}` has {n}",
                        f.name,
                        c.cell_count(),
                        first.name
                    )))
                }
                Some(c) => {
                    buf.check(f, c, n)?;
                    if let Some(a) = self.schema.attributes.iter().find(|a| a.name == f.name) {
                        order::check_order(a, c)?;
                    }
                }
                None if f.nullable || n == 0 || (f.is_dimension && !with_dimensions) => {}
                None => return Err(WriteError::Input(format!("field `{}` is missing", f.name))),
            }
        }
        Ok(n)
    }

    /// Writes the cells held and commits the write; returns the names of
    /// its fragments: one, several when the budget cut the cells, none
    /// when no cell was written.
    pub fn finish(self) -> Result<Vec<String>, WriteError> {
        self.finish_observed(&mut || {})
    }

    /// As [`finish`](Self::finish), calling `written` once the fragments'
    /// files are written, before their commit (consolidation reports it;
    /// a crash test stops there).
    pub fn finish_observed(mut self, written: &mut dyn FnMut()) -> Result<Vec<String>, WriteError> {
        if self.cells > 0 {
            let part = self.write_part()?;
            self.parts.push(part);
        }
        written();
        let version = self.schema.version.number();
        commit(
            &self.array,
            std::mem::take(&mut self.parts),
            (self.timestamp, version),
        )
    }

    /// Writes the cells held as a fragment, uncommitted.
    fn write_part(&self) -> Result<FragmentFolder, WriteError> {
        // A dense write checks its box against the domain (and looks for
        // the first cell outside only when the box leaves it), unless a
        // current domain narrows it.
        let boxed = self.dense_box.is_some();
        if !boxed
            && (self.schema.array_type == ArrayType::Sparse || self.current_domain().is_some())
        {
            self.check_domain()?;
        }
        match self.schema.array_type {
            ArrayType::Dense => {
                let plan = self.dense_plan()?;
                // A dense fragment's dimensions have no files.
                let mut out = AppendedFragment::create(self, |f| !f.is_dimension)?;
                let cells: Vec<_> = self.buffers.iter().map(FieldBuffer::cells).collect();
                out.append_dense(self, &plan, &cells)?;
                let facts = Facts {
                    non_empty_domain: plan.non_empty_domain,
                    dense: true,
                    last_tile_cell_num: plan.cells_per_tile,
                };
                out.close(self, &dense_rtree(), facts)
            }
            ArrayType::Sparse => {
                let laid = self.sparse_layout()?;
                let mut out = AppendedFragment::create(self, |_| true)?;
                out.append(self, &laid.cells, &laid.tiles)?;
                let facts = Facts {
                    non_empty_domain: laid.rtree.root_mbr(),
                    dense: false,
                    last_tile_cell_num: laid.tiles.last().map_or(0, |r| r.len() as u64),
                };
                out.close(self, &laid.rtree, facts)
            }
        }
    }

    /// The fragment metadata file of fields written as `written` (files and
    /// tile metadata, in the order of `fields`), `cells_of` telling each
    /// tile's written cells.
    fn metadata_file(
        &self,
        written: &[(FieldFiles, Vec<TileStats>)],
        rtree: &RTree,
        facts: FragmentFacts,
        cells_of: &dyn Fn(usize) -> u64,
    ) -> Result<Vec<u8>, WriteError> {
        let slot = |i: usize| {
            let (files, stats) = &written[i];
            Slot {
                field: Some(&self.fields[i]),
                files: Some(files),
                stats,
                summary: field_summary(&self.fields[i], stats, cells_of),
            }
        };
        // Footer order: attributes, the legacy coordinates slot,
        // dimensions, then per-cell timestamps.
        let dims = self.schema.dimensions.len();
        let attrs_end = dims + self.schema.attributes.len();
        let mut slots: Vec<Slot<'_>> = (dims..attrs_end).map(slot).collect();
        let (_, coord) = metadata::coords_sizes(&self.schema);
        slots.push(Slot {
            field: None,
            files: None,
            stats: &[],
            summary: FieldSummary {
                min: vec![0; coord],
                max: vec![0; coord],
                sum: 0,
                null_count: 0,
            },
        });
        slots.extend((0..dims).map(slot));
        slots.extend((attrs_end..self.fields.len()).map(slot));
        fragment_metadata(&self.schema, self.key, rtree, &slots, facts)
    }

    /// A field's filter pipeline and file stem (`d0`, `a1`; per-cell
    /// timestamps and delete metadata, after the attributes, are filtered
    /// as coordinates are, into `t.tdb`, `dt.tdb` and `dci.tdb`).
    fn filters_and_stem(&self, i: usize) -> (&tessera_filters::FilterPipeline, String) {
        let dims = self.schema.dimensions.len();
        let attrs = self.schema.attributes.len();
        if i < dims {
            (&self.schema.dimensions[i].filters, format!("d{i}"))
        } else if i < dims + attrs {
            (
                &self.schema.attributes[i - dims].filters,
                format!("a{}", i - dims),
            )
        } else {
            // A special field's file is named for what it holds.
            let stem = match self.fields[i].name.as_str() {
                tessera_cells::DELETE_TIMESTAMPS => "dt",
                tessera_cells::DELETE_CONDITION_INDEX => "dci",
                _ => "t",
            };
            (&self.schema.coords_filters, stem.to_owned())
        }
    }

    /// The fragment's timestamp range: its own timestamp, or the range of
    /// the fragments it replaces.
    fn range(&self) -> (u64, u64) {
        match &self.consolidated {
            Some(c) => c.range,
            None => (self.timestamp, self.timestamp),
        }
    }

    /// Where a dense fragment's cells go: the box written (given, or the
    /// cells' bounding box, checked to be covered exactly once), its space
    /// tiles whole.
    fn dense_plan(&self) -> Result<DensePlan, WriteError> {
        let dims = self.schema.dimensions.len();
        let outside = || self.check_domain();
        match &self.dense_box {
            Some(bounds) => box_tiles(&self.schema, bounds),
            None => dense_tiles(&self.schema, &self.buffers[..dims], self.cells, &outside),
        }
    }

    /// Every coordinate inside its dimension's domain (and not NaN).
    fn check_domain(&self) -> Result<(), WriteError> {
        let current = self.current_domain();
        for (j, d) in self.schema.dimensions.iter().enumerate() {
            // The current domain where the schema sets one: libtiledb
            // refuses cells outside it.
            let (bounds, what) = match current {
                Some(rect) => {
                    let v = |b: &[u8]| Value::decode(d.datatype, b);
                    (Some((v(&rect[j].lo), v(&rect[j].hi))), "current domain")
                }
                None => (d.domain_values(), "domain"),
            };
            let Some((lo, hi)) = bounds else {
                continue;
            };
            let cs = d.coord_size() as usize;
            let outside = |i: &usize| {
                let v = Value::decode(d.datatype, self.buffers[j].value(*i, cs));
                v.is_nan() || v.cmp(&lo).is_lt() || v.cmp(&hi).is_gt()
            };
            if let Some(i) = (0..self.cells).into_par_iter().find_first(outside) {
                let v = Value::decode(d.datatype, self.buffers[j].value(i, cs));
                return Err(WriteError::Input(format!(
                    "cell {i}: {} = {} is outside the {what} [{}, {}]",
                    d.name,
                    v.display(),
                    lo.display(),
                    hi.display()
                )));
            }
        }
        Ok(())
    }

    /// The schema's current domain, when it sets one.
    fn current_domain(&self) -> Option<&[Range1D]> {
        let c = self.schema.current_domain.as_ref()?;
        c.ndrectangle
            .as_deref()
            .filter(|r| r.len() == self.schema.dimensions.len())
    }
}

/// `n` null cells of field `f` (its type's default fill values).
fn null_column(f: &FieldInfo, n: usize) -> Column {
    let fill = tessera_schema::default_fill_value(f.datatype, f.cell_val_num);
    let var = f.cell_val_num.is_var();
    Column {
        name: f.name.clone(),
        is_dimension: false,
        datatype: f.datatype,
        cell_val_num: f.cell_val_num,
        data: fill.repeat(n),
        offsets: var.then(|| (0..=n as u64).map(|i| i * fill.len() as u64).collect()),
        validity: Some(vec![0; n]),
    }
}
