//! `tessera._native.consolidate` and `vacuum`: an array's fragments,
//! commits, fragment metadata or array metadata consolidated and vacuumed
//! as libtiledb's `sm.consolidation.mode` and `sm.vacuum.mode` do,
//! locally or straight on an object store.

use crate::convert::{parse_key, StorageOptions};
use crate::error::{message, py_msg};
use crate::write::at_location;
use pyo3::prelude::*;
use tessera::query::QuerySource;
use tessera_write::consolidate::{consolidate_fragments, ConsolidateOptions};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A mode libtiledb does not have, named with the ones it does.
fn unknown_mode(what: &str, mode: &str) -> BoxError {
    format!("{what} mode {mode:?}: expected fragments, commits, fragment_meta or array_meta (group_meta for a group)").into()
}

/// Consolidates the array at `uri` in `mode` (`fragments`, `commits`,
/// `fragment_meta` or `array_meta`; `group_meta`: the group at `uri`'s
/// metadata); fragments only inside `window`
/// (`(t1, t2)` ms), keeping timestamps as `with_timestamps` says (None:
/// libtiledb's default), leaving out deleted cells with `purge_deleted`,
/// in `budget` bytes. Returns the name of what was written, or None when
/// there was nothing to consolidate.
#[pyfunction]
#[pyo3(signature = (uri, mode, window=None, with_timestamps=None, purge_deleted=false, key=None, budget=None, storage_options=StorageOptions::new()))]
#[allow(clippy::too_many_arguments)]
pub fn consolidate(
    py: Python<'_>,
    uri: &str,
    mode: &str,
    window: Option<(u64, u64)>,
    with_timestamps: Option<bool>,
    purge_deleted: bool,
    key: Option<&str>,
    budget: Option<u64>,
    storage_options: StorageOptions,
) -> PyResult<Option<String>> {
    let key = parse_key(key)?;
    let mode = mode.to_owned();
    py.detach(|| {
        at_location(uri, &storage_options, |at| {
            Ok(match mode.as_str() {
                "fragments" => {
                    let options = ConsolidateOptions {
                        window: window.unwrap_or((0, u64::MAX)),
                        with_timestamps,
                        purge_deleted,
                        key,
                        budget,
                    };
                    consolidate_fragments(at, &options, &QuerySource, &mut |_| {})?
                        .map(|c| c.fragment)
                }
                "commits" => tessera_write::commits::consolidate_commits(at, key)?,
                "fragment_meta" => {
                    tessera_write::fragment_meta::consolidate_fragment_meta(at, key)?
                }
                "array_meta" => tessera_write::metadata::consolidate_metadata(at, key)?,
                "group_meta" => tessera_write::metadata::consolidate_group_metadata(at, key)?,
                other => return Err(unknown_mode("consolidation", other)),
            })
        })
    })
    .map_err(|e| py_msg(format!("{uri}: {}", message(&*e))))
}

/// Vacuums the array at `uri` in `mode` (`fragments`, `commits`,
/// `fragment_meta` or `array_meta`; `group_meta`: the group's metadata):
/// removes what consolidation replaced (in mode `fragments`, with
/// `window`: the consolidations written within it). Returns how many
/// files or fragments were removed.
#[pyfunction]
#[pyo3(signature = (uri, mode, key=None, storage_options=StorageOptions::new(), window=None))]
pub fn vacuum(
    py: Python<'_>,
    uri: &str,
    mode: &str,
    key: Option<&str>,
    storage_options: StorageOptions,
    window: Option<(u64, u64)>,
) -> PyResult<usize> {
    let key = parse_key(key)?;
    let mode = mode.to_owned();
    py.detach(|| {
        at_location(uri, &storage_options, |at| {
            Ok(match mode.as_str() {
                "fragments" => tessera_write::consolidate::vacuum_fragments_within(
                    at,
                    key,
                    window,
                    &mut |_| {},
                )?,
                "commits" => tessera_write::commits::vacuum_commits(at, key)?,
                "fragment_meta" => tessera_write::fragment_meta::vacuum_fragment_meta(at, key)?,
                "array_meta" => tessera_write::metadata::vacuum_metadata(at, key)?,
                "group_meta" => tessera_write::metadata::vacuum_group_metadata(at)?,
                other => return Err(unknown_mode("vacuum", other)),
            })
        })
    })
    .map_err(|e| py_msg(format!("{uri}: {}", message(&*e))))
}

