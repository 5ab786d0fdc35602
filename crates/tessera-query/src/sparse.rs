//! The sparse reader's general path: the tiles a subarray touches, cells
//! deduplicated (newest write wins), deletes and conditions applied,
//! sorted into the layout asked for.

use crate::condition::Expr;
use crate::decode::{decode_field_tile, decode_in_runs, Fetched, FieldSpec, FieldTile};
use crate::geometry::{compare_values, major_order, mbr_overlap, tile_coord, DimRanges};
use crate::key::Key;
use crate::prune::Answered;
use crate::read::Query;
use crate::result::{ColumnBuilder, ReadResult};
use crate::QueryError;
use rayon::prelude::*;
use std::sync::Arc;
use tessera_fragment::{Field, FragmentMetadata};
use tessera_schema::{ArraySchema, Range1D};
use tessera_tile::{Datatype, Layout};

/// The decoded tiles of one sparse tile and which of its cells the subarray selects.
pub(crate) struct TileCells {
    /// Index of the fragment.
    pub(crate) frag: usize,
    pub(crate) dims: Vec<FieldTile>,
    pub(crate) fields: Vec<Option<FieldTile>>,
    pub(crate) times: Option<FieldTile>,
    pub(crate) delete_times: Option<FieldTile>,
    /// Cells inside the subarray.
    pub(crate) cells: Vec<u32>,
}

impl<'a> Query<'a> {
    /// Reads the tiles of sparse fragment `frag` (number `fi`) that meet
    /// the subarray: coordinates, the cells inside the ranges, and `fields`
    /// (plus per-cell and delete timestamps when the fragment has them) of
    /// the tiles with any such cell. With `prune_by`, fragments and tiles
    /// whose metadata shows no cell can satisfy its condition are left
    /// unread, where no cell of theirs can shadow another.
    pub(crate) fn sparse_tiles(
        &self,
        fi: usize,
        frag: &FragmentMetadata,
        fields: &[String],
        prune_by: Option<(&Expr, &crate::prune::Shadows)>,
    ) -> Result<Vec<TileCells>, QueryError> {
        let hits = self.pruned_hits(fi, frag, prune_by.map(|(c, s)| (c, Some(s))))?;
        if hits.is_empty() {
            return Ok(Vec::new());
        }
        let dims = &frag.schema.dimensions;
        let nd = dims.len();
        let key = self.array.key;
        let legacy_coords = !frag
            .version()
            .has(tessera_fragment::gates::SPLIT_COORDINATES);
        let dim_ranges: Vec<DimRanges<'_>> = (0..nd)
            .map(|j| DimRanges::new(&self.ranges[j], dims[j].datatype))
            .collect();
        let dim_specs: Vec<FieldSpec> = (0..nd)
            .map(|j| FieldSpec::of(frag, Field::Dimension(j)))
            .collect();
        let specs: Vec<Option<FieldSpec>> =
            fields.iter().map(|a| FieldSpec::named(frag, a)).collect();
        let ts_spec = frag
            .footer
            .has_timestamps
            .then(|| FieldSpec::of(frag, Field::Timestamps));
        let dt_spec = frag
            .footer
            .has_delete_meta
            .then(|| FieldSpec::of(frag, Field::DeleteTimestamps));
        // Coordinates first, in runs of neighbouring tiles; then the other
        // fields of just the tiles with cells inside the subarray.
        let coords_spec = FieldSpec::of(frag, Field::Coords);
        let coord_specs: Vec<&FieldSpec> = if legacy_coords {
            vec![&coords_spec]
        } else {
            dim_specs.iter().collect()
        };
        let numbers: Vec<u64> = hits.iter().map(|h| h.0).collect();
        let located = decode_in_runs(
            self.storage,
            &self.context,
            frag,
            &coord_specs,
            &numbers,
            |src, t| {
                let dt: Vec<FieldTile> = if legacy_coords {
                    // Before format 5 all coordinates share one tile.
                    let c = decode_field_tile(src, frag, &coords_spec, t, key)?;
                    crate::decode::split_coords(
                        &c,
                        nd,
                        dims[0].coord_size() as usize,
                        frag.coords_zipped(),
                    )
                } else {
                    dim_specs
                        .iter()
                        .map(|s| decode_field_tile(src, frag, s, t, key))
                        .collect::<Result<_, _>>()?
                };
                Ok(dt)
            },
        )?;
        let mut tiles: Vec<TileCells> = hits
            .par_iter()
            .zip(located)
            .map(|(&(_, full), dt)| {
                let n = dt.first().map_or(0, |d| d.cells) as usize;
                let cells: Vec<u32> = if full {
                    (0..n as u32).collect()
                } else {
                    (0..n)
                        .filter(|&i| (0..nd).all(|j| dim_ranges[j].contains(dt[j].value(i))))
                        .map(|i| i as u32)
                        .collect()
                };
                TileCells {
                    frag: fi,
                    dims: dt,
                    fields: specs.iter().map(|_| None).collect(),
                    times: None,
                    delete_times: None,
                    cells,
                }
            })
            .collect();
        let wanted: Vec<usize> = (0..tiles.len())
            .filter(|&i| !tiles[i].cells.is_empty())
            .collect();
        let numbers: Vec<u64> = wanted.iter().map(|&i| hits[i].0).collect();
        let field_specs: Vec<&FieldSpec> = specs
            .iter()
            .flatten()
            .chain(ts_spec.as_ref())
            .chain(dt_spec.as_ref())
            .collect();
        let read = |src: &Fetched<'_>, s: &FieldSpec, t| decode_field_tile(src, frag, s, t, key);
        let decoded = decode_in_runs(
            self.storage,
            &self.context,
            frag,
            &field_specs,
            &numbers,
            |src, t| {
                let fields = specs
                    .iter()
                    .map(|s| s.as_ref().map(|s| read(src, s, t)).transpose())
                    .collect::<Result<Vec<_>, _>>()?;
                let times = ts_spec.as_ref().map(|s| read(src, s, t)).transpose()?;
                let delete_times = dt_spec.as_ref().map(|s| read(src, s, t)).transpose()?;
                Ok((fields, times, delete_times))
            },
        )?;
        for (i, (fields, times, delete_times)) in wanted.into_iter().zip(decoded) {
            let tc = &mut tiles[i];
            tc.fields = fields;
            tc.times = times;
            tc.delete_times = delete_times;
        }
        Ok(tiles)
    }

