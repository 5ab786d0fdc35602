//! From which format version the writers write each thing as libtiledb
//! does: the one place the writers branch on an array's version. Gates
//! that name a field of a structure are the parsers' (each crate's
//! `gates`); these name what a writer does differently.

use tessera_tile::gates::Gate;

/// The oldest format tessera writes fragments, footers and fragment
/// metadata files at: libtiledb writes fragments at the schema's version,
/// and arrays of format 16 (libtiledb 2.13) and later are checked against
/// libtiledb's own bytes.
pub const WRITTEN_FRAGMENTS: Gate = Gate::since(16);
/// Commits consolidate into one `.con` file (the `__commits` folder).
pub use tessera_fragment::gates::FOLDERS as CONSOLIDATED_COMMITS;
/// Vacuum files list paths relative to the array (before: absolute URIs).
pub use tessera_fragment::gates::RELATIVE_VACUUM_PATHS;
/// Sparse consolidations keep each cell's timestamp by default (libtiledb's
/// `consolidation_with_timestamps_min_version`).
pub const CONSOLIDATION_TIMESTAMPS: Gate = Gate::since(15);
/// Consolidations keep delete metadata: the versions delete commits delete,
/// marked (libtiledb's `deletes_min_version`).
pub const CONSOLIDATION_DELETE_METADATA: Gate = Gate::since(16);
/// Schema evolution writes a dimension's inherited filters as its own
/// (libtiledb from 2.17; 2.13 kept them inherited). Both forms read alike.
pub const EVOLVED_DIMENSION_FILTERS: Gate = Gate::since(20);
