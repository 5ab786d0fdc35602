//! Writing TileDB arrays that libtiledb reads back.
//!
//! Each structure is encoded beside its parser in the crate that reads it
//! (`ArraySchema::encode`, `Enumeration::encode`, `Footer::encode`,
//! `TileEncoder`); this crate puts them together into arrays and groups
//! through [`WritableStorage`](tessera_storage::WritableStorage), so
//! a local folder and an object store are written alike:
//! - [`create_array`]: folders, schema and enumeration files, at format
//!   version 22, optionally encrypted, published whole or not at all;
//! - [`FragmentWriter`], [`SortedFragmentWriter`], [`RowMajorWriter`] and
//!   [`BoxWriter`]: sparse and dense fragments, committed last, from
//!   [`Rows`] of JSON or [`arrow`] record batches; [`AsyncFragmentWriter`]
//!   the same, its I/O awaited on the caller's runtime;
//! - [`metadata`] (array metadata), [`delete`] (delete commits),
//!   [`evolve`] (schema evolution) and [`group`] (groups and their
//!   members);
//! - consolidation and vacuum: of fragments ([`consolidate`]), commits
//!   ([`commits`]), fragment metadata ([`fragment_meta`]) and array and
//!   group metadata ([`metadata`]); [`maintain_async`] the same,
//!   awaited on the caller's runtime.

pub mod arrow;
mod atomic;
mod carry;
pub mod commits;
pub mod consolidate;
mod consolidate_plan;
mod create;
pub mod delete;
mod error;
pub mod evolve;
mod folder;
mod fragment;
pub mod fragment_meta;
pub mod gates;
pub mod group;
pub mod maintain_async;
pub mod metadata;
pub mod name;
mod open;
mod purge;
pub mod rows;

pub use create::{create_array, generic_tile_pipeline};
pub use error::WriteError;
pub use fragment::{
    latest_schema, AsyncFragmentWriter, BoxWriter, Duplicates, FragmentWriter, RowMajorWriter,
    SortedFragmentWriter, Walk, WriteOptions,
};
pub use rows::Rows;
