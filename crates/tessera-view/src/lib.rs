//! Pictures of TileDB arrays and groups: one self-contained HTML page
//! (inline SVG and PNG, no script, no network) with
//!
//! - the schema as tables (dimensions, attributes, filters, fill values,
//!   enumerations);
//! - the fragments on a timeline and their non-empty domains over the
//!   domain (rectangles for two dimensions, bars for one), consolidated and
//!   replaced fragments marked, and what consolidation would merge;
//! - the tile grid, each tile shaded by its bytes on disk;
//! - for a dense array an attribute over a 2-D slice as an image, for a
//!   sparse array the density of its cells;
//! - for a group, its member tree linked to a section per array.
//!
//! It reads metadata, and cells in batches of [`ViewOptions::budget`]
//! summed into the image as they come: memory stays bounded on arrays
//! larger than memory.
//!
//! ```
//! use tessera_view::{view, ViewOptions};
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
//! let page = view(path.as_ref(), &ViewOptions::default(), (0, u64::MAX), None).unwrap();
//! let html = page.document();
//! assert!(html.contains(r#"class="fragments""#) && html.contains("data:image/png;base64,"));
//! ```

pub mod cells;
pub mod colour;
pub mod error;
pub mod fragments;
pub mod group;
pub mod html;
pub mod options;
pub mod page;
pub mod plane;
pub mod png;
pub mod schema;
pub mod tiles;

pub use error::ViewError;
pub use group::{folder_size, group_page};
pub use options::{ArrayOptions, ViewOptions};
pub use page::{array_page, array_sections, Page};

use std::path::Path;
use std::sync::Arc;
use tessera::filters::EncryptionKey;
use tessera::fragment::group::{is_group, OpenGroup};
use tessera::fragment::OpenArray;
use tessera::query::ReadSession;

/// The page of the array or group at `path` (local, or a URI), opened at
/// the window `timestamps` (ms) with `key`.
pub fn view(
    path: &Path,
    options: &ViewOptions,
    timestamps: (u64, u64),
    key: Option<EncryptionKey>,
) -> Result<Page, ViewError> {
    let path = tessera::local_path(path);
    let storage = tessera::storage_for(path)?;
    if is_group(&*storage, path)? {
        let g = OpenGroup::open(&*storage, path, timestamps.0, timestamps.1, key)?;
        return group::group_page(&storage, &g, options);
    }
    let (t1, t2) = timestamps;
    let array = OpenArray::open(&*storage, path, t1, t2, key)?;
    array_page(&ReadSession::new(storage, Arc::new(array)), options)
}
