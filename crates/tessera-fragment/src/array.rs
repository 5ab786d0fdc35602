//! An array folder opened at a timestamp range
//! (`format_spec/array_file_hierarchy.md`).
//!
//! Both hierarchies are read at once: fragments in the array folder with
//! `.ok` commit files (before version 12; before version 5 a fragment counts
//! as committed when its metadata file exists), and `__fragments/` with
//! `__commits/*.wrt` and consolidated commits files (from version 12).

use crate::array_metadata::{read_metadata, MetadataValue};
use crate::condition::{Condition, UpdateValue};
use crate::metadata::{FragmentMetadata, FRAGMENT_METADATA_FILE};
use crate::name::{base_name, ext, list};
use crate::{gates, FragmentError, TimestampedName};
use nom::multi::count as count_exact;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_filters::{read_generic_tile, EncryptionKey};
use tessera_schema::{list_schemas_in, load_schema, schema_at, ArraySchema, SchemaFile};
use tessera_storage::{listing_again, DirEntry, Storage};
use tessera_tile::parse::{fits, parse, sized_text, u32_le, u64_le, PResult};

/// Folder of fragments (from version 12).
pub const FRAGMENTS_FOLDER: &str = "__fragments";
/// Folder of commit files (from version 12).
pub const COMMITS_FOLDER: &str = "__commits";
/// Folder of consolidated fragment metadata (from version 12).
pub const FRAGMENT_META_FOLDER: &str = "__fragment_meta";
/// Folder of array metadata.
pub use crate::array_metadata::METADATA_FOLDER;

/// A delete or update commit that applies to the opened array.
///
/// libtiledb (checked from 2.13 to 2.30) reads an update commit like a delete
/// commit: cells written before it that its condition removes are gone, and
/// the values it sets are not applied. Readers here do the same; the values
/// are kept for reporting.
#[derive(Debug, Clone)]
pub struct DeleteCondition {
    /// The commit's file name (`.del` or `.upd`).
    pub name: String,
    /// Its timestamp: cells written before it are deleted unless they satisfy
    /// the stored condition.
    pub timestamp: u64,
    /// The stored condition: the negation of the one the writer gave, i.e.
    /// the cells to keep.
    pub condition: Condition,
    /// For an update commit, the values it sets; `None` for a delete.
    pub update_values: Option<Vec<UpdateValue>>,
}

impl DeleteCondition {
    /// True for an update commit (`.upd`).
    pub fn is_update(&self) -> bool {
        self.update_values.is_some()
    }
}

/// The most fragments whose metadata sections an open keeps from the
/// footers' tail reads (about 16 MiB at most).
const HOLD_SECTIONS_UP_TO: usize = 1024;

/// A fragment folder that exists but is not visible, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFragment {
    /// Folder name.
    pub name: String,
    /// Why it is not read.
    pub reason: String,
}

/// An array folder opened at `[timestamp_start, timestamp_end]`.
pub struct OpenArray {
    /// The array folder.
    pub path: PathBuf,
    /// Opened from this timestamp (inclusive).
    pub timestamp_start: u64,
    /// Opened up to this timestamp (inclusive).
    pub timestamp_end: u64,
    /// Every schema file, oldest first.
    pub schema_files: Vec<SchemaFile>,
    /// The schema in force at `timestamp_end`.
    pub schema: Arc<ArraySchema>,
    /// The visible fragments, in write order.
    pub fragments: Vec<FragmentMetadata>,
    /// Fragments present but not visible.
    pub skipped: Vec<SkippedFragment>,
    /// Delete and update commits in force, oldest first.
    pub delete_conditions: Vec<DeleteCondition>,
    /// Names of fragments whose footers a consolidated fragment metadata file holds.
    pub consolidated_metadata: HashSet<String>,
    /// The encryption key, if any.
    pub key: Option<EncryptionKey>,
    schemas: HashMap<String, Arc<ArraySchema>>,
    /// The schema's enumerations, read on first use.
    enumerations: std::sync::OnceLock<Vec<tessera_schema::Enumeration>>,
}

impl std::fmt::Debug for OpenArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenArray")
            .field("path", &self.path)
            .field("fragments", &self.fragments.len())
            .finish()
    }
}

