//! From which format version each filter-pipeline field or behaviour exists,
//! and, at the end, the writer behaviours that changed between libtiledb
//! releases without a format version bump.

use tessera_tile::gates::Gate;

/// The delta filter's options carry a reinterpret datatype.
pub const DELTA_REINTERPRET_DATATYPE: Gate = Gate::since(19);
/// The double-delta filter's options carry a reinterpret datatype.
pub const DOUBLE_DELTA_REINTERPRET_DATATYPE: Gate = Gate::since(20);
/// Each filter sees the previous filter's output datatype (libtiledb 2.17);
/// before, every filter of a pipeline used the field's datatype.
pub const FILTER_DATATYPE_CHAINING: Gate = Gate::since(20);
/// Bit-width reduction and positive delta act on datetime and time types.
pub const REDUCTION_ON_DATETIMES: Gate = Gate::since(20);
/// ASCII strings under RLE: offsets are folded into the data tile.
pub const RLE_ASCII_OFFSETS_IN_DATA: Gate = Gate::since(12);
/// ASCII strings under dictionary encoding: offsets folded into the data tile.
pub const DICTIONARY_ASCII_OFFSETS_IN_DATA: Gate = Gate::since(13);
/// UTF-8 strings under RLE or dictionary encoding: offsets folded into the data tile.
pub const UTF8_OFFSETS_IN_DATA: Gate = Gate::since(17);

/// A libtiledb release, for writer behaviour that changed without a new
/// format version: the bytes differ, both are read the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LibtiledbRelease {
    /// Major version (2 for every release that writes format 10 or later).
    pub major: u16,
    /// Minor version: 2.17 is `minor` 17.
    pub minor: u16,
}

impl LibtiledbRelease {
    /// The newest behaviour tessera knows, its default when writing.
    pub const LATEST: LibtiledbRelease = LibtiledbRelease::new(2, 30);

    /// Release `major.minor`.
    pub const fn new(major: u16, minor: u16) -> LibtiledbRelease {
        LibtiledbRelease { major, minor }
    }

    /// Parses `"2.30.0"` or `"2.30"`.
    ///
    /// ```
    /// use tessera_filters::gates::LibtiledbRelease;
    /// assert_eq!(LibtiledbRelease::parse("2.17.5"), Some(LibtiledbRelease::new(2, 17)));
    /// assert_eq!(LibtiledbRelease::parse("two"), None);
    /// ```
    pub fn parse(s: &str) -> Option<LibtiledbRelease> {
        let mut it = s.split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        Some(LibtiledbRelease::new(major, minor))
    }
}

/// Double delta's bit size also covers the first delta, not only the double
/// deltas (libtiledb 2.29, TileDB #5506, still format 22).
pub const DOUBLE_DELTA_BITSIZE_COVERS_FIRST_DELTA: LibtiledbRelease = LibtiledbRelease::new(2, 29);
