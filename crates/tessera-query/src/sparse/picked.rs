//! The sparse fast path where the subarray cuts tiles or a condition
//! filters cells: of each touched tile, the cells inside are picked, and of
//! each field only those cells kept. Nothing is deduplicated or sorted.

use super::plan::DirectPlan;
use crate::context::ScratchSets;
use crate::decode::{
    decode_field_tile, decode_in_runs, decode_picked_fixed, decode_tile_into, fixed_tile_len,
    pick_fixed, pick_var_tile, picked_cells, scratch_to, CellFilter, Fetched, FieldSpec, FieldTile,
    TileRuns, UNIT_BYTES,
};
use crate::geometry::DimRanges;
use crate::read::Read;
use crate::result::{field_column, Column, ColumnBuilder, ReadResult};
use crate::QueryError;
use rayon::prelude::*;
use tessera_cells::{Compiled, FieldCells};
use tessera_filters::EncryptionKey;
use tessera_fragment::{Field, FragmentMetadata};
use tessera_schema::ArraySchema;

/// A tile's cells kept, and those of each wanted column.
type Picked = (u64, Vec<FieldTile>);

/// Picks the cells of one fragment's tiles.
struct TilePicker<'r> {
    frag: &'r FragmentMetadata,
    /// Where the scratch buffers of tiles picked come from and go back to.
    scratch: &'r ScratchSets,
    key: Option<EncryptionKey>,
    /// The query condition, compiled: dimensions by number, then the other
    /// fields it names (`cond_specs`).
    condition: Option<&'r Compiled>,
    dim_specs: Vec<FieldSpec>,
    /// The wanted columns, in the fragment's own fields.
    specs: Vec<FieldSpec>,
    cond_specs: Vec<FieldSpec>,
    /// Cell sizes for the condition, looked up once, not per cell.
    dim_w: Vec<usize>,
    cond_w: Vec<usize>,
    dim_ranges: Vec<DimRanges>,
    /// Per dimension, whether the condition names it or it is wanted.
    dim_used: Vec<bool>,
    /// Per dimension, whether a picked tile decodes it: it is used, or it
    /// has a range and some picked tile is not wholly inside it.
    dim_needed: Vec<bool>,
    /// The picked tiles wholly inside the subarray (picked for the
    /// condition alone), ascending: their coordinates are not tested.
    inside: Vec<u64>,
}

/// What a tile's condition decoded: fixed-sized fields in scratch buffers
/// (values and validity per condition field), var-sized ones as tiles
/// (per condition field; empty without a condition).
struct Tested<'s> {
    fixed: &'s [Vec<u8>],
    var: Vec<Option<FieldTile>>,
}

/// A tile's coordinates as picked: fixed-sized ones in scratch buffers,
/// var-sized ones (strings) as tiles of their own.
struct Coordinates<'s> {
    fixed: &'s [Vec<u8>],
    var: Vec<Option<FieldTile>>,
}

impl<'r> TilePicker<'r> {
    /// Tile `t` whole: every cell, every wanted field.
    fn whole(&self, src: &Fetched<'_>, t: u64) -> Result<Picked, QueryError> {
        let fields = self
            .specs
            .iter()
            .map(|s| decode_field_tile(src, self.frag, s, t, self.key))
            .collect::<Result<_, QueryError>>()?;
        Ok((self.frag.cell_num(t), fields))
    }

    /// The cells of tile `t` inside the subarray that meet the condition.
    /// No decoded tile is held to the end, and no fresh memory is faulted
    /// in for it: fields decode into scratch buffers the read keeps.
    fn partial(&self, src: &Fetched<'_>, t: u64) -> Result<Picked, QueryError> {
        // A set of scratch buffers per tile picked at a time (the chunks a
        // tile decodes in parallel may have rayon run another tile's job on
        // this thread meanwhile: that one takes a set of its own).
        let mut scratch = self.scratch.take();
        let picked = self.partial_into(src, t, &mut scratch);
        self.scratch.give(scratch);
        picked
    }

    /// [`TilePicker::partial`] with `scratch` to decode into.
    fn partial_into(
        &self,
        src: &Fetched<'_>,
        t: u64,
        scratch: &mut Vec<Vec<u8>>,
    ) -> Result<Picked, QueryError> {
        let nd = self.dim_specs.len();
        scratch.resize_with(nd + 2 + 2 * self.cond_specs.len(), Vec::new);
        let (coords, rest) = scratch.split_at_mut(nd);
        let (field_bufs, cond_bufs) = rest.split_at_mut(2);
        let (mut picked, var) = self.pick_inside(src, t, coords)?;
        let coords = Coordinates { fixed: coords, var };
        let tested = match self.condition {
            Some(cond) => self.pick_meeting(src, t, cond, &coords, cond_bufs, &mut picked)?,
            None => Vec::new(),
        };
        let tested = Tested {
            fixed: cond_bufs,
            var: tested,
        };
        let fields = self
            .specs
            .iter()
            .map(|s| self.picked_field(src, t, s, &coords, (field_bufs, &tested), &picked))
            .collect::<Result<_, QueryError>>()?;
        Ok((picked.len() as u64, fields))
    }

