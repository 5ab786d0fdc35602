//! A dense fragment written band by band: the box given up front, then
//! its cells in slabs of whole space tiles along the outermost dimension
//! of the tile order ([`box_bands`](super::dense::box_bands)), each slab's
//! cells row-major as a read of it returns them. Each band's tiles follow
//! the previous band's in the fragment's tile order, so they are filtered
//! and appended to the files at once: only one band's cells are held, with
//! the tile metadata of the tiles written. A dense consolidation writes
//! its box so, and so may any dense write whose cells can be taken a band
//! at a time.

use super::appended::{AppendedFragment, Facts};
use super::buffer::FieldCells;
use super::{FieldBuffer, FragmentWriter, WriteOptions};
use crate::WriteError;
use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use std::ops::Range;
use tessera_cells::Column;
use tessera_schema::{ArraySchema, CellValNum};
use tessera_storage::Location;
use tessera_tile::ArrayType;

/// Memory for a box write when [`WriteOptions::budget`] sets none.
const DEFAULT_BUDGET: u64 = 1 << 30;

/// Writes one dense fragment of a known box, band after band: see the
/// module. Memory: one band's cells (about a third of the budget) and
/// the tiles being filtered.
///
/// ```
/// use tessera_cells::Column;
/// use tessera_schema::json::schema_from_json;
/// use tessera_write::{create_array, BoxWriter, WriteOptions};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-bands-{}", std::process::id()));
/// let doc = schema_from_json(&serde_json::json!({
///     "array_type": "dense",
///     "dimensions": [
///         {"name": "r", "type": "INT32", "domain": [1, 8], "tile_extent": 2},
///         {"name": "c", "type": "INT32", "domain": [1, 4], "tile_extent": 4},
///     ],
///     "attributes": [{"name": "v", "type": "INT64"}],
/// })).unwrap();
/// create_array(&dir, &doc, None, None).unwrap();
/// // All 32 cells, values 0 to 31 row-major, in bands of at most 8 cells.
/// let options = WriteOptions { budget: Some(3 * 8 * 8), ..Default::default() };
/// let mut w = BoxWriter::try_new(&dir, options, &[(1, 8), (1, 4)]).unwrap();
/// assert_eq!(w.bands().len(), 4);
/// for i in 0..w.bands().len() {
///     let rows = w.band_rows(i).unwrap();
///     let v = Column {
///         name: "v".into(), is_dimension: false, datatype: tessera_tile::Datatype::Int64,
///         cell_val_num: tessera_schema::CellValNum::Fixed(1),
///         data: rows.flat_map(|x| (x as i64).to_le_bytes()).collect(),
///         offsets: None, validity: None,
///     };
///     w.write_band(vec![v]).unwrap();
/// }
/// assert_eq!(w.finish().unwrap().len(), 1);
/// // A box one band holds: that band is all of its cells.
/// let w = BoxWriter::try_new(&dir, WriteOptions::default(), &[(1, 2), (1, 4)]).unwrap();
/// assert_eq!((w.bands().len(), w.band_rows(0)), (1, Some(0..8)));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct BoxWriter {
    w: FragmentWriter,
    out: AppendedFragment,
    /// The box, and the bands it is written in, in order.
    bounds: Vec<(i128, i128)>,
    bands: Vec<Vec<(i128, i128)>>,
    /// Bands written so far.
    written_bands: usize,
    /// Cells in a space tile.
    cells_per_tile: u64,
    /// Per field, the last cell written of an attribute with an order
    /// (the next band must keep it).
    ordered_last: Vec<Option<tessera_schema::Value>>,
}

impl BoxWriter {
    /// A writer of a new fragment of the dense array at `array` holding
    /// the box `bounds` (per dimension in the schema's order, first and
    /// last coordinate, inside the domain), in bands of a third of
    /// `options.budget` (default 1 GiB) or one row of tiles where that is
    /// more. Its folder and files are created now, invisible until
    /// committed.
    pub fn try_new(
        array: impl Into<Location>,
        options: WriteOptions,
        bounds: &[(i128, i128)],
    ) -> Result<BoxWriter, WriteError> {
        let mut w = FragmentWriter::try_new(array, options)?;
        // The budget sizes the bands; a band is never refused for it (one
        // row of tiles is the least a band holds).
        w.budget = None;
        let budget = options.budget.unwrap_or(DEFAULT_BUDGET);
        let band_cells = (budget / 3) / cell_bytes(&w.schema);
        BoxWriter::new(w, bounds, band_cells)
    }

