//! TileDB array folders: which fragments are committed and visible at a
//! timestamp range, what each holds, and where each tile lives.
//!
//! [`OpenArray::open`] reads an array folder (`format_spec/array_file_hierarchy.md`):
//! schemas, fragments of both hierarchies, commit, ignore and vacuum files,
//! delete commits. Each visible fragment's footer is read eagerly
//! ([`FragmentMetadata`]); its R-tree and tile offsets are read on first use,
//! one section at a time. Version gates live in [`gates`].
//!
//! ```
//! use tessera_fragment::OpenArray;
//! use tessera_storage::LocalFs;
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_1d_fragments/array");
//! let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
//! assert_eq!(a.fragments.len(), 3);
//! for f in &a.fragments {
//!     println!("{} v{} {} cells", f.name, f.version(), f.total_cell_num());
//! }
//! ```

pub mod array;
pub mod array_metadata;
pub mod condition;
pub mod error;
pub mod footer;
pub mod gates;
pub mod group;
mod info;
pub mod metadata;
pub mod name;
mod prefetch;
pub mod rtree;
pub mod tile_metadata;

pub use array::{DeleteCondition, OpenArray, SkippedFragment};
pub use condition::{Condition, UpdateValue};
pub use error::FragmentError;
pub use footer::Footer;
pub use metadata::{Field, FileKind, FragmentMetadata, SectionWants};
pub use name::TimestampedName;
pub use rtree::{Overlap, RTree};
pub use tile_metadata::{FieldSummary, Sum, TileBounds};
