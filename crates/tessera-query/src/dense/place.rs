//! Where a dense read's cells go: each attribute's output cut into
//! regions filled in parallel, the bands of a fragment's tiles, and the
//! runs and cells copied into them.

use super::subarray::{placed_ranges, Axis};
use crate::context::ReadContext;
use crate::decode::{cells_past_tile, FieldTile, Runs};
use crate::result::cut;
use crate::QueryError;
use std::sync::Arc;
use tessera_schema::Attribute;

/// One attribute's output of a dense read, filled in place.
pub(crate) struct DenseOut {
    pub(crate) fixed: Option<Vec<u8>>,
    /// Var-sized cells as (buffer id, start, length).
    pub(crate) var: Option<Vec<(u32, u64, u64)>>,
    pub(crate) validity: Option<Vec<u8>>,
    pub(crate) cell: usize,
}

impl DenseOut {
    /// The output of attribute `at` for `n` cells, starting as fill values;
    /// var-sized cells name buffer `fill_id`, the fill value. Where
    /// `covered` (fragments will write every cell anyway) fixed-sized cells
    /// start as whatever their memory held (zeros from the kernel, or a
    /// recycled result's old cells): no pass over them.
    pub(crate) fn new(
        ctx: &ReadContext,
        at: &Attribute,
        n: usize,
        covered: bool,
        fill_id: u32,
    ) -> DenseOut {
        let cell = at.cell_size() as usize;
        let mut fill = at.fill_value.clone();
        fill.resize(if at.is_var() { fill.len() } else { cell }, 0);
        DenseOut {
            fixed: (!at.is_var()).then(|| {
                if covered {
                    ctx.result_overwritten(n * cell)
                } else {
                    let mut b = ctx.result_buffer(n * cell);
                    if n > 0 {
                        b.extend_from_slice(&fill);
                    }
                    // Doubling copies of the fill value.
                    while b.len() < n * cell {
                        b.extend_from_within(..b.len().min(n * cell - b.len()));
                    }
                    b
                }
            }),
            var: at
                .is_var()
                .then(|| vec![(fill_id, 0, at.fill_value.len() as u64); n]),
            validity: at
                .nullable
                .then(|| ctx.result_filled(n, at.fill_validity as u8)),
            cell,
        }
    }
}

/// One attribute's share of a dense result: the cells of one region of
/// result positions, borrowed from its [`DenseOut`], so that regions are
/// filled in parallel.
pub(crate) struct BandOut<'o> {
    pub(crate) fixed: Option<&'o mut [u8]>,
    pub(crate) var: Option<&'o mut [(u32, u64, u64)]>,
    pub(crate) validity: Option<&'o mut [u8]>,
    pub(crate) cell: usize,
}

impl BandOut<'_> {
    /// The same cells, borrowed again (for a shorter while).
    pub(crate) fn reborrow(&mut self) -> BandOut<'_> {
        BandOut {
            fixed: self.fixed.as_deref_mut(),
            var: self.var.as_deref_mut(),
            validity: self.validity.as_deref_mut(),
            cell: self.cell,
        }
    }
}

/// Cuts every output into the regions `[start, end)` of result positions
/// (sorted, disjoint, inside the result): per region, one view per output.
pub(crate) fn band_outs<'o>(
    outs: &'o mut [DenseOut],
    regions: &[(usize, usize)],
) -> Vec<Vec<BandOut<'o>>> {
    let whole = outs
        .iter_mut()
        .map(|o| BandOut {
            fixed: o.fixed.as_deref_mut(),
            var: o.var.as_deref_mut(),
            validity: o.validity.as_deref_mut(),
            cell: o.cell,
        })
        .collect();
    split_views(whole, regions)
}

/// Cuts views into the regions `[start, end)` of their cells (sorted,
/// disjoint, inside the views): per region, one view per output.
pub(crate) fn split_views<'o>(
    views: Vec<BandOut<'o>>,
    regions: &[(usize, usize)],
) -> Vec<Vec<BandOut<'o>>> {
    let mut out: Vec<Vec<BandOut<'o>>> = regions.iter().map(|_| Vec::new()).collect();
    for v in views {
        let w = v.cell;
        let (mut fixed, mut var, mut validity) = (v.fixed, v.var, v.validity);
        let mut at = 0;
        for (o, &(start, end)) in out.iter_mut().zip(regions) {
            o.push(BandOut {
                fixed: cut(&mut fixed, (start - at) * w, (end - start) * w),
                var: cut(&mut var, start - at, end - start),
                validity: cut(&mut validity, start - at, end - start),
                cell: w,
            });
            at = end;
        }
    }
    out
}

/// The bands of a dense fragment's `tiles` along result dimension `j`
/// (grid `axis`, non-empty domain `ned`, subarray ranges `sub`): per band,
/// its first and last position on `j` and its members (indexes into
/// `tiles`), sorted by position. `None` where a band's positions are not
/// one interval (ranges that overlap, or out of order): then the whole
/// result is one region.
#[allow(clippy::type_complexity)]
pub(crate) fn dense_bands(
    tiles: &[Vec<i128>],
    j: usize,
    axis: &Axis,
    ned: (i128, i128),
    sub: &[(i128, i128)],
) -> Option<Vec<(u64, u64, Vec<usize>)>> {
    let mut sorted = sub.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[1].0 <= w[0].1) {
        return None;
    }
    let mut by_coord: std::collections::BTreeMap<i128, Vec<usize>> = Default::default();
    for (i, tc) in tiles.iter().enumerate() {
        by_coord.entry(tc[j]).or_default().push(i);
    }
    let mut bands = Vec::with_capacity(by_coord.len());
    for (t, members) in by_coord {
        let (lo, hi) = (
            axis.tile_start(t).max(ned.0),
            (axis.tile_start(t + 1) - 1).min(ned.1),
        );
        // Positions of the band's coordinates: an interval per range.
        let (mut first, mut last, mut count) = (u64::MAX, 0u64, 0u64);
        for (at, a, b) in placed_ranges(sub) {
            let (x, y) = (a.max(lo), b.min(hi));
            if x <= y {
                let p = at + (x - a) as u64;
                let q = at + (y - a) as u64;
                first = first.min(p);
                last = last.max(q);
                count += q - p + 1;
            }
        }
        if count == 0 || last - first + 1 != count {
            return None;
        }
        bands.push((first, last, members));
    }
    bands.sort_unstable_by_key(|b| b.0);
    Some(bands)
}

