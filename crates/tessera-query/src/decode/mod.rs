//! Reading one tile of one field of a fragment: the byte ranges, the filter
//! pipelines (with the encryption filter when the array has a key), and the
//! var-sized offsets rules.
//!
//! One concern per file, lowest first: `spec` (how a field is stored, a
//! decoded tile), `fetch` (tile bytes read ahead), `tile_bytes` (one
//! tile's bytes, bounded sizes and errors), `tile` (one tile unfiltered),
//! `var` (var-sized tiles), `runs` (cells decoded straight to their
//! destinations), `plan` (runs of tiles fetched in batches and decoded).

mod fetch;
mod plan;
mod runs;
mod spec;
mod tile;
mod tile_bytes;
mod var;

pub use fetch::*;
pub use plan::*;
pub(crate) use runs::*;
pub use spec::*;
pub use tile::*;
pub use tile_bytes::*;
pub use var::*;
