//! A sparse consolidation with `--purge-deleted` (libtiledb's
//! `sm.consolidation.purge_deleted_cells`), in bounded memory: the
//! fragments' versions are read twice in global order, once as they are
//! and once with the delete commits applied, side by side in batches; the
//! versions the second read lacks are the deleted ones, and only those are
//! held (per cell, the newest deleted version). A third read, with the
//! deletes, gives the versions to write, in batches, less every version
//! older than a deleted version of the same cell (unless duplicates are
//! allowed): reads after the deletes showed no version of such a cell, and
//! dropping only the deleted one would bring an older one back.

use std::collections::HashMap;
use tessera_cells::{CellBatches, Column, SourceError};
use tessera_schema::ArraySchema;

/// A cell's coordinates (each value length-prefixed) and one version's timestamp.
type Version = (Vec<u8>, u64);

/// Per cell, the timestamp of its newest deleted version.
pub(crate) type Deleted = HashMap<Vec<u8>, u64>;

/// The version at `i` of columns read with timestamps (the last column).
fn version_of(cols: &[Column], dims: usize, i: usize) -> Version {
    let coords = cols[..dims]
        .iter()
        .flat_map(|c| {
            let v = c.value(i);
            (v.len() as u64)
                .to_le_bytes()
                .into_iter()
                .chain(v.iter().copied())
        })
        .collect();
    let t = cols.last().map_or(&[][..], |c| c.value(i));
    (coords, u64::from_le_bytes(t.try_into().unwrap_or([0; 8])))
}

fn cells(cols: &[Column]) -> usize {
    cols.first().map_or(0, Column::cell_count)
}

/// The versions of a read, one at a time across its batches.
struct Cursor {
    batches: CellBatches,
    batch: Vec<Column>,
    at: usize,
    dims: usize,
}

impl Cursor {
    /// The version under the cursor; `None` past the last.
    fn peek(&mut self) -> Result<Option<Version>, SourceError> {
        while self.at >= cells(&self.batch) {
            match self.batches.next() {
                None => return Ok(None),
                Some(b) => {
                    self.batch = b?;
                    self.at = 0;
                }
            }
        }
        Ok(Some(version_of(&self.batch, self.dims, self.at)))
    }
}

/// The deleted versions: those of `all` (every version, in global order)
/// that `kept` (the same read with the deletes applied: a subsequence of
/// it) lacks, per cell the newest.
pub(crate) fn deleted_versions(
    all: CellBatches,
    kept: CellBatches,
    dims: usize,
) -> Result<Deleted, SourceError> {
    let mut kept = Cursor {
        batches: kept,
        batch: Vec::new(),
        at: 0,
        dims,
    };
    let mut deleted = Deleted::new();
    for batch in all {
        let cols = batch?;
        for i in 0..cells(&cols) {
            let version = version_of(&cols, dims, i);
            if kept.peek()?.as_ref() == Some(&version) {
                kept.at += 1;
                continue;
            }
            let newest = deleted.entry(version.0).or_insert(version.1);
            *newest = (*newest).max(version.1);
        }
    }
    Ok(deleted)
}

/// The runs of consecutive versions of `batch` (read with the deletes
/// applied) to write: every one, less those older than a deleted version
/// of their cell where duplicates are not allowed.
pub(crate) fn kept_runs(
    schema: &ArraySchema,
    batch: &[Column],
    deleted: &Deleted,
) -> Vec<Vec<Column>> {
    let dims = schema.dimensions.len();
    let n = cells(batch);
    let keep = |i: usize| {
        schema.allows_dups || {
            let (coords, t) = version_of(batch, dims, i);
            deleted.get(&coords).is_none_or(|&d| t > d)
        }
    };
    let mut runs: Vec<Vec<Column>> = Vec::new();
    let mut start = None;
    for i in 0..=n {
        match (i < n && keep(i), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push(batch.iter().map(|c| c.slice(s..i)).collect());
                start = None;
            }
            _ => {}
        }
    }
    runs
}