    /// The tiles of fragment `fi` a sparse read touches
    /// ([`Query::sparse_hits`]); with `prune` (a condition, and what may
    /// shadow cells: `None` when nothing is deduplicated, so nothing can),
    /// less those whose metadata shows no cell can satisfy the condition,
    /// where no cell of theirs can shadow another.
    pub(crate) fn pruned_hits(
        &self,
        fi: usize,
        frag: &FragmentMetadata,
        prune: Option<(&Expr, Option<&crate::prune::Shadows>)>,
    ) -> Result<Vec<(u64, bool)>, QueryError> {
        let Some((c, shadows)) = prune else {
            return self.sparse_hits(fi, frag);
        };
        // Whether no cell of the whole fragment can hide another: then
        // neither can any of its tiles'.
        let alone = shadows.is_none_or(|s| s.none_in(fi, frag, None));
        if alone && !crate::prune::fragment_may_match(self.storage, frag, c)? {
            return Ok(Vec::new());
        }
        let mut hits = self.sparse_hits(fi, frag)?;
        let pruner = crate::prune::FragmentPruner::new(self.storage, frag, c)?;
        match shadows {
            Some(shadows) if !alone => {
                let leaves = frag.rtree(self.storage)?.leaves();
                hits.retain(|&(t, _)| {
                    let tile = leaves.get(t as usize).map(Vec::as_slice);
                    !shadows.none_in(fi, frag, tile) || pruner.tile_may_match(c, t)
                });
            }
            _ => hits.retain(|&(t, _)| pruner.tile_may_match(c, t)),
        }
        Ok(hits)
    }

    /// The tiles of fragment `fi` the subarray touches, each with whether it
    /// lies wholly inside, less those an earlier batch answered.
    pub(crate) fn sparse_hits(
        &self,
        fi: usize,
        frag: &FragmentMetadata,
    ) -> Result<Vec<(u64, bool)>, QueryError> {
        let answered = self.answered.get(fi).unwrap_or(&Answered::Nothing);
        if *answered == Answered::Fragment {
            return Ok(Vec::new());
        }
        let dims = &frag.schema.dimensions;
        let ranges = &self.ranges;
        let mut hits = frag
            .rtree(self.storage)?
            .tiles_overlapping(&|mbr: &[Range1D]| mbr_overlap(mbr, ranges, dims));
        if let Answered::Tiles(done) = answered {
            hits.retain(|(t, _)| done.binary_search(t).is_err());
        }
        Ok(hits)
    }

