//! The global order of a sparse array's cells: what libtiledb writes a
//! fragment's cells in, and what global-order reads return. Space tiles in
//! the tile order (a dimension without a tile extent puts every cell in one
//! tile), then coordinates in the cell order; under a Hilbert cell order,
//! the Hilbert value of the coordinates, ties broken row-major. Readers
//! and writers share it, so a written fragment reads back in its order.

use crate::hilbert::Mapping;
use rayon::prelude::*;
use std::cmp::Ordering;
use tessera_schema::{ArraySchema, Dimension, Value};
use tessera_tile::{Datatype, Layout};

/// The global order of one schema's cells.
pub struct GlobalOrder<'s> {
    dims: &'s [Dimension],
    row: Vec<usize>,
    tile_order: Vec<usize>,
    cell_order: Vec<usize>,
    /// Each dimension's (domain start, tile extent), decoded once.
    tiling: Vec<Option<(Value, Value)>>,
    /// The Hilbert mapping, under a Hilbert cell order.
    hilbert: Option<Mapping>,
    /// Space tiles numbered in the tile order, where that fits a u128: per
    /// tiled dimension, (dimension, domain start, domain end, tile extent,
    /// stride). Sorts then compare one number per cell instead of
    /// dividing coordinates in every comparison.
    ranks: Option<Vec<TileRank>>,
}

/// One dimension's part of a space tile's number: (dimension, domain start,
/// domain end, tile extent, stride).
type TileRank = (usize, i128, i128, i128, u128);

/// The tile numbering of `dims` in `tile_order` (most significant first),
/// if every tiled dimension is an integer one and the number of tiles fits
/// a u128; dimensions without a tile extent are one tile.
fn tile_ranks(dims: &[Dimension], tile_order: &[usize]) -> Option<Vec<TileRank>> {
    let mut ranks = Vec::new();
    let mut stride: u128 = 1;
    for &j in tile_order.iter().rev() {
        let d = &dims[j];
        let (Some((lo, hi)), Some(ext)) = (d.domain.as_ref(), d.tile_extent.as_ref()) else {
            continue;
        };
        let lo = Value::decode(d.datatype, lo).as_int()?;
        let hi = Value::decode(d.datatype, hi).as_int()?;
        let ext = Value::decode(d.datatype, ext).as_int()?;
        if ext <= 0 || hi < lo {
            return None;
        }
        let tiles = u128::try_from((hi - lo) / ext + 1).ok()?;
        ranks.push((j, lo, hi, ext, stride));
        stride = stride.checked_mul(tiles)?;
    }
    Some(ranks)
}

impl<'s> GlobalOrder<'s> {
    /// The global order of `schema`'s cells.
    pub fn new(schema: &'s ArraySchema) -> GlobalOrder<'s> {
        let dims = &schema.dimensions;
        let nd = dims.len();
        let tiling = dims
            .iter()
            .map(|d| match (d.domain.as_ref(), d.tile_extent.as_ref()) {
                (Some((lo, _)), Some(ext)) => Some((
                    Value::decode(d.datatype, lo),
                    Value::decode(d.datatype, ext),
                )),
                _ => None,
            })
            .collect();
        let hilbert = (schema.cell_order == Layout::Hilbert).then(|| Mapping::new(dims));
        let tile_order = major_order(schema.tile_order, nd);
        GlobalOrder {
            dims,
            row: major_order(Layout::RowMajor, nd),
            ranks: tile_ranks(dims, &tile_order),
            tile_order,
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
    fn tile_of(&self, j: usize, v: &[u8]) -> Value {
        tile_coord(
            self.tiling[j].as_ref(),
            Value::decode(self.dims[j].datatype, v),
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

    /// The number of a cell's space tile in the tile order, if the schema's
    /// tiles are numbered (integer dimensions) and the cell lies in the
    /// domain: cells compare by it as [`GlobalOrder::compare_tiled`]
    /// compares their tiles.
    pub fn tile_rank<'v>(&self, coord: &dyn Fn(usize) -> &'v [u8]) -> Option<u128> {
        let mut rank: u128 = 0;
        for &(j, lo, hi, ext, stride) in self.ranks.as_ref()? {
            let x = Value::decode(self.dims[j].datatype, coord(j)).as_int()?;
            if x < lo || x > hi {
                return None;
            }
            // In the domain: each term is below its dimension's share of
            // the checked product of tile counts, so the sum cannot wrap.
            rank += ((x - lo) / ext) as u128 * stride;
        }
        Some(rank)
    }

    /// Compares two cells of one space tile in the cell order.
    pub fn compare_cells<'v>(
        &self,
        a: &dyn Fn(usize) -> &'v [u8],
        b: &dyn Fn(usize) -> &'v [u8],
    ) -> Ordering {
        self.compare_in(&self.cell_order, a, b)
    }

    /// The Hilbert value of a cell, under a Hilbert cell order.
    pub fn hilbert_value<'v>(&self, coord: &dyn Fn(usize) -> &'v [u8]) -> Option<u64> {
        self.hilbert.as_ref().map(|h| h.value(self.dims, coord))
    }

    /// Compares two cells in the global order, as [`GlobalOrder::sort`]
    /// orders them: by Hilbert value then row-major under a Hilbert cell
    /// order, else by space tile then in the cell order.
    pub fn compare<'v>(
        &self,
        a: &dyn Fn(usize) -> &'v [u8],
        b: &dyn Fn(usize) -> &'v [u8],
    ) -> Ordering {
        match &self.hilbert {
            Some(_) => self
                .hilbert_value(a)
                .cmp(&self.hilbert_value(b))
                .then_with(|| self.compare_row_major(a, b)),
            None => self.compare_tiled(a, b),
        }
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
                let ranks: Option<Vec<u128>> = (0..n)
                    .into_par_iter()
                    .map(|i| self.tile_rank(&|j| coord(i, j)))
                    .collect();
                match ranks {
                    Some(ranks) => idx.par_sort_by(|&x, &y| {
                        ranks[x]
                            .cmp(&ranks[y])
                            .then_with(|| self.compare_cells(&|j| coord(x, j), &|j| coord(y, j)))
                    }),
                    None => idx.par_sort_by(|&x, &y| {
                        self.compare_tiled(&|j| coord(x, j), &|j| coord(y, j))
                    }),
                }
            }
        }
        idx
    }
}

