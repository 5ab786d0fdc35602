//! A dense write of cells that come with their coordinates, row-major over
//! a box known up front (what `tessera read` of a dense array prints): the
//! coordinates are checked as they come, not held, and the attributes go
//! to a [`BoxWriter`] band by band, so the write holds about one band
//! whatever the box's size. Cells that leave the row-major walk stop it:
//! the caller drops the writer (nothing is left on disk) and writes the
//! cells the general way, which takes any order and names any gap.

use super::bands::BoxWriter;
use super::dense::IntCoords;
use super::WriteOptions;
use crate::WriteError;
use arrow_array::{Array, RecordBatch};
use rayon::prelude::*;
use tessera_schema::ArraySchema;
use tessera_storage::Location;

/// Memory for a write when [`WriteOptions::budget`] sets none: streamed
/// cells need no more than a few bands of tiles.
const DEFAULT_BUDGET: u64 = 256 << 20;

/// Whether a batch continued the row-major walk of the box.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// Its cells were the next ones: taken.
    Continued,
    /// Cell `n` of the write (counted from the first batch's first) is not
    /// the box's next cell: nothing of the batch was taken, and the writer
    /// can only be dropped.
    Strayed(u64),
}

/// Writes a dense fragment of a known box from Arrow batches of cells
/// with their coordinates, row-major: see the module.
///
/// ```
/// use arrow_array::{Int32Array, Int64Array, RecordBatch};
/// use std::sync::Arc;
/// use tessera_schema::json::schema_from_json;
/// use tessera_write::{create_array, RowMajorWriter, Walk, WriteOptions};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-rowmajor-{}", std::process::id()));
/// let doc = schema_from_json(&serde_json::json!({
///     "array_type": "dense",
///     "dimensions": [
///         {"name": "r", "type": "INT32", "domain": [1, 8], "tile_extent": 2},
///         {"name": "c", "type": "INT32", "domain": [1, 4], "tile_extent": 4},
///     ],
///     "attributes": [{"name": "v", "type": "INT64"}],
/// })).unwrap();
/// create_array(&dir, &doc, None, None).unwrap();
/// // Rows 2 to 3, every column: 8 cells in two batches.
/// let batch = |cells: &[(i32, i32)]| {
///     let r = Int32Array::from_iter_values(cells.iter().map(|c| c.0));
///     let c = Int32Array::from_iter_values(cells.iter().map(|c| c.1));
///     let v = Int64Array::from_iter_values(cells.iter().map(|c| (10 * c.0 + c.1) as i64));
///     RecordBatch::try_from_iter([("r", Arc::new(r) as _), ("c", Arc::new(c) as _), ("v", Arc::new(v) as _)]).unwrap()
/// };
/// let mut w = RowMajorWriter::try_new(&dir, WriteOptions::default(), &[(2, 3), (1, 4)]).unwrap();
/// assert_eq!(w.write(&batch(&[(2, 1), (2, 2), (2, 3)])).unwrap(), Walk::Continued);
/// // A cell out of turn: nothing taken.
/// assert_eq!(w.write(&batch(&[(2, 4), (3, 2)])).unwrap(), Walk::Strayed(4));
/// assert_eq!(w.write(&batch(&[(2, 4), (3, 1), (3, 2), (3, 3), (3, 4)])).unwrap(), Walk::Continued);
/// assert_eq!(w.finish().unwrap().len(), 1);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct RowMajorWriter {
    out: BoxWriter,
    /// The box's first coordinate and length per dimension.
    lo: Vec<i128>,
    lens: Vec<u64>,
    /// The dimensions' names, in the schema's order.
    dims: Vec<String>,
    /// Cells taken so far.
    taken: u64,
    /// The next band to write, and the attributes' cells taken for it.
    band: usize,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
}

impl RowMajorWriter {
    /// A writer of a new fragment of the dense array at `array` holding
    /// the box `bounds` (first and last coordinate per dimension), in the
    /// bands [`BoxWriter::try_new`] cuts for `options` (its budget 256 MiB
    /// when it sets none). Refused where the
    /// bands are not consecutive row-major cells (a col-major tile order
    /// over a box more than one coordinate wide).
    pub fn try_new(
        array: impl Into<Location>,
        options: WriteOptions,
        bounds: &[(i128, i128)],
    ) -> Result<RowMajorWriter, WriteError> {
        // Bands of a third of the budget, and the cells of about two
        // bands held at once (those taken, and the band put together).
        let options = WriteOptions {
            budget: Some(options.budget.unwrap_or(DEFAULT_BUDGET)),
            ..options
        };
        let out = BoxWriter::try_new(array, options, bounds)?;
        if (0..out.bands().len()).any(|i| out.band_rows(i).is_none()) {
            return Err(WriteError::Input(
                "the box's bands are not consecutive row-major cells (its tile order is col-major)"
                    .into(),
            ));
        }
        let dims = out
            .schema()
            .dimensions
            .iter()
            .map(|d| d.name.clone())
            .collect();
        Ok(RowMajorWriter {
            lo: bounds.iter().map(|b| b.0).collect(),
            lens: bounds.iter().map(|b| (b.1 - b.0 + 1) as u64).collect(),
            dims,
            out,
            taken: 0,
            band: 0,
            pending: Vec::new(),
            pending_rows: 0,
        })
    }

