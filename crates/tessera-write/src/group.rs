//! Groups, as libtiledb writes them: [`create_group`] (the folder with its
//! marker file `__tiledb_group.tdb`, `__group/` and `__meta/`, published
//! whole) and [`change_members`] (one details file `__group/__t_t_<uuid>[_2]`
//! a change, encoded by `tessera_fragment::group::encode_details`).
//!
//! A details file at version 2 lists the members changed: each added
//! member, each removed one with its deleted flag (readers replay the
//! files in timestamp order). libtiledb 2.19 and later also repeat the
//! members in force, but libtiledb 2.17 lists a member found in two files
//! twice (and then misses others), so tessera writes what every release
//! replays alike. At version 1 (libtiledb 2.13 and before) a file lists
//! the members in force and nothing else (readers take the newest alone). A change is written at the details version and format version
//! of the group's newest files, so the release that wrote the group reads
//! it; a new group gets version 2 at format 22 (libtiledb 2.30's).

use crate::atomic::write_whole;
use crate::create::{check_destination, generic_tile_pipeline, Staging};
use crate::name::{now_ms, uuid};
use crate::WriteError;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_filters::{write_generic_tile, EncryptionKey};
use tessera_fragment::array_metadata::METADATA_FOLDER;
use tessera_fragment::group::{
    encode_details, GroupMember, OpenGroup, GROUP_DETAILS_FOLDER, GROUP_FILE,
};
use tessera_fragment::TimestampedName;
use tessera_storage::{LocalFs, Location, Storage, WritableStorage};
use tessera_tile::FormatVersion;

/// The format version libtiledb 2.30 writes a group's files at.
const NEW_GROUP_VERSION: u32 = 22;

/// Creates an empty group at `path` (absent, or an empty folder).
///
/// ```
/// let dir = std::env::temp_dir().join(format!("tessera-doc-group-{}", std::process::id()));
/// tessera_write::group::create_group(&dir).unwrap();
/// let g = tessera_fragment::group::OpenGroup::open(&tessera_storage::LocalFs, &dir, 0, u64::MAX, None).unwrap();
/// assert!(g.members.is_empty());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn create_group(path: impl Into<Location>) -> Result<(), WriteError> {
    let path = path.into();
    check_destination(&path)?;
    let staging = Staging::new(&path)?;
    staging.folder(GROUP_DETAILS_FOLDER)?;
    staging.folder(METADATA_FOLDER)?;
    staging.file(GROUP_FILE, &[])?;
    staging.publish(&path)
}

/// One change to a group's members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberChange {
    /// Add the array or group at `uri`: relative to the group when
    /// `relative`, else a path (stored as an absolute `file://` URI) or a
    /// URI. It is listed under `name`, or the last segment of its URI.
    Add {
        /// Where the member is.
        uri: String,
        /// The member's name.
        name: Option<String>,
        /// Whether `uri` is relative to the group.
        relative: bool,
    },
    /// Remove the member of this name, or (when no member has it as its
    /// name) the one member at this URI.
    Remove(String),
}

/// Applies `changes` to the group at `group` as one details file, written
/// at `timestamp` (default: now, or just after the newest details file);
/// returns its name. Refused, with nothing written, when a member to add
/// is not an array or a group, its name is taken, or a member to remove
/// is not there.
///
/// ```
/// use tessera_write::group::{change_members, create_group, MemberChange};
/// let dir = std::env::temp_dir().join(format!("tessera-doc-members-{}", std::process::id()));
/// create_group(&dir).unwrap();
/// create_group(&dir.join("ms")).unwrap();
/// let add = MemberChange::Add { uri: "ms".into(), name: Some("ms".into()), relative: true };
/// change_members(&dir, &[add], None, None).unwrap();
/// let g = tessera_fragment::group::OpenGroup::open(&tessera_storage::LocalFs, &dir, 0, u64::MAX, None).unwrap();
/// assert_eq!(g.members[0].display_name(), "ms");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn change_members(
    group: impl Into<Location>,
    changes: &[MemberChange],
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<String, WriteError> {
    let lookup = MemberLookup {
        storage: &|_| Err("members on other stores are not looked up here".into()),
    };
    change_members_at(&group.into(), &lookup, changes, key, timestamp)
}

/// The storage serving a path on another store, or why there is none.
pub type StorageOf<'a> = dyn Fn(&Path) -> Result<Arc<dyn Storage>, String> + 'a;

/// Where the members a change adds are looked up (to learn whether each
/// is an array or a group) when their URI is on another store than the
/// group's: the storage serving it.
pub struct MemberLookup<'a> {
    /// The storage serving a member's URI (`s3://...`) on another store.
    pub storage: &'a StorageOf<'a>,
}

