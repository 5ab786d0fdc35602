//! Array format versions, and the version gates of this crate's structures.
//!
//! Each crate keeps one `gates` module like this one: the single place that
//! says from which format version a field exists. Parsers consult these
//! constants instead of scattering version numbers through the code.

use serde::Serialize;
use std::fmt;

/// The array format version written in schemas, fragments and generic
/// tiles. Its number is private: code branches on it only through
/// [`FormatVersion::has`] and a [`Gate`] of a `gates` module, so every
/// version-dependent field is named in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct FormatVersion(u32);

/// The format version from which a field or structure exists. Only
/// [`FormatVersion::has`] reads it; each crate's `gates` module names its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate(u32);

impl Gate {
    /// A gate opening at format version `version`.
    pub const fn since(version: u32) -> Gate {
        Gate(version)
    }

    /// The version the gate opens at (for messages and tests).
    pub const fn version(self) -> FormatVersion {
        FormatVersion(self.0)
    }
}

impl FormatVersion {
    /// The newest format version tessera knows (TileDB 2.30).
    pub const LATEST: FormatVersion = FormatVersion(23);

    /// The version numbered `n`, as read off disk.
    pub const fn new(n: u32) -> FormatVersion {
        FormatVersion(n)
    }

    /// The version's number, to show or to write.
    pub const fn number(self) -> u32 {
        self.0
    }

    /// True when the field or structure `gate` names exists in this version.
    pub fn has(self, gate: Gate) -> bool {
        self.0 >= gate.0
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

/// Version 11: cells are never split across the chunks of a tile. No
/// reader branches on it: readers work in bytes, so a cell split across
/// chunks is handled in every version (a chunk is wanted when any byte of a
/// wanted cell lies in it; runs of cells are cut at chunk bounds by byte).
pub const CELLS_NOT_SPLIT_ACROSS_CHUNKS: Gate = Gate::since(11);