impl OpenArray {
    /// True when `(t1, t2)` is visible: fully inside the open range, or, for
    /// names of format 14 and later (consolidation with timestamps) in a
    /// sparse array, overlapping it.
    pub fn overlaps(&self, name: &TimestampedName) -> bool {
        let window = Window {
            start: self.timestamp_start,
            end: self.timestamp_end,
            whole_only: self.schema.array_type == tessera_tile::ArrayType::Dense,
        };
        window.shows(name)
    }

    /// Opens the array at `path`, at `[start, end]` (use `0, u64::MAX` for "now").
    ///
    /// A file listed and then gone before it was read (a fragment, a
    /// commits file another process's vacuum removed) has the array
    /// listed again, up to [`tessera_storage::REOPENS`] times: the new listing is the state
    /// the vacuum left, which holds the same cells.
    pub fn open(
        storage: &dyn Storage,
        path: &Path,
        start: u64,
        end: u64,
        key: Option<EncryptionKey>,
    ) -> Result<OpenArray, FragmentError> {
        // Commits without fragments are looked at in the first listing
        // only: in the next they are a damaged array's, kept.
        listing_again(storage, |before| {
            Self::open_listed(storage, path, start, end, key, before == 0)
        })
    }

    /// One open from one listing. With `dangling_missing`, commits whose
    /// fragments a vacuum removed between the listings are an error
    /// saying they are missing (so the array is listed again); else what
    /// is seen is read, as libtiledb reads it (a commit without its
    /// fragment is passed over).
    fn open_listed(
        storage: &dyn Storage,
        path: &Path,
        start: u64,
        end: u64,
        key: Option<EncryptionKey>,
        dangling_missing: bool,
    ) -> Result<OpenArray, FragmentError> {
        let folders = ArrayFolders::list(storage, path)?;
        let schema_files = list_schemas_in(storage, path, &folders.root)?;
        if schema_files.is_empty() {
            return Err(FragmentError::invalid(
                path.display().to_string(),
                if crate::group::group_marked(&folders.root) {
                    "a TileDB group, not an array (`tessera ls` lists its members)"
                } else {
                    "not a TileDB array: no __array_schema.tdb and no schema in __schema/"
                },
            ));
        }
        // A dense fragment keeps no per-cell times: libtiledb reads one,
        // and applies a vacuum list, only at times covering its whole
        // range. Knowing that takes the schema first, for time travel only
        // (opened at every time, the rules agree).
        let window_schema = match (start, end) {
            (0, u64::MAX) => None,
            _ => {
                let current = schema_at(&schema_files, end).expect("schema files are not empty");
                Some((
                    current.name.clone(),
                    Arc::new(load_schema(storage, path, current, key.as_ref())?),
                ))
            }
        };
        let window = Window {
            start,
            end,
            whole_only: window_schema
                .as_ref()
                .is_some_and(|(_, s)| s.array_type == tessera_tile::ArrayType::Dense),
        };
        let mut log = CommitLog::read(storage, &folders, &window)?;
        if let (true, Some(gone)) = (dangling_missing, folders.dangling_commits(&log).first()) {
            let what = path.join(FRAGMENTS_FOLDER).join(gone);
            let why = "committed, but removed (vacuumed) before it was listed";
            let kind = tessera_storage::StorageErrorKind::NotFound;
            return Err(
                tessera_storage::StorageError::new(kind, what.to_string_lossy(), why).into(),
            );
        }
        let (visible, skipped) = folders.visible_fragments(storage, &log, &window);
        let footers = folders.consolidated_footers(storage, key.as_ref())?;
        // Where requests cost a round trip, the footers not consolidated
        // and the schema files are fetched together first (a schema file
        // comes whole in its tail when no larger than one).
        let prefetched = storage.prefers_batches().then(|| {
            let files = visible
                .iter()
                .filter(|(_, name, _)| !footers.contains_key(name))
                .map(|(_, _, p)| p.join(crate::metadata::FRAGMENT_METADATA_FILE))
                .chain(schema_files.iter().map(|f| path.join(&f.relative_path)))
                .collect();
            crate::prefetch::Prefetched::tails(storage, files, crate::metadata::FOOTER_READ)
        });
        let loader: &dyn Storage = match &prefetched {
            Some(p) => p,
            None => storage,
        };
        // Schemas: every one a visible fragment names, and the one in force.
        let current = schema_at(&schema_files, end)
            .expect("schema files are not empty")
            .clone();
        let mut schemas: HashMap<String, Arc<ArraySchema>> = HashMap::new();
        let load = |f: &SchemaFile| load_schema(loader, path, f, key.as_ref()).map(Arc::new);
        let schema = match window_schema {
            Some((name, s)) if name == current.name => s,
            _ => load(&current)?,
        };
        schemas.insert(current.name.clone(), schema.clone());
        for f in &schema_files {
            if !schemas.contains_key(&f.name) {
                // Loaded eagerly: fragments may name any of them; failures surface only when used.
                if let Ok(s) = load(f) {
                    schemas.insert(f.name.clone(), s);
                }
            }
        }
        let lookup = |n: &str| schemas.get(n).cloned();
        let loaded: Vec<Result<FragmentMetadata, FragmentError>> = visible
            .par_iter()
            .map(|(_, name, p)| {
                let footer = footers.get(name).map(Vec::as_slice);
                FragmentMetadata::load_with_footer(loader, p, &lookup, key, footer)
            })
            .collect();
        let fragments = loaded.into_iter().collect::<Result<Vec<_>, _>>()?;
        // Sections kept from the footers' tail reads (up to 16 KiB a
        // fragment) are dropped for arrays of many fragments, whose reads
        // often touch a few: what is kept stays bounded.
        if fragments.len() > HOLD_SECTIONS_UP_TO {
            fragments
                .iter()
                .for_each(FragmentMetadata::forget_held_sections);
        }
        let delete_conditions = log.delete_conditions(start, end, key)?;
        Ok(OpenArray {
            path: path.to_path_buf(),
            timestamp_start: start,
            timestamp_end: end,
            schema_files,
            schema,
            fragments,
            skipped,
            delete_conditions,
            consolidated_metadata: footers.into_keys().collect(),
            key,
            schemas,
            enumerations: Default::default(),
        })
    }

