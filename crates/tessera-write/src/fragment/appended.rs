//! A fragment whose data files are written tile after tile, as its cells
//! come: what the two streamed writers share (`stream.rs`, sparse cells
//! in global order; `bands.rs`, a dense box band by band). Each call
//! filters some tiles of every field in parallel, appends them to the
//! field's files and keeps their tile metadata; the fragment metadata file
//! and the commit come at the end, as for a fragment written whole.

use super::buffer::{FieldBuffer, FieldInfo};
use super::commit::{commit, FragmentFolder};
use super::dense::FILL;
use super::files::{FieldEncoder, FieldFileSet, FieldFiles, FilteredTile};
use super::metadata::FragmentFacts;
use super::stats::{tile_stats, TileStats};
use super::FragmentWriter;
use crate::WriteError;
use rayon::prelude::*;
use std::ops::Range;
use tessera_fragment::RTree;
use tessera_schema::Range1D;

/// The fragment's folder, its fields' files and the metadata of the
/// tiles written so far.
pub(super) struct AppendedFragment {
    folder: FragmentFolder,
    /// Each field's files; `None` for a field with none (a dense
    /// fragment's dimensions).
    files: Vec<Option<FieldFileSet>>,
    stats: Vec<Vec<TileStats>>,
    /// Cells of each tile written (a dense tile's padding left out).
    tile_cells: Vec<u64>,
}

impl AppendedFragment {
    /// The folder of `w`'s fragment and the files of the fields `stored`
    /// keeps, created now (invisible until committed).
    pub fn create(
        w: &FragmentWriter,
        stored: impl Fn(&FieldInfo) -> bool,
    ) -> Result<AppendedFragment, WriteError> {
        let folder = FragmentFolder::create(&w.array, w.range(), w.schema.version.number())?;
        let files = (0..w.fields.len())
            .map(|i| {
                let (_, stem) = w.filters_and_stem(i);
                let f = &w.fields[i];
                stored(f)
                    .then(|| FieldFileSet::create(&folder.dir, &stem, f))
                    .transpose()
            })
            .collect::<Result<_, _>>()?;
        Ok(AppendedFragment {
            folder,
            files,
            stats: vec![Vec::new(); w.fields.len()],
            tile_cells: Vec::new(),
        })
    }

    /// Filters the tiles `tiles` of each field's cells (`cells`, in the
    /// order of `w`'s fields) and appends them; `order` is a dense
    /// layout's placement ([`FILL`] for padding, left out of the tile
    /// metadata and the cell counts).
    pub fn append(
        &mut self,
        w: &FragmentWriter,
        cells: &[FieldBuffer],
        tiles: &[Range<usize>],
        order: Option<&[usize]>,
    ) -> Result<(), WriteError> {
        let keyed = (w.key, w.release);
        let files = &self.files;
        let filtered: Vec<Option<Vec<FilteredTile>>> = (0..w.fields.len())
            .into_par_iter()
            .map(|i| {
                if files[i].is_none() {
                    return Ok(None);
                }
                let (filters, _) = w.filters_and_stem(i);
                let encoder = FieldEncoder::new(&w.schema, &w.fields[i], filters, keyed);
                tiles
                    .par_iter()
                    .map(|r| encoder.encode(&cells[i], r.clone()))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some)
            })
            .collect::<Result<_, WriteError>>()?;
        for (i, field_tiles) in filtered.into_iter().enumerate() {
            let (Some(field_tiles), Some(files)) = (field_tiles, &mut self.files[i]) else {
                continue;
            };
            let f = &w.fields[i];
            self.stats[i].extend(
                tiles
                    .iter()
                    .map(|r| tile_stats(f, &cells[i], r.clone(), order)),
            );
            for t in field_tiles {
                files.append(t)?;
            }
        }
        self.tile_cells
            .extend(tiles.iter().map(|r| placed_cells(order, r.clone())));
        Ok(())
    }

    /// Cells of the last tile written.
    pub fn last_tile_cells(&self) -> u64 {
        self.tile_cells.last().copied().unwrap_or(0)
    }

    /// Writes the fragment metadata (`facts` less the tile count, which
    /// the tiles written give), calls `written`, then commits the
    /// fragment; returns its name.
    pub fn finish(
        self,
        w: &FragmentWriter,
        rtree: &RTree,
        facts: Facts,
        written: &mut dyn FnMut(),
    ) -> Result<Vec<String>, WriteError> {
        let fields: Vec<(FieldFiles, Vec<TileStats>)> = self
            .files
            .into_iter()
            .zip(self.stats)
            .map(|(f, s)| {
                let files = f.map(FieldFileSet::finish).transpose()?;
                Ok((files.unwrap_or_default(), s))
            })
            .collect::<Result<_, WriteError>>()?;
        let facts = FragmentFacts {
            schema_name: w.schema.name.clone(),
            non_empty_domain: facts.non_empty_domain,
            dense: facts.dense,
            tile_num: self.tile_cells.len() as u64,
            last_tile_cell_num: facts.last_tile_cell_num,
            has_timestamps: w.has_timestamps(),
        };
        let tile_cells = &self.tile_cells;
        let meta = w.metadata_file(&fields, rtree, facts, &|t| tile_cells[t])?;
        self.folder.write_metadata(&meta)?;
        written();
        let version = w.schema.version.number();
        commit(&w.array, vec![self.folder], (w.timestamp, version))
    }
}

/// What the fragment metadata says of an appended fragment besides its
/// tiles.
pub(super) struct Facts {
    pub non_empty_domain: Vec<Range1D>,
    pub dense: bool,
    pub last_tile_cell_num: u64,
}

/// The cells written in the tile at `r`: all of its positions, or with a
/// dense layout's `order`, those not [`FILL`].
pub(super) fn placed_cells(order: Option<&[usize]>, r: Range<usize>) -> u64 {
    match order {
        Some(o) => o[r].iter().filter(|&&k| k != FILL).count() as u64,
        None => r.len() as u64,
    }
}
