//! One module per subcommand: its arguments and what it does.

pub mod aggregate;
#[cfg(feature = "sql")]
pub mod cluster;
pub mod commits;
pub mod consolidate;
pub mod create;
pub mod delete;
pub mod dump_tile;
pub mod evolve;
pub mod fragments;
pub mod group;
pub mod info;
pub mod ls;
pub mod meta;
pub mod read;
pub mod schema;
#[cfg(feature = "sql")]
pub mod sql;
pub mod tree;
pub mod vacuum;
pub mod verify;
pub mod view;
pub mod write;
mod write_box;
