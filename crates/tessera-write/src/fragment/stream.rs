//! A sparse fragment written as its cells come, already in the array's
//! global order (a consolidation reads them so, batch after batch): each
//! tile is filtered and appended to the field's files as soon as it is
//! full, so only the cells of one batch and of the tile being filled are
//! held, with the tile metadata (offsets, MBRs, statistics) of the tiles
//! written. The metadata file and the commit come at the end, as for a
//! fragment written whole.

use super::commit::{commit, FragmentFolder};
use super::files::{FieldEncoder, FieldFileSet, FilteredTile};
use super::metadata::FragmentFacts;
use super::stats::{tile_stats, TileStats};
use super::{FragmentWriter, RTREE_FANOUT};
use crate::WriteError;
use rayon::prelude::*;
use std::ops::Range;
use tessera_fragment::RTree;
use tessera_query::Column;
use tessera_schema::Range1D;
use tessera_tile::ArrayType;

/// Writes one sparse fragment from cells given in global order; see the
/// module. Built from a [`FragmentWriter`] (its array, schema, fields and
/// options), which holds the cells not yet in a tile.
pub(crate) struct SortedFragmentWriter {
    w: FragmentWriter,
    folder: FragmentFolder,
    files: Vec<FieldFileSet>,
    stats: Vec<Vec<TileStats>>,
    mbrs: Vec<Vec<Range1D>>,
    /// Cells of each tile written.
    tile_cells: Vec<u64>,
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
        let folder = FragmentFolder::create(&w.array, w.range(), w.schema.version.number())?;
        let files = (0..w.fields.len())
            .map(|i| {
                let (_, stem) = w.filters_and_stem(i);
                FieldFileSet::create(&folder.dir, &stem, &w.fields[i])
            })
            .collect::<Result<_, _>>()?;
        Ok(SortedFragmentWriter {
            stats: vec![Vec::new(); w.fields.len()],
            w,
            folder,
            files,
            mbrs: Vec::new(),
            tile_cells: Vec::new(),
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
        let w = &self.w;
        self.w.check_domain()?;
        let tiles: Vec<Range<usize>> = (0..whole)
            .step_by(capacity)
            .map(|s| s..(s + capacity).min(whole))
            .collect();
        let keyed = (w.key, w.release);
        // Every field's tiles, filtered in parallel.
        let filtered: Vec<Vec<FilteredTile>> = (0..w.fields.len())
            .into_par_iter()
            .map(|i| {
                let (filters, _) = w.filters_and_stem(i);
                let encoder = FieldEncoder::new(&w.schema, &w.fields[i], filters, keyed);
                tiles
                    .par_iter()
                    .map(|r| encoder.encode(&w.buffers[i], r.clone()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()?;
        let dims = w.schema.dimensions.len();
        for r in &tiles {
            self.mbrs.push(w.mbr(&w.buffers[..dims], r.clone()));
            self.tile_cells.push(r.len() as u64);
        }
        for (i, field_tiles) in filtered.into_iter().enumerate() {
            let f = &w.fields[i];
            for r in &tiles {
                self.stats[i].push(tile_stats(f, &w.buffers[i], r.clone(), None));
            }
            for t in field_tiles {
                self.files[i].append(t)?;
            }
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
        let fields: Vec<(super::files::FieldFiles, Vec<TileStats>)> = self
            .files
            .into_iter()
            .zip(self.stats)
            .map(|(f, s)| Ok((f.finish()?, s)))
            .collect::<Result<_, WriteError>>()?;
        let rtree = RTree::build(self.mbrs, RTREE_FANOUT, &self.w.schema.dimensions);
        let non_empty_domain = rtree.root_mbr();
        let facts = FragmentFacts {
            schema_name: self.w.schema.name.clone(),
            non_empty_domain,
            dense: false,
            tile_num: self.tile_cells.len() as u64,
            last_tile_cell_num: self.tile_cells.last().copied().unwrap_or(0),
            has_timestamps: self.w.has_timestamps(),
        };
        let tile_cells = &self.tile_cells;
        let meta = self
            .w
            .metadata_file(&fields, &rtree, facts, &|t| tile_cells[t])?;
        self.folder.write_metadata(&meta)?;
        written();
        let version = self.w.schema.version.number();
        commit(
            &self.w.array,
            vec![self.folder],
            (self.w.timestamp, version),
        )
    }
}
