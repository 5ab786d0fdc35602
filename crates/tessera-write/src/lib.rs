//! Writing TileDB arrays that libtiledb reads back.
//!
//! Each structure is encoded beside its parser in the crate that reads it
//! (`ArraySchema::encode`, `Enumeration::encode`, `Footer::encode`,
//! `TileEncoder`); this crate puts them together into arrays on disk. So
//! far: [`create_array`] (folders, schema and enumeration files, at format
//! version 22, optionally encrypted), published whole or not at all, and
//! [`FragmentWriter`] (a sparse or dense fragment, committed last), and
//! array metadata ([`metadata::put_metadata`]).

pub mod arrow;
mod atomic;
pub mod commits;
pub mod consolidate;
mod create;
pub mod delete;
mod error;
pub mod evolve;
mod folder;
mod fragment;
pub mod fragment_meta;
pub mod gates;
pub mod group;
pub mod metadata;
pub mod name;
mod open;
mod purge;
pub mod rows;

pub use create::{create_array, generic_tile_pipeline};
pub use error::WriteError;
pub use fragment::{
    BoxWriter, FragmentWriter, RowMajorWriter, SortedFragmentWriter, Walk, WriteOptions,
};
pub use rows::Rows;
