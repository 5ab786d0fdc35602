//! Where a dense fragment's cells go. A dense write covers a box of the
//! domain exactly once (the fragment's non-empty domain); libtiledb writes
//! every space tile that box meets, whole: tiles in the schema's tile
//! order, each tile's cells in its cell order, the cells outside the box
//! (or past the domain's end) holding the attribute's fill value.
//!
//! The box is the cells' bounding box; the cells are matched to its
//! positions by sorting their row-major positions, which finds the first
//! repeated cell and the first gap in one pass, in memory proportional to
//! the cells given (never to the box a stray coordinate would make).

use super::buffer::FieldBuffer;
use super::placement::{Run, FILL};
use crate::WriteError;
use rayon::prelude::*;
use tessera_schema::{ArraySchema, Dimension, Range1D};
use tessera_tile::datatype::Physical;
use tessera_tile::Layout;

/// The most cells a space tile may hold: each of its positions takes a
/// place in memory while the tile is laid out.
const MAX_TILE_CELLS: u64 = 1 << 32;

/// Where a dense fragment's cells go: the space tiles the box meets, in
/// the schema's tile order, each laid out when it is written (never the
/// whole fragment's placement at once).
pub(crate) struct DensePlan {
    axes: Vec<Axis>,
    /// Tiles the box meets along each dimension.
    tile_counts: Vec<u64>,
    /// Dimensions slowest first, for tiles and for cells in a tile.
    tile_order: Vec<usize>,
    cell_order: Vec<usize>,
    /// For each place in the box, row-major, the written cell there;
    /// `None` when the cells came in that order (then place = cell).
    slots: Option<Vec<usize>>,
    /// Space tiles the box meets.
    pub tile_num: usize,
    /// Cells in a space tile.
    pub cells_per_tile: u64,
    /// The box written.
    pub non_empty_domain: Vec<Range1D>,
}

impl DensePlan {
    /// Fills `out` (its memory reused) with, for each position of tile
    /// `t` (cells in the cell order), its row-major place in the box, or
    /// [`FILL`] outside it.
    pub fn tile_places(&self, t: usize, out: &mut Vec<usize>) {
        out.clear();
        out.resize(self.cells_per_tile as usize, 0);
        let tile = unravel(t as u64, &self.tile_counts, &self.tile_order);
        fill_tile(&self.axes, &tile, &self.cell_order, out);
    }

    /// Fills `out` with the runs of tile `t`'s cells written, in the
    /// tile's cell order, when each run is consecutive in the cells given
    /// (the cells came row-major and the cell order is row-major: a run is
    /// a tile row clipped to the box); returns false, `out` empty, when
    /// they are not, and a place list is needed.
    pub fn tile_runs(&self, t: usize, out: &mut Vec<Run>) -> bool {
        out.clear();
        let tile = unravel(t as u64, &self.tile_counts, &self.tile_order);
        self.slots.is_none() && runs_of_tile(&self.axes, &tile, &self.cell_order, out)
    }

    /// Fills `out` (its memory reused) with, for each position of a tile
    /// whose places are `places`, the written cell there (its index in the
    /// cells given), or [`FILL`]; leaves it empty when the cells came in
    /// place (each place's cell is the place: no copy of the list).
    pub fn tile_cells_into(&self, places: &[usize], out: &mut Vec<usize>) {
        out.clear();
        if let Some(slots) = &self.slots {
            out.extend(
                places
                    .iter()
                    .map(|&k| if k == FILL { FILL } else { slots[k] }),
            );
        }
    }
}

/// One dimension's tiling, as integers.
pub(crate) struct Axis {
    /// Where the domain (and its first tile) starts.
    start: i128,
    extent: i128,
    /// The domain's first and last coordinate.
    domain: (i128, i128),
    /// The box written along this dimension.
    lo: i128,
    hi: i128,
}

impl Axis {
    /// Dimension `d`'s tiling, for a box from `lo` to `hi`.
    fn of(d: &Dimension, ints: IntCoords, lo: i128, hi: i128) -> Result<Axis, WriteError> {
        let (start, end) = match &d.domain {
            Some((a, b)) => (ints.read(a), ints.read(b)),
            None => {
                return Err(WriteError::Input(format!(
                    "dimension `{}` has no domain",
                    d.name
                )))
            }
        };
        let extent = match &d.tile_extent {
            Some(e) => ints.read(e).max(1),
            None => end - start + 1,
        };
        Ok(Axis {
            start,
            extent,
            domain: (start, end),
            lo,
            hi,
        })
    }

