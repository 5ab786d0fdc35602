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

use crate::fragment::SortedFragmentWriter;
use crate::WriteError;
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

/// What a [`Sweep`] needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// The next batch of every version (`None` past the last).
    All,
    /// The next batch of the versions the deletes keep.
    Kept,
    /// Nothing: the deleted versions are found.
    Done,
}

/// The deleted versions found as the two reads' batches are given, by
/// whoever reads them (waited on or awaited): the versions of `all`
/// (every version, in global order) that `kept` (the same read with the
/// deletes applied: a subsequence of it) lacks, per cell the newest.
pub(crate) struct Sweep {
    dims: usize,
    all: Vec<Column>,
    all_at: usize,
    all_over: bool,
    kept: Vec<Column>,
    kept_at: usize,
    kept_over: bool,
    deleted: Deleted,
}

impl Sweep {
    /// A sweep of versions with `dims` dimensions.
    pub(crate) fn new(dims: usize) -> Sweep {
        Sweep {
            dims,
            all: Vec::new(),
            all_at: 0,
            all_over: false,
            kept: Vec::new(),
            kept_at: 0,
            kept_over: false,
            deleted: Deleted::new(),
        }
    }

    /// Goes on through the versions given; says what it needs next.
    pub(crate) fn run(&mut self) -> Wanted {
        loop {
            if self.all_at >= cells(&self.all) {
                return match self.all_over {
                    true => Wanted::Done,
                    false => Wanted::All,
                };
            }
            if self.kept_at >= cells(&self.kept) && !self.kept_over {
                return Wanted::Kept;
            }
            let version = version_of(&self.all, self.dims, self.all_at);
            self.all_at += 1;
            let kept = (self.kept_at < cells(&self.kept))
                .then(|| version_of(&self.kept, self.dims, self.kept_at));
            if kept.as_ref() == Some(&version) {
                self.kept_at += 1;
                continue;
            }
            let newest = self.deleted.entry(version.0).or_insert(version.1);
            *newest = (*newest).max(version.1);
        }
    }

    /// The next batch of every version; `None`: there is no more.
    pub(crate) fn all(&mut self, batch: Option<Vec<Column>>) {
        self.all_over = batch.is_none();
        (self.all, self.all_at) = (batch.unwrap_or_default(), 0);
    }

    /// The next batch of the versions kept; `None`: there is no more.
    pub(crate) fn kept(&mut self, batch: Option<Vec<Column>>) {
        self.kept_over = batch.is_none();
        (self.kept, self.kept_at) = (batch.unwrap_or_default(), 0);
    }

    /// The deleted versions, once [`run`](Self::run) is done.
    pub(crate) fn deleted(self) -> Deleted {
        self.deleted
    }
}

/// The deleted versions ([`Sweep`]) of two reads waited on.
pub(crate) fn deleted_versions(
    mut all: CellBatches,
    mut kept: CellBatches,
    dims: usize,
) -> Result<Deleted, SourceError> {
    let mut sweep = Sweep::new(dims);
    loop {
        match sweep.run() {
            Wanted::All => sweep.all(all.next().transpose()?),
            Wanted::Kept => sweep.kept(kept.next().transpose()?),
            Wanted::Done => return Ok(sweep.deleted()),
        }
    }
}

/// Writes the versions of `batch` (read with the deletes applied) that
/// [`kept_runs`] keeps into `sorted`; returns how many.
pub(crate) fn write_kept(
    sorted: &mut SortedFragmentWriter,
    schema: &ArraySchema,
    batch: &[Column],
    deleted: &Deleted,
) -> Result<usize, WriteError> {
    let mut written = 0;
    for run in kept_runs(schema, batch, deleted) {
        written += cells(&run);
        sorted.write_owned(run)?;
    }
    Ok(written)
}

/// The runs of consecutive versions of `batch` (read with the deletes
/// applied) to write: every one, less those older than a deleted version
/// of their cell where duplicates are not allowed.
fn kept_runs(schema: &ArraySchema, batch: &[Column], deleted: &Deleted) -> Vec<Vec<Column>> {
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