    /// The fragment of the box `bounds` (checked as
    /// [`write_box`](FragmentWriter::write_box) checks it) that `w`
    /// writes, in bands of at most `band_cells` cells (or one row of
    /// tiles).
    pub(crate) fn new(
        w: FragmentWriter,
        bounds: &[(i128, i128)],
        band_cells: u64,
    ) -> Result<BoxWriter, WriteError> {
        if w.schema.array_type != ArrayType::Dense {
            return Err(WriteError::Input(
                "a box written in bands is written to dense arrays only".into(),
            ));
        }
        let bands = super::dense::box_bands(&w.schema, bounds, band_cells)?;
        w.check_box_in_current_domain(bounds)?;
        // A dense fragment's dimensions have no files.
        let out = AppendedFragment::create(&w, |f| !f.is_dimension)?;
        Ok(BoxWriter {
            w,
            out,
            bounds: bounds.to_vec(),
            bands,
            written_bands: 0,
            ordered_last: Vec::new(),
            cells_per_tile: 0,
        })
    }

    /// The schema the fragment is written with (the array's latest).
    pub fn schema(&self) -> &std::sync::Arc<ArraySchema> {
        &self.w.schema
    }

    /// The bands to write, in order: each one's box.
    pub fn bands(&self) -> &[Vec<(i128, i128)>] {
        &self.bands
    }

    /// Cells in the whole box.
    pub fn cells(&self) -> u64 {
        box_len(&self.bounds, 0..self.bounds.len())
    }

    /// Where band `i`'s cells lie among the whole box's, row-major: a
    /// range when they are consecutive (the bands cut the first
    /// dimension, or every dimension before the one they cut is one
    /// coordinate wide), `None` otherwise or past the last band.
    pub fn band_rows(&self, i: usize) -> Option<Range<usize>> {
        let band = self.bands.get(i)?;
        // One band holding the whole box: all of its cells.
        let Some(cut) = (0..band.len()).find(|&j| band[j] != self.bounds[j]) else {
            return Some(0..self.cells() as usize);
        };
        if box_len(&self.bounds, 0..cut) != 1 {
            return None;
        }
        let slice = box_len(&self.bounds, cut + 1..band.len());
        let start = (band[cut].0 - self.bounds[cut].0) as u64 * slice;
        let len = box_len(band, 0..band.len());
        Some(start as usize..(start + len) as usize)
    }

    /// Writes the next band: `columns` (one per attribute, by name; a
    /// nullable one left out is null) hold its cells row-major.
    pub fn write_band(&mut self, columns: Vec<Column>) -> Result<(), WriteError> {
        let Some(band) = self.bands.get(self.written_bands).cloned() else {
            return Err(WriteError::Input(format!(
                "the {} bands of the box are written already",
                self.bands.len()
            )));
        };
        self.w.write_box(&band, columns)?;
        let plan = self.w.dense_plan()?;
        let cells: Vec<_> = self.w.buffers.iter().map(FieldBuffer::cells).collect();
        check_band_order(&self.w, &cells, self.w.cells, &mut self.ordered_last)?;
        self.out.append_dense(&self.w, &plan, &cells)?;
        self.cells_per_tile = plan.cells_per_tile;
        // The band is out: the writer takes the next one afresh.
        self.w.written += self.w.cells;
        self.w.cells = 0;
        self.w.dense_box = None;
        self.w.buffers = self.w.fields.iter().map(FieldBuffer::new).collect();
        self.written_bands += 1;
        Ok(())
    }

    /// Writes the next band from an Arrow record batch of its cells,
    /// row-major, attributes by name (as
    /// [`columns_from_batch`](crate::arrow::columns_from_batch) takes
    /// them; a nullable one left out is null). Numbers without nulls, of
    /// attributes neither nullable nor var-sized, are read where they lie
    /// (from Python, a numpy array's own memory); other columns are
    /// converted first.
    pub fn write_band_batch(&mut self, batch: &RecordBatch) -> Result<(), WriteError> {
        self.write_band_batches(std::slice::from_ref(batch))
    }

