//! Consolidating and vacuuming commits, as libtiledb's commits consolidator
//! does (`commits_consolidator.cc`, `array_directory.cc`). Consolidation
//! writes one consolidated commits file `__commits/__t1_t2_<uuid>_<v>.con`
//! naming every commit: those earlier `.con` files already name (sorted,
//! less those `.ign` files ignore), then the `.wrt` and `.del` files not
//! yet named, in name order; a delete's line is followed by the size and
//! bytes of its condition file. Vacuuming then removes the commit files a
//! `.con` names (readers find them there) and, once one `.con` names every
//! commit, the other `.con` and the `.ign` files. At every step the array
//! reads the same: a commit is removed only after a file naming it exists.

use crate::atomic::write_whole;
use crate::name::uuid;
use crate::WriteError;
use std::collections::{BTreeSet, HashMap, HashSet};
use tessera_fragment::array::consolidated_commits;
use tessera_fragment::TimestampedName;
use tessera_storage::{listing_again, Location};

const COMMITS: &str = "__commits";

/// A consolidated commits file (`.con`).
struct ConsolidatedFile {
    name: String,
    /// The commits it names (`__commits/...`), parsed as readers parse it.
    listed: Vec<String>,
    /// Its bytes cut at every newline, the last piece dropped if empty
    /// (lines as libtiledb's vacuum reads them, a delete's condition bytes
    /// included).
    raw_lines: Vec<Vec<u8>>,
}

/// What the commits folder holds.
struct CommitsFolder {
    /// Every file name, sorted.
    names: Vec<String>,
    /// Each `.con` file.
    consolidated: Vec<ConsolidatedFile>,
    /// Condition bytes of the deletes `.con` files hold, by commit.
    conditions: HashMap<String, Vec<u8>>,
    /// Commits the `.ign` files name.
    ignored: HashSet<String>,
}

impl CommitsFolder {
    /// The folder as listed; listed again where a file listed was gone
    /// before it was read (another process's vacuum removed it).
    fn read(array: &Location) -> Result<CommitsFolder, WriteError> {
        listing_again(array.reader(), |_| Self::read_listed(array))
    }

    fn read_listed(array: &Location) -> Result<CommitsFolder, WriteError> {
        let dir = array.join(COMMITS);
        let names = crate::folder::entry_names(&dir)?;
        let mut folder = CommitsFolder {
            names: Vec::new(),
            consolidated: Vec::new(),
            conditions: HashMap::new(),
            ignored: HashSet::new(),
        };
        // The ignore and consolidated commits files, fetched as one batch.
        let read: Vec<&String> = names
            .iter()
            .filter(|n| n.ends_with(".ign") || n.ends_with(".con"))
            .collect();
        let paths: Vec<_> = read.iter().map(|n| dir.path().join(n)).collect();
        for (name, bytes) in read.into_iter().zip(array.reader().read_files(&paths)) {
            let bytes = bytes.map_err(WriteError::from)?;
            if name.ends_with(".ign") {
                let text = String::from_utf8_lossy(&bytes);
                // Lines read `__commits/<name>`; tessera once wrote a leading `/`.
                folder
                    .ignored
                    .extend(text.lines().map(|l| l.trim_start_matches('/').to_owned()));
            } else {
                let listed = folder.parse_con(&bytes, name)?;
                let mut raw_lines: Vec<Vec<u8>> =
                    bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
                if raw_lines.last().is_some_and(Vec::is_empty) {
                    raw_lines.pop();
                }
                folder.consolidated.push(ConsolidatedFile {
                    name: name.clone(),
                    listed,
                    raw_lines,
                });
            }
        }
        folder.names = names;
        Ok(folder)
    }

    /// The commits a `.con` file names, keeping its deletes' conditions
    /// (parsed as readers parse it).
    fn parse_con(&mut self, bytes: &[u8], name: &str) -> Result<Vec<String>, WriteError> {
        let entries = consolidated_commits(bytes)
            .map_err(|e| WriteError::Input(format!("{COMMITS}/{name}: {e}")))?;
        let mut out = Vec::with_capacity(entries.len());
        for (uri, condition) in entries {
            if let Some(c) = condition {
                self.conditions.insert(uri.clone(), c);
            }
            out.push(uri);
        }
        Ok(out)
    }

    /// What a consolidation names: the commits the `.con` files name (less
    /// the ignored), then the commit files none names.
    fn to_consolidate(&self) -> Vec<String> {
        let named = self.named();
        let mut list: Vec<String> = named.iter().cloned().collect();
        for name in &self.names {
            let uri = format!("{COMMITS}/{name}");
            if (name.ends_with(".wrt") || name.ends_with(".del")) && !named.contains(&uri) {
                list.push(uri);
            }
        }
        list
    }