    /// The enumerations the schema lists, read on first use and kept: a
    /// read in batches maps every batch's keys with them.
    pub fn enumerations(
        &self,
        storage: &dyn Storage,
    ) -> Result<&[tessera_schema::Enumeration], FragmentError> {
        if let Some(e) = self.enumerations.get() {
            return Ok(e);
        }
        let loaded = tessera_schema::load_enumerations(
            storage,
            &self.path,
            &self.schema,
            self.key.as_ref(),
        )?;
        Ok(self.enumerations.get_or_init(|| loaded))
    }

    /// A schema by file name.
    pub fn schema_named(&self, name: &str) -> Option<Arc<ArraySchema>> {
        self.schemas.get(name).cloned()
    }

    /// The array metadata visible at the open range: entries of every
    /// metadata file in range, merged in timestamp order, deletions applied.
    /// A metadata file listed and then removed (another process vacuumed
    /// the metadata after consolidating it) has the folder listed again.
    pub fn metadata(
        &self,
        storage: &dyn Storage,
    ) -> Result<BTreeMap<String, MetadataValue>, FragmentError> {
        let window = (self.timestamp_start, self.timestamp_end);
        listing_again(storage, |_| {
            read_metadata(storage, &self.path, window, self.key.as_ref())
        })
    }
}

/// The times an array is opened at, and whether a fragment (or vacuum
/// list) must lie wholly inside them to count.
struct Window {
    start: u64,
    end: u64,
    whole_only: bool,
}

impl Window {
    /// Whether a fragment or vacuum list named `tn` counts at these times.
    fn shows(&self, tn: &TimestampedName) -> bool {
        match self.whole_only {
            true => tn.t1 >= self.start && tn.t2 <= self.end,
            false => overlaps(self.start, self.end, tn),
        }
    }
}

fn overlaps(start: u64, end: u64, tn: &TimestampedName) -> bool {
    if tn.implied_version().has(gates::TIMESTAMPS) && tn.version.is_some() {
        tn.t1 <= end && start <= tn.t2
    } else {
        tn.t1 >= start && tn.t2 <= end
    }
}

