//! A dense fragment written band by band: the box given up front, then
//! its cells in slabs of whole space tiles along the outermost dimension
//! of the tile order ([`box_bands`](super::dense::box_bands)), each slab's
//! cells row-major as a read of it returns them. Each band's tiles follow
//! the previous band's in the fragment's tile order, so they are filtered
//! and appended to the files at once: only one band's cells are held, with
//! the tile metadata of the tiles written. A dense consolidation writes
//! its box so, never holding the whole box.

use super::appended::{AppendedFragment, Facts};
use super::{FieldBuffer, FragmentWriter, RTREE_FANOUT};
use crate::WriteError;
use tessera_fragment::RTree;
use tessera_query::Column;
use tessera_tile::ArrayType;

/// Writes one dense fragment of a known box, band after band; see the module.
pub(crate) struct BandedFragmentWriter {
    w: FragmentWriter,
    out: AppendedFragment,
    /// The box, and the bands it is written in, in order.
    bounds: Vec<(i128, i128)>,
    bands: Vec<Vec<(i128, i128)>>,
    /// Bands written so far.
    written_bands: usize,
    /// Cells in a space tile.
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
        // A dense fragment's dimensions have no files.
        let out = AppendedFragment::create(&w, |f| !f.is_dimension)?;
        Ok(BandedFragmentWriter {
            w,
            out,
            bounds: bounds.to_vec(),
            bands,
            written_bands: 0,
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
        let order = laid.order.as_deref();
        self.out.append(&self.w, &laid.cells, &laid.tiles, order)?;
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
        let schema = &self.w.schema;
        let facts = Facts {
            non_empty_domain: super::dense::box_axes(schema, &self.bounds)
                .map(|axes| super::dense::box_domain(schema, &axes))?,
            dense: true,
            last_tile_cell_num: self.cells_per_tile,
        };
        let rtree = RTree {
            fanout: RTREE_FANOUT,
            levels: Vec::new(),
        };
        self.out.finish(&self.w, &rtree, facts, written)
    }
}
