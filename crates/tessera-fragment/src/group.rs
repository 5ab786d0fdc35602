//! TileDB groups (`format_spec/group.md`): a folder holding
//! `__tiledb_group.tdb` (empty), `__group/` (details files naming the
//! members) and `__meta/` (metadata, in the array metadata format).
//!
//! A details file `__group/__t1_t2_uuid[_v]` is a generic tile: u32 details
//! version, u64 member count, then per member u32 member version, u8 object
//! type (1 group, 2 array), u8 relative flag, u64 length and URI, u8
//! name-set flag, u64 length and name when set, and from member version 2
//! a u8 deleted flag. Version-1 files each list every member: the newest
//! alone is read. Version-2 files are replayed in timestamp order inside
//! the open window, a later entry replacing an earlier one of the same name
//! (or URI, when unnamed), deleted ones removed.

use crate::array_metadata::{read_metadata, MetadataValue};
use crate::name::list;
use crate::{FragmentError, TimestampedName};
use nom::combinator::cond;
use nom::multi::count as count_exact;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tessera_filters::{read_generic_tile, EncryptionKey};
use tessera_schema::{LEGACY_SCHEMA_FILE, SCHEMA_FOLDER};
use tessera_storage::{DirEntry, Storage};
use tessera_tile::parse::{
    fits, flag, parse, sized_text, u32_le, u64_le, u8_le, within, FieldError, PResult,
};

/// The empty file marking a group folder.
pub const GROUP_FILE: &str = "__tiledb_group.tdb";
/// The folder of a group's details files.
pub const GROUP_DETAILS_FOLDER: &str = "__group";
/// The member version from which a member carries a deleted flag.
const MEMBER_DELETED_FLAG: u32 = 2;
/// Details versions this reader knows.
const DETAILS_VERSIONS: std::ops::RangeInclusive<u32> = 1..=2;

/// What a member is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectType {
    /// A TileDB array.
    Array,
    /// Another group.
    Group,
}

/// One member of a group, as its details files name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMember {
    /// The member's name, when it was given one.
    pub name: Option<String>,
    /// Its URI as stored: relative to the group, or absolute (`file://...`).
    pub uri: String,
    /// Whether `uri` is relative to the group.
    pub relative: bool,
    /// Array or group.
    pub object_type: ObjectType,
}

impl GroupMember {
    /// The name a listing shows: its name, else the last segment of its URI.
    pub fn display_name(&self) -> &str {
        match &self.name {
            Some(n) => n,
            None => self
                .uri
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(&self.uri),
        }
    }

    /// Where the member is: a relative URI joined to the group's path, a
    /// `file://` URI as its path, any other URI as it is.
    /// `.` and `..` in a relative URI are resolved (lexically, as in a
    /// URI: a group naming `..` is its parent folder).
    pub fn path_in(&self, group: &Path) -> PathBuf {
        if self.relative {
            return join_lexical(group, &self.uri);
        }
        match self.uri.strip_prefix("file://") {
            Some(p) => PathBuf::from(p),
            None => PathBuf::from(&self.uri),
        }
    }
}

