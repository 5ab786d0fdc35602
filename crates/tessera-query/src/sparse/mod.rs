//! The sparse readers. One step a file, lowest first: `tiles` (the tiles
//! a read touches, decoded with the cells inside the subarray), `direct`
//! (the fast path: cells copied straight from their tiles where no
//! deduplication, condition or sort is needed), `cells` (cells' fields as
//! conditions read them, and their order), `general` (every other read:
//! deduplication, deletes, conditions, sort).

mod cells;
mod direct;
mod general;
mod tiles;