    /// Takes the next cells: `batch` holds every dimension and the
    /// attributes by name (a nullable one left out is null), as
    /// [`columns_from_batch`](crate::arrow::columns_from_batch) takes them.
    /// Writes each band once its cells are all taken.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<Walk, WriteError> {
        if let Some(k) = self.stray(batch) {
            return Ok(Walk::Strayed(self.taken + k as u64));
        }
        let attributes: Vec<usize> = (0..batch.num_columns())
            .filter(|&c| {
                let name = batch.schema_ref().field(c).name().clone();
                !self.dims.contains(&name)
            })
            .collect();
        let attrs = batch
            .project(&attributes)
            .map_err(|e| WriteError::Input(e.to_string()))?;
        self.taken += batch.num_rows() as u64;
        self.pending_rows += attrs.num_rows();
        self.pending.push(attrs);
        self.write_full_bands().map(|()| Walk::Continued)
    }

    /// Writes the last band and commits the fragment; returns its name.
    /// An error if the cells taken stop short of the box's end.
    pub fn finish(mut self) -> Result<Vec<String>, WriteError> {
        let total = self.out.cells();
        if self.taken != total {
            let at = unravel(self.taken, &self.lens);
            let cell: Vec<String> = self
                .dims
                .iter()
                .zip(at.iter().zip(&self.lo))
                .map(|(name, (i, lo))| format!("{name} = {}", lo + *i as i128))
                .collect();
            return Err(WriteError::Input(format!(
                "no cell at {}: the cells end after {} of the box's {total}",
                cell.join(", "),
                self.taken
            )));
        }
        self.write_full_bands()?;
        self.out.finish()
    }

    /// Cells in the box.
    pub fn cells(&self) -> u64 {
        self.out.cells()
    }

    /// Cells taken so far (each batch [`write`](Self::write) continued with).
    pub fn cells_taken(&self) -> u64 {
        self.taken
    }

    /// Cells written out in whole bands: the writer holds no array of the
    /// batches that ended at or before this cell.
    pub fn cells_written(&self) -> u64 {
        self.taken - self.pending_rows as u64
    }

    /// The coordinates of cell `row` of `batch` (a column per dimension of
    /// the dense `schema`, by name), or `None` where one is missing, null
    /// or not of its dimension's type: where a caller finds the corners of
    /// the box its cells cover.
    pub fn cell_coordinates(
        schema: &ArraySchema,
        batch: &RecordBatch,
        row: usize,
    ) -> Option<Vec<i128>> {
        schema
            .dimensions
            .iter()
            .map(|d| {
                let column = batch.column_by_name(&d.name)?;
                if row >= column.len() || column.is_null(row) {
                    return None;
                }
                let ints = IntCoords::of(d).ok()?;
                let values = crate::arrow::primitive_values(column, d.datatype).ok()?;
                let w = ints.width;
                Some(ints.read(&values[row * w..(row + 1) * w]))
            })
            .collect()
    }

    /// Writes every band whose cells are all taken.
    fn write_full_bands(&mut self) -> Result<(), WriteError> {
        while let Some(rows) = self.out.band_rows(self.band) {
            if self.pending_rows < rows.len() {
                break;
            }
            let band = self.take_rows(rows.len());
            self.out.write_band_batches(&band)?;
            self.band += 1;
        }
        Ok(())
    }

    /// The first `n` pending cells, in order: whole batches and slices.
    fn take_rows(&mut self, n: usize) -> Vec<RecordBatch> {
        let mut parts = Vec::new();
        let mut got = 0;
        while got < n {
            let first = self.pending.remove(0);
            let want = n - got;
            if first.num_rows() > want {
                self.pending
                    .insert(0, first.slice(want, first.num_rows() - want));
                parts.push(first.slice(0, want));
                got = n;
            } else {
                got += first.num_rows();
                parts.push(first);
            }
        }
        self.pending_rows -= n;
        parts
    }

    /// The first cell of `batch` (its row) off the box's row-major walk
    /// from the cells taken on: a coordinate not the next, a null or
    /// missing one, or a cell past the box.
    fn stray(&self, batch: &RecordBatch) -> Option<usize> {
        let n = batch.num_rows();
        let inside = ((self.out.cells() - self.taken) as usize).min(n);
        let mut coords = Vec::with_capacity(self.dims.len());
        for d in &self.out.schema().dimensions {
            let column = batch.column_by_name(&d.name);
            let Some(column) = column.filter(|c| c.null_count() == 0) else {
                return Some(0);
            };
            let ints = IntCoords::of(d).ok();
            let values = crate::arrow::primitive_values(column, d.datatype).ok();
            let (Some(values), Some(ints)) = (values, ints) else {
                return Some(0);
            };
            coords.push((values, ints));
        }
        const CHUNK: usize = 1 << 16;
        let walk = Walker {
            coords: &coords,
            lo: &self.lo,
            lens: &self.lens,
        };
        let off = (0..inside.div_ceil(CHUNK))
            .into_par_iter()
            .find_map_first(|c| {
                let rows = c * CHUNK..((c + 1) * CHUNK).min(inside);
                walk.first_off(self.taken, rows)
            });
        // Cells past the box's last stray too.
        off.or((inside < n).then_some(inside))
    }
}

