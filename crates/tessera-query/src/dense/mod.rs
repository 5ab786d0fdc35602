//! The dense reader: tiles of every fragment placed into the result, band
//! by band, in parallel; fill values where nothing was written.
//!
//! One step a file, lowest first: `subarray` (the cells asked for and
//! their result positions), `fragments` (which fragments apply, in what
//! order, and which write cells again), `tile_grid` (one fragment's tiles
//! and their cells' places), `place` (outputs, and the runs and cells
//! copied into them), `group_fetch` (groups' batches begun ahead on object
//! stores), `placer` (one fragment's tiles decoded and placed, band by
//! band), `assemble` (columns, conditions, global order).

mod assemble;
mod fragments;
mod group_fetch;
mod place;
mod placer;
mod subarray;
mod tile_grid;

use crate::read::Read;
use crate::result::{CoordinateGrid, GridDimension, ReadResult};
use crate::QueryError;
use fragments::DenseFragments;
use place::{band_outs, put_cell, var_ids, DenseOut};
use placer::FragmentPlacer;
use std::sync::Arc;
use subarray::DenseSubarray;
use tessera_schema::Value;
use tessera_schema::{ArraySchema, Attribute};
use tessera_tile::Layout;
use tile_grid::FragmentTiles;

impl<'a> Read<'a> {
    /// The dense read: every cell of the subarray, from the newest
    /// fragment that wrote it, else the fill value.
    pub(crate) fn dense(
        &self,
        schema: &Arc<ArraySchema>,
        attrs: &[String],
        layout: Layout,
    ) -> Result<ReadResult, QueryError> {
        let sub = DenseSubarray::new(schema, &self.ranges, layout)?;
        let fragments = DenseFragments::new(&self.array.fragments, &schema.dimensions, attrs);
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
                &self.context,
                at,
                sub.cells,
                covered,
                fill_id,
            ));
        }
        for (k, &fi) in fragments.order.iter().enumerate() {
            let frag = &self.array.fragments[fi];
            let Some(ned) = &fragments.domains[fi] else {
                continue;
            };
            if !frag.footer.dense {
                self.place_sparse_fragment(fi, &sub, &attributes, attrs, &mut outs, &mut bufs)?;
                continue;
            }
            // Tiles whose cells in the subarray a later fragment writes
            // again are neither read nor placed.
            let later = match self.tuning.skip_overwritten {
                true => fragments.later_meeting(k, ned, &sub),
                false => Vec::new(),
            };
            let Some(tiles) = FragmentTiles::new(&sub, ned, &later) else {
                continue;
            };
            FragmentPlacer::new(self, attributes.clone(), attrs, frag, tiles, &outs)
                .place(&mut outs, &mut bufs)?;
        }
        let mut result = ReadResult {
            cell_count: sub.cells,
            ..ReadResult::default()
        };
        if self.with_dimensions {
            self.dimension_columns(schema, &sub, &mut result);
        }
        let columns = assemble::attribute_columns(schema, attrs, &mut outs, &bufs, sub.cells);
        result.columns.extend(columns);
        if let Some(c) = &self.condition {
            // Dense reads keep every cell; cells failing the condition read
            // as fill values, as in libtiledb.
            result = assemble::fill_unmatched(&self.context, result, c, schema);
        }
        if layout == Layout::GlobalOrder {
            if let Some(perm) = sub.global_order() {
                result = assemble::permute(&self.context, result, &perm);
            }
        }
        Ok(result)
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
        if self.describes_coordinates() {
            r.grid = Some(grid);
        } else {
            r.columns = grid.columns_in(&self.context);
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
        let frag = &self.array.fragments[fi];
        let dims = &self.array.schema.dimensions;
        let mut whole = band_outs(outs, &[(0, sub.cells)]);
        let outs = &mut whole[0];
        for mut tc in self.sparse_tiles(fi, frag, attrs, None)? {
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
