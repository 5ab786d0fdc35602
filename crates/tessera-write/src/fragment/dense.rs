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
use crate::WriteError;
use rayon::prelude::*;
use std::ops::Range;
use tessera_schema::{ArraySchema, Dimension, Range1D, Value};
use tessera_tile::Layout;

/// A tile position holding the fill value instead of a written cell.
pub(crate) const FILL: usize = usize::MAX;

/// A dense fragment's cells, in the order they are written.
pub(crate) struct DenseTiles {
    /// For each cell of each tile, its row-major place in the box, or
    /// [`FILL`] outside it.
    pub order: Vec<usize>,
    /// For each place in the box, row-major, the written cell there.
    pub slots: Vec<usize>,
    /// Each tile's positions in `order`.
    pub tiles: Vec<Range<usize>>,
    /// The box written.
    pub non_empty_domain: Vec<Range1D>,
    /// Cells in a space tile.
    pub cells_per_tile: u64,
}

/// One dimension's tiling, as integers.
struct Axis {
    /// Where the domain (and its first tile) starts.
    start: i128,
    extent: i128,
    /// The box written along this dimension.
    lo: i128,
    hi: i128,
}

impl Axis {
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

/// A coordinate of a dense dimension (integers and datetimes only).
fn int(d: &Dimension, bytes: &[u8]) -> Result<i128, WriteError> {
    match Value::decode(d.datatype, bytes) {
        Value::Int(v) => Ok(v as i128),
        Value::UInt(v) => Ok(v as i128),
        _ => Err(WriteError::Input(format!(
            "dimension `{}` of type {} cannot be dense",
            d.name, d.datatype
        ))),
    }
}

/// `v` as the bytes of `d`'s type.
fn bytes_of(d: &Dimension, v: i128) -> Vec<u8> {
    (v as u64).to_le_bytes()[..d.datatype.size() as usize].to_vec()
}

/// Lays out the cells whose coordinates are `dims` (one buffer per
/// dimension, `cells` each): checks they cover a box exactly once and
/// places them in the box's space tiles.
pub(crate) fn dense_tiles(
    schema: &ArraySchema,
    dims: &[FieldBuffer],
    cells: usize,
) -> Result<DenseTiles, WriteError> {
    let coord = |j: usize, i: usize| {
        let d = &schema.dimensions[j];
        int(d, dims[j].value(i, d.coord_size() as usize))
    };
    let mut axes = Vec::with_capacity(dims.len());
    for (j, d) in schema.dimensions.iter().enumerate() {
        let (start, end) = match &d.domain {
            Some((lo, hi)) => (int(d, lo)?, int(d, hi)?),
            None => {
                return Err(WriteError::Input(format!(
                    "dimension `{}` has no domain",
                    d.name
                )))
            }
        };
        let extent = match &d.tile_extent {
            Some(e) => int(d, e)?.max(1),
            None => end - start + 1,
        };
        let (lo, hi) = (0..cells)
            .into_par_iter()
            .map(|i| coord(j, i).map(|v| (v, v)))
            .try_reduce(
                || (i128::MAX, i128::MIN),
                |a, b| Ok((a.0.min(b.0), a.1.max(b.1))),
            )?;
        axes.push(Axis {
            start,
            extent,
            lo,
            hi,
        });
    }
    let slots = box_slots(schema, &axes, &coord, cells)?;
    let order_of = |l: Layout| -> Vec<usize> {
        match l {
            Layout::ColMajor => (0..axes.len()).rev().collect(),
            _ => (0..axes.len()).collect(),
        }
    };
    let (tile_order, cell_order) = (order_of(schema.tile_order), order_of(schema.cell_order));
    let extents: Vec<u64> = axes.iter().map(|a| a.extent as u64).collect();
    let cells_per_tile = extents.iter().product::<u64>();
    let tile_counts: Vec<u64> = axes.iter().map(|a| a.tiles().1).collect();
    let tile_num = tile_counts.iter().product::<u64>() as usize;
    let per_tile = cells_per_tile as usize;
    let total = tile_num.checked_mul(per_tile).ok_or_else(|| {
        WriteError::Input("the box's space tiles hold more cells than memory can".into())
    })?;
    let mut order = vec![FILL; total];
    order
        .par_chunks_mut(per_tile)
        .enumerate()
        .for_each(|(t, out)| {
            let tile = unravel(t as u64, &tile_counts, &tile_order);
            for (c, slot) in out.iter_mut().enumerate() {
                let cell = unravel(c as u64, &extents, &cell_order);
                *slot = box_position(&axes, &tile, &cell).unwrap_or(FILL);
            }
        });
    let non_empty_domain = axes
        .iter()
        .zip(&schema.dimensions)
        .map(|(a, d)| Range1D {
            lo: bytes_of(d, a.lo),
            hi: bytes_of(d, a.hi),
        })
        .collect();
    Ok(DenseTiles {
        order,
        slots,
        tiles: (0..tile_num)
            .map(|t| t * per_tile..(t + 1) * per_tile)
            .collect(),
        non_empty_domain,
        cells_per_tile,
    })
}

/// The written cell at each position of the box (row-major), checked: no
/// position written twice, none left out.
fn box_slots(
    schema: &ArraySchema,
    axes: &[Axis],
    coord: &(dyn Fn(usize, usize) -> Result<i128, WriteError> + Sync),
    cells: usize,
) -> Result<Vec<usize>, WriteError> {
    let row_major: Vec<usize> = (0..axes.len()).collect();
    let lens: Vec<u64> = axes.iter().map(|a| a.len()).collect();
    let box_cells = lens
        .iter()
        .try_fold(1u64, |n, &l| n.checked_mul(l))
        .unwrap_or(u64::MAX);
    let mut keyed: Vec<(u64, usize)> = (0..cells)
        .into_par_iter()
        .map(|i| {
            let mut k = 0u64;
            for (j, a) in axes.iter().enumerate() {
                k = k * a.len() + (coord(j, i)? - a.lo) as u64;
            }
            Ok((k, i))
        })
        .collect::<Result<_, WriteError>>()?;
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
    Ok(keyed.into_iter().map(|(_, i)| i).collect())
}

fn gap(cell: &str) -> WriteError {
    WriteError::Input(format!(
        "no cell at {cell}: a dense write covers a box of cells exactly once (the box from the smallest to the largest coordinate of each dimension)"
    ))
}

/// The index `n` of a grid of `lens` walked with `order`'s first dimension
/// slowest, as one index per dimension.
fn unravel(mut n: u64, lens: &[u64], order: &[usize]) -> Vec<u64> {
    let mut idx = vec![0; lens.len()];
    for &j in order.iter().rev() {
        idx[j] = n % lens[j];
        n /= lens[j];
    }
    idx
}

/// The row-major position in the box of cell `cell` of space tile `tile`
/// (both relative: the tile among the box's tiles, the cell in its tile),
/// or `None` outside the box.
fn box_position(axes: &[Axis], tile: &[u64], cell: &[u64]) -> Option<usize> {
    let mut k = 0u64;
    for ((a, &t), &c) in axes.iter().zip(tile).zip(cell) {
        let v = a.start + (a.tiles().0 + t as i128) * a.extent + c as i128;
        if v < a.lo || v > a.hi {
            return None;
        }
        k = k * a.len() + (v - a.lo) as u64;
    }
    Some(k as usize)
}
