//! Pages of pictures (`A.view()`, `G.view()`): the options as Python
//! passes them, and the page as the HTML a notebook shows and the
//! document a file holds.

use crate::error::{py_err, py_msg};
use pyo3::prelude::*;
use tessera_view::{Page, ViewOptions};

/// What Python's `view(...)` passes: `(attr, subarray, dims, budget,
/// pixels)`, `subarray` as `(dimension, low, high)` in text.
pub type ViewArgs = (
    Option<String>,
    Option<Vec<(String, String, String)>>,
    Option<Vec<String>>,
    u64,
    u32,
);

/// The options `args` give.
pub fn options(args: ViewArgs) -> PyResult<ViewOptions> {
    let (attr, subarray, dims, budget, pixels) = args;
    if pixels == 0 || budget == 0 {
        return Err(py_msg("view: pixels and budget must be positive"));
    }
    Ok(ViewOptions {
        attribute: attr,
        subarray: subarray.unwrap_or_default(),
        dims,
        budget,
        max_pixels: pixels,
        ..ViewOptions::default()
    })
}

/// Renders a page with the GIL released: `(fragment, document)`.
pub fn render(
    py: Python<'_>,
    make: impl FnOnce() -> Result<Page, tessera_view::ViewError> + Send,
) -> PyResult<(String, String)> {
    let page = py.detach(make).map_err(py_err)?;
    Ok((page.fragment(), page.document()))
}
