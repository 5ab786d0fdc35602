//! The dense reader: tiles of every fragment placed into the result, band
//! by band, in parallel; fill values where nothing was written.
//!
//! One step a file, lowest first: `subarray` (the cells asked for and
//! their result positions), `fragments` (which fragments apply, in what
//! order, and which write cells again), `tile_grid` (one fragment's tiles
//! and their cells' places), `place` (outputs, and the runs and cells
//! copied into them), `group_fetch` (groups' batches begun ahead on object
//! stores), `placer` (one fragment's tiles decoded and placed, band by
//! band), `assemble` (columns, conditions, global order); beside them,
//! `prune` (which tiles of a piece metadata rules out, before a read).

mod assemble;
mod fragments;
mod group_fetch;
mod place;
mod placer;
mod prune;
mod reader;
mod subarray;
mod tile_grid;

pub use prune::{dense_tiles_may_match, TileTally};
pub(crate) use prune::{DensePrune, Verdict};
pub(crate) use reader::DenseReader;
