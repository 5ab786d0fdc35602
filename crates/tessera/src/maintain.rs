//! A whole group tree kept healthy in one call: every array below a group
//! (a SOMA experiment, say) consolidated, or vacuumed, in the modes
//! libtiledb has and in its order (fragments, commits, fragment metadata,
//! array metadata), arrays side by side within one memory budget, with
//! progress.
//!
//! A step with nothing to do is passed over without writing (fewer than
//! two fragments; commits all named by one consolidated commits file;
//! every footer already in a consolidated fragment metadata file; one
//! metadata file), so running a tree again after an interruption does
//! only what was left: each step is whole or not done.
//!
//! ```
//! use tessera::maintain::{maintain_tree, Mode, TreeMaintenance, Work};
//! # fn copy(a: &std::path::Path, b: &std::path::Path) { std::fs::create_dir_all(b).unwrap();
//! #   for e in std::fs::read_dir(a).unwrap().flatten() { let p = e.path();
//! #     if p.is_dir() { copy(&p, &b.join(e.file_name())) } else { std::fs::copy(&p, b.join(e.file_name())).unwrap(); } } }
//! let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/soma/experiment_appended/experiment");
//! let dir = std::env::temp_dir().join(format!("tessera-doc-maintain-{}", std::process::id()));
//! # let _ = std::fs::remove_dir_all(&dir);
//! copy(&src, &dir);
//! let consolidate = TreeMaintenance::new(Work::Consolidate);
//! let done = maintain_tree(&dir, &consolidate, &|_| {}).unwrap();
//! assert!(done.iter().all(|a| a.error.is_none()));
//! assert!(done.iter().any(|a| a.member == "obs"));
//! // Again: nothing is left to do.
//! let again = maintain_tree(&dir, &consolidate, &|_| {}).unwrap();
//! assert!(again.iter().all(|a| a.steps.iter().all(|(_, did)| did.starts_with("nothing"))));
//! maintain_tree(&dir, &TreeMaintenance::new(Work::Vacuum), &|_| {}).unwrap();
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use tessera_filters::EncryptionKey;
use tessera_fragment::group::{is_group, ObjectType, OpenGroup};
use tessera_fragment::{FragmentError, OpenArray};
use tessera_query::QuerySource;
use tessera_storage::{entry_names, Location};
use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};
use tessera_write::{commits, fragment_meta, metadata, WriteError};

/// A consolidation or vacuum mode (libtiledb's `sm.consolidation.mode`
/// and `sm.vacuum.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Fragments into one.
    Fragments,
    /// Commit files into one consolidated commits file.
    Commits,
    /// Fragment footers into one consolidated fragment metadata file.
    FragmentMeta,
    /// Array metadata files into one.
    ArrayMeta,
}

impl Mode {
    /// Every mode, in the order libtiledb runs them.
    pub const ALL: [Mode; 4] = [
        Mode::Fragments,
        Mode::Commits,
        Mode::FragmentMeta,
        Mode::ArrayMeta,
    ];

    /// libtiledb's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Fragments => "fragments",
            Mode::Commits => "commits",
            Mode::FragmentMeta => "fragment_meta",
            Mode::ArrayMeta => "array_meta",
        }
    }

    /// The mode libtiledb names `name`.
    pub fn parse(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Consolidate, or vacuum what consolidations replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Consolidate.
    Consolidate,
    /// Vacuum.
    Vacuum,
}

/// What to do to every array of a tree, and with what.
#[derive(Debug, Clone)]
pub struct TreeMaintenance {
    /// Consolidate or vacuum.
    pub work: Work,
    /// The modes, run in this order on each array.
    pub modes: Vec<Mode>,
    /// Memory for every array in flight together (bytes): a fragment
    /// consolidation gets its share, `budget / jobs`.
    pub budget: u64,
    /// Arrays done side by side.
    pub jobs: usize,
    /// The arrays' AES-256-GCM key, where encrypted.
    pub key: Option<EncryptionKey>,
    /// Object-store options (as for [`crate::location_with`]).
    pub storage_options: Vec<(String, String)>,
}

