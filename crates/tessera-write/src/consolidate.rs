//! Fragment consolidation and its vacuum, as libtiledb's fragment
//! consolidator does them (`fragment_consolidator.cc`,
//! `array_directory.cc`): the fragments inside a timestamp window are read
//! as one (the newest version of each cell, or with `with_timestamps`
//! every version with its timestamp) and written as one fragment named
//! with their timestamp range; its commit makes it visible; then a vacuum
//! file `__commits/<fragment>.vac` lists the fragments it replaces, which
//! readers then skip. [`vacuum_fragments`] removes them.
//!
//! Every step leaves an array that reads the same: before the commit the
//! new fragment is invisible; between the commit and the vacuum file both
//! are read, holding the same newest cells; after it, the old ones are
//! skipped. Vacuuming removes each old fragment's commit before its folder
//! (a folder without a commit is invisible) and the vacuum file last.

use crate::atomic::write_whole;
use crate::fragment::{
    BoxWriter, Consolidated, FragmentWriter, SortedFragmentWriter, WriteOptions,
};
use crate::gates;
use crate::WriteError;
use std::sync::Arc;
use tessera_cells::{CellBatches, CellSource, Column, SparseCells};
use tessera_filters::EncryptionKey;
use tessera_fragment::{FragmentMetadata, OpenArray, TimestampedName};
use tessera_schema::{ArraySchema, Range1D};
use tessera_storage::{listing_again, Location};
use tessera_tile::{ArrayType, FormatVersion};

const COMMITS: &str = "__commits";

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

/// A step of consolidation, reported as it completes (a test stops the
/// process at each to check the array reads the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The new fragment's files are written, not yet committed.
    FragmentWritten,
    /// Its commit is written: readers see it (and the old fragments).
    Committed,
    /// The vacuum file is written: readers skip the old fragments.
    VacuumListed,
}

/// A step of [`vacuum_fragments`], reported as it completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VacuumStep {
    /// The ignore file naming commits a `.con` keeps is written.
    IgnoreListed,
    /// A replaced fragment's commit is removed: it is invisible.
    CommitRemoved,
    /// A replaced fragment's folder is removed.
    FolderRemoved,
    /// A vacuum file is removed.
    VacuumListRemoved,
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

/// Consolidates the fragments inside the window into one; `None` when
/// fewer than two are there. Refused, with nothing written, where the
/// result would read differently from the fragments it replaces: a
/// fragment outside the window overlapping it in time, a dense array's
/// box overlapping an older fragment left out, a delete commit among the
/// fragments where timestamps are not kept (the newest versions alone,
/// stamped with the first fragment's time, would be deleted by it again).
///
/// `source` reads the fragments' cells: the query crate's
/// `tessera_query::QuerySource`, whose documentation shows a
/// consolidation and its vacuum.
///
/// Fragments listed and then removed by another process's vacuum before
/// they were read have the consolidation start again on the array listed
/// anew, up to [`tessera_storage::REOPENS`] times (what it had written stays uncommitted,
/// seen by no reader).
pub fn consolidate_fragments(
    array: impl Into<Location>,
    options: &ConsolidateOptions,
    source: &dyn CellSource,
    on_step: &mut dyn FnMut(Step),
) -> Result<Option<Consolidation>, WriteError> {
    let at = &array.into();
    listing_again(at.reader(), |_| {
        consolidate_listed(at, options, source, on_step)
    })
}

