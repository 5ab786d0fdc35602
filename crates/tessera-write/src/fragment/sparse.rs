//! A sparse fragment's layout: the cells sorted into the array's global
//! order (no two at the same coordinates unless duplicates are allowed),
//! tiles cut at the schema's capacity, each tile's MBR, the R-tree over
//! them.

use super::buffer::FieldBuffer;
use super::{FragmentWriter, Layout, RTREE_FANOUT};
use crate::WriteError;
use rayon::prelude::*;
use std::ops::Range;
use tessera_cells::order::GlobalOrder;
use tessera_fragment::RTree;
use tessera_schema::{Range1D, Value};

/// What a sparse write does with cells given twice at one coordinate, in
/// an array whose schema does not allow duplicates: libtiledb's
/// `sm.check_coord_dups` and `sm.dedup_coords` settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Duplicates {
    /// The write is refused, naming the coordinates (libtiledb's default).
    #[default]
    Refuse,
    /// Every cell is written, as libtiledb does with `sm.check_coord_dups`
    /// off: a read then gives any of them.
    Keep,
    /// One cell of each coordinate is written, the first given, as
    /// libtiledb does with `sm.dedup_coords` on (which one it keeps, its
    /// sort decides).
    Drop,
}

impl FragmentWriter {
    /// The cells sorted and cut into tiles, with their R-tree.
    pub(super) fn sparse_layout(&self) -> Result<Layout, WriteError> {
        let dims = self.schema.dimensions.len();
        let b = &self.buffers;
        let f = &self.fields;
        let coord = |i: usize, j: usize| b[j].value(i, f[j].cell_size() as usize);
        let mut order = GlobalOrder::new(&self.schema).sort(self.cells, &coord);
        // Kept versions share coordinates (their timestamps differ).
        if !self.schema.allows_dups && !self.has_timestamps() {
            let same = |a: usize, b: usize| (0..dims).all(|j| coord(a, j) == coord(b, j));
            match self.duplicates {
                Duplicates::Refuse => {
                    if let Some(w) = order.windows(2).find(|w| same(w[0], w[1])) {
                        return Err(self.duplicate_at(w[1]));
                    }
                }
                // The first of each run of cells at one coordinate kept
                // (the sort is stable).
                Duplicates::Drop => order.dedup_by(|later, kept| same(*kept, *later)),
                Duplicates::Keep => {}
            }
        }
        let cells: Vec<FieldBuffer> = self
            .buffers
            .par_iter()
            .zip(&self.fields)
            .map(|(b, f)| b.permuted(&order, f.cell_size() as usize, (&[], 0)))
            .collect();
        let n = order.len();
        let capacity = self.schema.capacity.max(1) as usize;
        let tiles: Vec<Range<usize>> = (0..n)
            .step_by(capacity)
            .map(|s| s..(s + capacity).min(n))
            .collect();
        let mbrs: Vec<Vec<Range1D>> = tiles
            .iter()
            .map(|r| self.mbr(&cells[..dims], r.clone()))
            .collect();
        let rtree = RTree::build(mbrs, RTREE_FANOUT, &self.schema.dimensions);
        Ok(Layout {
            cells,
            tiles,
            rtree,
        })
    }

    /// The MBR of the cells `r` (sorted dimension buffers `dims`).
    pub(super) fn mbr(&self, dims: &[FieldBuffer], r: Range<usize>) -> Vec<Range1D> {
        dims.iter()
            .zip(&self.fields)
            .map(|(b, f)| {
                let cs = f.cell_size() as usize;
                // Each coordinate decoded once; the bounds kept decoded.
                let value = |i: usize| Value::decode(f.datatype, b.value(i, cs));
                let (mut lo, mut hi) = (r.start, r.start);
                let (mut lo_v, mut hi_v) = (value(lo), value(hi));
                for i in r.clone() {
                    let v = value(i);
                    if v.cmp(&lo_v).is_lt() {
                        (lo, lo_v) = (i, v.clone());
                    }
                    if v.cmp(&hi_v).is_gt() {
                        (hi, hi_v) = (i, v);
                    }
                }
                Range1D {
                    lo: b.value(lo, cs).to_vec(),
                    hi: b.value(hi, cs).to_vec(),
                }
            })
            .collect()
    }

    /// The error refusing a write with two cells at the coordinates of
    /// cell `i` (as given).
    fn duplicate_at(&self, i: usize) -> WriteError {
        let dims = &self.fields[..self.schema.dimensions.len()];
        let coords: Vec<String> = (dims.iter().zip(&self.buffers))
            .map(|(f, b)| {
                let v = Value::decode(f.datatype, b.value(i, f.cell_size() as usize));
                format!("{} = {}", f.name, v.display())
            })
            .collect();
        WriteError::Input(format!(
            "two cells at {}: the array does not allow duplicates",
            coords.join(", ")
        ))
    }
}