/// One entry of a consolidated commits file: the commit's URI as the file
/// names it (relative to the array: `__commits/<name>`), and for delete
/// and update commits the bytes of their condition tile.
pub type ConsolidatedCommit = (String, Option<Vec<u8>>);

/// Parses a consolidated commits file (`.con`): lines naming commits, in
/// file order; a delete or update commit's line is followed by the size
/// (`u64`) and bytes of its condition tile.
pub fn consolidated_commits(bytes: &[u8]) -> Result<Vec<ConsolidatedCommit>, FragmentError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let nl = bytes[i..].iter().position(|&b| b == b'\n').ok_or_else(|| {
            FragmentError::invalid(
                "consolidated commits",
                format!("entry at byte {i} has no newline"),
            )
        })?;
        let uri = String::from_utf8_lossy(&bytes[i..i + nl]).into_owned();
        i += nl + 1;
        if !matches!(ext(base_name(&uri)), "del" | "upd") {
            out.push((uri, None));
            continue;
        }
        let size_end = i
            .checked_add(8)
            .filter(|e| *e <= bytes.len())
            .ok_or_else(|| {
                FragmentError::invalid(
                    "consolidated commits",
                    format!("condition size truncated at byte {i}"),
                )
            })?;
        let size = u64::from_le_bytes(bytes[i..size_end].try_into().expect("8 bytes"));
        let end = (size_end as u64)
            .checked_add(size)
            .filter(|e| *e <= bytes.len() as u64)
            .ok_or_else(|| {
                FragmentError::invalid(
                    "consolidated commits",
                    format!(
                        "byte {i}: the condition of {} ({size} bytes) runs past the file",
                        base_name(&uri)
                    ),
                )
            })? as usize;
        out.push((uri, Some(bytes[size_end..end].to_vec())));
        i = end;
    }
    Ok(out)
}

/// The commits a consolidated commits file names (by name), and its delete
/// and update conditions with their timestamps.
fn parse_consolidated_commits(
    bytes: &[u8],
    commits: &mut HashSet<String>,
    deletes: &mut Vec<(String, u64, Vec<u8>)>,
) -> Result<(), FragmentError> {
    for (uri, condition) in consolidated_commits(bytes)? {
        let name = base_name(&uri).to_owned();
        match condition {
            Some(c) => {
                let ts = TimestampedName::parse(&name).map_or(0, |t| t.t1);
                deletes.push((name, ts, c));
            }
            None => {
                commits.insert(name);
            }
        }
    }
    Ok(())
}

/// A consolidated fragment metadata file: the fragments it lists, each with
/// its footer. The payload holds a count, then (name length, name, footer
/// offset) per fragment, then the footers, each running to the next's offset.
fn consolidated_footers(
    bytes: &[u8],
    key: Option<&EncryptionKey>,
) -> Result<Vec<(String, Vec<u8>)>, FragmentError> {
    let tile = read_generic_tile(bytes, key, 0)?;
    let data = &tile.data;
    let (listed, _) = parse(data, "consolidated fragment metadata", 0, listed_footers)?;
    let mut out = Vec::with_capacity(listed.len());
    for (i, (name, start)) in listed.iter().enumerate() {
        let end = listed.get(i + 1).map_or(data.len() as u64, |x| x.1);
        if *start > end || end > data.len() as u64 {
            return Err(FragmentError::invalid(
                "consolidated fragment metadata",
                format!(
                    "footer of {name} at {start}..{end} is outside the {} bytes",
                    data.len()
                ),
            ));
        }
        out.push((name.clone(), data[*start as usize..end as usize].to_vec()));
    }
    Ok(out)
}

/// The head of a consolidated fragment metadata payload: the `u32` number
/// of fragments, then per fragment its name (after a `u64` length) and the
/// offset of its footer in the payload.
fn listed_footers(i: &[u8]) -> PResult<'_, Vec<(String, u64)>> {
    let (i, n) = u32_le("number of fragments")(i)?;
    // Each takes at least 16 bytes: an absurd count fails here.
    let n = fits(i, "number of fragments", n as u64, 16)?;
    let listed = |i| {
        let (i, name) = sized_text("fragment name length", "fragment name")(i)?;
        let (i, offset) = u64_le("footer offset")(i)?;
        Ok((i, (base_name(&name).to_owned(), offset)))
    };
    count_exact(listed, n)(i)
}

