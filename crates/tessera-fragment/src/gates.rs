//! From which format version each fragment field exists
//! (`format_spec/fragment.md`, `format_spec/array_format_history.md`).

/// Fragment metadata has a footer, an R-tree and lazily loaded sections (before: one generic tile).
pub const FOOTER: u32 = 3;
/// Per-dimension data files; var-sized MBRs; `.ok` commit files.
pub const SPLIT_COORDINATES: u32 = 5;
/// Validity file sizes and validity tile offsets.
pub const VALIDITY: u32 = 7;
/// Data files named by index (`a0.tdb`) instead of by name.
pub const FILES_BY_INDEX: u32 = 9;
/// Footer: array schema name; the footer length is always written.
pub const SCHEMA_NAME: u32 = 10;
/// Tile mins, maxes, sums and null counts.
pub const TILE_METADATA: u32 = 11;
/// `__fragments`, `__commits/*.wrt`, `__fragment_meta` folders.
pub const FOLDERS: u32 = 12;
/// Fragment-level min, max, sum, null count.
pub const FRAGMENT_METADATA_SUMMARY: u32 = 12;
/// Footer: includes timestamps (consolidated fragments with `t.tdb`).
pub const TIMESTAMPS: u32 = 14;
/// Footer: includes delete metadata (`dt.tdb`, `dci.tdb`).
pub const DELETE_METADATA: u32 = 15;
/// Processed conditions section; delete and update commit files.
pub const PROCESSED_CONDITIONS: u32 = 16;
/// Vacuum files hold paths relative to the array.
pub const RELATIVE_VACUUM_PATHS: u32 = 19;
/// Footer: optional sections.
pub const OPTIONAL_SECTIONS: u32 = 23;