fn consolidate_listed(
    at: &Location,
    options: &ConsolidateOptions,
    source: &dyn CellSource,
    on_step: &mut dyn FnMut(Step),
) -> Result<Option<Consolidation>, WriteError> {
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
    let a = selected
        .iter()
        .map(|f| f.timestamp_range().0)
        .min()
        .unwrap_or(0);
    let b = selected
        .iter()
        .map(|f| f.timestamp_range().1)
        .max()
        .unwrap_or(0);
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
    let version = opened.schema.version;
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
    let reader = ConsolidationRead {
        array: at,
        source,
        union,
        timestamps,
        delete_meta,
    };
    let write_options = WriteOptions {
        key: options.key,
        ..WriteOptions::default()
    };
    let consolidated = Consolidated {
        range: (a, named_end),
        timestamps,
        delete_meta: processed,
    };
    let schema = opened.schema.clone();
    let writer = FragmentWriter::consolidating(at, schema, write_options, consolidated)?;
    let mut cells = 0;
    let names = if dense {
        // The box read band by band of whole space tiles, row-major,
        // without coordinates (the band places the cells), each band's
        // tiles written before the next is read.
        opened.delete_conditions.clear();
        let opened = Arc::new(opened);
        let bounds = reader.bounds(&opened.schema)?;
        let budget = options.budget.unwrap_or(DEFAULT_BUDGET);
        let band_cells = (budget / 3) / crate::fragment::cell_bytes(&opened.schema);
        let mut banded = BoxWriter::new(writer, &bounds, band_cells)?;
        for band in banded.bands().to_vec() {
            let columns = reader.read_band(&opened, &band)?;
            cells += columns.first().map_or(0, Column::cell_count);
            banded.write_band(columns)?;
        }
        banded.finish_observed(&mut || on_step(Step::FragmentWritten))?
    } else if options.purge_deleted {
        // Every version, and the versions the deletes keep (as of the
        // window's end), side by side; then the kept ones again, written.
        let budget = options.budget.unwrap_or(DEFAULT_BUDGET);
        let mut with_deletes = crate::open::open_array(at, options.key)?;
        narrow(&mut with_deletes, &replaced, (a, b));
        with_deletes.delete_conditions.retain(|d| d.timestamp <= b);
        opened.delete_conditions.clear();
        let (opened, with_deletes) = (Arc::new(opened), Arc::new(with_deletes));
        let read_failed = |e| WriteError::read(array)(e);
        let dims = opened.schema.dimensions.len();
        let deleted = crate::purge::deleted_versions(
            reader.batches(&opened, budget / 6)?,
            reader.batches(&with_deletes, budget / 6)?,
            dims,
        )
        .map_err(read_failed)?;
        let mut sorted = SortedFragmentWriter::new(writer)?;
        for batch in reader.batches(&with_deletes, budget / 3)? {
            let batch = batch.map_err(read_failed)?;
            for run in crate::purge::kept_runs(&opened.schema, &batch, &deleted) {
                cells += run.first().map_or(0, Column::cell_count);
                sorted.write_owned(run)?;
            }
        }
        sorted.finish_observed(&mut || on_step(Step::FragmentWritten))?
    } else {
        // Deletes stay commits. With delete metadata the versions they
        // delete are kept, marked; else readers apply them (to each version
        // by its timestamp, or, without timestamps, to none of these
        // cells: none comes after the first fragment).
        if !delete_meta {
            opened.delete_conditions.clear();
        }
        let opened = Arc::new(opened);
        let mut sorted = SortedFragmentWriter::new(writer)?;
        let budget = options.budget.unwrap_or(DEFAULT_BUDGET);
        for batch in reader.batches(&opened, budget / 3)? {
            let batch = batch.map_err(WriteError::read(array))?;
            cells += batch.first().map_or(0, Column::cell_count);
            sorted.write_owned(batch)?;
        }
        sorted.finish_observed(&mut || on_step(Step::FragmentWritten))?
    };
    on_step(Step::Committed);
    let [fragment] = &names[..] else {
        return Err(refuse(format!(
            "consolidation wrote {} fragments, not one",
            names.len()
        )));
    };
    write_vacuum_list(at, fragment, &replaced, version)?;
    on_step(Step::VacuumListed);
    Ok(Some(Consolidation {
        fragment: fragment.clone(),
        replaced,
        cells,
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

/// The default memory for a consolidation.
const DEFAULT_BUDGET: u64 = 1 << 30;

/// How the fragments to consolidate are read.
struct ConsolidationRead<'p> {
    array: &'p Location,
    /// What reads the cells.
    source: &'p dyn CellSource,
    /// The fragments' bounding box (a dense consolidation's box).
    union: Vec<Range1D>,
    /// Every version of each cell, with its timestamp (sparse).
    timestamps: bool,
    /// Deleted versions too, marked (sparse, with timestamps).
    delete_meta: bool,
}

impl<'p> ConsolidationRead<'p> {
    /// The box a dense consolidation writes, as integers.
    fn bounds(&self, schema: &ArraySchema) -> Result<Vec<(i128, i128)>, WriteError> {
        self.union
            .iter()
            .zip(&schema.dimensions)
            .map(|(r, d)| {
                let int = |b: &[u8]| tessera_schema::Value::decode(d.datatype, b).as_int();
                int(&r.lo).zip(int(&r.hi)).ok_or_else(|| {
                    WriteError::Input(format!("dense dimension `{}` is not an integer", d.name))
                })
            })
            .collect()
    }

    /// The cells of the sparse fragments `opened` holds, in global order,
    /// in batches of about `budget` bytes.
    fn batches(&self, opened: &Arc<OpenArray>, budget: u64) -> Result<CellBatches, WriteError> {
        let which = SparseCells {
            versions: self.timestamps,
            delete_metadata: self.delete_meta,
            budget,
        };
        self.source
            .global_order(self.array.shared(), opened.clone(), which)
            .map_err(WriteError::read(self.array.path()))
    }

    /// The cells of the dense box `band` (first and last coordinate per
    /// dimension), row-major, without coordinates.
    fn read_band(
        &self,
        opened: &Arc<OpenArray>,
        band: &[(i128, i128)],
    ) -> Result<Vec<Column>, WriteError> {
        self.source
            .dense_box(self.array.shared(), opened.clone(), band)
            .map_err(WriteError::read(self.array.path()))
    }
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

/// `__commits/<fragment>.vac`: the replaced fragments, relative to the
/// array from format 19 (`/__fragments/<name>`), absolute `file://` URIs
/// before, as libtiledb writes them.
fn write_vacuum_list(
    array: &Location,
    fragment: &str,
    replaced: &[String],
    version: FormatVersion,
) -> Result<(), WriteError> {
    let prefix = match version.has(crate::gates::RELATIVE_VACUUM_PATHS) {
        true => "/__fragments/".to_owned(),
        false => {
            let uri = array.storage().uri(array.path());
            format!("{}/__fragments/", uri.map_err(WriteError::from)?)
        }
    };
    let listed: String = replaced.iter().map(|n| format!("{prefix}{n}\n")).collect();
    write_whole(
        &array.join(COMMITS),
        &format!("{fragment}.vac"),
        listed.as_bytes(),
    )
}

/// Removes the fragments consolidation replaced (those the vacuum files in
/// `__commits/` list) and then the vacuum files; returns how many
/// fragments it removed. A replaced fragment's commit named by a
/// consolidated commits file (`.con`) stays there and is listed in an
/// ignore file (`.ign`), written first, as libtiledb does. `key`, when
/// given, must open the array (the vacuum itself reads nothing encrypted).
pub fn vacuum_fragments(
    array: impl Into<Location>,
    key: Option<EncryptionKey>,
    on_step: &mut dyn FnMut(VacuumStep),
) -> Result<usize, WriteError> {
    vacuum_fragments_within(array, key, None, on_step)
}

/// [`vacuum_fragments`] of the consolidations whose fragment was written
/// within `window` (both timestamps of its name inside it; `None`: all),
/// as libtiledb's vacuum with `sm.vacuum.timestamp_start`/`_end`.
pub fn vacuum_fragments_within(
    array: impl Into<Location>,
    key: Option<EncryptionKey>,
    window: Option<(u64, u64)>,
    on_step: &mut dyn FnMut(VacuumStep),
) -> Result<usize, WriteError> {
    let array = &array.into();
    crate::open::check_key(array, key)?;
    let Some(vacuum) = vacuum_lists(array, window)? else {
        return Ok(0);
    };
    let removed = remove_fragments(array, &vacuum.fragments, on_step)?;
    remove_vacuum_lists(array, &vacuum.lists, on_step)?;
    Ok(removed)
}

/// What a vacuum of fragments removes: the vacuum files and the replaced
/// fragments they list.
pub(crate) struct VacuumLists {
    /// The vacuum files (names in `__commits/`).
    pub lists: Vec<String>,
    /// The fragments they list (names in `__fragments/`).
    pub fragments: Vec<String>,
}

/// The vacuum files in `__commits/` of consolidations written within
/// `window` (`None`: all) and the fragments they list; `None` if there is
/// none.
pub(crate) fn vacuum_lists(
    array: &Location,
    window: Option<(u64, u64)>,
) -> Result<Option<VacuumLists>, WriteError> {
    let dir = array.join(COMMITS);
    let names = crate::folder::entry_names(&dir)?;
    let inside = |n: &str| match (window, TimestampedName::parse(n.trim_end_matches(".vac"))) {
        (None, _) => true,
        (Some((t1, t2)), Some(t)) => t1 <= t.t1 && t.t2 <= t2,
        (Some(_), None) => false,
    };
    let lists: Vec<String> = names
        .into_iter()
        .filter(|n| n.ends_with(".vac") && inside(n))
        .collect();
    if lists.is_empty() {
        return Ok(None);
    }
    let paths: Vec<_> = lists.iter().map(|n| dir.path().join(n)).collect();
    let mut fragments: Vec<String> = Vec::new();
    for text in array.reader().read_files(&paths) {
        // Gone: another vacuum did this one (and removed its fragments).
        let text = match text.map_err(WriteError::from) {
            Err(e) if e.is_missing_file() => continue,
            read => read?,
        };
        for line in String::from_utf8_lossy(&text).lines() {
            let name = line
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(line);
            if TimestampedName::parse(name).is_some() && !fragments.iter().any(|l| l == name) {
                fragments.push(name.to_owned());
            }
        }
    }
    Ok(Some(VacuumLists { lists, fragments }))
}

/// Removes the vacuum files `lists` (names in `__commits/`), last: while
/// one stays, a later vacuum finds the fragments it lists.
pub(crate) fn remove_vacuum_lists(
    array: &Location,
    lists: &[String],
    on_step: &mut dyn FnMut(VacuumStep),
) -> Result<(), WriteError> {
    let dir = array.join(COMMITS);
    for vac in lists {
        crate::folder::remove_if_present(&dir.join(vac))?;
        on_step(VacuumStep::VacuumListRemoved);
    }
    Ok(())
}

/// Removes the fragments `names` (of `__fragments/`), each commit file
/// before its folder, as libtiledb removes them: a commit named by a
/// consolidated commits file (`.con`) stays there and is listed in an
/// ignore file (`.ign`), written first. Returns how many folders it
/// removed.
pub(crate) fn remove_fragments(
    array: &Location,
    names: &[String],
    on_step: &mut dyn FnMut(VacuumStep),
) -> Result<usize, WriteError> {
    let removed = remove_fragment_folders(array, names, on_step)?;
    // A commits consolidation may have named these commits meanwhile.
    if crate::commits::ignore_gone_fragments(array, names)? {
        on_step(VacuumStep::IgnoreListed);
    }
    Ok(removed)
}

/// The first step of [`remove_fragments`]: the ignore file written and
/// each commit and folder removed; the second
/// ([`ignore_gone_fragments`](crate::commits::ignore_gone_fragments))
/// reads what this step left.
pub(crate) fn remove_fragment_folders(
    array: &Location,
    names: &[String],
    on_step: &mut dyn FnMut(VacuumStep),
) -> Result<usize, WriteError> {
    let dir = array.join(COMMITS);
    // Commits a .con names stay (the .con is one file): ignored instead.
    let in_con = crate::commits::named_commits(array)?;
    // In name order, as libtiledb lists them (its fragment URIs sorted).
    let mut ignore: Vec<String> = names
        .iter()
        .map(|n| format!("{n}.wrt"))
        .filter(|w| in_con.contains(&format!("{COMMITS}/{w}")))
        .collect();
    ignore.sort();
    if !ignore.is_empty() {
        crate::commits::write_ignore_list(&dir, &ignore)?;
        on_step(VacuumStep::IgnoreListed);
    }
    let mut removed = 0;
    for name in names {
        if crate::folder::remove_if_present(&dir.join(format!("{name}.wrt")))? {
            on_step(VacuumStep::CommitRemoved);
        }
        if crate::folder::remove_folder(&array.join("__fragments").join(name))? {
            removed += 1;
            on_step(VacuumStep::FolderRemoved);
        }
    }
    Ok(removed)
}
