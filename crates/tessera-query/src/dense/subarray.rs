//! The subarray of a dense read as integers: the domain's tile grid per
//! dimension, the ranges asked for, and where each cell lands in the
//! result.

use crate::geometry::dense_grid;
use crate::QueryError;
use tessera_cells::order::major_order;
use tessera_schema::ArraySchema;
use tessera_schema::Value;
use tessera_tile::Layout;

/// Results above this many cells are refused before anything is allocated.
const MAX_RESULT_CELLS: u64 = 1 << 40;

/// One dimension of a dense domain, as integers (dense dimensions are
/// integers: `dense_grid` checked).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Axis {
    /// The domain's first coordinate.
    pub(crate) lo: i128,
    /// The domain's last coordinate.
    pub(crate) hi: i128,
    /// The tile extent.
    pub(crate) extent: i128,
}

impl Axis {
    /// The space tile holding coordinate `c`.
    pub(crate) fn tile_of(&self, c: i128) -> i128 {
        (c - self.lo) / self.extent
    }

    /// The first coordinate of space tile `t`.
    pub(crate) fn tile_start(&self, t: i128) -> i128 {
        self.lo + t * self.extent
    }
}

/// The cells a dense read returns, and their places in the result.
#[derive(Debug)]
pub(crate) struct DenseSubarray {
    /// Per dimension, its domain and tile extent.
    pub(crate) axes: Vec<Axis>,
    /// Per dimension, the ranges asked for (the current domain without).
    pub(crate) ranges: Vec<Vec<(i128, i128)>>,
    /// Per dimension, the coordinates the ranges hold.
    pub(crate) counts: Vec<u64>,
    /// Cells in the result.
    pub(crate) cells: usize,
    /// Per dimension, the distance in result positions between neighbours.
    pub(crate) strides: Vec<u64>,
    /// The result layout.
    pub(crate) layout: Layout,
    /// Dimensions from slowest to fastest in the schema's tile order.
    pub(crate) tile_order: Vec<usize>,
    /// Dimensions from slowest to fastest in the schema's cell order.
    pub(crate) cell_order: Vec<usize>,
    /// Per dimension, the smallest range holding the subarray.
    pub(crate) hull: Vec<(i128, i128)>,
}

impl DenseSubarray {
    /// The subarray of `ranges` (per dimension; none: the current domain)
    /// in a dense `schema`, in result `layout`. Ranges outside the domain,
    /// and results of more than 2^40 cells, are errors.
    pub(crate) fn new(
        schema: &ArraySchema,
        ranges: &[Vec<(Value, Value)>],
        layout: Layout,
    ) -> Result<DenseSubarray, QueryError> {
        let dims = &schema.dimensions;
        let nd = dims.len();
        let mut axes = Vec::with_capacity(nd);
        let mut sub: Vec<Vec<(i128, i128)>> = Vec::with_capacity(nd);
        for (j, d) in dims.iter().enumerate() {
            let g = dense_grid(schema, j)?;
            let axis = Axis {
                lo: g.lo,
                hi: g.hi,
                extent: g.ext,
            };
            let r: Vec<(i128, i128)> = if ranges[j].is_empty() {
                vec![(g.start, g.end)]
            } else {
                ranges[j]
                    .iter()
                    .map(|(a, b)| (a.as_int().unwrap_or(0), b.as_int().unwrap_or(0)))
                    .collect()
            };
            for &(a, b) in &r {
                if a > b || a < axis.lo || b > axis.hi {
                    return Err(QueryError::OutOfDomain {
                        dimension: d.name.clone(),
                        lo: a,
                        hi: b,
                        domain_lo: axis.lo,
                        domain_hi: axis.hi,
                    });
                }
            }
            axes.push(axis);
            sub.push(r);
        }
        let counts: Vec<u64> = sub
            .iter()
            .map(|r| r.iter().map(|(a, b)| (b - a + 1) as u64).sum())
            .collect();
        let total = counts
            .iter()
            .try_fold(1u64, |acc, &c| acc.checked_mul(c))
            .filter(|t| *t <= MAX_RESULT_CELLS)
            .ok_or_else(|| QueryError::Invalid("the subarray has too many cells".into()))?;
        let mut strides = vec![0u64; nd];
        let mut s = 1u64;
        for j in major_order(layout, nd).into_iter().rev() {
            strides[j] = s;
            s *= counts[j];
        }
        let hull = sub
            .iter()
            .map(|r| {
                let lo = r.iter().map(|x| x.0).min().unwrap_or(0);
                (lo, r.iter().map(|x| x.1).max().unwrap_or(lo))
            })
            .collect();
        Ok(DenseSubarray {
            axes,
            ranges: sub,
            counts,
            cells: total as usize,
            strides,
            layout,
            tile_order: major_order(schema.tile_order, nd),
            cell_order: major_order(schema.cell_order, nd),
            hull,
        })
    }

