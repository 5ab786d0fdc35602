//! The sparse readers. One step a file, lowest first: `tiles` (the tiles
//! a read touches, decoded with the cells inside the subarray), `plan`
//! (whether a read takes a fast path: nothing deduplicated or sorted),
//! `whole` (the fast path decoding whole tiles straight into the result),
//! `picked` (the fast path picking the cells inside of cut tiles), `cells`
//! (cells' fields as conditions read them, and their order), `deletes`
//! (delete commits applied or marked), `reader` (the sparse reader,
//! [`SparseReader`]: the fast paths where they apply, else every other
//! read: deduplication, deletes, conditions, sort).

mod cells;
mod concurrent;
mod deletes;
mod packed;
mod picked;
mod plan;
mod reader;
mod tiles;
mod whole;

pub(crate) use reader::SparseReader;
pub(crate) use tiles::sparse_tiles;
