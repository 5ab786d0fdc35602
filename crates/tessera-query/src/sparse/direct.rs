//! The sparse fast paths: whole tiles decoded straight into their place
//! in the result, or the cells a subarray or condition picks, when nothing
//! is deduplicated or sorted.

use crate::decode::{
    decode_field_tile, decode_in_runs, decode_picked_fixed, decode_tile_into, decode_var_tile_into,
    fixed_tile_len, pick_fixed, pick_var_tile, picked_cells, scratch_to, var_tile_size, CellFilter,
    Fetched, FieldSpec, FieldTile,
};
use crate::geometry::DimRanges;
use crate::read::Query;
use crate::result::cut;
use crate::result::field_column;
use crate::result::{Column, ReadResult};
use crate::QueryError;
use rayon::prelude::*;
use tessera_fragment::{Field, FragmentMetadata};
use tessera_schema::{ArraySchema, CellValNum};
use tessera_tile::{Datatype, Layout};

impl<'a> Query<'a> {
    /// The sparse fast path. When every cell of every tile the read touches
    /// is returned, in stored order, with nothing to deduplicate or sort,
    /// each tile decodes straight into its place in the result: no buffer
    /// per tile, no copy, and no coordinates unless asked for. Where the
    /// subarray cuts tiles or a condition filters cells, the cells are
    /// picked ([`Query::sparse_picked`]): the condition is a test of each
    /// cell alone here, as nothing is deduplicated. `None` when the read
    /// needs the general path.
    pub(crate) fn sparse_direct(
        &self,
        schema: &ArraySchema,
        attrs: &[String],
        layout: Layout,
    ) -> Result<Option<ReadResult>, QueryError> {
        let frags = &self.array.fragments;
        let in_stored_order = match layout {
            Layout::Unordered => frags.len() <= 1 || schema.allows_dups,
            Layout::GlobalOrder => frags.len() <= 1 && schema.cell_order != Layout::Hilbert,
            _ => false,
        };
        let plain = |f: &FragmentMetadata| {
            !f.footer.dense
                && !f.footer.has_timestamps
                && !f.footer.has_delete_meta
                && (!self.with_dimensions
                    || f.version().has(tessera_fragment::gates::SPLIT_COORDINATES))
        };
        // A condition is a filter on each cell alone here (nothing to
        // deduplicate), tested while cells are picked, provided every
        // fragment has every field it names (else fill values stand in:
        // the general path).
        let cond_fields: Vec<String> = match &self.condition {
            Some(c) => {
                let mut names = Vec::new();
                c.fields(&mut names);
                names.retain(|n| schema.dimensions.iter().all(|d| &d.name != n));
                names
            }
            None => Vec::new(),
        };
        let has_cond_fields =
            |f: &FragmentMetadata| cond_fields.iter().all(|n| f.schema.attribute(n).is_some());
        if !self.tuning.direct
            || !in_stored_order
            || !self.array.delete_conditions.is_empty()
            || !frags.iter().all(|f| plain(f) && has_cond_fields(f))
            || cond_fields.iter().any(|n| schema.attribute(n).is_none())
        {
            return Ok(None);
        }
        // The result's fields, in column order.
        let mut wanted: Vec<Field> = Vec::new();
        if self.with_dimensions {
            wanted.extend((0..schema.dimensions.len()).map(Field::Dimension));
        }
        for a in attrs {
            let i = schema
                .attributes
                .iter()
                .position(|x| &x.name == a)
                .expect("checked");
            wanted.push(Field::Attribute(i));
        }
        // Each fragment's own fields for those (its files are numbered by
        // the schema it was written with); a fragment lacking one reads
        // fill values there: the general path.
        let Some(own) = frags
            .iter()
            .map(|f| wanted.iter().map(|&w| f.own_field(schema, w)).collect())
            .collect::<Option<Vec<Vec<Field>>>>()
        else {
            return Ok(None);
        };
        let mut hits: Vec<(usize, u64, bool)> = Vec::new();
        for (fi, frag) in frags.iter().enumerate() {
            // No cell shadows another here.
            let prune = self.condition.as_ref().filter(|_| self.tuning.prune);
            let mine = self.pruned_hits(fi, frag, prune.map(|c| (c, None)))?;
            // With a condition, every tile's cells are picked.
            let cond = self.condition.is_some();
            hits.extend(mine.into_iter().map(|(t, full)| (fi, t, full && !cond)));
        }
        if !hits.iter().all(|h| h.2) {
            // Picking cells needs the coordinates as separate tiles.
            let split =
                |f: &FragmentMetadata| f.version().has(tessera_fragment::gates::SPLIT_COORDINATES);
            return match frags.iter().all(split) {
                true => self
                    .sparse_picked(schema, &hits, &wanted, &own, &cond_fields)
                    .map(Some),
                false => Ok(None),
            };
        }
        // (fragment, tile, first cell in the result)
        let mut tiles: Vec<(usize, u64, u64)> = Vec::with_capacity(hits.len());
        let mut n = 0u64;
        for (fi, t, _) in hits {
            tiles.push((fi, t, n));
            // An absurd count fails the allocation below, as an error.
            n = n.saturating_add(frags[fi].cell_num(t));
        }
        let fixed_bytes = |cell_val_num: CellValNum, t: Datatype| match cell_val_num {
            CellValNum::Fixed(k) => Some(k as u64 * t.size()),
            CellValNum::Var => None,
        };
        // Var-sized fields decode into their place too where the fragment
        // metadata gives each tile's var size (and offsets have their own
        // tiles): per column, each tile's var size, else None (such
        // values are decoded apart and copied after).
        let mut var_sizes: Vec<Option<Vec<u64>>> = Vec::with_capacity(wanted.len());
        for (k, &field) in wanted.iter().enumerate() {
            let c = field_column(schema, field);
            let direct_var = c.cell_val_num.is_var()
                && frags.iter().zip(&own).all(|(f, own)| {
                    !FieldSpec::of(f, own[k])
                        .filters
                        .offsets_in_data(c.datatype, f.schema.version)
                });
            if !direct_var {
                var_sizes.push(None);
                continue;
            }
            let sizes = tiles
                .iter()
                .map(|&(fi, t, _)| var_tile_size(self.storage, &frags[fi], own[fi][k], t))
                .collect::<Result<_, _>>()?;
            var_sizes.push(Some(sizes));
        }
        // Fixed-sized fields and validity decode into their place; var-sized
        // values without known sizes are copied after.
        let mut columns: Vec<Column> = wanted
            .iter()
            .zip(&var_sizes)
            .map(|(&field, sizes)| {
                let mut c = field_column(schema, field);
                let name = &c.name;
                let size = match sizes {
                    Some(s) => s.iter().try_fold(0u64, |a, &b| a.checked_add(b)),
                    None => fixed_bytes(c.cell_val_num, c.datatype)
                        .map_or(Some(0), |w| w.checked_mul(n)),
                };
                let zeroed = |bytes: Option<u64>| -> Result<Vec<u8>, QueryError> {
                    // The cell counts come off disk: a fallible reservation
                    // first, so an absurd count is an error, not an abort.
                    // Then a zeroed allocation, which the kernel backs lazily.
                    let bytes = bytes.and_then(|b| usize::try_from(b).ok());
                    let mut probe: Vec<u8> = Vec::new();
                    match bytes.map(|b| (b, probe.try_reserve_exact(b))) {
                        Some((b, Ok(()))) => {
                            drop(probe);
                            Ok(vec![0; b])
                        }
                        _ => Err(QueryError::Invalid(format!(
                            "the fragments claim {n} cells: `{name}` cannot be allocated"
                        ))),
                    }
                };
                c.data = zeroed(size)?;
                if c.validity.is_some() {
                    c.validity = Some(zeroed(Some(n))?);
                }
                if let Some(total) = size.filter(|_| sizes.is_some()) {
                    // n + 1 offsets: n comes off disk, so the reservation
                    // is fallible here too.
                    let mut offs: Vec<u64> = Vec::new();
                    let count = usize::try_from(n).ok().and_then(|n| n.checked_add(1));
                    if count.is_none_or(|k| offs.try_reserve_exact(k).is_err()) {
                        return Err(QueryError::Invalid(format!(
                            "the fragments claim {n} cells: `{name}` cannot be allocated"
                        )));
                    }
                    offs.resize(n as usize, 0);
                    offs.push(total);
                    c.offsets = Some(offs);
                }
                Ok(c)
            })
            .collect::<Result<_, QueryError>>()?;
        // One slot per (field, tile): the tile's part of the field's
        // buffers (values, validity, and for var-sized fields the offsets
        // with the position of the tile's values among the column's).
        struct Slot<'b> {
            data: Option<&'b mut [u8]>,
            validity: Option<&'b mut [u8]>,
            offsets: Option<(&'b mut [u64], u64)>,
        }
        let mut slots: Vec<Vec<std::sync::Mutex<Slot<'_>>>> = Vec::with_capacity(columns.len());
        for (c, sizes) in columns.iter_mut().zip(&var_sizes) {
            // Var-sized columns without sizes are filled after decoding: no slots.
            let w = fixed_bytes(c.cell_val_num, c.datatype);
            let placed = w.is_some() || sizes.is_some();
            let mut data = placed.then_some(c.data.as_mut_slice());
            let mut validity = c.validity.as_deref_mut().filter(|_| placed);
            let mut offsets = c.offsets.as_deref_mut().filter(|_| sizes.is_some());
            let mut field_slots = Vec::with_capacity(tiles.len());
            let mut base = 0u64;
            for (k, &(fi, t, _)) in tiles.iter().enumerate() {
                let cells = frags[fi].cell_num(t) as usize;
                let bytes = match (w, sizes) {
                    (Some(w), _) => cells * w as usize,
                    (None, Some(s)) => s[k] as usize,
                    (None, None) => 0,
                };
                field_slots.push(std::sync::Mutex::new(Slot {
                    data: cut(&mut data, 0, bytes),
                    validity: cut(&mut validity, 0, cells),
                    offsets: cut(&mut offsets, 0, cells).map(|o| (o, base)),
                }));
                base += bytes as u64;
            }
            slots.push(field_slots);
        }
        let key = self.array.key;
        // Per tile in result order, the decoded var-sized fields in column order.
        let mut var_tiles: Vec<Vec<FieldTile>> = Vec::with_capacity(tiles.len());
        let mut first = 0;
        for (fi, frag) in frags.iter().enumerate() {
            let count = tiles[first..].iter().take_while(|x| x.0 == fi).count();
            let mine = &tiles[first..first + count];
            let numbers: Vec<u64> = mine.iter().map(|x| x.1).collect();
            let specs: Vec<FieldSpec> = own[fi].iter().map(|&f| FieldSpec::of(frag, f)).collect();
            let spec_refs: Vec<&FieldSpec> = specs.iter().collect();
            let decoded = decode_in_runs(
                self.storage,
                &self.context,
                frag,
                &spec_refs,
                &numbers,
                |src, t| {
                    let at = first + numbers.binary_search(&t).expect("one of ours");
                    let mut var = Vec::new();
                    for (k, spec) in specs.iter().enumerate() {
                        if spec.cell_val_num.is_var() && var_sizes[k].is_none() {
                            var.push(decode_field_tile(src, frag, spec, t, key)?);
                            continue;
                        }
                        let mut slot = slots[k][at].lock().expect("no panics while held");
                        let Slot {
                            data,
                            validity,
                            offsets,
                        } = &mut *slot;
                        let validity = validity.as_deref_mut();
                        match (data.as_deref_mut(), offsets) {
                            (Some(d), Some((o, base))) => decode_var_tile_into(
                                src,
                                frag,
                                spec,
                                t,
                                key,
                                d,
                                (o, *base),
                                validity,
                            )?,
                            (d, _) => {
                                decode_tile_into(src, frag, spec, t, key, (d, validity), None)?
                            }
                        }
                    }
                    Ok(var)
                },
            )?;
            var_tiles.extend(decoded);
            first += count;
        }
        drop(slots);
        // Var-sized columns: values and validity copied, offsets rebased.
        let mut var_columns: Vec<&mut Column> = columns
            .iter_mut()
            .zip(&var_sizes)
            .filter(|(c, sizes)| c.cell_val_num.is_var() && sizes.is_none())
            .map(|(c, _)| c)
            .collect();
        var_columns
            .par_iter_mut()
            .enumerate()
            .for_each(|(k, c)| c.fill_from(&self.context, var_tiles.iter().map(|v| &v[k])));
        Ok(Some(ReadResult {
            cell_count: n as usize,
            columns,
            grid: None,
            context: None,
        }))
    }

