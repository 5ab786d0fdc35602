//! The sparse reader's general path: the tiles a subarray touches, cells
//! deduplicated (newest write wins), deletes and conditions applied,
//! sorted into the layout asked for.

use super::cells::{CellFields, CellOrder, CellRef};
use super::tiles::TileCells;
use crate::condition::Expr;
use crate::read::{Query, VERSION_TIMESTAMPS};
use crate::result::{Column, ColumnBuilder, ReadResult};
use crate::QueryError;
use rayon::prelude::*;
use std::sync::Arc;
use tessera_schema::ArraySchema;
use tessera_tile::Layout;

/// A delete commit: its timestamp, its name, and the condition it stores
/// (the negation of the delete's: the cells to keep).
type DeleteCommit = (u64, String, Expr);

impl<'a> Query<'a> {
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
        if !self.versions {
            if let Some(r) = self.sparse_direct(schema, attrs, layout)? {
                return Ok(r);
            }
        }
        let deletes: Vec<DeleteCommit> = self
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
        let fragments = &self.array.fragments;
        let versions = fragments.iter().any(|f| f.footer.has_timestamps);
        let single = fragments.len() <= 1 && (schema.allows_dups || !versions);
        let access = CellFields::new(schema, &fields, self.condition.as_ref(), fragments);
        let condition = self.condition.as_ref().map(|c| access.compile(c));
        // Without deduplication the condition is a filter on each cell
        // alone: apply it per tile, before any cell reference is made.
        let dedup = !schema.allows_dups && !single && !self.versions;
        if let (Some(cond), false) = (&condition, dedup) {
            access.filter_tiles(cond, &mut tiles);
        }
        let mut refs = self.cell_refs(&tiles);
        let order = CellOrder::new(schema, &tiles);
        // Duplicates: unless allowed, the newest write of a coordinate wins.
        if dedup {
            refs = order.dedup(refs);
        }
        // Consolidated deletes, after deduplication as in libtiledb:
        // deleting the newest version of a cell does not bring back an
        // older one.
        refs.retain(|r| !self.deleted(&tiles, r));
        if !deletes.is_empty() {
            refs = self.apply_delete_commits(&deletes, &access, &tiles, refs)?;
        }
        // The condition, after deduplication as in libtiledb: a newer
        // write failing it still hides older ones that pass.
        if let (Some(cond), true) = (&condition, dedup) {
            refs.retain(|&(ti, c, _)| access.meets(cond, &tiles[ti as usize], c));
        }
        let refs = order.sort(refs, schema, layout, single);
        let mut result = self.sparse_columns(schema, attrs, &fields, &tiles, &refs);
        if self.versions {
            result.columns.push(timestamps_column(&refs));
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
        if let Some(c) = &self.condition {
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
            tiles.extend(self.sparse_tiles(fi, frag, fields, prune_by)?);
        }
        Ok(tiles)
    }

    /// References to the selected cells of `tiles`, with their timestamps
    /// (per cell where the fragment has them, else the fragment's); cells
    /// written outside the open window are left out.
    fn cell_refs(&self, tiles: &[TileCells]) -> Vec<CellRef> {
        let (start, end) = (self.array.timestamp_start, self.array.timestamp_end);
        let mut refs: Vec<CellRef> = Vec::new();
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
        refs
    }

    /// Whether cell `r` was deleted (consolidated delete times) at or
    /// before the time the array is open at.
    fn deleted(&self, tiles: &[TileCells], &(ti, c, _): &CellRef) -> bool {
        let end = self.array.timestamp_end;
        tiles[ti as usize].delete_times.as_ref().is_some_and(|d| {
            let dt = u64::from_le_bytes(d.value(c as usize).try_into().unwrap_or([0xff; 8]));
            !(dt > end || (end == u64::MAX && dt == u64::MAX))
        })
    }

    /// Applies delete commits, after deduplication as in libtiledb:
    /// deleting the newest write of a cell does not bring back an older one
    /// (the deletes_overwritten fixture). libtiledb stores the negation of
    /// the delete condition (the cells to keep); a cell written before the
    /// delete that does not satisfy it is gone. Commits a fragment lists as
    /// processed were applied when it was consolidated: they are not
    /// applied to it again.
    fn apply_delete_commits(
        &self,
        deletes: &[DeleteCommit],
        access: &CellFields<'_>,
        tiles: &[TileCells],
        mut refs: Vec<CellRef>,
    ) -> Result<Vec<CellRef>, QueryError> {
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
        let kept: Vec<_> = deletes.iter().map(|(_, _, e)| access.compile(e)).collect();
        refs.retain(|&(ti, c, ts)| {
            let tc = &tiles[ti as usize];
            !deletes
                .iter()
                .zip(&kept)
                .enumerate()
                .any(|(k, ((dts, _, _), e))| {
                    !processed[tc.frag][k] && ts < *dts && !access.passes(e, tc, c)
                })
        });
        Ok(refs)
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
        let mut runs: Vec<(usize, usize, usize)> = Vec::new(); // (tile, from, to)
        for r in refs {
            let (ti, c) = (r.0 as usize, r.1 as usize);
            match runs.last_mut() {
                Some(run) if run.0 == ti && run.2 == c => run.2 += 1,
                _ => runs.push((ti, c, c + 1)),
            }
        }
        // None: dimension j; Some(k): field k.
        let mut wanted: Vec<Option<usize>> = Vec::new();
        if self.with_dimensions {
            wanted.extend((0..dims.len()).map(|_| None));
        }
        wanted.extend(
            attrs
                .iter()
                .map(|a| Some(fields.iter().position(|f| f == a).expect("selected"))),
        );
        let ctx = &self.context;
        let columns: Vec<Column> = wanted
            .par_iter()
            .enumerate()
            .map(|(w, field)| match *field {
                None => {
                    let d = &dims[w];
                    let mut b = ColumnBuilder::new(
                        ctx,
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
                        ctx,
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
        ReadResult {
            cell_count: n,
            columns,
            grid: None,
            context: None,
        }
    }
}

/// Each cell's timestamp, as the column [`Query::versions`] adds.
fn timestamps_column(refs: &[CellRef]) -> Column {
    Column {
        name: VERSION_TIMESTAMPS.into(),
        is_dimension: false,
        datatype: tessera_tile::Datatype::UInt64,
        cell_val_num: tessera_schema::CellValNum::Fixed(1),
        data: refs.iter().flat_map(|r| r.2.to_le_bytes()).collect(),
        offsets: None,
        validity: None,
    }
}
