//! Where a dense tile's cells come from: each tile position names the
//! written cell it takes, or padding; runs of positions take consecutive
//! cells.

/// A tile position outside the box written: padding, not a written cell.
pub(crate) const FILL: usize = usize::MAX;

/// A run of a tile's cells that are consecutive in the box too: `len`
/// cells from tile position `at`, taken from box place `place` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub at: usize,
    pub place: usize,
    pub len: usize,
}