/// The listings an array's open starts from: the array folder, its
/// fragments folder (format 12 and later) and its commits folder.
struct ArrayFolders<'p> {
    path: &'p Path,
    root: Vec<DirEntry>,
    fragments: Vec<DirEntry>,
    commits: Vec<DirEntry>,
}

/// A fragment to load: its timestamped name, its name, its folder.
type VisibleFragment = (TimestampedName, String, PathBuf);

impl<'p> ArrayFolders<'p> {
    /// Lists the array at `path`: each folder once, the commits first. A
    /// fragment committed later is then just not seen; one removed by a
    /// vacuum in between leaves its commit without a folder, which
    /// [`ArrayFolders::dangling_commits`] tells.
    ///
    /// Where requests cost a round trip (object stores) the array folder
    /// goes first: its listing is one LIST of the whole array, in key
    /// order, where `__commits/` comes before `__fragments/` all the same.
    fn list(storage: &dyn Storage, path: &'p Path) -> Result<ArrayFolders<'p>, FragmentError> {
        let root = match storage.prefers_batches() {
            true => Some(list(storage, path)?),
            false => None,
        };
        let commits = list(storage, &path.join(COMMITS_FOLDER))?;
        Ok(ArrayFolders {
            path,
            root: match root {
                Some(r) => r,
                None => list(storage, path)?,
            },
            fragments: list(storage, &path.join(FRAGMENTS_FOLDER))?,
            commits,
        })
    }

    /// Commits (`.wrt` files, or lines of a consolidated commits file not
    /// ignored) of fragments that are not in the fragments folder and
    /// that no vacuum file lists: a vacuum removed them between the two
    /// listings, and the consolidated fragment holding their cells may
    /// have been committed after the commits were listed.
    fn dangling_commits(&self, log: &CommitLog) -> Vec<String> {
        let folders: HashSet<&str> = self
            .fragments
            .iter()
            .filter(|e| e.is_dir)
            .map(|e| e.name.as_str())
            .collect();
        let listed = self.commits.iter().map(|e| e.name.as_str());
        let committed = listed
            .filter(|n| n.ends_with(".wrt"))
            .chain(log.consolidated.iter().map(String::as_str))
            .filter(|w| !log.ignored.contains(*w));
        committed
            .filter_map(|w| w.strip_suffix(".wrt"))
            .filter(|f| !folders.contains(f) && !log.vacuumed.contains(*f))
            .map(str::to_owned)
            .collect()
    }

    fn commits_dir(&self) -> PathBuf {
        self.path.join(COMMITS_FOLDER)
    }

    /// The committed fragments of both hierarchies (before format 12 in
    /// the array folder with `.ok` files, after in `__fragments` with
    /// `.wrt` commits) visible at `[start, end]`, in write order; and those
    /// left out, each with why.
    fn visible_fragments(
        &self,
        storage: &dyn Storage,
        log: &CommitLog,
        window: &Window,
    ) -> (Vec<VisibleFragment>, Vec<SkippedFragment>) {
        let path = self.path;
        let frag_dir = path.join(FRAGMENTS_FOLDER);
        let root_names: HashSet<&str> = self.root.iter().map(|e| e.name.as_str()).collect();
        let commit_names: HashSet<&str> = self.commits.iter().map(|e| e.name.as_str()).collect();
        let mut candidates: Vec<VisibleFragment> = Vec::new();
        let mut skipped = Vec::new();
        for e in self.root.iter().filter(|e| e.is_dir) {
            let Some(tn) = TimestampedName::parse(&e.name) else {
                continue;
            };
            let committed = root_names.contains(format!("{}.ok", e.name).as_str())
                || (!tn.implied_version().has(gates::SPLIT_COORDINATES)
                    && storage.exists(&path.join(&e.name).join(FRAGMENT_METADATA_FILE)));
            if committed {
                candidates.push((tn, e.name.clone(), path.join(&e.name)));
            } else {
                skipped.push(SkippedFragment {
                    name: e.name.clone(),
                    reason: "not committed (no .ok file)".into(),
                });
            }
        }
        for e in self.fragments.iter().filter(|e| e.is_dir) {
            let Some(tn) = TimestampedName::parse(&e.name) else {
                continue;
            };
            let wrt = format!("{}.wrt", e.name);
            if (commit_names.contains(wrt.as_str()) || log.consolidated.contains(&wrt))
                && !log.ignored.contains(&wrt)
            {
                candidates.push((tn, e.name.clone(), frag_dir.join(&e.name)));
            } else {
                skipped.push(SkippedFragment {
                    name: e.name.clone(),
                    reason: "not committed (no .wrt commit)".into(),
                });
            }
        }
        let mut visible = Vec::new();
        for (tn, name, p) in candidates {
            if log.vacuumed.contains(&name) {
                skipped.push(SkippedFragment {
                    name,
                    reason: "consolidated into another fragment (listed in a vacuum file)".into(),
                });
            } else if !window.shows(&tn) {
                skipped.push(SkippedFragment {
                    name,
                    reason: format!("timestamps [{}, {}] outside the open range", tn.t1, tn.t2),
                });
            } else {
                visible.push((tn, name, p));
            }
        }
        visible.sort_by(|a, b| (a.0.t1, a.0.t2, &a.1).cmp(&(b.0.t1, b.0.t2, &b.1)));
        (visible, skipped)
    }

    /// Footers from the consolidated fragment metadata files, by fragment
    /// name: a fragment they list needs no read of its own metadata file
    /// to open. An unreadable file is skipped: the fragments' own footers
    /// still serve.
    fn consolidated_footers(
        &self,
        storage: &dyn Storage,
        key: Option<&EncryptionKey>,
    ) -> Result<HashMap<String, Vec<u8>>, FragmentError> {
        let meta_dir = self.path.join(FRAGMENT_META_FOLDER);
        let meta_files: Vec<PathBuf> = list(storage, &meta_dir)?
            .into_iter()
            .filter(|e| ext(&e.name) == "meta")
            .map(|e| meta_dir.join(e.name))
            .chain(
                self.root
                    .iter()
                    .filter(|e| ext(&e.name) == "meta" && !e.is_dir)
                    .map(|e| self.path.join(&e.name)),
            )
            .collect();
        let mut footers: HashMap<String, Vec<u8>> = HashMap::new();
        for p in meta_files {
            if let Ok(bytes) = storage.read_all(&p) {
                if let Ok(listed) = consolidated_footers(&bytes, key) {
                    footers.extend(listed);
                }
            }
        }
        Ok(footers)
    }
}

/// What the commits folder (and the vacuum files of the array folder)
/// say about fragments: which commits are ignored, which are in
/// consolidated commit files, which fragments were consolidated away, and
/// the delete and update commits (name, timestamp, bytes).
struct CommitLog {
    ignored: HashSet<String>,
    consolidated: HashSet<String>,
    vacuumed: HashSet<String>,
    deletes: Vec<(String, u64, Vec<u8>)>,
}

/// The names a text file lists, one per line, as base names.
fn listed_names(text: &[u8], into: &mut HashSet<String>) {
    for line in String::from_utf8_lossy(text)
        .lines()
        .filter(|l| !l.is_empty())
    {
        into.insert(base_name(line).to_owned());
    }
}

/// A file of the commit log, by what it says.
#[derive(Clone, Copy, PartialEq)]
enum LogFile {
    /// `.ign`: commits to ignore.
    Ignore,
    /// `.con`: commits consolidated into one file.
    Consolidated,
    /// `.vac`: fragments consolidated away.
    Vacuum,
    /// `.del` or `.upd`: a delete or update condition.
    Condition,
}

impl CommitLog {
    /// Reads the ignore, consolidated-commits and vacuum files (those of
    /// vacuum files overlapping `[start, end]`), and the delete and update
    /// commits: as one batch where the storage prefers batches.
    fn read(
        storage: &dyn Storage,
        folders: &ArrayFolders<'_>,
        window: &Window,
    ) -> Result<CommitLog, FragmentError> {
        let files = Self::files(folders, window);
        let paths: Vec<PathBuf> = files.iter().map(|(_, p, _)| p.clone()).collect();
        let contents = storage.read_files(&paths);
        let mut log = CommitLog {
            ignored: HashSet::new(),
            consolidated: HashSet::new(),
            vacuumed: HashSet::new(),
            deletes: Vec::new(),
        };
        for ((kind, _, name), bytes) in files.into_iter().zip(contents) {
            let bytes = bytes?;
            match kind {
                LogFile::Ignore => listed_names(&bytes, &mut log.ignored),
                LogFile::Vacuum => listed_names(&bytes, &mut log.vacuumed),
                LogFile::Consolidated => {
                    parse_consolidated_commits(&bytes, &mut log.consolidated, &mut log.deletes)
                        .map_err(|er| er.within(&name, "consolidated commits file"))?
                }
                LogFile::Condition => {
                    let tn = TimestampedName::parse(&name)
                        .ok_or_else(|| FragmentError::invalid(&name, "not a timestamped name"))?;
                    log.deletes.push((name, tn.t1, bytes));
                }
            }
        }
        Ok(log)
    }

