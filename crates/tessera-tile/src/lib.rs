//! On-disk primitives of the TileDB array format.
//!
//! This is the lowest layer of tessera. It knows nothing about schemas or
//! fragments; it gives the layers above:
//!
//! * [`Datatype`], [`Layout`], [`ArrayType`]: the enums stored on disk, with
//!   their TileDB ids, names and sizes;
//! * [`FormatVersion`]: the array format version and [`gates`], the one place
//!   that says from which version each field of this crate's structures exists;
//! * [`parse`]: the `nom` field parsers every structure's decoder is built
//!   from, whose errors ([`ParseError`]) name the file, the structure, the
//!   field and the byte offset, and which check every length read off disk
//!   against the bytes present before allocating;
//! * [`tile`]: the chunk framing of a data tile, and [`generic`]: the header of
//!   a generic tile.
//!
//! Decoders here are sans-IO: they take bytes and return structures, so any
//! storage (the local filesystem, object stores, bytes a browser fetched)
//! can feed them.
//!
//! ```
//! use tessera_tile::tile::ChunkList;
//! // A tile with one chunk of 4 original bytes, stored unfiltered.
//! let mut bytes = Vec::new();
//! bytes.extend_from_slice(&1u64.to_le_bytes());
//! bytes.extend_from_slice(&4u32.to_le_bytes()); // original length
//! bytes.extend_from_slice(&4u32.to_le_bytes()); // filtered length
//! bytes.extend_from_slice(&0u32.to_le_bytes()); // metadata length
//! bytes.extend_from_slice(&[1, 2, 3, 4]);
//! let chunks = ChunkList::parse(&bytes, 0).unwrap();
//! assert_eq!(chunks.original_size(), 4);
//! ```

pub mod datatype;
pub mod error;
pub mod gates;
pub mod generic;
pub mod hex;
pub mod parse;
pub mod tile;

pub use datatype::{ArrayType, Datatype, Layout};
pub use error::{ParseError, ParseErrorKind};
pub use gates::{FormatVersion, Gate};
