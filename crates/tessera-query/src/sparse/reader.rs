//! The sparse reader: the fast paths where they apply (whole tiles decoded
//! straight into the result, or the cells a subarray or condition picks),
//! else the general path: the tiles a subarray touches, cells deduplicated
//! (newest write wins), deletes and conditions applied, sorted into the
//! layout asked for.

use super::cells::{CellFields, CellOrder, CellRef, Gathered};
use super::concurrent::per_fragment;
use super::deletes::{DeleteCommit, DeleteCommits};
use super::picked::sparse_picked;
use super::plan::direct_plan;
use super::tiles::pruned_hits;
use super::tiles::sparse_tiles;
use super::tiles::TileCells;
use super::whole::sparse_whole;
use crate::read::Read;
use crate::result::{Column, ColumnBuilder, ReadResult};
use crate::QueryError;
use rayon::prelude::*;
use std::sync::Arc;
use tessera_cells::Expr;
use tessera_cells::{DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS, VERSION_TIMESTAMPS};
use tessera_fragment::FragmentMetadata;
use tessera_schema::ArraySchema;
use tessera_tile::Layout;

/// The sparse reader: a read of a sparse array's fragments, of the
/// attributes it returns in the layout it returns them in. The fast paths
/// where nothing is deduplicated or sorted ([`SparseReader::direct`]),
/// else the general path: every touched tile decoded, cells deduplicated,
/// deletes and the condition applied, the cells sorted.
pub(crate) struct SparseReader<'r, 'a> {
    read: &'r Read<'a>,
    /// The array's schema.
    schema: &'a Arc<ArraySchema>,
    /// The attributes returned, by name.
    attrs: Vec<String>,
    /// The order the cells are returned in.
    layout: Layout,
}

impl<'r, 'a> SparseReader<'r, 'a> {
    /// The read of `attrs` (the attributes `read` returns), in the layout
    /// it resolves to.
    pub(crate) fn plan(read: &'r Read<'a>, attrs: Vec<String>) -> Self {
        SparseReader {
            read,
            schema: &read.array.schema,
            attrs,
            layout: read.resolved_layout(),
        }
    }

    /// The sparse fast path. When every cell of every tile the read touches
    /// is returned, in stored order, with nothing to deduplicate or sort,
    /// each tile decodes straight into its place in the result
    /// ([`sparse_whole`]). Where the subarray cuts tiles or a
    /// condition filters cells, the cells are picked
    /// ([`sparse_picked`]): the condition is a test of each cell
    /// alone here, as nothing is deduplicated. `None` when the read needs
    /// the general path.
    fn direct(&self) -> Result<Option<ReadResult>, QueryError> {
        let (schema, attrs) = (&**self.schema, &self.attrs[..]);
        let (request, array) = (self.read.request, self.read.array);
        let Some(plan) = direct_plan(request, array, attrs, self.layout) else {
            return Ok(None);
        };
        let frags = &self.read.array.fragments;
        let mut hits: Vec<(usize, u64, bool)> = Vec::new();
        for (fi, frag) in frags.iter().enumerate() {
            // No cell shadows another here.
            let prune = self
                .read
                .request
                .condition
                .as_ref()
                .filter(|_| self.read.request.tuning.prune);
            let mine = pruned_hits(self.read, fi, frag, prune.map(|c| (c, None)))?;
            hits.extend(mine.into_iter().map(|(t, inside)| (fi, t, inside)));
        }
        // With a condition, every tile's cells are picked.
        if self.read.request.condition.is_none() && hits.iter().all(|h| h.2) {
            let (storage, context) = (self.read.storage, &*self.read.context);
            return sparse_whole(storage, context, array, &hits, &plan).map(Some);
        }
        match self.coordinates_split() {
            true => sparse_picked(self.read, schema, &hits, &plan).map(Some),
            false => Ok(None),
        }
    }

    /// Whether every fragment stores its coordinates as a tile per
    /// dimension, as picking cells needs.
    fn coordinates_split(&self) -> bool {
        let split = |f: &FragmentMetadata| f.version().has(crate::gates::COORDINATES_PER_DIMENSION);
        self.read.array.fragments.iter().all(split)
    }

