//! Reading one tile of one field of a fragment: the byte ranges, the filter
//! pipelines (with the encryption filter when the array has a key), and the
//! var-sized offsets rules.
//!
//! One concern per file, lowest first: `spec` (how a field is stored, a
//! decoded tile), `fetch` (tile bytes read ahead), `plan` (runs of tiles fetched
//! in batches and decoded), `tile` (one
//! tile unfiltered), `var` (var-sized tiles), `runs` (cells decoded
//! straight to their destinations).

mod fetch;
mod plan;
mod runs;
mod spec;
mod tile;
mod var;

pub use fetch::*;
pub use plan::*;
pub(crate) use runs::*;
pub use spec::*;
pub use tile::*;
pub use var::*;