    /// The sparse read: the fast path where it applies
    /// ([`Query::sparse_direct`]), else every touched tile decoded, cells
    /// deduplicated (the newest write of a coordinate wins), deletes and
    /// the condition applied after that, and the cells sorted.
    pub(crate) fn sparse(
        &self,
        schema: &Arc<ArraySchema>,
        attrs: &[String],
        layout: Layout,
    ) -> Result<ReadResult, QueryError> {
        if let Some(r) = self.sparse_direct(schema, attrs, layout)? {
            return Ok(r);
        }
        let dims = &schema.dimensions;
        let nd = dims.len();
        let dim_names: Vec<String> = dims.iter().map(|d| d.name.clone()).collect();
        // Fields to decode: dimensions, selected attributes, and any the conditions read.
        let deletes: Vec<(u64, String, Expr)> = self
            .array
            .delete_conditions
            .iter()
            .map(|d| (d.timestamp, d.name.clone(), Expr::from_stored(&d.condition)))
            .collect();
        let mut extra = Vec::new();
        if let Some(c) = &self.condition {
            c.fields(&mut extra);
        }
        for (_, _, e) in &deletes {
            e.fields(&mut extra);
        }
        let mut fields: Vec<String> = attrs.to_vec();
        for f in extra {
            if !fields.contains(&f) && !dim_names.contains(&f) {
                if schema.attribute(&f).is_none() {
                    return Err(QueryError::Invalid(format!(
                        "a condition names `{f}`, which the array does not have"
                    )));
                }
                fields.push(f);
            }
        }
        let pruning = self
            .condition
            .as_ref()
            .filter(|_| self.tuning.prune)
            .map(|c| (c, crate::prune::Shadows::new(self.array)));
        let prune_by = pruning.as_ref().map(|(c, s)| (*c, s));
        let mut tiles: Vec<TileCells> = Vec::new();
        for (fi, frag) in self.array.fragments.iter().enumerate() {
            if frag.footer.dense {
                return Err(QueryError::Invalid(format!(
                    "fragment {} is dense in a sparse array",
                    frag.name
                )));
            }
            tiles.extend(self.sparse_tiles(fi, frag, &fields, prune_by)?);
        }
        // Each fragment is stored in global order: a single fragment needs
        // neither deduplication nor re-sorting, unless it holds per-cell
        // timestamps (consolidated with them, it keeps every version of a
        // cell) where duplicates are not allowed.
        let versions = self.array.fragments.iter().any(|f| f.footer.has_timestamps);
        let single = self.array.fragments.len() <= 1 && (schema.allows_dups || !versions);
        // Conditions read a cell's fields by position: the dimensions, then
        // `fields`; a field a fragment lacks reads as its fill value.
        let position = |name: &str| -> Option<(usize, Datatype)> {
            if let Some(j) = dims.iter().position(|d| d.name == name) {
                return Some((j, dims[j].datatype));
            }
            let k = fields.iter().position(|f| f == name)?;
            Some((nd + k, schema.attribute(name)?.datatype))
        };
        let fills: Vec<(&[u8], bool)> = fields
            .iter()
            .map(|f| match schema.attribute(f) {
                Some(a) => (a.fill_value.as_slice(), a.fill_validity),
                None => (&[][..], false),
            })
            .collect();
        fn field_of<'t>(
            tc: &'t TileCells,
            c: usize,
            at: usize,
            fills: &[(&'t [u8], bool)],
        ) -> (&'t [u8], bool) {
            let nd = tc.dims.len();
            if at < nd {
                return (tc.dims[at].value(c), true);
            }
            match &tc.fields[at - nd] {
                Some(t) => (t.value(c), t.valid(c)),
                None => fills[at - nd],
            }
        }
        let condition = self.condition.as_ref().map(|c| c.compile(&position));
        // libtiledb fails every cell of a fragment that lacks a field the
        // query condition names (schema evolution), whatever the rest of
        // the condition says (2.17 to 2.30 alike).
        let blind: Vec<bool> = match &self.condition {
            Some(c) => {
                let mut names = Vec::new();
                c.fields(&mut names);
                names.retain(|n| !dim_names.contains(n));
                let frags = &self.array.fragments;
                frags
                    .iter()
                    .map(|f| names.iter().any(|n| f.schema.attribute(n).is_none()))
                    .collect()
            }
            None => Vec::new(),
        };
        let passes = |cond: &crate::condition::Compiled, tc: &TileCells, c: u32| {
            cond.eval(&|at| field_of(tc, c as usize, at, &fills))
        };
        let meets = |cond: &crate::condition::Compiled, tc: &TileCells, c: u32| {
            !blind.get(tc.frag).copied().unwrap_or(false) && passes(cond, tc, c)
        };
        // Without deduplication the condition is a filter on each cell
        // alone: apply it per tile, before any cell reference is made.
        let dedup = !schema.allows_dups && !single;
        if let (Some(cond), false) = (&condition, dedup) {
            tiles.par_iter_mut().for_each(|tc| {
                let mut cells = std::mem::take(&mut tc.cells);
                cells.retain(|&c| meets(cond, tc, c));
                tc.cells = cells;
            });
        }
        // Cell references with their timestamps.
        let (start, end) = (self.array.timestamp_start, self.array.timestamp_end);
        let mut refs: Vec<(u32, u32, u64)> = Vec::new();
        for (ti, tc) in tiles.iter().enumerate() {
            let frag = &self.array.fragments[tc.frag];
            let (ft, _) = frag.timestamp_range();
            for &c in &tc.cells {
                let ts = match &tc.times {
                    Some(t) => u64::from_le_bytes(t.value(c as usize).try_into().unwrap_or([0; 8])),
                    None => ft,
                };
                if tc.times.is_some() && (ts < start || ts > end) {
                    continue;
                }
                refs.push((ti as u32, c, ts));
            }
        }
        // Consolidated deletes: a cell deleted at or before the open time
        // is gone, after deduplication (below) as in libtiledb: deleting
        // the newest version of a cell does not bring back an older one.
        let deleted = |&(ti, c, _): &(u32, u32, u64)| {
            tiles[ti as usize].delete_times.as_ref().is_some_and(|d| {
                let dt = u64::from_le_bytes(d.value(c as usize).try_into().unwrap_or([0xff; 8]));
                !(dt > end || (end == u64::MAX && dt == u64::MAX))
            })
        };
        // Coordinates compare in place, without building keys.
        let cval = |r: &(u32, u32, u64), j: usize| tiles[r.0 as usize].dims[j].value(r.1 as usize);
        let cmp_dims =
            |x: &(u32, u32, u64), y: &(u32, u32, u64), order: &[usize]| -> std::cmp::Ordering {
                for &j in order {
                    let o = compare_values(dims[j].datatype, cval(x, j), cval(y, j));
                    if o.is_ne() {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            };
        let row = major_order(Layout::RowMajor, nd);
        let col = major_order(Layout::ColMajor, nd);
        let (tile_order, cell_order) = (
            major_order(schema.tile_order, nd),
            major_order(schema.cell_order, nd),
        );
        // Each dimension's (domain start, tile extent), decoded once for the sort.
        let tiling: Vec<Option<(Key, Key)>> = dims
            .iter()
            .map(|d| match (d.domain.as_ref(), d.tile_extent.as_ref()) {
                (Some((lo, _)), Some(ext)) => {
                    Some((Key::decode(d.datatype, lo), Key::decode(d.datatype, ext)))
                }
                _ => None,
            })
            .collect();
        let tile_of = |r: &(u32, u32, u64), j: usize| {
            tile_coord(
                tiling[j].as_ref(),
                Key::decode(dims[j].datatype, cval(r, j)),
            )
        };
        let global = |x: &(u32, u32, u64), y: &(u32, u32, u64)| -> std::cmp::Ordering {
            for &j in &tile_order {
                let o = tile_of(x, j).cmp(&tile_of(y, j));
                if o.is_ne() {
                    return o;
                }
            }
            cmp_dims(x, y, &cell_order)
        };
        // Duplicates: unless allowed, the newest write of a coordinate wins.
        if dedup {
            let frag_of = |r: &(u32, u32, u64)| tiles[r.0 as usize].frag;
            let mut idx: Vec<usize> = (0..refs.len()).collect();
            idx.sort_by(|&a, &b| {
                cmp_dims(&refs[a], &refs[b], &row).then((refs[a].2, frag_of(&refs[a]), a).cmp(&(
                    refs[b].2,
                    frag_of(&refs[b]),
                    b,
                )))
            });
            let mut keep = Vec::with_capacity(refs.len());
            for (p, &i) in idx.iter().enumerate() {
                if idx
                    .get(p + 1)
                    .is_none_or(|&nx| cmp_dims(&refs[nx], &refs[i], &row).is_ne())
                {
                    keep.push(refs[i]);
                }
            }
            refs = keep;
        }
        refs.retain(|r| !deleted(r));
        // Delete conditions, after deduplication as in libtiledb: deleting
        // the newest write of a cell does not bring back an older one (the
        // deletes_overwritten fixture). libtiledb stores the negation of the
        // delete condition (the cells to keep); a cell written before the
        // delete that does not satisfy it is gone. Commits a fragment lists
        // as processed were applied when it was consolidated: they are not
        // applied to it again.
        if !deletes.is_empty() {
            let processed: Vec<Vec<bool>> = self
                .array
                .fragments
                .iter()
                .map(|f| {
                    let done = f.processed_conditions(self.storage)?;
                    Ok(deletes
                        .iter()
                        .map(|(_, name, _)| done.iter().any(|d| d == name))
                        .collect())
                })
                .collect::<Result<_, QueryError>>()?;
            let kept: Vec<_> = deletes
                .iter()
                .map(|(_, _, e)| e.compile(&position))
                .collect();
            refs.retain(|&(ti, c, ts)| {
                let tc = &tiles[ti as usize];
                !deletes
                    .iter()
                    .zip(&kept)
                    .enumerate()
                    .any(|(k, ((dts, _, _), e))| {
                        !processed[tc.frag][k] && ts < *dts && !passes(e, tc, c)
                    })
            });
        }
        // The condition, after deduplication as in libtiledb: a newer
        // write failing it still hides older ones that pass.
        if let (Some(cond), true) = (&condition, dedup) {
            refs.retain(|&(ti, c, _)| meets(cond, &tiles[ti as usize], c));
        }
        // Order.
        match layout {
            Layout::RowMajor => refs.sort_by(|x, y| cmp_dims(x, y, &row)),
            Layout::ColMajor => refs.sort_by(|x, y| cmp_dims(x, y, &col)),
            Layout::GlobalOrder | Layout::Unordered
                if schema.cell_order == Layout::Hilbert
                    && (!single || layout == Layout::GlobalOrder) =>
            {
                // Hilbert value of the coordinates, ties broken row-major.
                let h = crate::hilbert::Mapping::new(dims);
                let mut keyed: Vec<(u64, (u32, u32, u64))> = refs
                    .iter()
                    .map(|r| (h.value(dims, |j| cval(r, j)), *r))
                    .collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| cmp_dims(&a.1, &b.1, &row)));
                refs = keyed.into_iter().map(|k| k.1).collect();
            }
            Layout::GlobalOrder | Layout::Unordered
                if !single && (!schema.allows_dups || layout == Layout::GlobalOrder) =>
            {
                refs.sort_by(global)
            }
            _ => {}
        }
        // Assemble: cells that follow each other in one tile are copied as
        // one run, and the columns are built in parallel.
        let n = refs.len();
        let mut runs: Vec<(usize, usize, usize)> = Vec::new(); // (tile, from, to)
        for r in &refs {
            let (ti, c) = (r.0 as usize, r.1 as usize);
            match runs.last_mut() {
                Some(run) if run.0 == ti && run.2 == c => run.2 += 1,
                _ => runs.push((ti, c, c + 1)),
            }
        }
        let mut wanted: Vec<Option<usize>> = Vec::new(); // None: dimension j; Some(k): field k
        if self.with_dimensions {
            wanted.extend((0..nd).map(|_| None));
        }
        wanted.extend(
            attrs
                .iter()
                .map(|a| Some(fields.iter().position(|f| f == a).expect("selected"))),
        );
        let columns: Vec<crate::result::Column> = wanted
            .par_iter()
            .enumerate()
            .map(|(w, field)| match *field {
                None => {
                    let d = &dims[w];
                    let mut b = ColumnBuilder::new(
                        &self.context,
                        &d.name,
                        true,
                        d.datatype,
                        d.cell_val_num,
                        false,
                        n,
                    );
                    for &(ti, from, to) in &runs {
                        b.push_run(&tiles[ti].dims[w], from, to);
                    }
                    b.col
                }
                Some(k) => {
                    let a = &fields[k];
                    let at = schema.attribute(a).expect("checked");
                    let mut b = ColumnBuilder::new(
                        &self.context,
                        a,
                        false,
                        at.datatype,
                        at.cell_val_num,
                        at.nullable,
                        n,
                    );
                    for &(ti, from, to) in &runs {
                        match &tiles[ti].fields[k] {
                            Some(t) => b.push_run(t, from, to),
                            None => {
                                (from..to).for_each(|_| b.push(&at.fill_value, at.fill_validity))
                            }
                        }
                    }
                    b.col
                }
            })
            .collect();
        let result = ReadResult {
            cell_count: n,
            columns,
            grid: None,
            context: None,
        };
        Ok(result)
    }
}
