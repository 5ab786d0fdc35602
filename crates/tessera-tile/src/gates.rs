//! Array format versions, and the version gates of this crate's structures.
//!
//! Each crate keeps one `gates` module like this one: the single place that
//! says from which format version a field exists. Parsers consult these
//! constants instead of scattering version numbers through the code.

use serde::Serialize;
use std::fmt;

/// The array format version written in schemas, fragments and generic tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct FormatVersion(pub u32);

impl FormatVersion {
    /// The newest format version tessera knows (TileDB 2.30).
    pub const LATEST: FormatVersion = FormatVersion(23);

    /// True when a field introduced in `since` exists in this version.
    pub fn has(self, since: u32) -> bool {
        self.0 >= since
    }

    /// True for versions tessera can decode.
    pub fn is_known(self) -> bool {
        (1..=Self::LATEST.0).contains(&self.0)
    }
}

impl fmt::Display for FormatVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Version 11: cells are never split across the chunks of a tile.
pub const CELLS_NOT_SPLIT_ACROSS_CHUNKS: u32 = 11;