/// `rel` joined to `base`, its `.` dropped and each `..` taking away the
/// segment before it (`base` itself is left as written).
fn join_lexical(base: &Path, rel: &str) -> PathBuf {
    use std::path::Component;
    let mut out = base.to_path_buf();
    for c in Path::new(rel).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether `path` is a group folder: it has `__group/` or, before any
/// member was written, `__tiledb_group.tdb`.
pub fn is_group(storage: &dyn Storage, path: &Path) -> Result<bool, FragmentError> {
    Ok(group_marked(&list(storage, path)?))
}

/// Whether a folder's entries mark a group: `__group/` or
/// `__tiledb_group.tdb`.
pub(crate) fn group_marked(entries: &[DirEntry]) -> bool {
    entries
        .iter()
        .any(|e| (e.is_dir && e.name == GROUP_DETAILS_FOLDER) || e.name == GROUP_FILE)
}

/// What is at `path`, from one listing: an array (it has `__schema/` or
/// `__array_schema.tdb`; an array is looked for first, as libtiledb does),
/// a group (`__group/` or `__tiledb_group.tdb`), or nothing TileDB knows
/// (`None`, also for a missing folder). A store that does not answer is an
/// error, never `None`: nothing is taken for absent that was not seen.
///
/// ```
/// use std::path::Path;
/// use tessera_fragment::group::{object_type, ObjectType};
/// use tessera_storage::LocalFs;
/// let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
/// let at = |p: &str| object_type(&LocalFs, &data.join(p)).unwrap();
/// assert_eq!(at("soma/experiment_dense/experiment"), Some(ObjectType::Group));
/// assert_eq!(at("soma/experiment_dense/experiment/obs"), Some(ObjectType::Array));
/// assert_eq!(at("soma/experiment_dense/experiment/no_such_member"), None);
/// ```
pub fn object_type(
    storage: &dyn Storage,
    path: &Path,
) -> Result<Option<ObjectType>, FragmentError> {
    let entries = list(storage, path)?;
    let has = |name: &str, dir: bool| entries.iter().any(|e| e.name == name && e.is_dir == dir);
    Ok(
        if has(SCHEMA_FOLDER, true) || has(LEGACY_SCHEMA_FILE, false) {
            Some(ObjectType::Array)
        } else if group_marked(&entries) {
            Some(ObjectType::Group)
        } else {
            None
        },
    )
}

/// A group opened at a time: its members in force and where its metadata is.
#[derive(Debug, Clone)]
pub struct OpenGroup {
    /// The group folder.
    pub path: PathBuf,
    /// The members in force in the open window, in the order they were
    /// last added.
    pub members: Vec<GroupMember>,
    /// The open window's start (ms).
    pub timestamp_start: u64,
    /// The open window's end (ms).
    pub timestamp_end: u64,
    /// The details version of the newest details file in the window (1: each
    /// file lists every member; 2: files are replayed), or `None` when no
    /// member was ever written.
    pub details_version: Option<u32>,
    key: Option<EncryptionKey>,
}

impl OpenGroup {
    /// Opens the group at `path` as of the window `[t1, t2]`; `key` is the
    /// AES-256-GCM key of an encrypted group.
    ///
    /// ```
    /// use tessera_fragment::group::{ObjectType, OpenGroup};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/groups/tiledb-0.36.1/group_nested/group");
    /// let g = OpenGroup::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
    /// let ms = g.members.iter().find(|m| m.display_name() == "ms").unwrap();
    /// assert_eq!(ms.object_type, ObjectType::Group);
    /// ```
    pub fn open(
        storage: &dyn Storage,
        path: &Path,
        t1: u64,
        t2: u64,
        key: Option<EncryptionKey>,
    ) -> Result<OpenGroup, FragmentError> {
        // The details folder first: one listing for a group with members.
        // Only where it is empty (a group with no member written yet, or no
        // group at all: storage lists a missing folder as empty) is the
        // group folder itself listed, to tell the two apart.
        let dir = path.join(GROUP_DETAILS_FOLDER);
        let entries = list(storage, &dir)?;
        if entries.is_empty() && !is_group(storage, path)? {
            return Err(FragmentError::Invalid {
                what: path.display().to_string(),
                message: format!(
                    "not a TileDB group: no {GROUP_DETAILS_FOLDER}/ and no {GROUP_FILE}"
                ),
            });
        }
        let mut files: Vec<(TimestampedName, String)> = entries
            .iter()
            .filter(|e| !e.is_dir)
            .filter_map(|e| TimestampedName::parse(&e.name).map(|t| (t, e.name.clone())))
            .filter(|(t, _)| t.t1 >= t1 && t.t2 <= t2)
            .collect();
        files.sort_by(|a, b| (a.0.t1, a.0.t2, &a.1).cmp(&(b.0.t1, b.0.t2, &b.1)));
        let mut members: Vec<GroupMember> = Vec::new();
        // A version-1 newest file lists every member: read it alone.
        let v1_newest = files.last().is_some_and(|(t, _)| t.version.is_none());
        let replay = if v1_newest {
            &files[files.len() - 1..]
        } else {
            &files[..]
        };
        let paths: Vec<PathBuf> = replay.iter().map(|(_, name)| dir.join(name)).collect();
        for ((_, name), bytes) in replay.iter().zip(storage.read_files(&paths)) {
            let bytes = bytes?;
            let tile = read_generic_tile(&bytes, key.as_ref(), 0)
                .map_err(|e| FragmentError::from(e).within(name, "group details"))?;
            let entries =
                parse_details(&tile.data, name).map_err(|e| e.within(name, "group details"))?;
            for (member, deleted) in entries {
                let key_of = |m: &GroupMember| m.name.clone().unwrap_or_else(|| m.uri.clone());
                let k = key_of(&member);
                members.retain(|m| key_of(m) != k);
                if !deleted {
                    members.push(member);
                }
            }
        }
        let details_version = files.last().map(|(t, _)| match t.version {
            None => 1,
            Some(_) => 2,
        });
        Ok(OpenGroup {
            path: path.to_path_buf(),
            members,
            timestamp_start: t1,
            timestamp_end: t2,
            details_version,
            key,
        })
    }

    /// The group's AES-256-GCM key, if it was opened with one (its
    /// members open with it).
    pub fn key(&self) -> Option<&EncryptionKey> {
        self.key.as_ref()
    }

    /// The group's metadata (`__meta/`) as of the open window.
    pub fn metadata(
        &self,
        storage: &dyn Storage,
    ) -> Result<BTreeMap<String, MetadataValue>, FragmentError> {
        read_metadata(
            storage,
            &self.path,
            (self.timestamp_start, self.timestamp_end),
            self.key.as_ref(),
        )
    }
}

/// A member found by [`OpenGroup::list`]: its path of member names from
/// the listed group (`ms/RNA/X/data`), what it is, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedMember {
    /// Member names joined with `/` from the listed group.
    pub path: String,
    /// Array or group.
    pub object_type: ObjectType,
    /// The member's location.
    pub location: PathBuf,
}