    /// Number of dimensions.
    pub(crate) fn dims(&self) -> usize {
        self.axes.len()
    }

    /// The positions of coordinate `c` of dimension `j` among the
    /// subarray's coordinates of that dimension: one per range holding it
    /// (ranges may overlap), in the order of the ranges.
    fn positions_on(&self, j: usize, c: i128) -> impl Iterator<Item = u64> + '_ {
        placed_ranges(&self.ranges[j])
            .filter(move |&(_, a, b)| c >= a && c <= b)
            .map(move |(at, a, _)| at + (c - a) as u64)
    }

    /// The result positions of the cell at `coords`: none outside the
    /// subarray, several where ranges overlap.
    pub(crate) fn positions(&self, coords: impl Iterator<Item = Option<i128>>) -> Vec<u64> {
        let mut out = vec![0u64];
        for (j, c) in coords.enumerate() {
            let Some(c) = c else {
                return Vec::new();
            };
            let stride = self.strides[j];
            out = out
                .iter()
                .flat_map(|&ri| self.positions_on(j, c).map(move |p| ri + p * stride))
                .collect();
            if out.is_empty() {
                break;
            }
        }
        out
    }

    /// The result's slowest dimension.
    pub(crate) fn slowest(&self) -> usize {
        major_order(self.layout, self.dims())[0]
    }

    /// The result's innermost (fastest) dimension.
    pub(crate) fn innermost(&self) -> usize {
        if self.layout == Layout::ColMajor {
            0
        } else {
            self.dims() - 1
        }
    }

    /// Cells in one space tile.
    pub(crate) fn cells_per_tile(&self) -> u64 {
        self.axes.iter().map(|a| a.extent as u64).product()
    }

    /// Whether no two ranges of a dimension overlap: then no two cells
    /// share a result position.
    pub(crate) fn ranges_apart(&self) -> bool {
        self.ranges.iter().all(|r| {
            let mut r = r.clone();
            r.sort_unstable();
            r.windows(2).all(|w| w[0].1 < w[1].0)
        })
    }

    /// The permutation putting result positions in global order (space
    /// tiles in tile order over the domain's tile grid, cells in cell
    /// order inside them); `None` where they are in it already (one tile
    /// read in its cell order).
    pub(crate) fn global_order(&self) -> Option<Vec<usize>> {
        let nd = self.dims();
        let coords: Vec<Vec<i128>> = self
            .ranges
            .iter()
            .map(|r| r.iter().flat_map(|(a, b)| *a..=*b).collect())
            .collect();
        let tiles_per_dim: Vec<u128> = self
            .axes
            .iter()
            .map(|a| ((a.hi - a.lo) / a.extent + 1) as u128)
            .collect();
        let cells_per_tile: u128 = self.axes.iter().map(|a| a.extent as u128).product();
        let coord = |j: usize, i: usize| {
            coords[j][((i as u64 / self.strides[j]) % self.counts[j]) as usize]
        };
        // One number per cell: its space tile's rank in tile order, then
        // its rank inside the tile in cell order.
        let key = |i: usize| -> u128 {
            let (mut t, mut c) = (0u128, 0u128);
            for &j in &self.tile_order {
                let a = &self.axes[j];
                t = t * tiles_per_dim[j] + a.tile_of(coord(j, i)) as u128;
            }
            for &j in &self.cell_order {
                let a = &self.axes[j];
                c = c * a.extent as u128 + ((coord(j, i) - a.lo) % a.extent) as u128;
            }
            t * cells_per_tile + c
        };
        debug_assert_eq!(nd, coords.len());
        let keys: Vec<u128> = (0..self.cells).map(key).collect();
        if keys.windows(2).all(|w| w[0] <= w[1]) {
            return None;
        }
        let mut perm: Vec<usize> = (0..self.cells).collect();
        perm.sort_by_key(|&i| keys[i]);
        Some(perm)
    }
}

/// Each of a dimension's `ranges` with the result position of its first
/// coordinate: a dense result places the ranges one after another, in the
/// order given (so a coordinate in two ranges has two positions).
pub(crate) fn placed_ranges(
    ranges: &[(i128, i128)],
) -> impl Iterator<Item = (u64, i128, i128)> + '_ {
    ranges.iter().scan(0u64, |base, &(a, b)| {
        let at = *base;
        *base += (b - a + 1) as u64;
        Some((at, a, b))
    })
}