    fn len(&self) -> u64 {
        (self.hi - self.lo + 1) as u64
    }

    /// The space tiles the box meets: first and count.
    fn tiles(&self) -> (i128, u64) {
        let first = (self.lo - self.start) / self.extent;
        let last = (self.hi - self.start) / self.extent;
        (first, (last - first + 1) as u64)
    }
}

/// How a dense dimension's coordinates (integers and datetimes only) are
/// read: little-endian, `width` bytes, signed or not.
#[derive(Clone, Copy)]
pub(crate) struct IntCoords {
    pub width: usize,
    signed: bool,
}

impl IntCoords {
    pub fn of(d: &Dimension) -> Result<IntCoords, WriteError> {
        let (width, signed) = match d.datatype.physical() {
            Physical::Int(w) => (w as usize, true),
            Physical::UInt(w) => (w as usize, false),
            _ => {
                return Err(WriteError::Input(format!(
                    "dimension `{}` of type {} cannot be dense",
                    d.name, d.datatype
                )))
            }
        };
        Ok(IntCoords { width, signed })
    }

    #[inline]
    pub fn read(self, b: &[u8]) -> i128 {
        // One load per width (a copy of a variable length is a memmove call).
        let v = match self.width {
            8 => u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            4 => u64::from(u32::from_le_bytes(b[..4].try_into().expect("4 bytes"))),
            2 => u64::from(u16::from_le_bytes(b[..2].try_into().expect("2 bytes"))),
            _ => u64::from(b[0]),
        };
        let shift = 64 - 8 * self.width as u32;
        match self.signed {
            true => (((v << shift) as i64) >> shift) as i128,
            false => v as i128,
        }
    }
}

/// `v` as the bytes of `d`'s type.
fn bytes_of(d: &Dimension, v: i128) -> Vec<u8> {
    (v as u64).to_le_bytes()[..d.datatype.size() as usize].to_vec()
}

/// Lays out the cells whose coordinates are `dims` (one buffer per
/// dimension, `cells` each): checks they cover a box exactly once and
/// places them in the box's space tiles.
/// `outside` reports the first cell outside the domain, should the box
/// leave it.
pub(crate) fn dense_tiles(
    schema: &ArraySchema,
    dims: &[FieldBuffer],
    cells: usize,
    outside: &dyn Fn() -> Result<(), WriteError>,
) -> Result<DensePlan, WriteError> {
    let ints = int_coords(schema)?;
    let coord = |j: usize, i: usize| ints[j].read(dims[j].value(i, ints[j].width));
    let mut axes = Vec::with_capacity(dims.len());
    for (j, d) in schema.dimensions.iter().enumerate() {
        let (lo, hi) = (0..cells)
            .into_par_iter()
            .map(|i| (coord(j, i), coord(j, i)))
            .reduce(
                || (i128::MAX, i128::MIN),
                |a, b| (a.0.min(b.0), a.1.max(b.1)),
            );
        let axis = Axis::of(d, ints[j], lo, hi)?;
        if lo < axis.domain.0 || hi > axis.domain.1 {
            outside()?;
        }
        axes.push(axis);
    }
    let slots = box_slots(schema, &axes, &coord, cells)?;
    tiles_of_box(schema, axes, slots)
}

/// Lays out a box of cells given row-major, without coordinates: `bounds`
/// (first and last coordinate per dimension) must lie in the domain.
pub(crate) fn box_tiles(
    schema: &ArraySchema,
    bounds: &[(i128, i128)],
) -> Result<DensePlan, WriteError> {
    tiles_of_box(schema, box_axes(schema, bounds)?, None)
}

/// The tiling of the box `bounds`, checked: one bound pair per dimension,
/// each inside the domain.
pub(crate) fn box_axes(
    schema: &ArraySchema,
    bounds: &[(i128, i128)],
) -> Result<Vec<Axis>, WriteError> {
    let ints = int_coords(schema)?;
    if bounds.len() != schema.dimensions.len() {
        return Err(WriteError::Input(format!(
            "a box of {} dimensions for an array of {}",
            bounds.len(),
            schema.dimensions.len()
        )));
    }
    let mut axes = Vec::with_capacity(bounds.len());
    for (j, d) in schema.dimensions.iter().enumerate() {
        let (lo, hi) = bounds[j];
        let axis = Axis::of(d, ints[j], lo, hi)?;
        if lo > hi || lo < axis.domain.0 || hi > axis.domain.1 {
            return Err(WriteError::Input(format!(
                "dimension `{}`: the box [{lo}, {hi}] is not inside the domain [{}, {}]",
                d.name, axis.domain.0, axis.domain.1
            )));
        }
        axes.push(axis);
    }
    Ok(axes)
}