    /// The commits the `.con` files name, less the ignored, sorted.
    fn named(&self) -> BTreeSet<String> {
        let all = self.consolidated.iter().flat_map(|c| c.listed.iter());
        all.filter(|u| !self.ignored.contains(*u))
            .cloned()
            .collect()
    }
}

/// The commits (`__commits/<name>`) the array's `.con` files name, less
/// those `.ign` files ignore.
pub(crate) fn named_commits(array: &Location) -> Result<BTreeSet<String>, WriteError> {
    Ok(CommitsFolder::read(array)?.named())
}

/// Consolidates the commits of the array at `array` into one `.con` file;
/// returns its name, or `None` when there is no commit.
///
/// ```
/// # fn copy(a: &std::path::Path, b: &std::path::Path) { std::fs::create_dir_all(b).unwrap();
/// #   for e in std::fs::read_dir(a).unwrap().flatten() { let p = e.path();
/// #     if p.is_dir() { copy(&p, &b.join(e.file_name())) } else { std::fs::copy(&p, b.join(e.file_name())).unwrap(); } } }
/// use tessera_write::commits::{consolidate_commits, vacuum_commits};
/// let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/deletes/array");
/// let dir = std::env::temp_dir().join(format!("tessera-doc-commits-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&dir);
/// copy(&src, &dir);
/// let con = consolidate_commits(&dir, None).unwrap().unwrap();
/// assert_eq!(vacuum_commits(&dir, None).unwrap(), 3); // two writes and a delete
/// let left: Vec<_> = std::fs::read_dir(dir.join("__commits")).unwrap().flatten()
///     .map(|e| e.file_name().into_string().unwrap()).collect();
/// assert_eq!(left, [con]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn consolidate_commits(
    array: impl Into<Location>,
    key: Option<tessera_filters::EncryptionKey>,
) -> Result<Option<String>, WriteError> {
    let array = &array.into();
    let Some((name, fragments)) = write_consolidated_commits(array, key)? else {
        return Ok(None);
    };
    ignore_gone_fragments(array, &fragments)?;
    Ok(Some(name))
}

/// The first step of [`consolidate_commits`]: the `.con` file written;
/// its name and the fragments whose commits it names, for the second step
/// ([`ignore_gone_fragments`], which reads what the first wrote).
pub(crate) fn write_consolidated_commits(
    array: &Location,
    key: Option<tessera_filters::EncryptionKey>,
) -> Result<Option<(String, Vec<String>)>, WriteError> {
    let opened = crate::open::open_array(array, key)?;
    let version = opened.schema.version;
    if !version.has(crate::gates::CONSOLIDATED_COMMITS) {
        return Err(WriteError::Refused {
            path: array.path().into(),
            message: format!(
                "commits are consolidated from format version {}; this array is {version}",
                crate::gates::CONSOLIDATED_COMMITS.version()
            ),
        });
    }
    let folder = CommitsFolder::read(array)?;
    let list = folder.to_consolidate();
    if list.is_empty() {
        return Ok(None);
    }
    let (t1, t2) = timestamp_range(list.iter().map(|uri| uri.rsplit('/').next().unwrap_or(uri)));
    let mut bytes = Vec::new();
    for uri in &list {
        bytes.extend_from_slice(uri.as_bytes());
        bytes.push(b'\n');
        if uri.ends_with(".del") {
            let path = array.join(uri);
            let condition = match folder.conditions.get(uri) {
                Some(c) => c.clone(),
                None => crate::folder::read(&path)?,
            };
            bytes.extend_from_slice(&(condition.len() as u64).to_le_bytes());
            bytes.extend_from_slice(&condition);
        }
    }
    let name = format!("__{t1}_{t2}_{}_{version}.con", uuid()?);
    write_whole(&array.join(COMMITS), &name, &bytes)?;
    // A vacuum in another process may have removed fragments it names.
    let fragments: Vec<String> = list
        .iter()
        .filter_map(|uri| {
            uri.strip_prefix(&format!("{COMMITS}/"))?
                .strip_suffix(".wrt")
        })
        .map(str::to_owned)
        .collect();
    Ok(Some((name, fragments)))
}

/// Whether [`consolidate_commits`] has anything to do at `array`: false
/// when there is no commit, or when one `.con` already names exactly the
/// commits it would name.
pub fn commits_to_consolidate(array: impl Into<Location>) -> Result<bool, WriteError> {
    let folder = CommitsFolder::read(&array.into())?;
    let list: BTreeSet<String> = folder.to_consolidate().into_iter().collect();
    let done = |c: &ConsolidatedFile| c.listed.iter().cloned().collect::<BTreeSet<_>>() == list;
    Ok(!list.is_empty() && !folder.consolidated.iter().any(done))
}