    /// The cells of tile `t` inside the subarray. Dimension by dimension,
    /// the cells still inside narrow, and the next dimension decodes only
    /// the chunks that hold them. Fixed-sized coordinates decode into
    /// `coords`; var-sized ones are returned as tiles.
    #[allow(clippy::type_complexity)]
    fn pick_inside(
        &self,
        src: &Fetched<'_>,
        t: u64,
        coords: &mut [Vec<u8>],
    ) -> Result<(Vec<u32>, Vec<Option<FieldTile>>), QueryError> {
        let (frag, key) = (self.frag, self.key);
        let cells = frag.cell_num(t) as usize;
        let mut var_coords: Vec<Option<FieldTile>> = Vec::with_capacity(self.dim_specs.len());
        let mut picked: Option<Vec<u32>> = None;
        let inside = self.inside.binary_search(&t).is_ok();
        for (j, s) in self.dim_specs.iter().enumerate() {
            let ranges = match inside {
                true => &DimRanges::All,
                false => &self.dim_ranges[j],
            };
            if !self.dim_used[j] && matches!(ranges, DimRanges::All) {
                // Nothing reads or tests it: its coordinates stay undecoded.
                var_coords.push(None);
                continue;
            }
            let tile = if s.cell_val_num.is_var() {
                Some(decode_field_tile(src, frag, s, t, key)?)
            } else {
                // Stale bytes are fine: only decoded cells are read.
                let buf = &mut coords[j];
                scratch_to(buf, fixed_tile_len(frag, s, t)?);
                let among = picked.as_deref().map(picked_cells);
                let only = among.as_ref().map(|f| f as &CellFilter<'_>);
                decode_tile_into(src, frag, s, t, key, (Some(buf), None), only)?;
                None
            };
            picked = Some(match &tile {
                // No range on this dimension: every cell still in stays.
                Some(_) if matches!(ranges, DimRanges::All) => {
                    picked.take().unwrap_or_else(|| (0..cells as u32).collect())
                }
                Some(tile) => {
                    let inside = |&i: &u32| ranges.contains(tile.value(i as usize));
                    match picked.take() {
                        None => (0..cells as u32).filter(inside).collect(),
                        Some(p) => p.into_iter().filter(inside).collect(),
                    }
                }
                None => ranges.pick(&coords[j], s.cell_size() as usize, picked.take()),
            });
            var_coords.push(tile);
        }
        let picked = picked.unwrap_or_else(|| (0..cells as u32).collect());
        Ok((picked, var_coords))
    }

    /// Keeps of `picked` the cells meeting `cond`: the fields it names are
    /// decoded at the cells still in, fixed-sized ones into `cond_bufs`
    /// (values and validity per field), var-sized ones as tiles, which
    /// are returned (per condition field; `None` for fixed-sized ones).
    fn pick_meeting(
        &self,
        src: &Fetched<'_>,
        t: u64,
        cond: &Compiled,
        coords: &Coordinates<'_>,
        cond_bufs: &mut [Vec<u8>],
        picked: &mut Vec<u32>,
    ) -> Result<Vec<Option<FieldTile>>, QueryError> {
        let (frag, key) = (self.frag, self.key);
        let nd = self.dim_specs.len();
        let mut var_vals: Vec<Option<FieldTile>> = Vec::with_capacity(self.cond_specs.len());
        for (s, bufs) in self.cond_specs.iter().zip(cond_bufs.chunks_mut(2)) {
            if s.cell_val_num.is_var() {
                var_vals.push(Some(decode_field_tile(src, frag, s, t, key)?));
                continue;
            }
            let (data, validity) = bufs.split_at_mut(1);
            let scratch = (&mut data[0], &mut validity[0]);
            decode_picked_fixed(src, frag, s, t, key, picked, scratch)?;
            var_vals.push(None);
        }
        let cond_bufs = &*cond_bufs;
        let field = |at: usize| -> FieldCells<'_> {
            if at < nd {
                return match &coords.var[at] {
                    Some(tile) => tile.field_cells(),
                    None => FieldCells::Fixed {
                        data: &coords.fixed[at],
                        width: self.dim_w[at],
                        validity: None,
                    },
                };
            }
            let k = at - nd;
            match &var_vals[k] {
                Some(tile) => tile.field_cells(),
                None => FieldCells::Fixed {
                    data: &cond_bufs[2 * k],
                    width: self.cond_w[k],
                    validity: Some(&cond_bufs[2 * k + 1][..]).filter(|v| !v.is_empty()),
                },
            }
        };
        cond.retain(&field, picked);
        Ok(var_vals)
    }

