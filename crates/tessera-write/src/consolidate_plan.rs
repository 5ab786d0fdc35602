//! What a fragment consolidation does, decided from the array's listings
//! and metadata before any cell is read: the fragments it replaces, the
//! versions it keeps, how it reads them (a dense box in bands, a sparse
//! read in global order, or a purge's reads side by side), the fragment it
//! writes and the vacuum file it publishes. The consolidation waited on
//! ([`consolidate_fragments`](crate::consolidate::consolidate_fragments))
//! and the one awaited
//! ([`maintain_async::consolidate_fragments`](crate::maintain_async::consolidate_fragments))
//! carry out the same plan.

use crate::fragment::{cell_bytes, Consolidated, FragmentWriter, WriteOptions};
use crate::gates;
use crate::WriteError;
use std::sync::Arc;
use tessera_cells::{Column, SparseCells};
use tessera_filters::EncryptionKey;
use tessera_fragment::{FragmentMetadata, OpenArray};
use tessera_schema::Range1D;
use tessera_storage::Location;
use tessera_tile::ArrayType;

pub(crate) const COMMITS: &str = "__commits";

/// The default memory for a consolidation.
const DEFAULT_BUDGET: u64 = 1 << 30;

/// How fragments are consolidated (libtiledb's `sm.consolidation.*`).
#[derive(Debug, Clone, Copy)]
pub struct ConsolidateOptions {
    /// Consolidate the fragments written inside `[t1, t2]` (ms;
    /// `sm.consolidation.timestamp_start`/`_end`); default every one.
    pub window: (u64, u64),
    /// Whether every version of each cell is kept with its timestamp, so
    /// time travel still sees older versions and delete commits among the
    /// fragments still apply to what was written before them. `None`
    /// (the default) does what libtiledb does: sparse arrays keep them
    /// (from format 15), whatever `sm.consolidation.with_timestamps` says;
    /// dense arrays do not. `Some(true)` asks for them (refused for dense
    /// arrays); `Some(false)` keeps the newest version of each cell only
    /// (refused where a delete commit falls among the fragments).
    ///
    /// Where delete commits come after the first fragment (or a fragment
    /// keeps delete metadata), the versions they delete are kept too,
    /// marked with when and by which commit (`dt.tdb`, `dci.tdb`), and the
    /// fragment lists those commits as processed, as libtiledb does.
    pub with_timestamps: Option<bool>,
    /// Leave out the cells the delete commits delete (as of the window's
    /// end), as `sm.consolidation.purge_deleted_cells` does; timestamps are
    /// kept (the commits stay and apply, on reading, to nothing left).
    pub purge_deleted: bool,
    /// The array's AES-256-GCM key.
    pub key: Option<EncryptionKey>,
    /// Memory for a consolidation, in bytes (default 1 GiB): a sparse
    /// one reads the cells in batches of a third of it, in global order,
    /// and writes them out tile by tile as they come; a dense one reads
    /// its box in bands of whole space tiles of about a third of it (one
    /// row of tiles at least) and writes each band's tiles before reading
    /// the next. (A purge holds, besides, the newest deleted version of
    /// each cell the deletes hit.)
    pub budget: Option<u64>,
}

impl Default for ConsolidateOptions {
    fn default() -> Self {
        ConsolidateOptions {
            window: (0, u64::MAX),
            with_timestamps: None,
            purge_deleted: false,
            key: None,
            budget: None,
        }
    }
}

/// What a consolidation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consolidation {
    /// The new fragment's name.
    pub fragment: String,
    /// The fragments it replaces, oldest first.
    pub replaced: Vec<String>,
    /// Its cells.
    pub cells: usize,
}

/// A consolidation planned ([`plan`]).
pub(crate) struct Plan {
    /// The array as of the fragments' time range, narrowed to them, with
    /// the delete commits the read applies.
    pub opened: Arc<OpenArray>,
    /// How the cells are read.
    pub reading: Reading,
    /// The fragments replaced, oldest first.
    pub replaced: Vec<String>,
    consolidated: Consolidated,
    key: Option<EncryptionKey>,
    /// Versions kept with their timestamps (sparse).
    timestamps: bool,
    /// Deleted versions kept, marked (sparse, with timestamps).
    delete_meta: bool,
    budget: u64,
    /// What the vacuum file lists each replaced fragment after.
    vacuum_prefix: String,
}