    /// [`Query::sparse_direct`] when some tiles are only partly inside the
    /// subarray. Such a tile's coordinates decode into a per-thread scratch
    /// buffer, the cells inside are picked, and of each field only those
    /// cells are kept (fixed-sized fields decode into scratch too): no
    /// decoded tile is held to the end, and no fresh memory is faulted in
    /// for it. Tiles wholly inside are kept whole.
    pub(crate) fn sparse_picked(
        &self,
        schema: &ArraySchema,
        tiles: &[(usize, u64, bool)],
        wanted: &[Field],
        own: &[Vec<Field>],
        cond_fields: &[String],
    ) -> Result<ReadResult, QueryError> {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let frags = &self.array.fragments;
        let dims = &schema.dimensions;
        let nd = dims.len();
        let key = self.array.key;
        // The condition reads a cell's dimensions by number and the other
        // fields it names after them, in `cond_fields` order.
        let condition = self.condition.as_ref().map(|c| {
            c.compile(&|name: &str| {
                if let Some(j) = dims.iter().position(|d| d.name == name) {
                    return Some((j, dims[j].datatype));
                }
                let k = cond_fields.iter().position(|f| f == name)?;
                Some((nd + k, schema.attribute(name)?.datatype))
            })
        });
        // Per tile in result order: its cells kept, and those of each
        // wanted column.
        type Picked = (u64, Vec<FieldTile>);
        let mut kept: Vec<Picked> = Vec::with_capacity(tiles.len());
        let mut first = 0;
        for (fi, frag) in frags.iter().enumerate() {
            let count = tiles[first..].iter().take_while(|x| x.0 == fi).count();
            let mine = &tiles[first..first + count];
            first += count;
            let dim_specs: Vec<FieldSpec> = (0..nd)
                .map(|j| FieldSpec::of(frag, Field::Dimension(j)))
                .collect();
            let specs: Vec<FieldSpec> = own[fi].iter().map(|&f| FieldSpec::of(frag, f)).collect();
            let cond_specs: Vec<FieldSpec> = cond_fields
                .iter()
                .map(|n| FieldSpec::named(frag, n).expect("checked by sparse_direct"))
                .collect();
            // Cell sizes for the condition, looked up once, not per cell.
            let dim_w: Vec<usize> = dim_specs.iter().map(|s| s.cell_size() as usize).collect();
            let cond_w: Vec<usize> = cond_specs.iter().map(|s| s.cell_size() as usize).collect();
            let whole = |src: &Fetched<'_>, t| -> Result<Picked, QueryError> {
                let fields = specs
                    .iter()
                    .map(|s| decode_field_tile(src, frag, s, t, key))
                    .collect::<Result<_, QueryError>>()?;
                Ok((frag.cell_num(t), fields))
            };
            let dim_ranges: Vec<DimRanges<'_>> = (0..nd)
                .map(|j| DimRanges::new(&self.ranges[j], dims[j].datatype))
                .collect();
            let partial = |src: &Fetched<'_>, t| -> Result<Picked, QueryError> {
                SCRATCH.with(|cell| {
                    // The thread's buffers, unless a job of this read holds
                    // them already on this thread: waiting for the chunks it
                    // decodes in parallel, a rayon thread runs other jobs,
                    // another tile's among them. That one gets its own.
                    let mut own = Vec::new();
                    let mut held = cell.try_borrow_mut().ok();
                    let scratch: &mut Vec<Vec<u8>> = held.as_deref_mut().unwrap_or(&mut own);
                    scratch.resize_with(nd + 2 + 2 * cond_specs.len(), Vec::new);
                    let cells = frag.cell_num(t) as usize;
                    let (coords, rest) = scratch.split_at_mut(nd);
                    let (rest, cond_bufs) = rest.split_at_mut(2);
                    // Fixed-sized coordinates decode into scratch; var-sized
                    // ones (strings) into a tile of their own. Dimension by
                    // dimension, the cells still inside narrow, and the next
                    // dimension decodes only the chunks that hold them.
                    let mut var_coords: Vec<Option<FieldTile>> = Vec::with_capacity(nd);
                    let mut picked: Option<Vec<u32>> = None;
                    for (j, s) in dim_specs.iter().enumerate() {
                        let w = s.cell_size() as usize;
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
                            Some(tile) => {
                                let inside =
                                    |&i: &u32| dim_ranges[j].contains(tile.value(i as usize));
                                match picked.take() {
                                    None => (0..cells as u32).filter(inside).collect(),
                                    Some(p) => p.into_iter().filter(inside).collect(),
                                }
                            }
                            None => dim_ranges[j].pick(&coords[j], w, picked.take()),
                        });
                        var_coords.push(tile);
                    }
                    let mut picked = picked.unwrap_or_else(|| (0..cells as u32).collect());
                    if let Some(cond) = &condition {
                        // The fields the condition names, at the cells
                        // still in: fixed-sized ones into scratch, var-sized
                        // ones as tiles.
                        let mut var_vals: Vec<Option<FieldTile>> =
                            Vec::with_capacity(cond_specs.len());
                        for (s, bufs) in cond_specs.iter().zip(cond_bufs.chunks_mut(2)) {
                            if s.cell_val_num.is_var() {
                                var_vals.push(Some(decode_field_tile(src, frag, s, t, key)?));
                                continue;
                            }
                            let (data, validity) = bufs.split_at_mut(1);
                            let scratch = (&mut data[0], &mut validity[0]);
                            decode_picked_fixed(src, frag, s, t, key, &picked, scratch)?;
                            var_vals.push(None);
                        }
                        let value = |c: usize, at: usize| -> (&[u8], bool) {
                            if at < nd {
                                return match &var_coords[at] {
                                    Some(tile) => (tile.value(c), true),
                                    None => (&coords[at][c * dim_w[at]..(c + 1) * dim_w[at]], true),
                                };
                            }
                            let k = at - nd;
                            match &var_vals[k] {
                                Some(tile) => (tile.value(c), tile.valid(c)),
                                None => {
                                    let w = cond_w[k];
                                    let valid = cond_bufs[2 * k + 1].get(c).is_none_or(|&v| v != 0);
                                    (&cond_bufs[2 * k][c * w..(c + 1) * w], valid)
                                }
                            }
                        };
                        picked.retain(|&c| cond.eval(&|at| value(c as usize, at)));
                    }
                    let fields = specs
                        .iter()
                        .map(|s| {
                            let w = s.cell_size() as usize;
                            if let Field::Dimension(j) = s.field {
                                return Ok(match &var_coords[j] {
                                    Some(tile) => tile.pick(&picked),
                                    None => pick_fixed(&coords[j], None, w, &picked),
                                });
                            }
                            let (data, validity) = rest.split_at_mut(1);
                            if s.cell_val_num.is_var() {
                                // Just the chunks holding the picked values.
                                let scratch = (&mut data[0], &mut validity[0]);
                                return match pick_var_tile(src, frag, s, t, key, &picked, scratch)?
                                {
                                    Some(tile) => Ok(tile),
                                    None => {
                                        Ok(decode_field_tile(src, frag, s, t, key)?.pick(&picked))
                                    }
                                };
                            }
                            let (data, validity) = (&mut data[0], &mut validity[0]);
                            decode_picked_fixed(src, frag, s, t, key, &picked, (data, validity))?;
                            let v = s.nullable.then_some(validity.as_slice());
                            Ok(pick_fixed(data, v, w, &picked))
                        })
                        .collect::<Result<_, QueryError>>()?;
                    Ok((picked.len() as u64, fields))
                })
            };
            // Whole tiles need no coordinates unless they are asked for.
            let numbers = |whole: bool| -> Vec<u64> {
                mine.iter().filter(|x| x.2 == whole).map(|x| x.1).collect()
            };
            let (full, part) = (numbers(true), numbers(false));
            let spec_refs: Vec<&FieldSpec> = specs.iter().collect();
            // Coordinates once, whether or not they are also wanted; and
            // the condition's other fields.
            let mut with_coords: Vec<&FieldSpec> = dim_specs
                .iter()
                .chain(
                    specs
                        .iter()
                        .filter(|s| !matches!(s.field, Field::Dimension(_))),
                )
                .collect();
            for c in &cond_specs {
                if with_coords.iter().all(|s| s.field != c.field) {
                    with_coords.push(c);
                }
            }
            let mut full =
                decode_in_runs(self.storage, &self.context, frag, &spec_refs, &full, whole)?
                    .into_iter();
            let mut part = decode_in_runs(
                self.storage,
                &self.context,
                frag,
                &with_coords,
                &part,
                partial,
            )?
            .into_iter();
            for x in mine {
                let next = if x.2 { full.next() } else { part.next() };
                kept.push(next.expect("one result per tile"));
            }
        }
        let n: u64 = kept.iter().map(|k| k.0).sum();
        let mut columns: Vec<Column> = wanted.iter().map(|&f| field_column(schema, f)).collect();
        columns
            .par_iter_mut()
            .enumerate()
            .for_each(|(k, c)| c.fill_from(&self.context, kept.iter().map(|v| &v.1[k])));
        Ok(ReadResult {
            cell_count: n as usize,
            columns,
            grid: None,
            context: None,
        })
    }
}
