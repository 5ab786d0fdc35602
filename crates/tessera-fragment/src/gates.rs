//! From which format version each fragment field exists
//! (`format_spec/fragment.md`, `format_spec/array_format_history.md`).

use tessera_tile::gates::Gate;

/// Fragment metadata has a footer, an R-tree and lazily loaded sections (before: one generic tile).
pub const FOOTER: Gate = Gate::since(3);
/// Per-dimension data files; var-sized MBRs; `.ok` commit files.
pub const SPLIT_COORDINATES: Gate = Gate::since(5);
/// Validity file sizes and validity tile offsets.
pub const VALIDITY: Gate = Gate::since(7);
/// Data files named by index (`a0.tdb`) instead of by name.
pub const FILES_BY_INDEX: Gate = Gate::since(9);
/// Footer: array schema name; the footer length is always written.
pub const SCHEMA_NAME: Gate = Gate::since(10);
/// Tile mins, maxes, sums and null counts.
pub const TILE_METADATA: Gate = Gate::since(11);
/// `__fragments`, `__commits/*.wrt`, `__fragment_meta` folders. No reader
/// branches on it: a fragment's version is known only once it is found, so
/// opening lists both hierarchies and takes each fragment where it is
/// (`ArrayFolders`); the writer writes new fragments in the folders.
pub const FOLDERS: Gate = Gate::since(12);
/// Fragment-level min, max, sum, null count.
pub const FRAGMENT_METADATA_SUMMARY: Gate = Gate::since(12);
/// Footer: includes timestamps (consolidated fragments with `t.tdb`).
pub const TIMESTAMPS: Gate = Gate::since(14);
/// Footer: includes delete metadata (`dt.tdb`, `dci.tdb`).
pub const DELETE_METADATA: Gate = Gate::since(15);
/// Processed conditions section; delete and update commit files.
pub const PROCESSED_CONDITIONS: Gate = Gate::since(16);
/// Vacuum files hold paths relative to the array. No reader branches on it:
/// a vacuum file carries no version of its own, so each line is taken by its
/// shape (an absolute URI or a relative path) and matched by fragment name.
pub const RELATIVE_VACUUM_PATHS: Gate = Gate::since(19);
/// Footer: optional sections.
pub const OPTIONAL_SECTIONS: Gate = Gate::since(23);
/// Coordinates are never zipped cell by cell in a legacy `__coords.tdb`
/// tile (format 1 zipped them when the coords filters compress nothing).
pub const UNZIPPED_COORDINATES: Gate = Gate::since(2);
/// Data files of fields are named by the field's percent-encoded name (until
/// [`FILES_BY_INDEX`]).
pub const PERCENT_ENCODED_NAMES: Gate = Gate::since(8);
/// Tile metadata of nullable fixed-sized strings in dense fragments can be
/// relied on (libtiledb wrote wrong values before).
pub const DENSE_NULLABLE_STRING_TILE_METADATA: Gate = Gate::since(21);