/// The cells of the box `axes` spans (saturating: past the cap anyway).
pub(crate) fn box_cells(axes: &[Axis]) -> u64 {
    axes.iter()
        .try_fold(1u64, |n, a| n.checked_mul(a.len()))
        .unwrap_or(u64::MAX)
}

fn int_coords(schema: &ArraySchema) -> Result<Vec<IntCoords>, WriteError> {
    schema.dimensions.iter().map(IntCoords::of).collect()
}

/// The space tiles of the box `axes` spans (`slots`: where each place's
/// cell is, when not in place).
fn tiles_of_box(
    schema: &ArraySchema,
    axes: Vec<Axis>,
    slots: Option<Vec<usize>>,
) -> Result<DensePlan, WriteError> {
    let cells = box_cells(&axes);
    let order_of = |l: Layout| -> Vec<usize> {
        match l {
            Layout::ColMajor => (0..axes.len()).rev().collect(),
            _ => (0..axes.len()).collect(),
        }
    };
    let extents: Vec<u64> = axes.iter().map(|a| a.extent as u64).collect();
    let tile_counts: Vec<u64> = axes.iter().map(|a| a.tiles().1).collect();
    // Tile extents come from the schema: their product is checked before
    // a tile that size is allocated. The box's tiles are fewer than its
    // cells, which are held.
    let product = |v: &[u64]| v.iter().try_fold(1u64, |n, &x| n.checked_mul(x));
    let (cells_per_tile, tile_num) = match (product(&extents), product(&tile_counts)) {
        (Some(c), Some(t)) if c <= MAX_TILE_CELLS => (c, t as usize),
        _ => {
            return Err(WriteError::Input(format!(
                "the {cells} cells written meet space tiles (extents {extents:?}, {tile_counts:?} tiles) of more than {MAX_TILE_CELLS} cells each, which tessera does not hold at once"
            )))
        }
    };
    let non_empty_domain = box_domain(schema, &axes);
    Ok(DensePlan {
        tile_order: order_of(schema.tile_order),
        cell_order: order_of(schema.cell_order),
        axes,
        tile_counts,
        slots,
        tile_num,
        cells_per_tile,
        non_empty_domain,
    })
}

/// The box `axes` spans, as a non-empty domain.
pub(crate) fn box_domain(schema: &ArraySchema, axes: &[Axis]) -> Vec<Range1D> {
    axes.iter()
        .zip(&schema.dimensions)
        .map(|(a, d)| Range1D {
            lo: bytes_of(d, a.lo),
            hi: bytes_of(d, a.hi),
        })
        .collect()
}