impl TreeMaintenance {
    /// `work` in every mode, two arrays at a time within 1 GiB.
    pub fn new(work: Work) -> Self {
        TreeMaintenance {
            work,
            modes: Mode::ALL.to_vec(),
            budget: 1 << 30,
            jobs: 2,
            key: None,
            storage_options: Vec::new(),
        }
    }
}

/// What was done to one array.
#[derive(Debug, Clone)]
pub struct ArrayMaintained {
    /// Its path in the tree (member names joined with `/`; empty for an
    /// array given alone).
    pub member: String,
    /// Where it is.
    pub location: PathBuf,
    /// Per mode run, what it did, in words ("nothing to ..." when nothing).
    pub steps: Vec<(Mode, String)>,
    /// Why the array's steps stopped, if they did (the steps before are
    /// done; the other arrays are done regardless).
    pub error: Option<String>,
    /// Seconds the array took.
    pub seconds: f64,
}

/// How far a tree's maintenance is, told as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// The tree was listed: how many arrays it holds.
    Listed {
        /// Arrays.
        arrays: usize,
    },
    /// An array's steps begin.
    Started {
        /// Its place in the tree's listing (from 0).
        index: usize,
        /// Its path in the tree.
        member: &'a str,
    },
    /// An array's steps ended.
    Done {
        /// Its place in the listing.
        index: usize,
        /// How many arrays the tree holds.
        of: usize,
        /// What was done.
        done: &'a ArrayMaintained,
    },
}

/// Why a tree could not be maintained at all.
#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    /// The group (or array) could not be opened or listed.
    #[error("{path}: {source}")]
    Tree {
        /// The path given.
        path: String,
        /// Why.
        #[source]
        source: Box<FragmentError>,
    },
}

/// Runs `m` on every array below the group at `root` (or on the array at
/// `root`), calling `progress` as it goes; what was done to each array,
/// in the tree's order. An array that fails is reported in its entry and
/// the others go on.
pub fn maintain_tree(
    root: &Path,
    m: &TreeMaintenance,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<Vec<ArrayMaintained>, MaintenanceError> {
    let tree_error = |source| MaintenanceError::Tree {
        path: root.display().to_string(),
        source: Box::new(source),
    };
    let arrays = tree_arrays(root, m).map_err(tree_error)?;
    progress(Progress::Listed {
        arrays: arrays.len(),
    });
    let jobs = m.jobs.clamp(1, arrays.len().max(1));
    let share = m.budget / jobs as u64;
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<ArrayMaintained>>> = Mutex::new(vec![None; arrays.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some((member, location)) = arrays.get(index) else {
                    break;
                };
                progress(Progress::Started { index, member });
                let one = maintain_member(member, location, m, share);
                let of = arrays.len();
                progress(Progress::Done {
                    index,
                    of,
                    done: &one,
                });
                done.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(one);
            });
        }
    });
    let done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(done.into_iter().flatten().collect())
}

/// The arrays below `root` (member path, location), or `root` alone when
/// it is an array.
fn tree_arrays(root: &Path, m: &TreeMaintenance) -> Result<Vec<(String, PathBuf)>, FragmentError> {
    let root = crate::serving::local_path(root);
    let storage = crate::serving::storage_with(root, &m.storage_options)?;
    if !is_group(&*storage, root)? {
        return Ok(vec![(String::new(), root.to_path_buf())]);
    }
    let group = OpenGroup::open(&*storage, root, 0, u64::MAX, m.key)?;
    let members = group.list(&*storage, true)?;
    Ok(members
        .into_iter()
        .filter(|l| l.object_type == ObjectType::Array)
        .map(|l| (l.path, l.location))
        .collect())
}