    /// The cells `picked` of field `s` of tile `t`: coordinates and the
    /// condition's fields from those decoded already (`tested`), other
    /// fields decoding only the chunks that hold them (into `bufs`: values
    /// and validity).
    fn picked_field(
        &self,
        src: &Fetched<'_>,
        t: u64,
        s: &FieldSpec,
        coords: &Coordinates<'_>,
        (bufs, tested): (&mut [Vec<u8>], &Tested<'_>),
        picked: &[u32],
    ) -> Result<FieldTile, QueryError> {
        let (frag, key) = (self.frag, self.key);
        let w = s.cell_size() as usize;
        if let Field::Dimension(j) = s.field {
            return Ok(match &coords.var[j] {
                Some(tile) => tile.pick(picked),
                None => pick_fixed(&coords.fixed[j], None, w, picked),
            });
        }
        let k = self.cond_specs.iter().position(|c| c.field == s.field);
        if let Some(tile) = k.and_then(|k| tested.var.get(k)?.as_ref()) {
            return Ok(tile.pick(picked));
        }
        let cond_bufs = tested.fixed;
        if let Some(k) = k.filter(|_| !s.cell_val_num.is_var() && !tested.var.is_empty()) {
            let v = s.nullable.then_some(cond_bufs[2 * k + 1].as_slice());
            return Ok(pick_fixed(&cond_bufs[2 * k], v, w, picked));
        }
        let (data, validity) = bufs.split_at_mut(1);
        let (data, validity) = (&mut data[0], &mut validity[0]);
        if s.cell_val_num.is_var() {
            // Just the chunks holding the picked values.
            return match pick_var_tile(src, frag, s, t, key, picked, (data, validity))? {
                Some(tile) => Ok(tile),
                None => Ok(decode_field_tile(src, frag, s, t, key)?.pick(picked)),
            };
        }
        decode_picked_fixed(src, frag, s, t, key, picked, (data, validity))?;
        let v = s.nullable.then_some(validity.as_slice());
        Ok(pick_fixed(data, v, w, picked))
    }

    /// The fields tiles cut by the subarray decode: the coordinates
    /// needed once, whether or not they are also wanted, then the other wanted fields
    /// and the condition's.
    fn partial_fields(&self) -> Vec<&FieldSpec> {
        let mut with_coords: Vec<&FieldSpec> = self
            .dim_specs
            .iter()
            .zip(&self.dim_needed)
            .filter_map(|(s, &needed)| needed.then_some(s))
            .chain(
                self.specs
                    .iter()
                    .filter(|s| !matches!(s.field, Field::Dimension(_))),
            )
            .collect();
        for c in &self.cond_specs {
            if with_coords.iter().all(|s| s.field != c.field) {
                with_coords.push(c);
            }
        }
        with_coords
    }
}

/// The sparse fast path (`SparseReader::direct`) when some tiles are only partly inside the
/// subarray, or a condition filters cells: of those tiles the cells
/// inside are picked ([`TilePicker`]). Tiles wholly inside are kept
/// whole. `tiles` are (fragment, tile, wholly inside), by fragment.
pub(crate) fn sparse_picked<'a>(
    read: &Read<'a>,
    schema: &ArraySchema,
    tiles: &[(usize, u64, bool)],
    plan: &DirectPlan,
) -> Result<ReadResult, QueryError> {
    let (wanted, own, cond_fields) = (&plan.wanted, &plan.own, &plan.cond_fields);
    let dims = &schema.dimensions;
    let nd = dims.len();
    let condition = read.request.condition.as_ref().map(|c| {
        c.compile(&|name: &str| {
            if let Some(j) = dims.iter().position(|d| d.name == name) {
                return Some((j, dims[j].datatype));
            }
            let k = cond_fields.iter().position(|f| f == name)?;
            Some((nd + k, schema.attribute(name)?.datatype))
        })
    });
    let mut kept: Vec<Picked> = Vec::with_capacity(tiles.len());
    let mut first = 0;
    for (fi, frag) in read.array.fragments.iter().enumerate() {
        let count = tiles[first..].iter().take_while(|x| x.0 == fi).count();
        let mine = &tiles[first..first + count];
        first += count;
        // Tiles wholly inside decode whole, unless a condition picks
        // their cells; whole tiles need no coordinates unless asked for.
        let is_whole = |x: &(usize, u64, bool)| x.2 && condition.is_none();
        let part: Vec<(usize, u64, bool)> = mine.iter().filter(|x| !is_whole(x)).copied().collect();
        let picker = tile_picker(
            read,
            frag,
            &own[fi],
            (cond_fields, condition.as_ref()),
            &part,
        );
        let numbers = |whole: bool| -> Vec<u64> {
            mine.iter()
                .filter(|x| is_whole(x) == whole)
                .map(|x| x.1)
                .collect()
        };
        let (ctx, storage) = (&read.context, read.storage);
        let spec_refs: Vec<&FieldSpec> = picker.specs.iter().collect();
        let with_coords = picker.partial_fields();
        // The tiles the subarray cuts need no bytes of the ones it
        // holds whole: on an object store, a few cut tiles (a box's
        // edges) are in flight with the whole ones; many (a condition
        // cuts every tile) are fetched as they are decoded.
        let part_runs = TileRuns::plan(storage, frag, &with_coords, &numbers(false))?;
        let part_read = (storage.prefers_batches() && part_runs.bytes() <= UNIT_BYTES)
            .then(|| part_runs.begin(storage));
        let ahead = storage.read_ahead();
        let full = decode_in_runs(
            storage,
            ctx,
            ahead,
            frag,
            &spec_refs,
            &numbers(true),
            |src, t| picker.whole(src, t),
        )?;
        let pick = |src: &Fetched<'_>, t| picker.partial(src, t);
        let part = match part_read {
            Some(read) => part_runs.decode_batch(storage, ctx, read.wait(), pick)?,
            None => part_runs.decode(storage, ctx, ahead, pick)?,
        };
        let (mut full, mut part) = (full.into_iter(), part.into_iter());
        for x in mine {
            let next = if is_whole(x) {
                full.next()
            } else {
                part.next()
            };
            kept.push(next.expect("one result per tile"));
        }
    }
    let n: u64 = kept.iter().map(|k| k.0).sum();
    let mut columns: Vec<Column> = wanted
        .iter()
        .map(|&f| field_column(&read.context, schema, f))
        .collect();
    columns
        .par_iter_mut()
        .enumerate()
        .for_each(|(k, c)| ColumnBuilder::refill(c, &read.context, kept.iter().map(|v| &v.1[k])));
    // Copied out: their buffers decode the next tiles (of this batch's
    // read or the next), which then fault in no fresh pages.
    for tile in kept.into_iter().flat_map(|(_, fields)| fields) {
        tile.recycle(&read.context);
    }
    Ok(ReadResult {
        cell_count: n as usize,
        columns,
        grid: None,
        context: None,
    })
}