/// The written cell at each position of the box (row-major), checked: no
/// position written twice, none left out; `None` when cell `i` is at
/// position `i`.
fn box_slots(
    schema: &ArraySchema,
    axes: &[Axis],
    coord: &(dyn Fn(usize, usize) -> i128 + Sync),
    cells: usize,
) -> Result<Option<Vec<usize>>, WriteError> {
    let row_major: Vec<usize> = (0..axes.len()).collect();
    let lens: Vec<u64> = axes.iter().map(|a| a.len()).collect();
    let box_cells = box_cells(axes);
    let key = |i: usize| -> u64 {
        let mut k = 0u64;
        for (j, a) in axes.iter().enumerate() {
            k = k * a.len() + (coord(j, i) - a.lo) as u64;
        }
        k
    };
    // Cells given row-major, as reads return them: no sort, no table.
    if box_cells == cells as u64 && (0..cells).into_par_iter().all(|i| key(i) == i as u64) {
        return Ok(None);
    }
    let mut keyed: Vec<(u64, usize)> = (0..cells).into_par_iter().map(|i| (key(i), i)).collect();
    keyed.par_sort_unstable();
    let name = |pos: &[i128]| -> String {
        schema
            .dimensions
            .iter()
            .zip(pos)
            .map(|(d, v)| format!("{} = {v}", d.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let at = |k: u64| -> Vec<i128> {
        let idx = unravel(k, &lens, &row_major);
        axes.iter()
            .zip(idx)
            .map(|(a, i)| a.lo + i as i128)
            .collect()
    };
    for (k, &(key, i)) in keyed.iter().enumerate() {
        if key == k as u64 {
            continue;
        }
        if k > 0 && keyed[k - 1].0 == key {
            return Err(WriteError::Input(format!(
                "cell {i}: the cell at {} is written twice (first as cell {}); a dense write covers a box exactly once",
                name(&at(key)),
                keyed[k - 1].1
            )));
        }
        return Err(gap(&name(&at(k as u64))));
    }
    if box_cells != cells as u64 {
        return Err(gap(&name(&at(cells as u64))));
    }
    Ok(Some(keyed.into_iter().map(|(_, i)| i).collect()))
}

fn gap(cell: &str) -> WriteError {
    WriteError::Input(format!(
        "no cell at {cell}: a dense write covers a box of cells exactly once (the box from the smallest to the largest coordinate of each dimension)"
    ))
}

/// The index `n` of a grid of `lens` walked with `order`'s first dimension
/// slowest, as one index per dimension.
pub(crate) fn unravel(mut n: u64, lens: &[u64], order: &[usize]) -> Vec<u64> {
    let mut idx = vec![0; lens.len()];
    for &j in order.iter().rev() {
        idx[j] = n % lens[j];
        n /= lens[j];
    }
    idx
}

/// The rows of space tile `tile` (its index among the box's tiles), cells
/// in `cell_order` (slowest first): each row runs along the fastest
/// dimension, its cells inside the box a stride apart in the box.
struct TileRows<'a> {
    axes: &'a [Axis],
    /// The tile's first coordinate per dimension.
    starts: Vec<i128>,
    /// Each dimension's row-major stride in the box.
    strides: Vec<u64>,
    inner: usize,
    outer: Vec<usize>,
}

impl<'a> TileRows<'a> {
    fn new(axes: &'a [Axis], tile: &[u64], cell_order: &[usize]) -> TileRows<'a> {
        let inner = *cell_order.last().expect("a dimension");
        TileRows {
            starts: axes
                .iter()
                .zip(tile)
                .map(|(a, &t)| a.start + (a.tiles().0 + t as i128) * a.extent)
                .collect(),
            strides: (0..axes.len())
                .map(|j| axes[j + 1..].iter().map(Axis::len).product())
                .collect(),
            outer: cell_order[..cell_order.len() - 1].to_vec(),
            axes,
            inner,
        }
    }

    /// Cells in a row.
    fn row_len(&self) -> usize {
        self.axes[self.inner].extent as usize
    }

    /// The stride, in the box, between a row's neighbouring cells.
    fn step(&self) -> usize {
        self.strides[self.inner] as usize
    }

    /// Calls `each(row, cells)` for each row in the cell order, `cells`
    /// being the row's cells inside the box as a run (`at` counted from
    /// the row's start; cells a [`step`](Self::step) apart), or `None`.
    fn for_each(&self, mut each: impl FnMut(usize, Option<Run>)) {
        let rows: usize = self
            .outer
            .iter()
            .map(|&j| self.axes[j].extent as usize)
            .product();
        let a = &self.axes[self.inner];
        let first = (a.lo - self.starts[self.inner]).max(0);
        let last = (a.hi - self.starts[self.inner]).min(self.row_len() as i128 - 1);
        let mut cell = vec![0i128; self.axes.len()];
        for row in 0..rows {
            // The row's place without the fastest dimension, or none outside.
            let mut base = Some(0u64);
            for &j in &self.outer {
                let v = self.starts[j] + cell[j];
                let a = &self.axes[j];
                base = base.filter(|_| v >= a.lo && v <= a.hi);
                base = base.map(|b| b + (v - a.lo) as u64 * self.strides[j]);
            }
            let run = base.filter(|_| first <= last).map(|b| {
                let offset = (self.starts[self.inner] + first - a.lo) as usize;
                Run {
                    at: first as usize,
                    place: b as usize + offset * self.step(),
                    len: (last - first + 1) as usize,
                }
            });
            each(row, run);
            for &j in self.outer.iter().rev() {
                cell[j] += 1;
                if cell[j] < self.axes[j].extent {
                    break;
                }
                cell[j] = 0;
            }
        }
    }
}

/// Fills `out` with the runs of space tile `tile`'s cells inside the box
/// (cells in `cell_order`), when its rows are consecutive in the box;
/// false when they are not.
fn runs_of_tile(axes: &[Axis], tile: &[u64], cell_order: &[usize], out: &mut Vec<Run>) -> bool {
    let rows = TileRows::new(axes, tile, cell_order);
    if rows.step() != 1 {
        return false;
    }
    let len = rows.row_len();
    rows.for_each(|r, run| {
        out.extend(run.map(|run| Run {
            at: r * len + run.at,
            ..run
        }))
    });
    true
}

/// Fills `out` with the box place of each cell of space tile `tile`, cells
/// in `cell_order`, or [`FILL`] outside the box.
fn fill_tile(axes: &[Axis], tile: &[u64], cell_order: &[usize], out: &mut [usize]) {
    let rows = TileRows::new(axes, tile, cell_order);
    let (len, step) = (rows.row_len(), rows.step());
    rows.for_each(|r, run| {
        let row = &mut out[r * len..(r + 1) * len];
        match run {
            Some(run) => {
                row[..run.at].fill(FILL);
                for (k, slot) in row[run.at..run.at + run.len].iter_mut().enumerate() {
                    *slot = run.place + k * step;
                }
                row[run.at + run.len..].fill(FILL);
            }
            None => row.fill(FILL),
        }
    });
}

/// The box `bounds` cut into bands a dense fragment can be written in one
/// after another: slabs along the outermost dimension of the tile order
/// (the first for row-major, the last for col-major), each of whole space
/// tiles along it (clipped to the box), so that each band's tiles follow
/// the previous band's in the fragment's tile order. A band holds at most
/// `max_cells` cells, or one row of tiles where that is more.
pub(crate) fn box_bands(
    schema: &ArraySchema,
    bounds: &[(i128, i128)],
    max_cells: u64,
) -> Result<Vec<Vec<(i128, i128)>>, WriteError> {
    let axes = box_axes(schema, bounds)?;
    let outer = match schema.tile_order {
        Layout::ColMajor => axes.len() - 1,
        _ => 0,
    };
    let a = &axes[outer];
    // Cells in a band one coordinate thick along the outer dimension.
    let slice = box_cells(&axes) / a.len();
    let tile_rows_per_band = (max_cells / slice.max(1) / a.extent as u64).max(1) as i128;
    let mut bands = Vec::new();
    let mut lo = a.lo;
    while lo <= a.hi {
        let tile = (lo - a.start) / a.extent;
        let end = a.start + (tile + tile_rows_per_band) * a.extent - 1;
        let hi = end.min(a.hi);
        let mut band = bounds.to_vec();
        band[outer] = (lo, hi);
        bands.push(band);
        lo = hi + 1;
    }
    Ok(bands)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Axes of a box `[lo, hi]` in a domain starting at `start`.
    fn axis(start: i128, extent: i128, lo: i128, hi: i128) -> Axis {
        Axis {
            start,
            extent,
            domain: (start, start + 1000),
            lo,
            hi,
        }
    }

    /// A tile's runs place every cell where its place list does: boxes
    /// clipped on every side, in two and three dimensions; col-major
    /// cells have no runs.
    #[test]
    fn runs_place_cells_as_places_do() {
        let boxes = [
            vec![axis(0, 4, 0, 15), axis(0, 4, 0, 15)],
            vec![axis(0, 4, 2, 13), axis(-3, 5, 1, 10)],
            vec![axis(1, 3, 2, 9), axis(0, 2, 1, 4), axis(0, 4, 3, 3)],
            vec![axis(0, 10, 0, 0), axis(0, 7, 5, 30)],
        ];
        for axes in &boxes {
            let n = axes.len();
            let row_major: Vec<usize> = (0..n).collect();
            let counts: Vec<u64> = axes.iter().map(|a| a.tiles().1).collect();
            let per_tile: u64 = axes.iter().map(|a| a.extent as u64).product();
            for t in 0..counts.iter().product::<u64>() {
                let tile = unravel(t, &counts, &row_major);
                let mut places = vec![0; per_tile as usize];
                fill_tile(axes, &tile, &row_major, &mut places);
                let mut runs = Vec::new();
                assert!(runs_of_tile(axes, &tile, &row_major, &mut runs));
                let mut from_runs = vec![FILL; per_tile as usize];
                for r in &runs {
                    for k in 0..r.len {
                        from_runs[r.at + k] = r.place + k;
                    }
                }
                assert_eq!(from_runs, places, "box {t} of {n} dimensions");
                assert!(runs.windows(2).all(|w| w[0].at + w[0].len <= w[1].at));
            }
            let col_major: Vec<usize> = (0..n).rev().collect();
            let tile = vec![0; n];
            let crossed = axes[1..].iter().any(|a| a.len() > 1);
            assert_eq!(
                runs_of_tile(axes, &tile, &col_major, &mut Vec::new()),
                !crossed
            );
        }
    }
}