/// How deep a recursive listing goes: deeper nesting is an error, not an
/// endless walk (a group may name itself or an ancestor).
const MAX_DEPTH: usize = 64;

impl OpenGroup {
    /// The members, sorted by path; with `recursive`, the members of member
    /// groups too (each opened at this group's window), under their
    /// group's path. A member group that is also one of the groups above
    /// it (a cycle) is listed but not entered again.
    pub fn list(
        &self,
        storage: &dyn Storage,
        recursive: bool,
    ) -> Result<Vec<ListedMember>, FragmentError> {
        let mut out = Vec::new();
        // The groups from this one down to the member being listed.
        let mut seen = vec![self.path.clone()];
        self.list_into(storage, recursive, "", 0, &mut seen, &mut out)?;
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn list_into(
        &self,
        storage: &dyn Storage,
        recursive: bool,
        prefix: &str,
        depth: usize,
        seen: &mut Vec<PathBuf>,
        out: &mut Vec<ListedMember>,
    ) -> Result<(), FragmentError> {
        if depth > MAX_DEPTH {
            return Err(FragmentError::Invalid {
                what: self.path.display().to_string(),
                message: format!("groups nested more than {MAX_DEPTH} deep"),
            });
        }
        for m in &self.members {
            let path = format!("{prefix}{}", m.display_name());
            let location = m.path_in(&self.path);
            out.push(ListedMember {
                path: path.clone(),
                object_type: m.object_type,
                location: location.clone(),
            });
            if !recursive || m.object_type != ObjectType::Group || seen.contains(&location) {
                continue;
            }
            seen.push(location.clone());
            let (t1, t2) = (self.timestamp_start, self.timestamp_end);
            let g = OpenGroup::open(storage, &location, t1, t2, self.key)
                .map_err(|e| e.within(&path, "group member"))?;
            g.list_into(storage, true, &format!("{path}/"), depth + 1, seen, out)?;
            // Only the groups above are a cycle: a group that is a member
            // twice (by two names) is listed under both, as libtiledb does.
            seen.pop();
        }
        Ok(())
    }
}

/// The members of one details payload, each with its deleted flag.
fn parse_details(data: &[u8], file: &str) -> Result<Vec<(GroupMember, bool)>, FragmentError> {
    parse(data, "group details", 0, details)
        .map(|(members, _)| members)
        .map_err(|e| e.in_file(file).into())
}

/// A details version (1 or 2), a `u64` member count, the members.
fn details(i: &[u8]) -> PResult<'_, Vec<(GroupMember, bool)>> {
    let (rest, version) = u32_le("details version")(i)?;
    if !DETAILS_VERSIONS.contains(&version) {
        let why = format!("{version} is not a known version (1 or 2)");
        return Err(FieldError::invalid(i, "details version", why));
    }
    let (i, count) = u64_le("member count")(rest)?;
    // Each member takes at least 15 bytes: an absurd count fails here.
    let count = fits(i, "member count", count, 15)?;
    let (i, members) = count_exact(within("group member", member), count)(i)?;
    Ok((i, members))
}

/// One member: its version, object type, relative flag, URI, optional
/// name, and from member version 2 its deleted flag.
fn member(i: &[u8]) -> PResult<'_, (GroupMember, bool)> {
    let (i, member_version) = u32_le("member version")(i)?;
    let (rest, t) = u8_le("object type")(i)?;
    let object_type = match t {
        1 => ObjectType::Group,
        2 => ObjectType::Array,
        t => {
            let why = format!("{t} is neither 1 (group) nor 2 (array)");
            return Err(FieldError::invalid(i, "object type", why));
        }
    };
    let (i, relative) = flag("relative")(rest)?;
    let (i, uri) = sized_text("URI length", "URI")(i)?;
    let (i, named) = flag("name set")(i)?;
    let (i, name) = cond(named, sized_text("name length", "name"))(i)?;
    let (i, deleted) = cond(member_version >= MEMBER_DELETED_FLAG, flag("deleted"))(i)?;
    let member = GroupMember {
        name,
        uri,
        relative,
        object_type,
    };
    Ok((i, (member, deleted.unwrap_or(false))))
}