/// Checks cells against the box's row-major walk: each dimension's
/// coordinates (values, and how they are read) against the box's first
/// coordinate and lengths.
struct Walker<'a> {
    coords: &'a [(arrow_buffer::Buffer, IntCoords)],
    lo: &'a [i128],
    lens: &'a [u64],
}

impl Walker<'_> {
    /// The first of `rows` (cells `taken + row` of the walk) off it.
    /// Row by row of the box: along a row the fastest coordinate counts up
    /// and the others stay; each dimension is one tight loop.
    fn first_off(&self, taken: u64, rows: std::ops::Range<usize>) -> Option<usize> {
        let last = self.lens.len() - 1;
        let mut at = unravel(taken + rows.start as u64, self.lens);
        let mut i = rows.start;
        while i < rows.end {
            let seg = (rows.end - i).min((self.lens[last] - at[last]) as usize);
            let off = (0..=last)
                .filter_map(|d| {
                    let (v, ints) = &self.coords[d];
                    let w = ints.width;
                    let first = self.lo[d] + at[d] as i128;
                    let step = u64::from(d == last);
                    first_unlike(&v[i * w..(i + seg) * w], w, first as u64, step)
                })
                .min();
            if let Some(k) = off {
                return Some(i + k);
            }
            i += seg;
            at[last] += seg as u64 - 1;
            step(&mut at, self.lens);
        }
        None
    }
}

/// The first of the `w`-byte little-endian integers in `bytes` that is not
/// `first + step * k` (k counting from 0), compared in the width's
/// wrapping arithmetic: the same as comparing the values, since both sides
/// are values of the type. Blocks without a difference cost one branch.
fn first_unlike(bytes: &[u8], w: usize, first: u64, step: u64) -> Option<usize> {
    match w {
        8 => first_unlike_of::<8>(bytes, first, step),
        4 => first_unlike_of::<4>(bytes, first, step),
        2 => first_unlike_of::<2>(bytes, first, step),
        _ => first_unlike_of::<1>(bytes, first, step),
    }
}

fn first_unlike_of<const W: usize>(bytes: &[u8], first: u64, step: u64) -> Option<usize> {
    const BLOCK: usize = 512;
    let mask = u64::MAX >> (64 - 8 * W);
    let unlike = |k: usize, c: &[u8]| -> u64 {
        let mut x = [0u8; 8];
        x[..W].copy_from_slice(c);
        let want = first.wrapping_add(step.wrapping_mul(k as u64));
        (u64::from_le_bytes(x) ^ want) & mask
    };
    for (b, block) in bytes.chunks(BLOCK * W).enumerate() {
        let base = b * BLOCK;
        let any = block
            .chunks_exact(W)
            .enumerate()
            .fold(0, |acc, (k, c)| acc | unlike(base + k, c));
        if any != 0 {
            return block
                .chunks_exact(W)
                .enumerate()
                .position(|(k, c)| unlike(base + k, c) != 0)
                .map(|k| base + k);
        }
    }
    None
}

/// Cell `n` of a box of `lens`, row-major, as offsets per dimension.
fn unravel(n: u64, lens: &[u64]) -> Vec<u64> {
    let row_major: Vec<usize> = (0..lens.len()).collect();
    super::dense::unravel(n, lens, &row_major)
}

/// The next cell after `at`, row-major.
#[inline]
fn step(at: &mut [u64], lens: &[u64]) {
    for j in (0..at.len()).rev() {
        at[j] += 1;
        if at[j] < lens[j] {
            return;
        }
        at[j] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::first_unlike;

    #[test]
    fn finds_the_first_coordinate_off_the_walk_at_every_width() {
        for w in [1usize, 2, 4, 8] {
            let mask = u64::MAX >> (64 - 8 * w);
            // Signed values around zero, counting up (step 1) and staying (step 0).
            for (first, step) in [(-3i64 as u64, 1u64), (5, 0), (-100i64 as u64, 0)] {
                let want = |k: usize| first.wrapping_add(step * k as u64) & mask;
                let n = 1500;
                let encode = |vals: &[u64]| -> Vec<u8> {
                    vals.iter()
                        .flat_map(|v| v.to_le_bytes()[..w].to_vec())
                        .collect()
                };
                let mut vals: Vec<u64> = (0..n).map(want).collect();
                assert_eq!(first_unlike(&encode(&vals), w, first, step), None);
                for bad in [0, 1, 511, 512, 1024, n - 1] {
                    let keep = vals[bad];
                    vals[bad] = (keep + 1) & mask;
                    assert_eq!(
                        first_unlike(&encode(&vals), w, first, step),
                        Some(bad),
                        "w {w} at {bad}"
                    );
                    vals[bad] = keep;
                }
            }
        }
    }
}