    /// Whether the read picks the cells of tiles it cuts one tile at a
    /// time, holding no decoded tile to the end ([`sparse_picked`]): the
    /// fast path, on fragments with coordinates per dimension. Only the
    /// tiles it returns whole are held (batches estimate from this).
    pub(crate) fn picks_cut_tiles(&self) -> bool {
        !self.read.request.versions
            && direct_plan(self.read.request, self.read.array, &self.attrs, self.layout).is_some()
            && self.coordinates_split()
    }

    /// The sparse read: the fast path where it applies
    /// ([`SparseReader::direct`]), else every touched tile decoded, cells
    /// deduplicated (the newest write of a coordinate wins), deletes and
    /// the condition applied after that, and the cells sorted.
    pub(crate) fn run(&self) -> Result<ReadResult, QueryError> {
        if !self.read.request.versions {
            if let Some(r) = self.direct()? {
                return Ok(r);
            }
        }
        let (schema, attrs, layout) = (&**self.schema, &self.attrs[..], self.layout);
        let deletes: Vec<DeleteCommit> = self
            .read
            .array
            .delete_conditions
            .iter()
            .map(|d| (d.timestamp, d.name.clone(), Expr::from_stored(&d.condition)))
            .collect();
        let fields = self.decoded_fields(schema, attrs, &deletes)?;
        let mut tiles = self.touched_tiles(&fields)?;
        // Each fragment is stored in global order: a single fragment needs
        // neither deduplication nor re-sorting, unless it holds per-cell
        // timestamps (consolidated with them, it keeps every version of a
        // cell) where duplicates are not allowed.
        let fragments = &self.read.array.fragments;
        let versions = fragments.iter().any(|f| f.footer.has_timestamps);
        let single = fragments.len() <= 1 && (schema.allows_dups || !versions);
        let access = CellFields::new(
            schema,
            &fields,
            self.read.request.condition.as_ref(),
            fragments,
        );
        let condition = self
            .read
            .request
            .condition
            .as_ref()
            .map(|c| access.compile(c));
        // Without deduplication the condition is a filter on each cell
        // alone: apply it per tile, before any cell reference is made.
        let dedup = !schema.allows_dups && !single && !self.read.request.versions;
        if let (Some(cond), false) = (&condition, dedup) {
            access.filter_tiles(cond, &mut tiles);
        }
        let order = CellOrder::new(schema, &tiles);
        // Duplicates: unless allowed, the newest write of a coordinate wins.
        let (mut refs, sorted) = if dedup {
            let gathered = match self.stamps_in_write_order(&tiles) {
                Some(stamps) => Gathered::InWriteOrder(stamps),
                None => Gathered::Cells(self.cell_refs(&tiles)),
            };
            order.dedup(gathered, layout)
        } else {
            (self.cell_refs(&tiles), false)
        };
        // Deletes, after deduplication as in libtiledb: deleting the
        // newest version of a cell does not bring back an older one. With
        // delete metadata asked for, deleted versions stay, marked below.
        let commits = DeleteCommits::new(&deletes, &access, fragments, self.read.storage)?;
        if !self.read.request.delete_metadata {
            refs.retain(|r| !self.deleted(&tiles, r));
            commits.retain(&access, &tiles, &mut refs);
        }
        // The condition, after deduplication as in libtiledb: a newer
        // write failing it still hides older ones that pass.
        if let (Some(cond), true) = (&condition, dedup) {
            access.retain_meeting(cond, &tiles, &mut refs);
        }
        if !sorted {
            refs = order.sort(refs, schema, layout, single);
        }
        let mut result = self.sparse_columns(schema, attrs, &fields, &tiles, &refs);
        if self.read.request.versions {
            result
                .columns
                .push(u64_column(VERSION_TIMESTAMPS, refs.iter().map(|r| r.2)));
        }
        if self.read.request.delete_metadata {
            let marks = commits.marks(&access, &tiles, &refs);
            result
                .columns
                .push(u64_column(DELETE_TIMESTAMPS, marks.iter().map(|m| m.0)));
            result.columns.push(u64_column(
                DELETE_CONDITION_INDEX,
                marks.iter().map(|m| m.1),
            ));
        }
        Ok(result)
    }

