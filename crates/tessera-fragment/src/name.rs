//! Timestamped names (`format_spec/timestamped_name.md`).
//!
//! `__t1_t2_uuid_v` (format 5 and later, the version optional), `__t1_t2_uuid`
//! (formats 3 and 4) and `__uuid_t1[_t2]` (formats 1 and 2).

use crate::FragmentError;
use serde::Serialize;
use std::path::Path;
use tessera_storage::{DirEntry, Storage};

/// A parsed timestamped name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimestampedName {
    /// Start timestamp (ms since the epoch).
    pub t1: u64,
    /// End timestamp.
    pub t2: u64,
    /// The UUID part.
    pub uuid: String,
    /// Format version in the name, when present.
    pub version: Option<u32>,
    /// True for the `__uuid_t1[_t2]` form of formats 1 and 2.
    pub legacy_form: bool,
}

fn is_uuid(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

impl TimestampedName {
    /// Parses a name (an extension such as `.ok` or `.wrt` is removed first).
    pub fn parse(name: &str) -> Option<TimestampedName> {
        let base = name.split('.').next()?;
        let rest = base.strip_prefix("__")?;
        let parts: Vec<&str> = rest.split('_').collect();
        match parts.as_slice() {
            [uuid, t1] if is_uuid(uuid) => {
                let t = t1.parse().ok()?;
                Some(TimestampedName {
                    t1: t,
                    t2: t,
                    uuid: uuid.to_string(),
                    version: None,
                    legacy_form: true,
                })
            }
            [uuid, t1, t2] if is_uuid(uuid) => Some(TimestampedName {
                t1: t1.parse().ok()?,
                t2: t2.parse().ok()?,
                uuid: uuid.to_string(),
                version: None,
                legacy_form: true,
            }),
            [t1, t2, uuid] if is_uuid(uuid) => Some(TimestampedName {
                t1: t1.parse().ok()?,
                t2: t2.parse().ok()?,
                uuid: uuid.to_string(),
                version: None,
                legacy_form: false,
            }),
            [t1, t2, uuid, v] if is_uuid(uuid) => Some(TimestampedName {
                t1: t1.parse().ok()?,
                t2: t2.parse().ok()?,
                uuid: uuid.to_string(),
                version: Some(v.parse().ok()?),
                legacy_form: false,
            }),
            _ => None,
        }
    }

    /// The format version the name implies: its version part, 3 for the
    /// `__t1_t2_uuid` form (3 or 4; the footer tells) and 2 for the legacy form.
    pub fn implied_version(&self) -> tessera_tile::FormatVersion {
        tessera_tile::FormatVersion::new(match (self.version, self.legacy_form) {
            (Some(v), _) => v,
            (None, false) => 3,
            (None, true) => 2,
        })
    }
}

/// A folder's entries, an error naming the folder.
pub(crate) fn list(storage: &dyn Storage, p: &Path) -> Result<Vec<DirEntry>, FragmentError> {
    storage.list(p).map_err(FragmentError::from)
}

pub(crate) fn ext(name: &str) -> &str {
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

/// The last path component of a URI or relative path in a commit, vacuum or ignore file.
pub(crate) fn base_name(uri: &str) -> &str {
    uri.trim_end_matches('/').rsplit('/').next().unwrap_or(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let n = TimestampedName::parse("__1_2_0123456789abcdef0123456789abcdef_22.wrt").unwrap();
        assert_eq!((n.t1, n.t2, n.version), (1, 2, Some(22)));
        let n = TimestampedName::parse("__5_6_0123456789abcdef0123456789abcdef").unwrap();
        assert_eq!(n.implied_version().number(), 3);
        let n = TimestampedName::parse("__b4cae15e1a294904a1296510c34f19ec_1538747712566").unwrap();
        assert!(n.legacy_form);
        assert_eq!(n.t1, 1538747712566);
        let n = TimestampedName::parse(
            "__1657562300109_1657562300109_8dc3a927a28e445080d5dfd288825e1d_4294967295",
        )
        .unwrap();
        assert_eq!(n.version, Some(u32::MAX));
        assert!(TimestampedName::parse("__schema").is_none());
        assert!(TimestampedName::parse("__1_2_nothex_3").is_none());
    }
}