/// One array's steps, timed; a failure ends them and is kept.
fn maintain_member(
    member: &str,
    location: &Path,
    m: &TreeMaintenance,
    budget: u64,
) -> ArrayMaintained {
    let started = Instant::now();
    let mut steps = Vec::new();
    let error = crate::serving::location_with(location, &m.storage_options)
        .map_err(|e| e.to_string())
        .and_then(|at| {
            for &mode in &m.modes {
                let did = match m.work {
                    Work::Consolidate => consolidate(&at, mode, m.key, budget),
                    Work::Vacuum => vacuum(&at, mode, m.key),
                };
                steps.push((mode, did.map_err(|e| format!("{}: {e}", mode.name()))?));
            }
            Ok(())
        })
        .err();
    ArrayMaintained {
        member: member.to_owned(),
        location: location.to_path_buf(),
        steps,
        error,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// One consolidation step, passed over where it has nothing to do.
fn consolidate(
    at: &Location,
    mode: Mode,
    key: Option<EncryptionKey>,
    budget: u64,
) -> Result<String, WriteError> {
    let nothing = || Ok("nothing to consolidate".to_owned());
    let written = |folder: &str, name: Option<String>| match name {
        Some(n) => Ok(format!("wrote {folder}/{n}")),
        None => nothing(),
    };
    match mode {
        Mode::Fragments => {
            let options = ConsolidateOptions {
                key,
                budget: Some(budget),
                ..ConsolidateOptions::default()
            };
            match consolidate_fragments(at, &options, &QuerySource, &mut |_| {})? {
                Some(c) => Ok(format!(
                    "{} fragments into __fragments/{} ({} cells)",
                    c.replaced.len(),
                    c.fragment,
                    c.cells
                )),
                None => nothing(),
            }
        }
        Mode::Commits => {
            // The listing first: the array is opened only where there is
            // work, to pass over formats without consolidated commits.
            if !commits::commits_to_consolidate(at)? {
                return nothing();
            }
            let version = open(at, key)?.schema.version;
            if !version.has(tessera_write::gates::CONSOLIDATED_COMMITS) {
                return nothing();
            }
            written("__commits", commits::consolidate_commits(at, key)?)
        }
        Mode::FragmentMeta => {
            let opened = open(at, key)?;
            let all_held = opened
                .fragments
                .iter()
                .all(|f| opened.consolidated_metadata.contains(&f.name));
            if all_held {
                return nothing();
            }
            let name = fragment_meta::consolidate_fragment_meta(at, key)?;
            written("__fragment_meta", name)
        }
        Mode::ArrayMeta => {
            let files = names(at, "__meta")?;
            if files.iter().filter(|n| !n.ends_with(".vac")).count() < 2 {
                return nothing();
            }
            written("__meta", metadata::consolidate_metadata(at, key)?)
        }
    }
}

/// One vacuum step.
fn vacuum(at: &Location, mode: Mode, key: Option<EncryptionKey>) -> Result<String, WriteError> {
    let (n, what) = match mode {
        Mode::Fragments => (vacuum_fragments(at, key, &mut |_| {})?, "fragments"),
        Mode::Commits => (commits::vacuum_commits(at, key)?, "commit files"),
        Mode::FragmentMeta => (fragment_meta::vacuum_fragment_meta(at, key)?, "files"),
        Mode::ArrayMeta => (metadata::vacuum_metadata(at, key)?, "metadata files"),
    };
    Ok(match n {
        0 => "nothing to vacuum".to_owned(),
        n => format!("removed {n} {what}"),
    })
}

fn names(at: &Location, folder: &str) -> Result<Vec<String>, WriteError> {
    let dir = at.path().join(folder);
    Ok(entry_names(at.reader(), &dir)?)
}

fn open(at: &Location, key: Option<EncryptionKey>) -> Result<OpenArray, WriteError> {
    OpenArray::open(at.reader(), at.path(), 0, u64::MAX, key).map_err(|e| WriteError::Read {
        path: at.path().to_path_buf(),
        source: e.into(),
    })
}