/// A details payload, the inverse of [`parse_details`]: `version` 1 lists
/// members at member version 1 (no deleted flag: a removed member is left
/// out), version 2 at member version 2, each with its deleted flag.
pub fn encode_details(version: u32, members: &[(GroupMember, bool)]) -> Vec<u8> {
    let kept: Vec<&(GroupMember, bool)> = members
        .iter()
        .filter(|(_, deleted)| version >= MEMBER_DELETED_FLAG || !deleted)
        .collect();
    let mut b = version.to_le_bytes().to_vec();
    b.extend((kept.len() as u64).to_le_bytes());
    for (m, deleted) in kept {
        b.extend(version.to_le_bytes());
        b.push(match m.object_type {
            ObjectType::Group => 1,
            ObjectType::Array => 2,
        });
        b.push(m.relative as u8);
        b.extend((m.uri.len() as u64).to_le_bytes());
        b.extend(m.uri.as_bytes());
        match &m.name {
            Some(n) => {
                b.push(1);
                b.extend((n.len() as u64).to_le_bytes());
                b.extend(n.as_bytes());
            }
            None => b.push(0),
        }
        if version >= MEMBER_DELETED_FLAG {
            b.push(*deleted as u8);
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(version: u32, t: u8, rel: bool, uri: &str, name: Option<&str>, del: bool) -> Vec<u8> {
        let mut b = version.to_le_bytes().to_vec();
        b.push(t);
        b.push(rel as u8);
        b.extend((uri.len() as u64).to_le_bytes());
        b.extend(uri.as_bytes());
        match name {
            Some(n) => {
                b.push(1);
                b.extend((n.len() as u64).to_le_bytes());
                b.extend(n.as_bytes());
            }
            None => b.push(0),
        }
        if version >= 2 {
            b.push(del as u8);
        }
        b
    }

    /// The deleted flag exists from member version 2: a version-1 member
    /// ends after its name.
    #[test]
    fn the_deleted_flag_is_gated_by_the_member_version() {
        for (version, del) in [(1u32, false), (2, true), (2, false)] {
            let mut b = version.to_le_bytes().to_vec();
            b.extend(2u64.to_le_bytes());
            b.extend(member(version, 2, true, "x", Some("cells"), del));
            b.extend(member(version, 1, false, "file:///g", None, false));
            let got = parse_details(&b, "d").unwrap();
            assert_eq!(got.len(), 2);
            assert_eq!(got[0].0.display_name(), "cells");
            assert_eq!(got[0].1, del);
            assert_eq!(got[1].0.object_type, ObjectType::Group);
            assert_eq!(got[1].0.display_name(), "g");
            assert_eq!(got[1].0.path_in(Path::new("/a")), PathBuf::from("/g"));
        }
    }

    /// Encoding mirrors parsing: what is encoded parses back (version 1
    /// leaving removed members out), and equals the hand-built bytes.
    #[test]
    fn details_encode_as_they_parse() {
        let cells = GroupMember {
            name: Some("cells".into()),
            uri: "x".into(),
            relative: true,
            object_type: ObjectType::Array,
        };
        let g = GroupMember {
            name: None,
            uri: "file:///g".into(),
            relative: false,
            object_type: ObjectType::Group,
        };
        let members = vec![(cells, true), (g, false)];
        let v2 = encode_details(2, &members);
        let mut want = 2u32.to_le_bytes().to_vec();
        want.extend(2u64.to_le_bytes());
        want.extend(member(2, 2, true, "x", Some("cells"), true));
        want.extend(member(2, 1, false, "file:///g", None, false));
        assert_eq!(v2, want);
        assert_eq!(parse_details(&v2, "d").unwrap(), members);
        let v1 = parse_details(&encode_details(1, &members), "d").unwrap();
        assert_eq!(v1, members[1..]);
    }

    #[test]
    fn bad_details_are_errors_naming_the_field() {
        let mut b = 3u32.to_le_bytes().to_vec();
        b.extend(0u64.to_le_bytes());
        assert!(parse_details(&b, "d")
            .unwrap_err()
            .to_string()
            .contains("details version"));
        let mut b = 2u32.to_le_bytes().to_vec();
        b.extend(u64::MAX.to_le_bytes());
        assert!(parse_details(&b, "d")
            .unwrap_err()
            .to_string()
            .contains("member count"));
        let mut b = 2u32.to_le_bytes().to_vec();
        b.extend(1u64.to_le_bytes());
        b.extend(member(2, 9, true, "x", None, false));
        assert!(parse_details(&b, "d")
            .unwrap_err()
            .to_string()
            .contains("object type"));
    }
}