    /// The fields to decode besides dimensions: the selected attributes,
    /// and any the query and delete conditions read.
    fn decoded_fields(
        &self,
        schema: &ArraySchema,
        attrs: &[String],
        deletes: &[DeleteCommit],
    ) -> Result<Vec<String>, QueryError> {
        let mut extra = Vec::new();
        if let Some(c) = &self.read.request.condition {
            c.fields(&mut extra);
        }
        for (_, _, e) in deletes {
            e.fields(&mut extra);
        }
        let mut fields: Vec<String> = attrs.to_vec();
        for f in extra {
            let is_dim = schema.dimensions.iter().any(|d| d.name == f);
            if !fields.contains(&f) && !is_dim {
                if schema.attribute(&f).is_none() {
                    return Err(QueryError::Invalid(format!(
                        "a condition names `{f}`, which the array does not have"
                    )));
                }
                fields.push(f);
            }
        }
        Ok(fields)
    }

    /// The tiles of every fragment the read touches, with `fields`
    /// decoded; with pruning, less those no cell of which can meet the
    /// condition.
    fn touched_tiles(&self, fields: &[String]) -> Result<Vec<TileCells>, QueryError> {
        let pruning = self
            .read
            .request
            .condition
            .as_ref()
            .filter(|_| self.read.request.tuning.prune)
            .map(|c| (c, crate::prune::Shadows::new(self.read.array)));
        let prune_by = pruning.as_ref().map(|(c, s)| (*c, s));
        if let Some(frag) = self.read.array.fragments.iter().find(|f| f.footer.dense) {
            return Err(QueryError::Invalid(format!(
                "fragment {} is dense in a sparse array",
                frag.name
            )));
        }
        let (storage, tuning) = (self.read.storage, &self.read.request.tuning);
        let per_fragment =
            per_fragment(storage, tuning, &self.read.array.fragments, |fi, frag| {
                sparse_tiles(self.read, fi, frag, fields, prune_by)
            })?;
        Ok(per_fragment.into_iter().flatten().collect())
    }

    /// References to the selected cells of `tiles`, with their timestamps
    /// (per cell where the fragment has them, else the fragment's); cells
    /// written outside the open window are left out.
    fn cell_refs(&self, tiles: &[TileCells]) -> Vec<CellRef> {
        let (start, end) = (
            self.read.array.timestamp_start,
            self.read.array.timestamp_end,
        );
        let mut refs: Vec<CellRef> =
            Vec::with_capacity(tiles.iter().map(|tc| tc.cells.len()).sum());
        for (ti, tc) in tiles.iter().enumerate() {
            let frag = &self.read.array.fragments[tc.frag];
            let (ft, fe) = frag.timestamp_range();
            // As libtiledb: per-cell times filter only a fragment the open
            // window holds in part (a consolidated fragment's cells may
            // be newer than its name says).
            let partial = !(ft >= start && fe <= end);
            for &c in &tc.cells {
                let ts = match &tc.times {
                    Some(t) => u64::from_le_bytes(t.value(c as usize).try_into().unwrap_or([0; 8])),
                    None => ft,
                };
                if partial && tc.times.is_some() && (ts < start || ts > end) {
                    continue;
                }
                refs.push((ti as u32, c, ts));
            }
        }
        refs
    }

    /// Each tile's time, where every cell of a tile has its fragment's
    /// (no per-cell times: [`SparseReader::cell_refs`] keeps them all) and
    /// the tiles come oldest write first (fragments in order of time).
    fn stamps_in_write_order(&self, tiles: &[TileCells]) -> Option<Vec<u64>> {
        let mut stamps = Vec::with_capacity(tiles.len());
        let mut last = (0, 0);
        for tc in tiles {
            let ts = self.read.array.fragments[tc.frag].timestamp_range().0;
            if tc.times.is_some() || (ts, tc.frag) < last {
                return None;
            }
            last = (ts, tc.frag);
            stamps.push(ts);
        }
        Some(stamps)
    }