/// The part of a consolidation's budget one sparse read of it holds.
#[derive(Clone, Copy)]
pub(crate) enum ReadShare {
    /// One of a purge's two reads side by side, swept for the versions
    /// deletes remove, not written: a sixth each.
    Swept,
    /// A read whose batches are written: a third, the writer's tiles the
    /// rest.
    Written,
}

/// How a consolidation reads the cells it writes.
pub(crate) enum Reading {
    /// A dense array's box, band by band of whole space tiles, row-major,
    /// without coordinates (the band places the cells), each band's tiles
    /// written before the next is read.
    Dense {
        bounds: Vec<(i128, i128)>,
        band_cells: u64,
    },
    /// A sparse array's versions in global order, written as they come.
    Sparse,
    /// Every version, and the versions the deletes keep (as of the
    /// window's end: `with_deletes`), side by side; then the kept ones
    /// again, written.
    Purge { with_deletes: Arc<OpenArray> },
}

impl Plan {
    /// The writer of the new fragment into `at` (the array).
    pub(crate) fn writer(&self, at: Location) -> Result<FragmentWriter, WriteError> {
        let options = WriteOptions {
            key: self.key,
            ..WriteOptions::default()
        };
        let schema = self.opened.schema.clone();
        FragmentWriter::consolidating(&at, schema, options, self.consolidated.clone())
    }

    /// A sparse read of the versions the plan keeps, in batches of the
    /// budget's `share`.
    pub(crate) fn sparse_cells(&self, share: ReadShare) -> SparseCells {
        let parts = match share {
            ReadShare::Swept => 6,
            ReadShare::Written => 3,
        };
        SparseCells {
            versions: self.timestamps,
            delete_metadata: self.delete_meta,
            budget: self.budget / parts,
        }
    }

    /// The vacuum file's name in `__commits/` and its text, once the new
    /// fragment (`names`, which must be one) is written: the replaced
    /// fragments, relative to the array from format 19
    /// (`/__fragments/<name>`), absolute URIs before, as libtiledb writes
    /// them.
    pub(crate) fn vacuum_list(&self, names: &[String]) -> Result<(String, String), WriteError> {
        let [fragment] = names else {
            let array = &self.opened.path;
            return Err(WriteError::refused(
                array,
                format!("consolidation wrote {} fragments, not one", names.len()),
            ));
        };
        let prefix = &self.vacuum_prefix;
        let listed = self.replaced.iter().map(|n| format!("{prefix}{n}\n"));
        Ok((format!("{fragment}.vac"), listed.collect()))
    }

    /// What the consolidation did, the new fragment `names` holding
    /// `cells` cells.
    pub(crate) fn done(self, names: Vec<String>, cells: usize) -> Consolidation {
        Consolidation {
            fragment: names.into_iter().next().unwrap_or_default(),
            replaced: self.replaced,
            cells,
        }
    }
}

/// The cells of a batch of columns.
pub(crate) fn cell_count(columns: &[Column]) -> usize {
    columns.first().map_or(0, Column::cell_count)
}

