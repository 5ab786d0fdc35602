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
use crate::consolidate_plan::{cell_count, plan, ReadShare, Reading, COMMITS};
pub use crate::consolidate_plan::{ConsolidateOptions, Consolidation};
use crate::fragment::{BoxWriter, SortedFragmentWriter};
use crate::WriteError;
use std::sync::Arc;
use tessera_cells::CellSource;
use tessera_filters::EncryptionKey;
use tessera_fragment::{OpenArray, TimestampedName};
use tessera_storage::{listing_again, Location};

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
    let Some(plan) = plan(at, options)? else {
        return Ok(None);
    };
    let writer = plan.writer(at.clone())?;
    let read_failed = WriteError::read(at.path());
    let storage = at.shared();
    let global_order = |array: &Arc<OpenArray>, share| {
        let which = plan.sparse_cells(share);
        let read = source.global_order(storage.clone(), array.clone(), which);
        read.map_err(read_failed)
    };
    let written = &mut || on_step(Step::FragmentWritten);
    let mut cells = 0;
    let names = match &plan.reading {
        Reading::Dense { bounds, band_cells } => {
            let mut banded = BoxWriter::new(writer, bounds, *band_cells)?;
            for band in banded.bands().to_vec() {
                let read = source.dense_box(storage.clone(), plan.opened.clone(), &band);
                let columns = read.map_err(read_failed)?;
                cells += cell_count(&columns);
                banded.write_band(columns)?;
            }
            banded.finish_observed(written)?
        }
        Reading::Purge { with_deletes } => {
            let dims = plan.opened.schema.dimensions.len();
            let all = global_order(&plan.opened, ReadShare::Swept)?;
            let kept = global_order(with_deletes, ReadShare::Swept)?;
            let deleted = crate::purge::deleted_versions(all, kept, dims).map_err(read_failed)?;
            let mut sorted = SortedFragmentWriter::new(writer)?;
            for batch in global_order(with_deletes, ReadShare::Written)? {
                let batch = batch.map_err(read_failed)?;
                let schema = &plan.opened.schema;
                cells += crate::purge::write_kept(&mut sorted, schema, &batch, &deleted)?;
            }
            sorted.finish_observed(written)?
        }
        Reading::Sparse => {
            let mut sorted = SortedFragmentWriter::new(writer)?;
            for batch in global_order(&plan.opened, ReadShare::Written)? {
                let batch = batch.map_err(read_failed)?;
                cells += cell_count(&batch);
                sorted.write_owned(batch)?;
            }
            sorted.finish_observed(written)?
        }
    };
    on_step(Step::Committed);
    let (vac, listed) = plan.vacuum_list(&names)?;
    write_whole(&at.join(COMMITS), &vac, listed.as_bytes())?;
    on_step(Step::VacuumListed);
    Ok(Some(plan.done(names, cells)))
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