/// Removes the commit files a `.con` file names and, once one `.con`
/// names every commit, the other `.con` and the `.ign` files; returns how
/// many files it removed (less those another process removed first).
/// `key`, when given, must open the array.
pub fn vacuum_commits(
    array: impl Into<Location>,
    key: Option<tessera_filters::EncryptionKey>,
) -> Result<usize, WriteError> {
    let array = &array.into();
    crate::open::check_key(array, key)?;
    let folder = CommitsFolder::read(array)?;
    let named = folder.named();
    let dir = array.join(COMMITS);
    let mut removed = 0;
    let mut remove = |name: &str| -> Result<(), WriteError> {
        removed += usize::from(crate::folder::remove_if_present(&dir.join(name))?);
        Ok(())
    };
    // The commits first: each is named by a `.con` that stays.
    for name in &folder.names {
        let commit = name.ends_with(".wrt") || name.ends_with(".del");
        if commit && named.contains(&format!("{COMMITS}/{name}")) {
            remove(name)?;
        }
    }
    // A `.con` naming every commit left makes the others and the ignore
    // files redundant. Its lines are taken as libtiledb's vacuum takes them
    // (raw, so a `.con` holding a delete's condition bytes never counts):
    // the same files are removed as libtiledb would remove.
    let complete = folder.consolidated.iter().find(|c| {
        c.raw_lines.len() == named.len()
            && c.raw_lines
                .iter()
                .all(|l| std::str::from_utf8(l).is_ok_and(|l| named.contains(l)))
    });
    if let Some(keep) = complete {
        for name in &folder.names {
            if (name.ends_with(".con") && *name != keep.name) || name.ends_with(".ign") {
                remove(name)?;
            }
        }
    }
    Ok(removed)
}

/// Lists in an ignore file the commits among `fragments`' (names in
/// `__fragments/`) that a consolidated commits file names, not ignored,
/// whose fragment folders are gone; true if there were any.
///
/// A commits consolidation and a fragment vacuum in two processes both
/// call it after their writes (the `.con` written; the fragments
/// removed): whichever looks last sees the other's work, so a `.con`
/// never names a removed fragment without an ignore file (libtiledb fails
/// to open such an array).
pub(crate) fn ignore_gone_fragments(
    array: &Location,
    fragments: &[String],
) -> Result<bool, WriteError> {
    array.reader().list_anew();
    let named = named_commits(array)?;
    let present = crate::folder::entry_names(&array.join("__fragments"))?;
    let mut gone: Vec<String> = fragments
        .iter()
        .filter(|f| !present.contains(f))
        .map(|f| format!("{f}.wrt"))
        .filter(|w| named.contains(&format!("{COMMITS}/{w}")))
        .collect();
    gone.sort();
    gone.dedup();
    if gone.is_empty() {
        return Ok(false);
    }
    write_ignore_list(&array.join(COMMITS), &gone)?;
    Ok(true)
}

/// `__commits/__t1_t2_<uuid>_<v>.ign`: the commit files (`<name>.wrt`) that
/// stay in a `.con` but whose fragments are gone, one a line relative to
/// the array (`__commits/<name>.wrt`, as the `.con` lines read: libtiledb
/// matches the two as text), named for the timestamps they span and the
/// format version the last was written at.
pub(crate) fn write_ignore_list(dir: &Location, ignore: &[String]) -> Result<(), WriteError> {
    let Some(last) = ignore.last() else {
        return Ok(());
    };
    let (t1, t2) = timestamp_range(ignore.iter().map(|n| n.trim_end_matches(".wrt")));
    let version = TimestampedName::parse(last.trim_end_matches(".wrt"))
        .and_then(|t| t.version)
        .unwrap_or(22);
    let body: String = ignore.iter().map(|w| format!("{COMMITS}/{w}\n")).collect();
    let name = format!("__{t1}_{t2}_{}_{version}.ign", uuid()?);
    write_whole(dir, &name, body.as_bytes())
}

/// The timestamps a file naming the commits `names` (in name order) is
/// named for: from the first's start to the last's end, as libtiledb
/// names it; where that would start after it ends (names sort by their
/// digits: `__1000_1000_…` before `__5_5_…`), from the earliest start to
/// the latest end, as the format says (libtiledb 2.30 refuses to make
/// such a name; 2.13 makes it, and the libtiledb of TileDB-Py 0.25.1
/// then fails to consolidate the array). 0 for none.
fn timestamp_range<'a>(names: impl Iterator<Item = &'a str>) -> (u64, u64) {
    let stamps: Vec<TimestampedName> = names.filter_map(TimestampedName::parse).collect();
    let (Some(first), Some(last)) = (stamps.first(), stamps.last()) else {
        return (0, 0);
    };
    if first.t1 <= last.t2 {
        return (first.t1, last.t2);
    }
    let t1 = stamps.iter().map(|t| t.t1).min().unwrap_or(0);
    let t2 = stamps.iter().map(|t| t.t2).max().unwrap_or(0);
    (t1, t2)
}