    /// [`write_band_batch`](Self::write_band_batch) of a band whose cells
    /// come in several batches, in order (as an Arrow file's batches hold
    /// them). Where every attribute is numbers read where they lie and the
    /// tiles take their cells in runs of rows, each batch is read where it
    /// lies; otherwise the batches are first copied into one.
    pub fn write_band_batches(&mut self, parts: &[RecordBatch]) -> Result<(), WriteError> {
        let Some(band) = self.bands.get(self.written_bands).cloned() else {
            return Err(WriteError::Input(format!(
                "the {} bands of the box are written already",
                self.bands.len()
            )));
        };
        let n: usize = parts.iter().map(RecordBatch::num_rows).sum();
        let band_cells = box_len(&band, 0..band.len());
        if band_cells != n as u64 {
            return Err(WriteError::Input(format!(
                "the band {band:?} holds {band_cells} cells, the batch {n}"
            )));
        }
        let plan = super::dense::box_tiles(&self.w.schema, &band)?;
        let batch = match parts {
            [one] => one,
            [first, ..] => {
                // Ordered attributes are checked cell by cell: from one batch.
                let ordered = self.w.schema.attributes.iter().any(|a| a.order != 0);
                if let Some(lent) = self.lend_parts(parts, &plan).filter(|_| !ordered) {
                    let pieces: Vec<Vec<&[u8]>> = lent
                        .iter()
                        .map(|l| l.iter().map(Buffer::as_slice).collect())
                        .collect();
                    let cells: Vec<FieldCells<'_>> = pieces
                        .iter()
                        .map(|p| FieldCells {
                            pieces: p,
                            ..FieldCells::default()
                        })
                        .collect();
                    return self.append_band(&plan, &cells, n);
                }
                let joined = arrow_select::concat::concat_batches(first.schema_ref(), parts)
                    .map_err(|e| WriteError::Input(e.to_string()))?;
                return self.write_band_batches(&[joined]);
            }
            // A band holds cells (checked above), so some batch does.
            [] => unreachable!("a band of {band_cells} cells from no batch"),
        };
        let fields = &self.w.fields;
        let mut lent: Vec<Option<Buffer>> = vec![None; fields.len()];
        let mut converted = Vec::new();
        for (c, column) in batch.schema().fields().iter().enumerate() {
            let Some(i) = fields.iter().position(|f| f.name == *column.name()) else {
                return Err(WriteError::Input(format!(
                    "no field `{}` in the schema",
                    column.name()
                )));
            };
            let f = &fields[i];
            if f.is_dimension {
                return Err(WriteError::Input(format!(
                    "column `{}`: the box gives the coordinates, dimensions take no column",
                    f.name
                )));
            }
            let array = batch.column(c);
            let plain = !f.nullable && f.cell_val_num == CellValNum::Fixed(1);
            match crate::arrow::primitive_values(array, f.datatype) {
                Ok(values) if plain && array.null_count() == 0 => lent[i] = Some(values),
                _ => converted.push(c),
            }
        }
        let batch = batch
            .project(&converted)
            .map_err(|e| WriteError::Input(e.to_string()))?;
        let columns = crate::arrow::columns_from_batch(&batch, &self.w.schema)?;
        let mut held: Vec<FieldBuffer> = fields.iter().map(FieldBuffer::new).collect();
        for (i, f) in fields.iter().enumerate() {
            if f.is_dimension || lent[i].is_some() {
                continue;
            }
            match columns.iter().position(|c| c.name == f.name) {
                Some(c) => {
                    held[i].check(f, &columns[c], n)?;
                    held[i].append(&columns[c], n);
                }
                None if f.nullable => held[i].append(&super::null_column(f, n), n),
                None => return Err(WriteError::Input(format!("field `{}` is missing", f.name))),
            }
        }
        let cells: Vec<FieldCells<'_>> = held
            .iter()
            .zip(&lent)
            .map(|(h, l)| match l {
                Some(values) => FieldCells {
                    data: values.as_slice(),
                    ..FieldCells::default()
                },
                None => h.cells(),
            })
            .collect();
        self.append_band(&plan, &cells, n)
    }

