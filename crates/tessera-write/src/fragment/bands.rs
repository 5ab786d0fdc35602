//! A dense fragment written band by band: the box given up front, then
//! its cells in slabs of whole space tiles along the outermost dimension
//! of the tile order ([`box_bands`](super::dense::box_bands)), each slab's
//! cells row-major as a read of it returns them. Each band's tiles follow
//! the previous band's in the fragment's tile order, so they are filtered
//! and appended to the files at once: only one band's cells are held, with
//! the tile metadata of the tiles written. A dense consolidation writes
//! its box so, never holding the whole box.

use super::commit::{commit, FragmentFolder};
use super::files::{FieldEncoder, FieldFileSet, FieldFiles, FilteredTile};
use super::metadata::FragmentFacts;
use super::stats::{tile_stats, TileStats};
use super::{FieldBuffer, FragmentWriter, RTREE_FANOUT};
use crate::WriteError;
use rayon::prelude::*;
use tessera_fragment::RTree;
use tessera_query::Column;
use tessera_tile::ArrayType;

/// Writes one dense fragment of a known box, band after band; see the module.
pub(crate) struct BandedFragmentWriter {
    w: FragmentWriter,
    folder: FragmentFolder,
    /// The attributes' files (a dense fragment's dimensions have none).
    files: Vec<Option<FieldFileSet>>,
    stats: Vec<Vec<TileStats>>,
    /// The box, and the bands it is written in, in order.
    bounds: Vec<(i128, i128)>,
    bands: Vec<Vec<(i128, i128)>>,
    /// Bands written so far.
    written_bands: usize,
    /// Cells of each tile written (padding left out).
    tile_cells: Vec<u64>,
    cells_per_tile: u64,
}

impl BandedFragmentWriter {
    /// The fragment of the box `bounds` (checked as
    /// [`write_box`](FragmentWriter::write_box) checks it), to be written
    /// in bands of at most `band_cells` cells (or one row of tiles); its
    /// folder and files are created now, invisible until committed.
    pub fn new(
        w: FragmentWriter,
        bounds: &[(i128, i128)],
        band_cells: u64,
    ) -> Result<BandedFragmentWriter, WriteError> {
        if w.schema.array_type != ArrayType::Dense {
            return Err(WriteError::Input(
                "a box written in bands is written to dense arrays only".into(),
            ));
        }
        let bands = super::dense::box_bands(&w.schema, bounds, band_cells)?;
        w.check_box_in_current_domain(bounds)?;
        let folder = FragmentFolder::create(&w.array, w.range(), w.schema.version.number())?;
        let files = (0..w.fields.len())
            .map(|i| {
                let (_, stem) = w.filters_and_stem(i);
                let f = &w.fields[i];
                (!f.is_dimension)
                    .then(|| FieldFileSet::create(&folder.dir, &stem, f))
                    .transpose()
            })
            .collect::<Result<_, _>>()?;
        Ok(BandedFragmentWriter {
            stats: vec![Vec::new(); w.fields.len()],
            w,
            folder,
            files,
            bounds: bounds.to_vec(),
            bands,
            written_bands: 0,
            tile_cells: Vec::new(),
            cells_per_tile: 0,
        })
    }

    /// The bands to write, in order: each one's box.
    pub fn bands(&self) -> &[Vec<(i128, i128)>] {
        &self.bands
    }

    /// Writes the next band: `columns` (one per attribute, by name; a
    /// nullable one left out is null) hold its cells row-major.
    pub fn write_band(&mut self, columns: Vec<Column>) -> Result<(), WriteError> {
        let Some(band) = self.bands.get(self.written_bands).cloned() else {
            return Err(WriteError::Input(format!(
                "the {} bands of the box are written already",
                self.bands.len()
            )));
        };
        self.w.write_box(&band, columns)?;
        let laid = self.w.dense_layout()?;
        let w = &self.w;
        let keyed = (w.key, w.release);
        let filtered: Vec<Option<Vec<FilteredTile>>> = (0..w.fields.len())
            .into_par_iter()
            .map(|i| {
                if w.fields[i].is_dimension {
                    return Ok(None);
                }
                let (filters, _) = w.filters_and_stem(i);
                let encoder = FieldEncoder::new(&w.schema, &w.fields[i], filters, keyed);
                laid.tiles
                    .par_iter()
                    .map(|r| encoder.encode(&laid.cells[i], r.clone()))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some)
            })
            .collect::<Result<_, WriteError>>()?;
        let order = laid.order.as_deref();
        for (i, tiles) in filtered.into_iter().enumerate() {
            let (Some(tiles), Some(files)) = (tiles, &mut self.files[i]) else {
                continue;
            };
            let f = &w.fields[i];
            self.stats[i].extend(
                laid.tiles
                    .iter()
                    .map(|r| tile_stats(f, &laid.cells[i], r.clone(), order)),
            );
            for t in tiles {
                files.append(t)?;
            }
        }
        let placed = |r: &std::ops::Range<usize>| match order {
            Some(o) => o[r.clone()].iter().filter(|&&k| k != super::FILL).count() as u64,
            None => r.len() as u64,
        };
        self.tile_cells.extend(laid.tiles.iter().map(placed));
        self.cells_per_tile = laid.last_tile_cell_num;
        // The band is out: the writer takes the next one afresh.
        self.w.written += self.w.cells;
        self.w.cells = 0;
        self.w.dense_box = None;
        self.w.buffers = self.w.fields.iter().map(FieldBuffer::new).collect();
        self.written_bands += 1;
        Ok(())
    }

    /// Writes the fragment metadata once every band is in, calls
    /// `written`, then commits the fragment; returns its name.
    pub fn finish_observed(self, written: &mut dyn FnMut()) -> Result<Vec<String>, WriteError> {
        if self.written_bands != self.bands.len() {
            return Err(WriteError::Input(format!(
                "{} of the box's {} bands written: a dense fragment holds its whole box",
                self.written_bands,
                self.bands.len()
            )));
        }
        let fields: Vec<(FieldFiles, Vec<TileStats>)> = self
            .files
            .into_iter()
            .zip(self.stats)
            .map(|(f, s)| {
                Ok((
                    f.map(FieldFileSet::finish).transpose()?.unwrap_or_default(),
                    s,
                ))
            })
            .collect::<Result<_, WriteError>>()?;
        let schema = &self.w.schema;
        let non_empty_domain = super::dense::box_axes(schema, &self.bounds)
            .map(|axes| super::dense::box_domain(schema, &axes))?;
        let facts = FragmentFacts {
            schema_name: schema.name.clone(),
            non_empty_domain,
            dense: true,
            tile_num: self.tile_cells.len() as u64,
            last_tile_cell_num: self.cells_per_tile,
            has_timestamps: self.w.has_timestamps(),
        };
        let rtree = RTree {
            fanout: RTREE_FANOUT,
            levels: Vec::new(),
        };
        let tile_cells = &self.tile_cells;
        let meta = self
            .w
            .metadata_file(&fields, &rtree, facts, &|t| tile_cells[t])?;
        self.folder.write_metadata(&meta)?;
        written();
        let version = schema.version.number();
        commit(
            &self.w.array,
            vec![self.folder],
            (self.w.timestamp, version),
        )
    }
}