/// Copies the runs `wanted` (first cell in the tile, first position in the
/// region, cells) of a fixed-sized tile (and its validity) into a region.
pub(crate) fn copy_runs(
    tile: &FieldTile,
    o: &mut BandOut<'_>,
    wanted: &[(usize, usize, usize)],
    fragment: &str,
) -> Result<(), QueryError> {
    let w = o.cell;
    for &(cell, ri, len) in wanted {
        if (cell + len) * w > tile.data.len() {
            return Err(cells_past_tile(fragment, cell as u64..(cell + len) as u64));
        }
        if let Some(fx) = &mut o.fixed {
            fx[ri * w..(ri + len) * w].copy_from_slice(&tile.data[cell * w..(cell + len) * w]);
        }
        if let Some(val) = &mut o.validity {
            match &tile.validity {
                Some(v) => val[ri..ri + len].copy_from_slice(&v[cell..cell + len]),
                None => val[ri..ri + len].fill(1),
            }
        }
    }
    Ok(())
}

/// The destinations of the runs `wanted` (as in [`copy_runs`]) in a region
/// of `w`-byte cells, cut apart, each with its first byte in the tile, in
/// the order of `wanted`; `None` where two runs share a position (ranges
/// that overlap).
pub(crate) fn carve_runs<'r>(
    mut region: &'r mut [u8],
    w: usize,
    wanted: &[(usize, usize, usize)],
) -> Result<Option<Runs<'r>>, QueryError> {
    let mut order: Vec<usize> = (0..wanted.len()).collect();
    order.sort_unstable_by_key(|&i| wanted[i].1);
    let mut out = Vec::with_capacity(order.len());
    let mut at = 0;
    for i in order {
        let (cell, ri, len) = wanted[i];
        let Some(skip) = (ri * w).checked_sub(at) else {
            return Ok(None);
        };
        if (ri + len) * w > region.len() + at {
            return Err(QueryError::Invalid(format!(
                "result positions {ri}..{} pass their region",
                ri + len
            )));
        }
        let (_, rest) = std::mem::take(&mut region).split_at_mut(skip);
        let (dst, rest) = rest.split_at_mut(len * w);
        out.push((i, (cell * w) as u64, dst));
        region = rest;
        at = (ri + len) * w;
    }
    // Back in the order asked.
    out.sort_unstable_by_key(|r| r.0);
    Ok(Some(out.into_iter().map(|(_, at, d)| (at, d)).collect()))
}

/// Writes cell `cell` of `tile` (or, without a tile, the fill value of
/// attribute `at`: the fragment predates it) at position `ri` of a region.
/// Var-sized cells name their bytes by `id` ([`var_ids`]).
pub(crate) fn put_cell(
    o: &mut BandOut<'_>,
    tile: Option<&FieldTile>,
    cell: usize,
    ri: usize,
    at: &Attribute,
    id: u32,
    fragment: &str,
) -> Result<(), QueryError> {
    match tile {
        Some(tile) => {
            if cell >= tile.cells as usize {
                return Err(QueryError::Invalid(format!(
                    "fragment {fragment}: cell {cell} is past its tile"
                )));
            }
            if let Some(fx) = &mut o.fixed {
                let v = tile.value(cell);
                if v.len() == o.cell {
                    fx[ri * o.cell..(ri + 1) * o.cell].copy_from_slice(v);
                }
            }
            if let Some(vv) = &mut o.var {
                let offs = tile.offsets.as_ref().expect("var tile");
                vv[ri] = (id, offs[cell], offs[cell + 1] - offs[cell]);
            }
            if let Some(val) = &mut o.validity {
                val[ri] = tile.valid(cell) as u8;
            }
        }
        None => {
            if let Some(fx) = &mut o.fixed {
                fx[ri * o.cell..(ri + 1) * o.cell]
                    .copy_from_slice(&at.fill_value[..o.cell.min(at.fill_value.len())]);
            }
            if let Some(vv) = &mut o.var {
                vv[ri] = (id, 0, at.fill_value.len() as u64);
            }
            if let Some(val) = &mut o.validity {
                val[ri] = at.fill_validity as u8;
            }
        }
    }
    Ok(())
}

/// The buffer ids var-sized cells of these tiles name: each var-sized
/// tile's values move into `bufs` (they are not needed after placing)
/// under a new id; a field without a tile names its attribute's fill
/// value, buffer `k`.
pub(crate) fn var_ids(
    fields: &mut [Option<FieldTile>],
    outs: &[BandOut<'_>],
    bufs: &mut Vec<Arc<Vec<u8>>>,
) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..fields.len() as u32).collect();
    for ((f, o), id) in fields.iter_mut().zip(outs).zip(&mut ids) {
        if let (Some(tile), Some(_)) = (f, &o.var) {
            bufs.push(Arc::new(std::mem::take(&mut tile.data)));
            *id = (bufs.len() - 1) as u32;
        }
    }
    ids
}
