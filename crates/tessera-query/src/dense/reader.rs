//! The dense reader: every cell of the subarray, from the newest fragment
//! that wrote it, else the fill value.

use super::fragments::DenseFragments;
use super::place::{band_outs, put_cell, var_ids, DenseOut};
use super::placer::{FragmentPlacer, Waiting};
use super::subarray::DenseSubarray;
use super::tile_grid::FragmentTiles;
use crate::decode::{FieldSpec, TileRuns};
use crate::read::Read;
use crate::result::{CoordinateGrid, GridDimension, ReadResult};
use crate::sparse::sparse_tiles;
use crate::QueryError;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use tessera_schema::Value;
use tessera_schema::{ArraySchema, Attribute};
use tessera_tile::Layout;

/// The dense reader: a read of a dense array. Each fragment's tiles are
/// placed into the result band by band, in parallel (`placer`), and the
/// bands of fragments that fill regions apart from each other's all at
/// once; cells no fragment wrote keep the fill value.
pub(crate) struct DenseReader<'r, 'a> {
    read: &'r Read<'a>,
}

impl<'r, 'a> DenseReader<'r, 'a> {
    /// The reader of `read`.
    pub(crate) fn new(read: &'r Read<'a>) -> Self {
        DenseReader { read }
    }

    /// The dense read: every cell of the subarray, from the newest
    /// fragment that wrote it, else the fill value.
    pub(crate) fn run(
        &self,
        schema: &Arc<ArraySchema>,
        attrs: &[String],
        layout: Layout,
    ) -> Result<ReadResult, QueryError> {
        let sub = DenseSubarray::new(schema, &self.read.ranges, layout)?;
        let fragments = DenseFragments::new(&self.read.array.fragments, schema, attrs);
        let attributes: Vec<&Attribute> = attrs
            .iter()
            .map(|a| schema.attribute(a).expect("checked"))
            .collect();
        // Outputs start as fill values, unless fragments writing every
        // selected attribute cover the subarray.
        let covered = fragments.cover(&sub);
        let mut bufs: Vec<Arc<Vec<u8>>> = Vec::new();
        let mut outs: Vec<DenseOut> = Vec::with_capacity(attrs.len());
        for at in &attributes {
            bufs.push(Arc::new(at.fill_value.clone()));
            let fill_id = (bufs.len() - 1) as u32;
            outs.push(DenseOut::new(
                &self.read.context,
                at,
                sub.cells,
                covered,
                fill_id,
            ));
        }
        // Fragments waiting to be placed at once: their bands fill regions
        // of the result apart from each other's.
        let at_once = self.read.request.tuning.dense_band_bytes != u64::MAX;
        let mut waiting = Waiting::default();
        for (k, &fi) in fragments.order.iter().enumerate() {
            let frag = &self.read.array.fragments[fi];
            let Some(ned) = &fragments.domains[fi] else {
                continue;
            };
            if !frag.footer.dense {
                waiting.place(&mut outs, &mut bufs)?;
                self.place_sparse_fragment(fi, &sub, &attributes, attrs, &mut outs, &mut bufs)?;
                continue;
            }
            let Some(tiles) = self.tiles_read(&fragments, k, ned, &sub) else {
                continue;
            };
            let placer =
                FragmentPlacer::new(self.read, attributes.clone(), attrs, frag, tiles, &outs);
            // A later fragment meeting one waiting writes over it: those
            // waiting are placed first.
            if !at_once || waiting.meets(&placer) {
                waiting.place(&mut outs, &mut bufs)?;
            }
            waiting.push(placer);
        }
        waiting.place(&mut outs, &mut bufs)?;
        let mut result = ReadResult {
            cell_count: sub.cells,
            ..ReadResult::default()
        };
        if self.read.request.dimensions {
            self.dimension_columns(schema, &sub, &mut result);
        }
        let columns =
            super::assemble::attribute_columns(schema, attrs, &mut outs, &bufs, sub.cells);
        result.columns.extend(columns);
        if let Some(c) = &self.read.request.condition {
            // Dense reads keep every cell; cells failing the condition read
            // as fill values, as in libtiledb.
            result = super::assemble::fill_unmatched(&self.read.context, result, c, schema);
        }
        if layout == Layout::GlobalOrder {
            if let Some(perm) = sub.global_order() {
                result = super::assemble::permute(&self.read.context, result, &perm);
            }
        }
        Ok(result)
    }

