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

impl FragmentWriter {
    /// The cells sorted and cut into tiles, with their R-tree.
    pub(super) fn sparse_layout(&self) -> Result<Layout, WriteError> {
        let dims = self.schema.dimensions.len();
        let order = {
            let b = &self.buffers;
            let f = &self.fields;
            let coord = |i: usize, j: usize| b[j].value(i, f[j].cell_size() as usize);
            GlobalOrder::new(&self.schema).sort(self.cells, &coord)
        };
        let cells: Vec<FieldBuffer> = self
            .buffers
            .par_iter()
            .zip(&self.fields)
            .map(|(b, f)| b.permuted(&order, f.cell_size() as usize, (&[], 0)))
            .collect();
        self.check_duplicates(&cells)?;
        let capacity = self.schema.capacity.max(1) as usize;
        let tiles: Vec<Range<usize>> = (0..self.cells)
            .step_by(capacity)
            .map(|s| s..(s + capacity).min(self.cells))
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

    /// No two cells share coordinates, unless the schema allows duplicates.
    fn check_duplicates(&self, sorted: &[FieldBuffer]) -> Result<(), WriteError> {
        // Kept versions share coordinates (their timestamps differ).
        if self.schema.allows_dups || self.has_timestamps() {
            return Ok(());
        }
        let dims = &self.fields[..self.schema.dimensions.len()];
        let same = |a: usize, b: usize| {
            dims.iter().enumerate().all(|(j, f)| {
                let cs = f.cell_size() as usize;
                sorted[j].value(a, cs) == sorted[j].value(b, cs)
            })
        };
        match (1..self.cells).find(|&i| same(i - 1, i)) {
            None => Ok(()),
            Some(i) => {
                let coords: Vec<String> = dims
                    .iter()
                    .enumerate()
                    .map(|(j, f)| {
                        let v =
                            Value::decode(f.datatype, sorted[j].value(i, f.cell_size() as usize));
                        format!("{} = {}", f.name, v.display())
                    })
                    .collect();
                Err(WriteError::Input(format!(
                    "two cells at {}: the array does not allow duplicates",
                    coords.join(", ")
                )))
            }
        }
    }
}
