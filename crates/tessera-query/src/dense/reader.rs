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

/// The dense reader: a read of a dense array, planned. Each fragment's
/// tiles are placed into the result band by band, in parallel
/// (`placer`), and the bands of fragments that fill regions apart from
/// each other's all at once; cells no fragment wrote keep the fill value.
pub(crate) struct DenseReader<'r, 'a> {
    read: &'r Read<'a>,
    /// The array's schema.
    schema: &'a Arc<ArraySchema>,
    /// The attributes returned, by name.
    attrs: Vec<String>,
    /// The same, as the schema has them.
    attributes: Vec<&'a Attribute>,
    /// The cells returned, and their places in the result.
    sub: DenseSubarray,
    /// The fragments, their non-empty domains and the order they apply in.
    fragments: DenseFragments,
}

impl<'r, 'a> DenseReader<'r, 'a> {
    /// The read of `attrs` (the attributes `read` returns) planned: its
    /// cells and their places, and the fragments in the order they apply.
    pub(crate) fn plan(read: &'r Read<'a>, attrs: Vec<String>) -> Result<Self, QueryError> {
        let schema = &read.array.schema;
        let sub = DenseSubarray::new(schema, &read.ranges, read.resolved_layout())?;
        let fragments = DenseFragments::new(&read.array.fragments, schema, &attrs);
        let attributes = attrs
            .iter()
            .map(|a| {
                schema
                    .attribute(a)
                    .ok_or_else(|| QueryError::Invalid(format!("no attribute `{a}` to read")))
            })
            .collect::<Result<_, _>>()?;
        Ok(DenseReader {
            read,
            schema,
            attrs,
            attributes,
            sub,
            fragments,
        })
    }

    /// The dense read: every cell of the subarray, from the newest
    /// fragment that wrote it, else the fill value.
    pub(crate) fn run(self) -> Result<ReadResult, QueryError> {
        // A push decoder's attempt asks for every tile of the read at
        // once and goes no further without them: placing fragment after
        // fragment, it would find one fragment lacking an attempt, each
        // attempt decoding again all the fragments before it.
        if self.read.storage.notes_needs() && !self.read.storage.has_ranges(&self.tile_requests()?)
        {
            return Err(QueryError::Invalid(
                "the dense read's tiles are not all given yet".into(),
            ));
        }
        let (sub, attrs, schema) = (&self.sub, &self.attrs, self.schema);
        // Outputs start as fill values, unless fragments writing every
        // selected attribute cover the subarray.
        let covered = self.fragments.cover(sub);
        let mut bufs: Vec<Arc<Vec<u8>>> = Vec::new();
        let mut outs: Vec<DenseOut> = Vec::with_capacity(attrs.len());
        for at in &self.attributes {
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
        for (k, &fi) in self.fragments.order.iter().enumerate() {
            let frag = &self.read.array.fragments[fi];
            let Some(ned) = &self.fragments.domains[fi] else {
                continue;
            };
            if !frag.footer.dense {
                waiting.place(&mut outs, &mut bufs)?;
                self.place_sparse_fragment(fi, &mut outs, &mut bufs)?;
                continue;
            }
            let Some(tiles) = self.tiles_read(k, ned) else {
                continue;
            };
            let placer = FragmentPlacer::new(
                self.read,
                self.attributes.clone(),
                attrs,
                frag,
                tiles,
                &outs,
            );
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
        self.dimension_columns(&mut result);
        let columns =
            super::assemble::attribute_columns(schema, attrs, &mut outs, &bufs, sub.cells);
        result.columns.extend(columns);
        if let Some(c) = &self.read.request.condition {
            // Dense reads keep every cell; cells failing the condition read
            // as fill values, as in libtiledb.
            result = super::assemble::fill_unmatched(&self.read.context, result, c, schema);
            // The coordinates and attributes only the condition tested.
            let request = self.read.request;
            let returned = self.read.returned_attributes();
            (result.columns).retain(|c| match c.is_dimension {
                true => request.returns_dimension(&c.name),
                false => returned.contains(&c.name),
            });
        }
        if sub.layout == Layout::GlobalOrder {
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
    fn tiles_read<'s>(&'s self, k: usize, ned: &'s [(i128, i128)]) -> Option<FragmentTiles<'s>> {
        let later = match self.read.request.tuning.skip_overwritten {
            true => self.fragments.later_meeting(k, ned, &self.sub),
            false => Vec::new(),
        };
        FragmentTiles::new(&self.sub, ned, &later)
    }

    /// The byte ranges of every tile the read fetches, on
    /// storage where requests cost a round trip (every field's tiles are
    /// then fetched, none read in place); each dense fragment's tiles
    /// merged into runs of neighbours as its placer plans them. Sparse
    /// fragments of a dense array are left out (their tiles are read as a
    /// sparse read's).
    pub(crate) fn tile_requests(&self) -> Result<Vec<(PathBuf, Range<u64>)>, QueryError> {
        let mut requests = Vec::new();
        for (k, &fi) in self.fragments.order.iter().enumerate() {
            let frag = &self.read.array.fragments[fi];
            let domain = self.fragments.domains[fi].as_ref();
            let Some(ned) = domain.filter(|_| frag.footer.dense) else {
                continue;
            };
            let Some(tiles) = self.tiles_read(k, ned) else {
                continue;
            };
            let specs: Vec<FieldSpec> = (self.attrs.iter())
                .filter_map(|a| FieldSpec::named(frag, self.schema, a))
                .collect();
            let specs: Vec<&FieldSpec> = specs.iter().collect();
            let runs = TileRuns::plan(self.read.storage, frag, &specs, &tiles.numbers)?;
            requests.extend(runs.requests());
        }
        Ok(requests)
    }

    /// The coordinates of a dense result returned or tested by the
    /// condition, in the order positions were given (global order permutes
    /// them after, conditions read them as columns): described by their
    /// grid, or as columns.
    fn dimension_columns(&self, r: &mut ReadResult) {
        let (schema, sub) = (self.schema, &self.sub);
        let built = self.read.request.returned_or_tested_dimensions(schema);
        if built.is_empty() {
            return;
        }
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
            r.columns = grid.columns_of(&self.read.context, |j| built.contains(&j));
        }
    }

    /// Places the cells of sparse fragment `fi` of a dense array (TileDB
    /// before 2.5 accepted unordered writes to dense arrays): its cells
    /// overwrite theirs.
    fn place_sparse_fragment(
        &self,
        fi: usize,
        outs: &mut [DenseOut],
        bufs: &mut Vec<Arc<Vec<u8>>>,
    ) -> Result<(), QueryError> {
        let (sub, attributes) = (&self.sub, &self.attributes);
        let frag = &self.read.array.fragments[fi];
        let dims = &self.schema.dimensions;
        let mut whole = band_outs(outs, &[(0, sub.cells)]);
        let outs = &mut whole[0];
        for mut tc in sparse_tiles(self.read, fi, frag, &self.attrs, None)? {
            let ids = var_ids(&mut tc.fields, outs, bufs);
            for &c in &tc.cells {
                let coords = dims
                    .iter()
                    .enumerate()
                    .map(|(j, d)| Value::decode(d.datatype, tc.dims[j].value(c as usize)).as_int());
                for ri in sub.positions(coords) {
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
        }
        Ok(())
    }
}