    /// The commit log's files to read, in the order their contents apply:
    /// ignore files, consolidated commits, the vacuum files `window`
    /// shows (in the array folder, then the commits folder), conditions.
    fn files(folders: &ArrayFolders<'_>, window: &Window) -> Vec<(LogFile, PathBuf, String)> {
        let commits_dir = folders.commits_dir();
        let of = |e: &DirEntry| match ext(&e.name) {
            "ign" => Some(LogFile::Ignore),
            "con" => Some(LogFile::Consolidated),
            "vac" => Some(LogFile::Vacuum),
            "del" | "upd" => Some(LogFile::Condition),
            _ => None,
        };
        let commits = (commits_dir.as_path(), &folders.commits);
        // Vacuum files also lie in the array folder (older formats).
        let order = [
            (LogFile::Ignore, commits),
            (LogFile::Consolidated, commits),
            (LogFile::Vacuum, (folders.path, &folders.root)),
            (LogFile::Vacuum, commits),
            (LogFile::Condition, commits),
        ];
        let mut files = Vec::new();
        for (want, (dir, entries)) in order {
            for e in entries.iter().filter(|e| of(e) == Some(want)) {
                let shown = want != LogFile::Vacuum
                    || TimestampedName::parse(&e.name).is_some_and(|tn| window.shows(&tn));
                if shown {
                    files.push((want, dir.join(&e.name), e.name.clone()));
                }
            }
        }
        files
    }

