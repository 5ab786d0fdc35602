//! The global order of a sparse array's cells: what libtiledb writes a
//! fragment's cells in, and what global-order reads return. Space tiles in
//! the tile order (a dimension without a tile extent puts every cell in one
//! tile), then coordinates in the cell order; under a Hilbert cell order,
//! the Hilbert value of the coordinates, ties broken row-major. Readers
//! and writers share it, so a written fragment reads back in its order.

use crate::geometry::{compare_values, major_order, tile_coord};
use crate::hilbert::Mapping;
use crate::key::Key;
use rayon::prelude::*;
use std::cmp::Ordering;
use tessera_schema::{ArraySchema, Dimension};
use tessera_tile::Layout;

/// The global order of one schema's cells.
pub struct GlobalOrder<'s> {
    dims: &'s [Dimension],
    row: Vec<usize>,
    tile_order: Vec<usize>,
    cell_order: Vec<usize>,
    /// Each dimension's (domain start, tile extent), decoded once.
    tiling: Vec<Option<(Key, Key)>>,
    /// The Hilbert mapping, under a Hilbert cell order.
    hilbert: Option<Mapping>,
}

impl<'s> GlobalOrder<'s> {
    /// The global order of `schema`'s cells.
    pub fn new(schema: &'s ArraySchema) -> GlobalOrder<'s> {
        let dims = &schema.dimensions;
        let nd = dims.len();
        let tiling = dims
            .iter()
            .map(|d| match (d.domain.as_ref(), d.tile_extent.as_ref()) {
                (Some((lo, _)), Some(ext)) => {
                    Some((Key::decode(d.datatype, lo), Key::decode(d.datatype, ext)))
                }
                _ => None,
            })
            .collect();
        let hilbert = (schema.cell_order == Layout::Hilbert).then(|| Mapping::new(dims));
        GlobalOrder {
            dims,
            row: major_order(Layout::RowMajor, nd),
            tile_order: major_order(schema.tile_order, nd),
            cell_order: major_order(schema.cell_order, nd),
            tiling,
            hilbert,
        }
    }

    /// Compares two cells' coordinates (`a(j)`, `b(j)`: dimension `j`'s
    /// bytes), dimensions in `order`.
    pub fn compare_in<'v>(
        &self,
        order: &[usize],
        a: &dyn Fn(usize) -> &'v [u8],
        b: &dyn Fn(usize) -> &'v [u8],
    ) -> Ordering {
        for &j in order {
            let o = compare_values(self.dims[j].datatype, a(j), b(j));
            if o.is_ne() {
                return o;
            }
        }
        Ordering::Equal
    }

    /// Compares two cells row-major.
    pub fn compare_row_major<'v>(
        &self,
        a: &dyn Fn(usize) -> &'v [u8],
        b: &dyn Fn(usize) -> &'v [u8],
    ) -> Ordering {
        self.compare_in(&self.row, a, b)
    }

    /// The space tile of coordinate `v` along dimension `j`.
    fn tile_of(&self, j: usize, v: &[u8]) -> Key {
        tile_coord(
            self.tiling[j].as_ref(),
            Key::decode(self.dims[j].datatype, v),
        )
    }

    /// Compares two cells by space tile, then in the cell order (not for
    /// Hilbert order: see [`GlobalOrder::sort`]).
    pub fn compare_tiled<'v>(
        &self,
        a: &dyn Fn(usize) -> &'v [u8],
        b: &dyn Fn(usize) -> &'v [u8],
    ) -> Ordering {
        for &j in &self.tile_order {
            let o = self.tile_of(j, a(j)).cmp(&self.tile_of(j, b(j)));
            if o.is_ne() {
                return o;
            }
        }
        self.compare_in(&self.cell_order, a, b)
    }

    /// The Hilbert value of a cell, under a Hilbert cell order.
    pub fn hilbert_value<'v>(&self, coord: &dyn Fn(usize) -> &'v [u8]) -> Option<u64> {
        self.hilbert.as_ref().map(|h| h.value(self.dims, coord))
    }

    /// The positions of `n` cells in global order (a stable sort, in
    /// parallel), `coord(i, j)` being cell `i`'s coordinate on dimension `j`.
    pub fn sort<'v>(
        &self,
        n: usize,
        coord: &(dyn Fn(usize, usize) -> &'v [u8] + Sync),
    ) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..n).collect();
        match &self.hilbert {
            Some(_) => {
                let keys: Vec<u64> = (0..n)
                    .into_par_iter()
                    .map(|i| self.hilbert_value(&|j| coord(i, j)).unwrap_or(0))
                    .collect();
                idx.par_sort_by(|&x, &y| {
                    keys[x]
                        .cmp(&keys[y])
                        .then_with(|| self.compare_row_major(&|j| coord(x, j), &|j| coord(y, j)))
                });
            }
            None => {
                idx.par_sort_by(|&x, &y| self.compare_tiled(&|j| coord(x, j), &|j| coord(y, j)))
            }
        }
        idx
    }
}
