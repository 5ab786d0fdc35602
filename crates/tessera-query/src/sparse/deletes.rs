//! Delete commits applied to a sparse read's cells: removed (a read), or
//! marked with the commit that removes each (the delete metadata a
//! consolidation keeps, [`crate::ReadRequest::delete_metadata`]).
//!
//! A commit deletes a cell written before it that fails its stored
//! condition (libtiledb stores the negation of the delete's condition: the
//! cells to keep). A commit a fragment lists as processed was applied when
//! the fragment was consolidated (its cells carry delete timestamps): it
//! is not applied to that fragment again.

use super::cells::{drop_at, refs_by_tile, CellFields, CellRef};
use super::tiles::TileCells;
use crate::QueryError;
use rayon::prelude::*;
use tessera_cells::{Compiled, Expr};
use tessera_fragment::FragmentMetadata;
use tessera_storage::Storage;

/// A delete commit: its timestamp, its name, and the condition it stores.
pub(super) type DeleteCommit = (u64, String, Expr);

/// The last part of a commit's name as fragments list it: libtiledb lists
/// processed conditions relative to the array (`__commits/<name>`).
fn base_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// The delete commits of a read, compiled against its cells' fields.
pub(super) struct DeleteCommits<'d> {
    deletes: &'d [DeleteCommit],
    kept: Vec<Compiled>,
    /// Per fragment, per commit: already applied to it (empty without
    /// commits).
    processed: Vec<Vec<bool>>,
    /// Per fragment, its processed list's positions as indexes into
    /// `deletes` (`u64::MAX` for a commit the read does not see).
    positions: Vec<Vec<u64>>,
}

impl<'d> DeleteCommits<'d> {
    pub(super) fn new(
        deletes: &'d [DeleteCommit],
        access: &CellFields<'_>,
        fragments: &[FragmentMetadata],
        storage: &dyn Storage,
    ) -> Result<DeleteCommits<'d>, QueryError> {
        let mut processed = Vec::with_capacity(fragments.len());
        let mut positions = Vec::with_capacity(fragments.len());
        // Without commits nothing is applied nor converted: the processed
        // lists (a read each, on object stores) are not needed.
        for f in fragments.iter().filter(|_| !deletes.is_empty()) {
            let done = f.processed_conditions(storage)?;
            processed.push(
                deletes
                    .iter()
                    .map(|(_, name, _)| done.iter().any(|d| base_name(d) == base_name(name)))
                    .collect(),
            );
            positions.push(
                done.iter()
                    .map(|d| {
                        let at = deletes
                            .iter()
                            .position(|(_, name, _)| base_name(name) == base_name(d));
                        at.map_or(u64::MAX, |k| k as u64)
                    })
                    .collect(),
            );
        }
        Ok(DeleteCommits {
            deletes,
            kept: deletes.iter().map(|(_, _, e)| access.compile(e)).collect(),
            processed,
            positions,
        })
    }

    /// The first commit, in timestamp order, that deletes cell `r`.
    fn first_deleting(
        &self,
        access: &CellFields<'_>,
        tiles: &[TileCells],
        r: &CellRef,
    ) -> Option<usize> {
        let &(ti, c, ts) = r;
        let tc = &tiles[ti as usize];
        (0..self.deletes.len()).find(|&k| {
            !self.processed[tc.frag][k]
                && ts < self.deletes[k].0
                && !access.passes(&self.kept[k], tc, c)
        })
    }

    /// The cells no commit deletes.
    pub(super) fn retain(
        &self,
        access: &CellFields<'_>,
        tiles: &[TileCells],
        refs: &mut Vec<CellRef>,
    ) {
        if self.deletes.is_empty() {
            return;
        }
        let deleted = self.deleted(access, tiles, refs);
        drop_at(refs, deleted);
    }

    /// The positions in `refs` of the cells some commit deletes: a tile
    /// at a time (tiles in parallel), each commit's kept condition tested
    /// together over the tile's cells it may still delete (written before
    /// it, in a fragment that has not applied it, not deleted by an
    /// earlier commit).
    fn deleted(
        &self,
        access: &CellFields<'_>,
        tiles: &[TileCells],
        refs: &[CellRef],
    ) -> Vec<usize> {
        let gone: Vec<Vec<usize>> = refs_by_tile(tiles.len(), refs)
            .into_par_iter()
            .zip(tiles.par_iter())
            .map(|(mut live, tc)| {
                let mut gone = Vec::new();
                for (k, (time, _, _)) in self.deletes.iter().enumerate() {
                    if live.is_empty() {
                        break;
                    }
                    if self.processed[tc.frag][k] {
                        continue;
                    }
                    let (subject, later): (Vec<usize>, Vec<usize>) =
                        live.iter().partition(|&&i| refs[i].2 < *time);
                    let cells: Vec<u32> = subject.iter().map(|&i| refs[i].1).collect();
                    let mut kept = vec![false; cells.len()];
                    self.kept[k].select(&|at| access.field_cells(tc, at), &cells, &mut kept);
                    live = later;
                    for (&i, keep) in subject.iter().zip(kept) {
                        match keep {
                            true => live.push(i),
                            false => gone.push(i),
                        }
                    }
                }
                gone
            })
            .collect();
        gone.into_iter().flatten().collect()
    }

    /// Each cell's delete timestamp and commit index: the earlier of the
    /// first commit that deletes it and the mark its fragment already
    /// keeps (its index turned from the fragment's processed list into
    /// one of this read's commits); `u64::MAX` for both where none does.
    pub(super) fn marks(
        &self,
        access: &CellFields<'_>,
        tiles: &[TileCells],
        refs: &[CellRef],
    ) -> Vec<(u64, u64)> {
        let u64_at = |t: &crate::decode::FieldTile, c: u32| {
            u64::from_le_bytes(t.value(c as usize).try_into().unwrap_or([0xff; 8]))
        };
        refs.iter()
            .map(|r| {
                let tc = &tiles[r.0 as usize];
                let computed = match self.first_deleting(access, tiles, r) {
                    Some(k) => (self.deletes[k].0, k as u64),
                    None => (u64::MAX, u64::MAX),
                };
                let Some(dt) = &tc.delete_times else {
                    return computed;
                };
                let stored = u64_at(dt, r.1);
                if computed.0 < stored {
                    return computed;
                }
                let index = tc
                    .delete_indexes
                    .as_ref()
                    .map_or(u64::MAX, |d| u64_at(d, r.1));
                let converted = usize::try_from(index)
                    .ok()
                    .and_then(|i| self.positions.get(tc.frag)?.get(i).copied())
                    .unwrap_or(u64::MAX);
                (stored, converted)
            })
            .collect()
    }
}
