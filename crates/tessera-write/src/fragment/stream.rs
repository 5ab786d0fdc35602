//! A sparse fragment written as its cells come, already in the array's
//! global order (a consolidation reads them so, batch after batch): each
//! tile is filtered and appended to the field's files as soon as it is
//! full, so only the cells of one batch and of the tile being filled are
//! held, with the tile metadata (offsets, MBRs, statistics) of the tiles
//! written. The metadata file and the commit come at the end, as for a
//! fragment written whole.

use super::appended::{AppendedFragment, Facts};
use super::{FragmentWriter, RTREE_FANOUT};
use crate::WriteError;
use std::ops::Range;
use tessera_cells::Column;
use tessera_fragment::RTree;
use tessera_schema::Range1D;
use tessera_tile::ArrayType;

/// Writes one sparse fragment from cells given in global order; see the
/// module. Built from a [`FragmentWriter`] (its array, schema, fields and
/// options), which holds the cells not yet in a tile.
pub(crate) struct SortedFragmentWriter {
    w: FragmentWriter,
    out: AppendedFragment,
    mbrs: Vec<Vec<Range1D>>,
}

impl SortedFragmentWriter {
    /// The fragment's folder and data files, created now (invisible until
    /// committed).
    pub fn new(w: FragmentWriter) -> Result<SortedFragmentWriter, WriteError> {
        if w.schema.array_type != ArrayType::Sparse {
            return Err(WriteError::Input(
                "cells in global order are written into sparse fragments only".into(),
            ));
        }
        let out = AppendedFragment::create(&w, |_| true)?;
        Ok(SortedFragmentWriter {
            w,
            out,
            mbrs: Vec::new(),
        })
    }

    /// Adds cells that follow, in global order, those added before; every
    /// full tile is written out.
    pub fn write_owned(&mut self, columns: Vec<Column>) -> Result<(), WriteError> {
        self.w.write_owned(columns)?;
        self.flush(false)
    }

    /// Writes out the full tiles held (with `all`, the last partial one too).
    fn flush(&mut self, all: bool) -> Result<(), WriteError> {
        let capacity = self.w.schema.capacity.max(1) as usize;
        let held = self.w.cells;
        let whole = match all {
            true => held,
            false => held / capacity * capacity,
        };
        if whole == 0 {
            return Ok(());
        }
        self.w.check_domain()?;
        let tiles: Vec<Range<usize>> = (0..whole)
            .step_by(capacity)
            .map(|s| s..(s + capacity).min(whole))
            .collect();
        let w = &self.w;
        self.out.append(w, &w.buffers, &tiles)?;
        let dims = w.schema.dimensions.len();
        for r in &tiles {
            self.mbrs.push(w.mbr(&w.buffers[..dims], r.clone()));
        }
        let sizes: Vec<usize> = w.fields.iter().map(|f| f.cell_size() as usize).collect();
        for (b, cs) in self.w.buffers.iter_mut().zip(sizes) {
            b.drain_front(whole, cs);
        }
        self.w.cells -= whole;
        self.w.written += whole;
        Ok(())
    }

    /// Writes the last tile and the fragment metadata, calls `written`,
    /// then commits the fragment; returns its name (none when no cell was
    /// written).
    pub fn finish_observed(mut self, written: &mut dyn FnMut()) -> Result<Vec<String>, WriteError> {
        self.flush(true)?;
        if self.w.written == 0 {
            return Ok(Vec::new());
        }
        let rtree = RTree::build(self.mbrs, RTREE_FANOUT, &self.w.schema.dimensions);
        let facts = Facts {
            non_empty_domain: rtree.root_mbr(),
            dense: false,
            last_tile_cell_num: self.out.last_tile_cells(),
        };
        self.out.finish(&self.w, &rtree, facts, written)
    }
}