/// The picker of `frag`'s tiles `part` (fragment, tile, wholly inside),
/// for its fields `own` (the wanted columns), the condition's fields
/// `cond_fields` and `condition`.
fn tile_picker<'a, 'r>(
    read: &'r Read<'a>,
    frag: &'r FragmentMetadata,
    own: &[Field],
    (cond_fields, condition): (&[String], Option<&'r Compiled>),
    part: &[(usize, u64, bool)],
) -> TilePicker<'r> {
    let dims = &frag.schema.dimensions;
    let dim_specs: Vec<FieldSpec> = (0..dims.len())
        .map(|j| FieldSpec::of(frag, Field::Dimension(j)))
        .collect();
    let cond_specs: Vec<FieldSpec> = cond_fields
        .iter()
        .map(|n| FieldSpec::named(frag, &read.array.schema, n).expect("checked by sparse_direct"))
        .collect();
    let schema_dims = &read.array.schema.dimensions;
    let dim_ranges: Vec<DimRanges> = (0..schema_dims.len())
        .map(|j| DimRanges::new(&read.ranges[j], schema_dims[j].datatype))
        .collect();
    let named = read.request.tested_fields();
    let dim_used: Vec<bool> = (0..schema_dims.len())
        .map(|j| named.contains(&schema_dims[j].name) || own.contains(&Field::Dimension(j)))
        .collect();
    let any_cut = part.iter().any(|x| !x.2);
    let dim_needed = (0..schema_dims.len())
        .map(|j| dim_used[j] || (any_cut && !matches!(dim_ranges[j], DimRanges::All)))
        .collect();
    let mut inside: Vec<u64> = part.iter().filter(|x| x.2).map(|x| x.1).collect();
    inside.sort_unstable();
    TilePicker {
        frag,
        scratch: &read.context.scratch,
        key: read.array.key,
        condition,
        dim_w: dim_specs.iter().map(|s| s.cell_size() as usize).collect(),
        cond_w: cond_specs.iter().map(|s| s.cell_size() as usize).collect(),
        dim_ranges,
        dim_used,
        dim_needed,
        inside,
        specs: own.iter().map(|&f| FieldSpec::of(frag, f)).collect(),
        dim_specs,
        cond_specs,
    }
}