    /// The tiles of the `k`-th fragment applied (non-empty domain `ned`)
    /// the read fetches: those meeting the subarray, less those whose
    /// cells in it a later fragment writes again (neither read nor
    /// placed); `None` if none is left.
    fn tiles_read<'s>(
        &self,
        fragments: &DenseFragments,
        k: usize,
        ned: &'s [(i128, i128)],
        sub: &'s DenseSubarray,
    ) -> Option<FragmentTiles<'s>> {
        let later = match self.read.request.tuning.skip_overwritten {
            true => fragments.later_meeting(k, ned, sub),
            false => Vec::new(),
        };
        FragmentTiles::new(sub, ned, &later)
    }

    /// The byte ranges of every tile the read of `attrs` fetches, on
    /// storage where requests cost a round trip (every field's tiles are
    /// then fetched, none read in place); each dense fragment's tiles
    /// merged into runs of neighbours as its placer plans them. Sparse
    /// fragments of a dense array are left out (their tiles are read as a
    /// sparse read's).
    pub(crate) fn tile_requests(
        &self,
        schema: &ArraySchema,
        attrs: &[String],
        layout: Layout,
    ) -> Result<Vec<(PathBuf, Range<u64>)>, QueryError> {
        let sub = DenseSubarray::new(schema, &self.read.ranges, layout)?;
        let fragments = DenseFragments::new(&self.read.array.fragments, schema, attrs);
        let mut requests = Vec::new();
        for (k, &fi) in fragments.order.iter().enumerate() {
            let frag = &self.read.array.fragments[fi];
            let Some(ned) = fragments.domains[fi].as_ref().filter(|_| frag.footer.dense) else {
                continue;
            };
            let Some(tiles) = self.tiles_read(&fragments, k, ned, &sub) else {
                continue;
            };
            let specs: Vec<FieldSpec> = (attrs.iter())
                .filter_map(|a| FieldSpec::named(frag, schema, a))
                .collect();
            let specs: Vec<&FieldSpec> = specs.iter().collect();
            let runs = TileRuns::plan(self.read.storage, frag, &specs, &tiles.numbers)?;
            requests.extend(runs.requests());
        }
        Ok(requests)
    }

    /// The coordinates of a dense result, in the order positions were
    /// given (global order permutes them after, conditions read them as
    /// columns): described by their grid, or as columns.
    fn dimension_columns(&self, schema: &ArraySchema, sub: &DenseSubarray, r: &mut ReadResult) {
        let grid = CoordinateGrid {
            dimensions: schema
                .dimensions
                .iter()
                .zip(&sub.ranges)
                .map(|(d, r)| GridDimension {
                    name: d.name.clone(),
                    datatype: d.datatype,
                    ranges: r.clone(),
                })
                .collect(),
            order: tessera_cells::order::major_order(sub.layout, sub.dims()),
        };
        if self.read.describes_coordinates() {
            r.grid = Some(grid);
        } else {
            r.columns = grid.columns_in(&self.read.context);
        }
    }

    /// Places the cells of sparse fragment `fi` of a dense array (TileDB
    /// before 2.5 accepted unordered writes to dense arrays): its cells
    /// overwrite theirs.
    fn place_sparse_fragment(
        &self,
        fi: usize,
        sub: &DenseSubarray,
        attributes: &[&Attribute],
        attrs: &[String],
        outs: &mut [DenseOut],
        bufs: &mut Vec<Arc<Vec<u8>>>,
    ) -> Result<(), QueryError> {
        let frag = &self.read.array.fragments[fi];
        let dims = &self.read.array.schema.dimensions;
        let mut whole = band_outs(outs, &[(0, sub.cells)]);
        let outs = &mut whole[0];
        for mut tc in sparse_tiles(self.read, fi, frag, attrs, None)? {
            let ids = var_ids(&mut tc.fields, outs, bufs);
            for &c in &tc.cells {
                let coords = dims
                    .iter()
                    .enumerate()
                    .map(|(j, d)| Value::decode(d.datatype, tc.dims[j].value(c as usize)).as_int());
                let Some(ri) = sub.position(coords) else {
                    continue;
                };
                for (k, o) in outs.iter_mut().enumerate() {
                    let tile = tc.fields[k].as_ref();
                    put_cell(
                        o,
                        tile,
                        c as usize,
                        ri as usize,
                        attributes[k],
                        ids[k],
                        &frag.name,
                    )?;
                }
            }
        }
        Ok(())
    }
}