    /// Whether cell `r` was deleted (consolidated delete times) at or
    /// before the time the array is open at.
    fn deleted(&self, tiles: &[TileCells], &(ti, c, _): &CellRef) -> bool {
        let end = self.read.array.timestamp_end;
        tiles[ti as usize].delete_times.as_ref().is_some_and(|d| {
            let dt = u64::from_le_bytes(d.value(c as usize).try_into().unwrap_or([0xff; 8]));
            !(dt > end || (end == u64::MAX && dt == u64::MAX))
        })
    }

    /// The result's columns: the cells `refs` of `tiles`, dimensions (when
    /// asked for) then attributes `attrs` (of the decoded `fields`). Cells
    /// that follow each other in one tile are copied as one run, and the
    /// columns are built in parallel.
    fn sparse_columns(
        &self,
        schema: &ArraySchema,
        attrs: &[String],
        fields: &[String],
        tiles: &[TileCells],
        refs: &[CellRef],
    ) -> ReadResult {
        let n = refs.len();
        let dims = &schema.dimensions;
        let mut wanted: Vec<ResultColumn> = (self.read.request)
            .returned_dimensions(schema)
            .into_iter()
            .map(ResultColumn::Dimension)
            .collect();
        wanted.extend(
            attrs.iter().map(|a| {
                ResultColumn::Decoded(fields.iter().position(|f| f == a).expect("selected"))
            }),
        );
        let ctx = &self.read.context;
        let columns: Vec<Column> = wanted
            .par_iter()
            .map(|field| match *field {
                ResultColumn::Dimension(j) => {
                    let d = &dims[j];
                    let mut b = ColumnBuilder::new(
                        ctx,
                        &d.name,
                        true,
                        d.datatype,
                        d.cell_val_num,
                        false,
                        n,
                    );
                    for (ti, from, to) in runs(refs) {
                        b.push_run(&tiles[ti].dims[j], from, to);
                    }
                    b.col
                }
                ResultColumn::Decoded(k) => {
                    let a = &fields[k];
                    let at = schema.attribute(a).expect("checked");
                    let mut b = ColumnBuilder::new(
                        ctx,
                        a,
                        false,
                        at.datatype,
                        at.cell_val_num,
                        at.nullable,
                        n,
                    );
                    for (ti, from, to) in runs(refs) {
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
        ReadResult {
            cell_count: n,
            columns,
            grid: None,
            context: None,
        }
    }
}

/// A column of a sparse read's result: a dimension of the schema (its
/// number), or a field the read decoded (its place among them).
enum ResultColumn {
    Dimension(usize),
    Decoded(usize),
}

/// The runs of `refs` that follow each other in one tile, as (tile,
/// first cell, end), made as they are walked: a read of shuffled
/// fragments has about as many runs as cells, too many to hold.
fn runs(refs: &[CellRef]) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let first = refs.get(at)?;
        let (ti, from) = (first.0, first.1);
        let mut to = from + 1;
        at += 1;
        while let Some(r) = refs.get(at).filter(|r| r.0 == ti && r.1 == to) {
            to = r.1 + 1;
            at += 1;
        }
        Some((ti as usize, from as usize, to as usize))
    })
}

/// A UINT64 column of one value a cell, as [`ReadRequest::versions`](crate::ReadRequest::versions) and
/// [`ReadRequest::delete_metadata`](crate::ReadRequest::delete_metadata) add.
fn u64_column(name: &str, values: impl Iterator<Item = u64>) -> Column {
    Column {
        name: name.into(),
        is_dimension: false,
        datatype: tessera_tile::Datatype::UInt64,
        cell_val_num: tessera_schema::CellValNum::Fixed(1),
        data: values.flat_map(u64::to_le_bytes).collect(),
        offsets: None,
        validity: None,
    }
}