    /// The delete and update commits in force at `[start, end]`, parsed,
    /// by timestamp.
    fn delete_conditions(
        &mut self,
        start: u64,
        end: u64,
        key: Option<EncryptionKey>,
    ) -> Result<Vec<DeleteCondition>, FragmentError> {
        let mut delete_conditions = Vec::new();
        for (name, ts, bytes) in std::mem::take(&mut self.deletes) {
            let Some(tn) = TimestampedName::parse(&name) else {
                continue;
            };
            if !overlaps(start, end, &tn) || self.ignored.contains(&name) {
                continue;
            }
            let update = ext(&name) == "upd";
            let what = if update {
                "update commit"
            } else {
                "delete commit"
            };
            let tile = read_generic_tile(&bytes, key.as_ref(), 0)
                .map_err(|e| FragmentError::from(e).within(&name, what))?;
            let (condition, update_values) = if update {
                let (c, v) = Condition::parse_update(&tile.data)
                    .map_err(|e| e.within(&name, "update condition"))?;
                (c, Some(v))
            } else {
                let c = Condition::parse(&tile.data)
                    .map_err(|e| e.within(&name, "delete condition"))?;
                (c, None)
            };
            delete_conditions.push(DeleteCondition {
                name,
                timestamp: ts,
                condition,
                update_values,
            });
        }
        delete_conditions.sort_by(|a, b| (a.timestamp, &a.name).cmp(&(b.timestamp, &b.name)));
        Ok(delete_conditions)
    }
}