/// The consolidation of the fragments of `at` inside `options`' window;
/// `None` when fewer than two are there. Refused, with nothing written,
/// where the result would read differently from the fragments it
/// replaces (see
/// [`consolidate_fragments`](crate::consolidate::consolidate_fragments)).
pub(crate) fn plan(
    at: &Location,
    options: &ConsolidateOptions,
) -> Result<Option<Plan>, WriteError> {
    let array = at.path();
    let refuse = |m: String| WriteError::refused(array, m);
    let mut opened = crate::open::open_array(at, options.key)?;
    let dense = opened.schema.array_type == ArrayType::Dense;
    if dense && options.with_timestamps == Some(true) {
        return Err(refuse(
            "--with-timestamps: libtiledb keeps per-cell timestamps in sparse fragments only"
                .into(),
        ));
    }
    let (w1, w2) = options.window;
    let inside = |f: &FragmentMetadata| {
        let (t1, t2) = f.timestamp_range();
        t1 >= w1 && t2 <= w2
    };
    let selected: Vec<&FragmentMetadata> = opened.fragments.iter().filter(|f| inside(f)).collect();
    if selected.len() < 2 {
        return Ok(None);
    }
    let a = selected.iter().map(|f| f.timestamp_range().0).min();
    let b = selected.iter().map(|f| f.timestamp_range().1).max();
    let (a, b) = (a.unwrap_or(0), b.unwrap_or(0));
    // Named as libtiledb names it: from the first fragment's start to the
    // end of the last one in start order (not always the latest end).
    let named_end = selected
        .iter()
        .map(|f| f.timestamp_range())
        .max()
        .map_or(b, |(_, t2)| t2);
    for f in opened.fragments.iter().filter(|f| !inside(f)) {
        let (t1, t2) = f.timestamp_range();
        if t1 <= b && t2 >= a {
            return Err(refuse(format!(
                "fragment {} ([{t1}, {t2}]) overlaps the fragments to consolidate ([{a}, {b}]) in time: widen --timestamp to include it",
                f.name
            )));
        }
    }
    if dense {
        check_dense(&opened, &selected, a, &refuse)?;
    }
    let Kept {
        timestamps,
        delete_meta,
    } = Kept::choose(&opened, &selected, options, (a, b)).map_err(refuse)?;
    let processed: Option<Vec<String>> = delete_meta.then(|| {
        let names = opened.delete_conditions.iter();
        names.map(|d| format!("{COMMITS}/{}", d.name)).collect()
    });
    let replaced: Vec<String> = selected.iter().map(|f| f.name.clone()).collect();
    let union = non_empty_union(&opened, &selected);
    narrow(&mut opened, &replaced, (a, b));
    let budget = options.budget.unwrap_or(DEFAULT_BUDGET);
    let reading = if dense {
        opened.delete_conditions.clear();
        let bounds = integer_bounds(&union, &opened)?;
        let band_cells = (budget / 3) / cell_bytes(&opened.schema);
        Reading::Dense { bounds, band_cells }
    } else if options.purge_deleted {
        let mut with_deletes = crate::open::open_array(at, options.key)?;
        narrow(&mut with_deletes, &replaced, (a, b));
        with_deletes.delete_conditions.retain(|d| d.timestamp <= b);
        opened.delete_conditions.clear();
        Reading::Purge {
            with_deletes: Arc::new(with_deletes),
        }
    } else {
        // Deletes stay commits. With delete metadata the versions they
        // delete are kept, marked; else readers apply them (to each version
        // by its timestamp, or, without timestamps, to none of these
        // cells: none comes after the first fragment).
        if !delete_meta {
            opened.delete_conditions.clear();
        }
        Reading::Sparse
    };
    let vacuum_prefix = match opened.schema.version.has(gates::RELATIVE_VACUUM_PATHS) {
        true => "/__fragments/".to_owned(),
        false => {
            let uri = at.storage().uri(array);
            format!("{}/__fragments/", uri.map_err(WriteError::from)?)
        }
    };
    Ok(Some(Plan {
        opened: Arc::new(opened),
        reading,
        replaced,
        consolidated: Consolidated {
            range: (a, named_end),
            timestamps,
            delete_meta: processed,
        },
        key: options.key,
        timestamps,
        delete_meta,
        budget,
        vacuum_prefix,
    }))
}

/// Which versions of the cells a consolidation keeps.
struct Kept {
    /// Every version with its timestamp (sparse arrays).
    timestamps: bool,
    /// The versions delete commits delete too, marked (delete metadata).
    delete_meta: bool,
}

impl Kept {
    /// As libtiledb chooses by default: sparse arrays keep timestamps
    /// (from format 15), and where a delete commit comes after the first
    /// fragment (or a fragment keeps delete metadata) delete metadata
    /// (from format 16), unless the deleted cells are purged. Purging keeps
    /// timestamps too: the commits stay and apply again on reading, to
    /// nothing written before them. Refused (the why) where the newest
    /// versions alone would be deleted again by a commit among them.
    fn choose(
        opened: &OpenArray,
        selected: &[&FragmentMetadata],
        options: &ConsolidateOptions,
        (a, b): (u64, u64),
    ) -> Result<Kept, String> {
        let dense = opened.schema.array_type == ArrayType::Dense;
        let version = opened.schema.version;
        let deletes = &opened.delete_conditions;
        let timestamps = !dense
            && match options.with_timestamps {
                Some(keep) => keep || options.purge_deleted,
                None => version.has(gates::CONSOLIDATION_TIMESTAMPS),
            };
        let among = deletes.iter().find(|d| d.timestamp > a && d.timestamp <= b);
        if let (Some(d), false, false) = (among, dense, timestamps) {
            return Err(format!(
                "delete commit {} falls among the fragments: consolidate keeping timestamps (the default: the versions it deletes are kept, marked) or with --purge-deleted (remove the cells it deletes)",
                d.name
            ));
        }
        let after_first = deletes.iter().any(|d| d.timestamp >= a);
        let marked = selected.iter().any(|f| f.footer.has_delete_meta);
        Ok(Kept {
            timestamps,
            delete_meta: timestamps
                && !options.purge_deleted
                && version.has(gates::CONSOLIDATION_DELETE_METADATA)
                && (after_first || marked),
        })
    }
}

