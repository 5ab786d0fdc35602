//! One dense fragment's space tiles that meet the subarray: their
//! coordinates and numbers, their cells' boxes in the subarray, and where
//! each cell lies in the tile and in the result.

use super::fragments::IntDomain;
use super::subarray::{placed_ranges, DenseSubarray};
use std::collections::HashMap;
use std::ops::Range;

/// A run of cells: first cell in the tile (cell order), first position in
/// the result region, and length.
pub(crate) type RowRun = (usize, usize, usize);

/// A box of cells: per dimension, its side.
pub(crate) type CellBox = Vec<BoxSide>;

/// A box's side along one dimension: first and last coordinate, and the
/// position of the first among the subarray's coordinates there. The box
/// lies in one range of the dimension, so positions run with coordinates;
/// ranges that overlap give a coordinate several positions, one a box.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoxSide {
    pub(crate) lo: i128,
    pub(crate) hi: i128,
    pub(crate) pos: u64,
}

impl BoxSide {
    /// The position of coordinate `c` of the side.
    fn position(&self, c: i128) -> u64 {
        self.pos + (c - self.lo) as u64
    }
}

/// The tiles of one dense fragment a read places.
pub(crate) struct FragmentTiles<'s> {
    sub: &'s DenseSubarray,
    /// The fragment's non-empty domain.
    pub(crate) ned: &'s [(i128, i128)],
    /// Per tile, its coordinates in the domain's tile grid.
    pub(crate) coords: Vec<Vec<i128>>,
    /// Per tile, its number in the fragment (tile order over the
    /// fragment's tile grid).
    pub(crate) numbers: Vec<u64>,
    /// Per dimension, the distance in cells between neighbours in a tile
    /// (cell order).
    cell_strides: Vec<i128>,
    /// Per tile number, the cells from the first to the last the subarray
    /// needs (in cell order): chunks outside are not decoded.
    pub(crate) spans: HashMap<u64, Range<u64>>,
}