/// Deletes the fragments of the array at `uri` written within `[t1, t2]`
/// (`tessera_write::delete::delete_fragments`); returns their names.
#[pyfunction]
#[pyo3(signature = (uri, t1, t2, key=None, storage_options=StorageOptions::new()))]
pub fn delete_fragments(
    py: Python<'_>,
    uri: &str,
    t1: u64,
    t2: u64,
    key: Option<&str>,
    storage_options: StorageOptions,
) -> PyResult<Vec<String>> {
    let key = parse_key(key)?;
    crate::write::on_location(py, uri, &storage_options, |at| {
        Ok(tessera_write::delete::delete_fragments(at, t1, t2, key)?)
    })
}

/// One array's outcome as Python sees it: `(member, location, steps as
/// (mode, what it did), error or None, seconds)`.
type ArrayOutcome = (String, String, Vec<(String, String)>, Option<String>, f64);

fn outcome(a: &tessera::maintain::ArrayMaintained) -> ArrayOutcome {
    let steps = a.steps.iter();
    (
        a.member.clone(),
        a.location.display().to_string(),
        steps
            .map(|(m, did)| (m.name().to_owned(), did.clone()))
            .collect(),
        a.error.clone(),
        a.seconds,
    )
}

/// Consolidates (`work` "consolidate") or vacuums ("vacuum") every array
/// below the group at `uri` in `modes` (None: all, in libtiledb's order),
/// `jobs` arrays side by side within `budget` bytes; `progress`, if
/// given, is called with `(index, total, outcome)` as each array ends.
/// Returns every array's outcome, in the tree's order.
#[pyfunction]
#[pyo3(signature = (uri, work, modes=None, jobs=2, budget=1u64 << 30, key=None, storage_options=StorageOptions::new(), progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn maintain_tree(
    py: Python<'_>,
    uri: &str,
    work: &str,
    modes: Option<Vec<String>>,
    jobs: usize,
    budget: u64,
    key: Option<&str>,
    storage_options: StorageOptions,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<ArrayOutcome>> {
    use tessera::maintain::{maintain_tree, Mode, Progress, TreeMaintenance, Work};
    let work = match work {
        "consolidate" => Work::Consolidate,
        "vacuum" => Work::Vacuum,
        other => {
            return Err(py_msg(format!(
                "work {other:?}: expected consolidate or vacuum"
            )))
        }
    };
    let mut m = TreeMaintenance::new(work);
    if let Some(modes) = modes {
        let parse =
            |n: &String| Mode::parse(n).ok_or_else(|| py_msg(message(&*unknown_mode("tree", n))));
        m.modes = modes.iter().map(parse).collect::<PyResult<_>>()?;
    }
    m.jobs = jobs.max(1);
    m.budget = budget;
    m.key = parse_key(key)?;
    m.storage_options = storage_options;
    // A failing callback does not stop the work; its first error is raised after.
    let failed: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let report = |p: Progress<'_>| {
        let (Progress::Done { index, of, done }, Some(cb)) = (p, &progress) else {
            return;
        };
        Python::attach(|py| {
            if let Err(e) = cb.call1(py, (index, of, outcome(done))) {
                failed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(e);
            }
        });
    };
    let path = std::path::PathBuf::from(uri);
    let done = py
        .detach(|| maintain_tree(&path, &m, &report))
        .map_err(|e| py_msg(message(&e)))?;
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(done.iter().map(outcome).collect())
}