    /// Each field's values in each of `parts`, read where they lie, when
    /// every field with files is numbers without nulls in every part, each
    /// part names nothing else, and `plan`'s tiles take their cells in
    /// runs (what reading from pieces needs); `None` otherwise. Dimensions
    /// get no pieces: the box gives their coordinates.
    fn lend_parts(
        &self,
        parts: &[RecordBatch],
        plan: &super::dense::DensePlan,
    ) -> Option<Vec<Vec<Buffer>>> {
        let fields = &self.w.fields;
        let mut runs = Vec::new();
        if !(0..plan.tile_num).all(|t| plan.tile_runs(t, &mut runs)) {
            return None;
        }
        let named = |p: &RecordBatch| {
            p.schema().fields().iter().all(|c| {
                fields
                    .iter()
                    .any(|f| !f.is_dimension && f.name == *c.name())
            })
        };
        if !parts.iter().all(named) {
            return None;
        }
        fields
            .iter()
            .map(|f| {
                if f.is_dimension {
                    return Some(Vec::new());
                }
                if f.nullable || f.cell_val_num != CellValNum::Fixed(1) {
                    return None;
                }
                parts
                    .iter()
                    .map(|p| {
                        let array = p.column_by_name(&f.name)?;
                        let values = crate::arrow::primitive_values(array, f.datatype).ok();
                        values.filter(|_| array.null_count() == 0)
                    })
                    .collect()
            })
            .collect()
    }

    /// Lays out, filters and appends the band's tiles from `cells` (one
    /// per field), `n` cells.
    fn append_band(
        &mut self,
        plan: &super::dense::DensePlan,
        cells: &[FieldCells<'_>],
        n: usize,
    ) -> Result<(), WriteError> {
        check_band_order(&self.w, cells, n, &mut self.ordered_last)?;
        self.out.append_dense(&self.w, plan, cells)?;
        self.cells_per_tile = plan.cells_per_tile;
        self.w.written += n;
        self.written_bands += 1;
        Ok(())
    }

    /// Writes the fragment metadata once every band is in, then commits
    /// the fragment; returns its name.
    pub fn finish(self) -> Result<Vec<String>, WriteError> {
        self.finish_observed(&mut || {})
    }

    /// As [`finish`](Self::finish), calling `written` once the files are
    /// written, before the commit.
    pub(crate) fn finish_observed(
        self,
        written: &mut dyn FnMut(),
    ) -> Result<Vec<String>, WriteError> {
        if self.written_bands != self.bands.len() {
            return Err(WriteError::Input(format!(
                "{} of the box's {} bands written: a dense fragment holds its whole box",
                self.written_bands,
                self.bands.len()
            )));
        }
        let schema = &self.w.schema;
        let facts = Facts {
            non_empty_domain: super::dense::box_axes(schema, &self.bounds)
                .map(|axes| super::dense::box_domain(schema, &axes))?,
            dense: true,
            last_tile_cell_num: self.cells_per_tile,
        };
        self.out
            .finish(&self.w, &super::dense_rtree(), facts, written)
    }
}

/// Cells of the box `bounds` along the dimensions `dims` (checked boxes:
/// each bound pair in order).
fn box_len(bounds: &[(i128, i128)], dims: Range<usize>) -> u64 {
    bounds[dims]
        .iter()
        .map(|&(lo, hi)| (hi - lo + 1) as u64)
        .product()
}

/// Bytes a dense cell takes, held once: its attributes' fixed parts (a
/// var-sized one counted as its offset and 8 bytes of values), validity
/// bytes. A band of cells is read, laid out into tiles and filtered, so
/// a third of the budget goes to each.
pub(crate) fn cell_bytes(schema: &ArraySchema) -> u64 {
    let bytes: u64 = schema
        .attributes
        .iter()
        .map(|a| {
            let fixed = match a.cell_val_num {
                tessera_schema::CellValNum::Fixed(n) => a.datatype.size() * n as u64,
                _ => 16,
            };
            fixed + a.nullable as u64
        })
        .sum();
    bytes.max(1)
}

/// Checks that a band's `n` cells keep the order of each attribute that
/// has one, following the band before (`last`, updated).
fn check_band_order(
    w: &FragmentWriter,
    cells: &[FieldCells<'_>],
    n: usize,
    last: &mut Vec<Option<tessera_schema::Value>>,
) -> Result<(), WriteError> {
    last.resize(w.fields.len(), None);
    for (i, f) in w.fields.iter().enumerate() {
        let Some(a) = w
            .schema
            .attributes
            .iter()
            .find(|a| a.name == f.name && a.order != 0)
        else {
            continue;
        };
        let size = f.cell_size() as usize;
        last[i] = super::order::check_cells(a, n, |j| cells[i].value(j, size), last[i].take())?;
    }
    Ok(())
}