impl<'s> FragmentTiles<'s> {
    /// The tiles of the fragment with non-empty domain `ned` that meet the
    /// subarray, less those whose cells in the subarray a fragment of
    /// `later` writes again; `None` if no tile is left.
    pub(crate) fn new(
        sub: &'s DenseSubarray,
        ned: &'s [(i128, i128)],
        later: &[&IntDomain],
    ) -> Option<FragmentTiles<'s>> {
        let nd = sub.dims();
        // Per dimension, the tile coordinates any range touches.
        let mut per_dim: Vec<Vec<i128>> = Vec::with_capacity(nd);
        for (j, axis) in sub.axes.iter().enumerate() {
            let mut v = Vec::new();
            for (a, b) in &sub.ranges[j] {
                let (a, b) = ((*a).max(ned[j].0), (*b).min(ned[j].1));
                if a <= b {
                    v.extend(axis.tile_of(a)..=axis.tile_of(b));
                }
            }
            v.sort_unstable();
            v.dedup();
            if v.is_empty() {
                return None;
            }
            per_dim.push(v);
        }
        let mut coords: Vec<Vec<i128>> = vec![Vec::new()];
        for v in &per_dim {
            coords = coords
                .into_iter()
                .flat_map(|p| v.iter().map(move |t| [p.clone(), vec![*t]].concat()))
                .collect();
        }
        let mut cell_strides = vec![0i128; nd];
        let mut acc = 1i128;
        for &j in sub.cell_order.iter().rev() {
            cell_strides[j] = acc;
            acc *= sub.axes[j].extent;
        }
        let mut tiles = FragmentTiles {
            sub,
            ned,
            coords,
            numbers: Vec::new(),
            cell_strides,
            spans: HashMap::new(),
        };
        tiles
            .coords
            .retain(|tc| !tiles_written_again(sub, ned, tc, later));
        if tiles.coords.is_empty() {
            return None;
        }
        tiles.numbers = tiles.coords.iter().map(|tc| tiles.number(tc)).collect();
        tiles.spans = tiles
            .coords
            .iter()
            .zip(&tiles.numbers)
            .filter_map(|(tc, &t)| Some((t, tiles.span(tc)?)))
            .collect();
        Some(tiles)
    }

    /// The number of tile `tc` in the fragment: its rank in tile order
    /// over the fragment's tile grid.
    fn number(&self, tc: &[i128]) -> u64 {
        let mut idx = 0i128;
        for &j in &self.sub.tile_order {
            let axis = &self.sub.axes[j];
            let first = axis.tile_of(self.ned[j].0);
            let count = axis.tile_of(self.ned[j].1) - first + 1;
            idx = idx * count + (tc[j] - first);
        }
        idx as u64
    }

    /// The cells of tile `tc` from the first to the last the subarray needs.
    fn span(&self, tc: &[i128]) -> Option<Range<u64>> {
        let (mut first, mut last) = (0i128, 0i128);
        let (lo, hi) = tile_box(self.sub, self.ned, tc);
        for (j, axis) in self.sub.axes.iter().enumerate() {
            let tile_lo = axis.tile_start(tc[j]);
            let inside = self.sub.ranges[j]
                .iter()
                .map(|(a, z)| ((*a).max(lo[j]), (*z).min(hi[j])));
            let (a, z) = inside
                .filter(|(a, z)| a <= z)
                .reduce(|(x, y), (a, z)| (x.min(a), y.max(z)))?;
            first += (a - tile_lo) * self.cell_strides[j];
            last += (z - tile_lo) * self.cell_strides[j];
        }
        Some(first as u64..last as u64 + 1)
    }

    /// The subarray the tiles are read for.
    pub(crate) fn subarray(&self) -> &'s DenseSubarray {
        self.sub
    }

    /// Whether a row of a box (cells along the innermost result
    /// dimension) is one run in both the tile and the result.
    pub(crate) fn rows_are_runs(&self) -> bool {
        let inner = self.sub.innermost();
        self.cell_strides[inner] == 1 && self.sub.strides[inner] == 1
    }

    /// The boxes of tile `tc`'s cells in the subarray, those whose
    /// positions on the slowest dimension are in `rows` (all, without).
    pub(crate) fn boxes_of(&self, tc: &[i128], rows: Option<(u64, u64)>) -> Vec<CellBox> {
        let (lo, hi) = tile_box(self.sub, self.ned, tc);
        let mut boxes: Vec<CellBox> = vec![Vec::new()];
        for (j, ranges) in self.sub.ranges.iter().enumerate() {
            let mut nb = Vec::new();
            for b in &boxes {
                for (at, a, z) in placed_ranges(ranges) {
                    let (x, y) = (a.max(lo[j]), z.min(hi[j]));
                    if x <= y {
                        let mut bx = b.clone();
                        let pos = at + (x - a) as u64;
                        bx.push(BoxSide { lo: x, hi: y, pos });
                        nb.push(bx);
                    }
                }
            }
            boxes = nb;
        }
        if let Some((p0, p1)) = rows {
            // Keep the coordinates at positions p0..p1.
            let slow = self.sub.slowest();
            boxes.retain_mut(|b| {
                let side = &mut b[slow];
                let (pa, pz) = (side.pos as i128, side.position(side.hi) as i128);
                let (cut_lo, cut_hi) = ((p0 as i128 - pa).max(0), (pz - (p1 as i128 - 1)).max(0));
                side.lo += cut_lo;
                side.pos += cut_lo as u64;
                side.hi -= cut_hi;
                side.lo <= side.hi
            });
        }
        boxes
    }

    /// The position of coordinates `c` of box `bx` in tile `tc` (cell
    /// order) and in the region of the result from position `first`.
    fn locate(&self, tc: &[i128], first: usize, bx: &[BoxSide], c: &[i128]) -> (usize, usize) {
        let (mut cell, mut ri) = (0i128, 0u64);
        for (j, axis) in self.sub.axes.iter().enumerate() {
            cell += (c[j] - axis.tile_start(tc[j])) * self.cell_strides[j];
            ri += bx[j].position(c[j]) * self.sub.strides[j];
        }
        (cell as usize, ri as usize - first)
    }

    /// Where rows are runs: the rows of `boxes` of tile `tc`, each as a
    /// run into the region of the result from position `first`.
    pub(crate) fn row_runs(&self, tc: &[i128], boxes: Vec<CellBox>, first: usize) -> Vec<RowRun> {
        let nd = self.sub.dims();
        let inner = self.sub.innermost();
        let mut wanted: Vec<RowRun> = Vec::new();
        for bx in boxes {
            let len = (bx[inner].hi - bx[inner].lo + 1) as usize;
            let mut c: Vec<i128> = bx.iter().map(|s| s.lo).collect();
            loop {
                let (cell, ri) = self.locate(tc, first, &bx, &c);
                wanted.push((cell, ri, len));
                // Next row: advance the other dimensions.
                let mut j = nd;
                let mut done = true;
                while j > 0 {
                    j -= 1;
                    if j == inner {
                        continue;
                    }
                    if c[j] < bx[j].hi {
                        c[j] += 1;
                        done = false;
                        break;
                    }
                    c[j] = bx[j].lo;
                }
                if done {
                    break;
                }
            }
        }
        wanted
    }

    /// Calls `visit(cell in tile, position in the region from `first`)` for
    /// every cell of the boxes of tile `tc`, fastest dimension first.
    pub(crate) fn for_each_cell<E>(
        &self,
        tc: &[i128],
        boxes: Vec<CellBox>,
        first: usize,
        mut visit: impl FnMut(usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let nd = self.sub.dims();
        for bx in boxes {
            let mut c: Vec<i128> = bx.iter().map(|s| s.lo).collect();
            'cells: loop {
                let (cell, ri) = self.locate(tc, first, &bx, &c);
                visit(cell, ri)?;
                // Next cell: advance the fastest dimension first.
                for j in (0..nd).rev() {
                    if c[j] < bx[j].hi {
                        c[j] += 1;
                        continue 'cells;
                    }
                    c[j] = bx[j].lo;
                }
                break;
            }
        }
        Ok(())
    }
}

/// The box of tile `tc`, clipped to the non-empty domain `ned`.
fn tile_box(sub: &DenseSubarray, ned: &[(i128, i128)], tc: &[i128]) -> (Vec<i128>, Vec<i128>) {
    sub.axes
        .iter()
        .enumerate()
        .map(|(j, axis)| {
            let t = axis.tile_start(tc[j]);
            (t.max(ned[j].0), (t + axis.extent - 1).min(ned[j].1))
        })
        .unzip()
}

/// Whether a fragment of `later` writes again every cell of tile `tc`
/// inside the subarray: then it is neither read nor placed.
fn tiles_written_again(
    sub: &DenseSubarray,
    ned: &[(i128, i128)],
    tc: &[i128],
    later: &[&IntDomain],
) -> bool {
    let (lo, hi) = tile_box(sub, ned, tc);
    let hull = &sub.hull;
    later.iter().any(|g| {
        (0..sub.dims()).all(|j| g[j].0 <= lo[j].max(hull[j].0) && hi[j].min(hull[j].1) <= g[j].1)
    })
}