/// Orders two values of `t` as TileDB orders coordinates (strings bytewise).
fn compare_values(t: Datatype, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    match t.physical() {
        tessera_tile::datatype::Physical::Bytes => a.cmp(b),
        _ => Value::decode(t, a).cmp(&Value::decode(t, b)),
    }
}

/// The space tile a coordinate falls in, given the dimension's (domain
/// start, tile extent); 0 for dimensions without tiling.
fn tile_coord(tiling: Option<&(Value, Value)>, v: Value) -> Value {
    match (tiling, v) {
        (Some((Value::Int(l), Value::Int(e))), Value::Int(x)) if *e > 0 => Value::Int((x - l) / e),
        (Some((Value::Float(l), Value::Float(e))), Value::Float(x)) if *e > 0.0 => {
            Value::Int(((x - l) / e).floor() as i128)
        }
        _ => Value::Int(0),
    }
}

/// Dimensions from the slowest-varying to the fastest under a layout:
/// column-major reverses them; row-major (and Hilbert, whose tiles TileDB
/// orders row-major) keeps them.
pub fn major_order(l: Layout, nd: usize) -> Vec<usize> {
    if l == Layout::ColMajor {
        (0..nd).rev().collect()
    } else {
        (0..nd).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use tessera_storage::LocalFs;

    /// A fixture's schema: two INT32 dimensions, x in [-20, 43] tiled by
    /// 8, y in [0, 63] tiled by 16.
    fn schema() -> ArraySchema {
        let array = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/tiledb-0.36.1/random_sparse/array");
        let files = tessera_schema::list_schemas(&LocalFs, &array).unwrap();
        tessera_schema::load_schema(&LocalFs, &array, &files[0], None).unwrap()
    }

    #[test]
    fn numbered_tiles_sort_as_compared_tiles_do() {
        let mut schema = schema();
        // Cells across the domain, in a scrambled order (an LCG).
        let mut seed: u64 = 7;
        let cells: Vec<[[u8; 4]; 2]> = (0..3000)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let x = (seed >> 33) as i32 % 64 - 20;
                let y = (seed >> 13) as i32 % 64;
                [x.to_le_bytes(), y.to_le_bytes()]
            })
            .collect();
        for (tile_order, cell_order) in [
            (Layout::RowMajor, Layout::RowMajor),
            (Layout::ColMajor, Layout::RowMajor),
            (Layout::RowMajor, Layout::ColMajor),
            (Layout::ColMajor, Layout::ColMajor),
        ] {
            schema.tile_order = tile_order;
            schema.cell_order = cell_order;
            let order = GlobalOrder::new(&schema);
            assert!(order.ranks.is_some());
            let coord = |i: usize, j: usize| &cells[i][j][..];
            let by_rank = order.sort(cells.len(), &coord);
            let mut compared: Vec<usize> = (0..cells.len()).collect();
            compared.sort_by(|&a, &b| order.compare_tiled(&|j| coord(a, j), &|j| coord(b, j)));
            assert_eq!(
                by_rank, compared,
                "{tile_order:?} tiles, {cell_order:?} cells"
            );
        }
    }

    #[test]
    fn cells_outside_the_domain_have_no_tile_number() {
        let schema = schema();
        let order = GlobalOrder::new(&schema);
        let (x, y) = ((-21i32).to_le_bytes(), 5i32.to_le_bytes());
        let cell = [&x[..], &y[..]];
        assert_eq!(order.tile_rank(&|j| cell[j]), None);
        let x = 43i32.to_le_bytes();
        let cell = [&x[..], &y[..]];
        // Last x tile (63 / 8 = 7), first y tile; x varies slowest (4 y tiles).
        assert_eq!(order.tile_rank(&|j| cell[j]), Some(7 * 4));
    }
}