/// Has `opened` read only the fragments to consolidate (`replaced`), as
/// of the end of their time range `(a, b)`.
fn narrow(opened: &mut OpenArray, replaced: &[String], (a, b): (u64, u64)) {
    opened.fragments.retain(|f| replaced.contains(&f.name));
    opened.timestamp_start = a;
    opened.timestamp_end = b;
}

/// A dense consolidation writes the fragments' whole bounding box, cells
/// none of them wrote as fill values: refused where that box overlaps an
/// older fragment left out (its cells there would be hidden), as
/// libtiledb's `are_consolidatable` refuses; a sparse fragment (written
/// into a dense array before libtiledb 2.5) is refused too.
fn check_dense(
    opened: &OpenArray,
    selected: &[&FragmentMetadata],
    a: u64,
    refuse: &dyn Fn(String) -> WriteError,
) -> Result<(), WriteError> {
    if let Some(f) = selected.iter().find(|f| !f.footer.dense) {
        return Err(refuse(format!(
            "fragment {} is sparse in a dense array: tessera consolidates dense fragments only there",
            f.name
        )));
    }
    let union = non_empty_union(opened, selected);
    let dims = &opened.schema.dimensions;
    for f in &opened.fragments {
        if f.timestamp_range().1 >= a || selected.iter().any(|s| s.name == f.name) {
            continue;
        }
        let ned = f.footer.non_empty_domain.as_deref().unwrap_or(&[]);
        let overlap = ned.len() == union.len()
            && ned.iter().zip(&union).zip(dims).all(|((x, u), d)| {
                let v = |b: &[u8]| tessera_schema::Value::decode(d.datatype, b);
                v(&x.lo) <= v(&u.hi) && v(&u.lo) <= v(&x.hi)
            });
        if overlap {
            return Err(refuse(format!(
                "the fragments' box overlaps the older fragment {}, left out: consolidate from its timestamp (--timestamp)",
                f.name
            )));
        }
    }
    Ok(())
}

/// The bounding box of the fragments' non-empty domains.
fn non_empty_union(opened: &OpenArray, fragments: &[&FragmentMetadata]) -> Vec<Range1D> {
    let dims = &opened.schema.dimensions;
    let mut union: Vec<Range1D> = Vec::new();
    for f in fragments {
        let Some(ned) = f.footer.non_empty_domain.as_deref() else {
            continue;
        };
        if union.is_empty() {
            union = ned.to_vec();
            continue;
        }
        for ((u, x), d) in union.iter_mut().zip(ned).zip(dims) {
            let v = |b: &[u8]| tessera_schema::Value::decode(d.datatype, b);
            if v(&x.lo) < v(&u.lo) {
                u.lo.clone_from(&x.lo);
            }
            if v(&x.hi) > v(&u.hi) {
                u.hi.clone_from(&x.hi);
            }
        }
    }
    union
}

/// The box of a dense consolidation, `union`, as integers.
fn integer_bounds(union: &[Range1D], opened: &OpenArray) -> Result<Vec<(i128, i128)>, WriteError> {
    union
        .iter()
        .zip(&opened.schema.dimensions)
        .map(|(r, d)| {
            let int = |b: &[u8]| tessera_schema::Value::decode(d.datatype, b).as_int();
            int(&r.lo).zip(int(&r.hi)).ok_or_else(|| {
                WriteError::Input(format!("dense dimension `{}` is not an integer", d.name))
            })
        })
        .collect()
}