/// [`change_members`] on the group at `group`, with members on other
/// stores looked up as `lookup` says.
pub fn change_members_at(
    group: &Location,
    lookup: &MemberLookup<'_>,
    changes: &[MemberChange],
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<String, WriteError> {
    let (at, group) = (group, group.path());
    let refuse = |m: String| WriteError::refused(group, m);
    let opened = OpenGroup::open(at.reader(), group, 0, u64::MAX, key)
        .map_err(|e| WriteError::refused(group, e))?;
    let key_of = |m: &GroupMember| m.name.clone().unwrap_or_else(|| m.uri.clone());
    // Every member in force, then each change: (member, deleted); a
    // version-2 file keeps the changes only.
    let mut entries: Vec<(GroupMember, bool)> =
        opened.members.iter().map(|m| (m.clone(), false)).collect();
    let mut touched: Vec<String> = Vec::new();
    for change in changes {
        let (member, deleted) = match change {
            MemberChange::Add {
                uri,
                name,
                relative,
            } => (new_member(at, lookup, uri, name.clone(), *relative)?, false),
            MemberChange::Remove(which) => {
                (member_to_remove(&opened.members, which, &refuse)?, true)
            }
        };
        let k = key_of(&member);
        if touched.contains(&k) {
            return Err(refuse(format!(
                "member `{k}` is changed twice in one change"
            )));
        }
        if !deleted && opened.members.iter().any(|m| key_of(m) == k) {
            return Err(refuse(format!(
                "a member named `{k}` is already in the group (remove it first)"
            )));
        }
        touched.push(k.clone());
        entries.retain(|(m, _)| key_of(m) != k);
        entries.push((member, deleted));
    }
    let details = opened.details_version.unwrap_or(2);
    if details >= 2 {
        entries.retain(|(m, _)| touched.contains(&key_of(m)));
    }
    let version = group_format_version(at);
    let tile = write_generic_tile(
        &encode_details(details, &entries),
        &generic_tile_pipeline(),
        version,
        key,
    )?;
    let dir = at.join(GROUP_DETAILS_FOLDER);
    let t = timestamp.unwrap_or_else(|| now_ms().max(next_after_newest(&dir)));
    let suffix = match details {
        1 => String::new(),
        v => format!("_{v}"),
    };
    let name = format!("__{t}_{t}_{}{suffix}", uuid()?);
    crate::folder::create(&dir)?;
    write_whole(&dir, &name, &tile)?;
    Ok(name)
}

/// The member `uri` names, with its type read from what is there.
fn new_member(
    group: &Location,
    lookup: &MemberLookup<'_>,
    uri: &str,
    name: Option<String>,
    relative: bool,
) -> Result<GroupMember, WriteError> {
    let at = match uri.strip_prefix("file://") {
        Some(p) => Path::new(p).to_path_buf(),
        None if relative => group.path().join(uri),
        None => Path::new(uri).to_path_buf(),
    };
    let refuse = |m: String| WriteError::refused(&at, m);
    // A member on the group's store is read through its storage; paths
    // with a scheme elsewhere through the storage of their store.
    let remote = at.to_string_lossy().contains("://");
    let here = group.path().to_string_lossy().contains("://") == remote
        && (!remote || same_store(group.path(), &at));
    let elsewhere;
    let storage: &dyn Storage = match (here, remote) {
        (true, _) => group.reader(),
        (false, true) => {
            elsewhere = (lookup.storage)(&at).map_err(&refuse)?;
            &*elsewhere
        }
        (false, false) => &LocalFs,
    };
    // A store that does not answer is an error of reading, not a member
    // taken for missing.
    let Some(object_type) =
        tessera_fragment::group::object_type(storage, &at).map_err(WriteError::read(&at))?
    else {
        return Err(refuse(format!(
            "cannot add `{uri}`: neither a TileDB array nor a group"
        )));
    };
    let uri = match (relative, remote) {
        (true, _) => uri.trim_start_matches("./").to_owned(),
        (false, true) => uri.to_owned(),
        // libtiledb stores a local path as an absolute file:// URI.
        (false, false) => LocalFs.uri(&at).map_err(WriteError::from)?,
    };
    if name.as_deref() == Some("") {
        return Err(refuse("a member's name cannot be empty".into()));
    }
    Ok(GroupMember {
        name,
        uri,
        relative,
        object_type,
    })
}

/// The member `which` names: by name, else the one member at that URI.
fn member_to_remove(
    members: &[GroupMember],
    which: &str,
    refuse: &dyn Fn(String) -> WriteError,
) -> Result<GroupMember, WriteError> {
    if let Some(m) = members.iter().find(|m| m.name.as_deref() == Some(which)) {
        return Ok(m.clone());
    }
    let file_uri = match LocalFs.uri(Path::new(which)) {
        Ok(uri) if !which.contains("://") => uri,
        _ => which.to_owned(),
    };
    let at: Vec<&GroupMember> = members
        .iter()
        .filter(|m| m.uri == which || m.uri == file_uri)
        .collect();
    match at[..] {
        [m] => Ok(m.clone()),
        [] => Err(refuse(format!(
            "cannot remove `{which}`: no member has that name or URI"
        ))),
        _ => Err(refuse(format!(
            "cannot remove `{which}`: {} members have that URI; remove one by name",
            at.len()
        ))),
    }
}

/// The newest format version among the group's details and metadata
/// files (a version tessera does not know, as in a damaged header, is not
/// taken), or libtiledb 2.30's for a group with none.
pub(crate) fn group_format_version(group: &Location) -> FormatVersion {
    let mut version = None;
    for sub in [GROUP_DETAILS_FOLDER, METADATA_FOLDER] {
        let dir = group.join(sub);
        let names = crate::folder::entry_names(&dir).unwrap_or_default();
        let tiles: Vec<PathBuf> = names
            .iter()
            .filter(|n| TimestampedName::parse(n).is_some())
            .map(|n| dir.path().join(n))
            .collect();
        let requests: Vec<(PathBuf, std::ops::Range<u64>)> =
            tiles.into_iter().map(|p| (p, 0..4)).collect();
        let Ok(heads) = group.reader().read_batch(&requests) else {
            continue;
        };
        for head in heads {
            let Ok(head) = <[u8; 4]>::try_from(head.as_slice()) else {
                continue;
            };
            let v = FormatVersion::new(u32::from_le_bytes(head));
            if v.is_known() {
                version = version.max(Some(v));
            }
        }
    }
    version.unwrap_or(FormatVersion::new(NEW_GROUP_VERSION))
}

/// Whether the URIs `a` and `b` are on one store (scheme and bucket).
fn same_store(a: &Path, b: &Path) -> bool {
    let store = |p: &Path| {
        let text = p.to_string_lossy().into_owned();
        let (scheme, rest) = text.split_once(":/").unwrap_or(("", ""));
        let bucket = rest.trim_start_matches('/').split('/').next().unwrap_or("");
        (scheme.to_ascii_lowercase(), bucket.to_owned())
    };
    store(a) == store(b)
}

/// One millisecond after the newest timestamped file in `dir` (0 when
/// none): files of one millisecond replay in uuid order, so two changes
/// within one would apply in either order.
pub(crate) fn next_after_newest(dir: &Location) -> u64 {
    crate::folder::entry_names(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| TimestampedName::parse(n))
        .map(|n| n.t2.saturating_add(1))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::ops::Range;
    use tessera_storage::{
        DirEntry, FileWriter, ListableStorage, ReadableStorage, StorageError, StorageErrorKind,
        StorageHints, StorageResult,
    };

    /// A store that answers nothing: every read, listing and write fails.
    pub(crate) struct Down;

    impl Down {
        fn error(path: &Path) -> StorageError {
            let key = path.display().to_string();
            StorageError::new(StorageErrorKind::Unavailable, key, "503 Slow Down")
        }
    }

    impl ReadableStorage for Down {
        fn read_range(&self, path: &Path, _: Range<u64>) -> StorageResult<Vec<u8>> {
            Err(Down::error(path))
        }

        fn size(&self, path: &Path) -> StorageResult<u64> {
            Err(Down::error(path))
        }
    }

    impl ListableStorage for Down {
        fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
            Err(Down::error(path))
        }

        fn exists(&self, _: &Path) -> bool {
            false
        }
    }

    impl StorageHints for Down {}

    impl WritableStorage for Down {
        fn put(&self, path: &Path, _: &[u8]) -> StorageResult<()> {
            Err(Down::error(path))
        }

        fn writer(&self, path: &Path) -> StorageResult<Box<dyn FileWriter>> {
            Err(Down::error(path))
        }

        fn delete(&self, path: &Path) -> StorageResult<bool> {
            Err(Down::error(path))
        }

        fn delete_folder(&self, path: &Path) -> StorageResult<usize> {
            Err(Down::error(path))
        }

        fn create_folder(&self, path: &Path) -> StorageResult<()> {
            Err(Down::error(path))
        }

        fn uri(&self, path: &Path) -> StorageResult<String> {
            Ok(format!("s3://{}", path.display()))
        }
    }

    #[test]
    fn a_member_on_a_store_that_does_not_answer_is_not_called_missing() {
        let dir = std::env::temp_dir().join(format!("tessera-group-down-{}", std::process::id()));
        create_group(&dir).unwrap();
        let lookup = MemberLookup {
            storage: &|_| Ok(Arc::new(Down) as Arc<dyn Storage>),
        };
        let add = MemberChange::Add {
            uri: "s3://elsewhere/ms".into(),
            name: Some("ms".into()),
            relative: false,
        };
        let e = change_members_at(&Location::local(&dir), &lookup, &[add], None, None)
            .unwrap_err()
            .to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("503 Slow Down"), "{e}");
        assert!(!e.contains("neither"), "{e}");
    }
}
