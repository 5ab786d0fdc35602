//! `tessera._native`: the Rust half of the `tessera` Python package.
//!
//! The Python half (`python/tessera/`) gives the familiar shapes
//! (`A.df[...]`, `A.multi_index[...]`, schema objects); this half opens
//! arrays and groups, runs reads on a thread of their own with the GIL
//! released, and hands results to pyarrow through the Arrow C stream
//! interface without copying. Structured answers (schema, fragments,
//! metadata) cross as JSON text in the forms the CLI prints.

use pyo3::prelude::*;

mod array;
mod convert;
mod error;
mod files;
mod group;
mod maintenance;
mod matrix;
mod objects;
mod ranges;
mod read;
mod registry;
mod view;
mod write;

pub use error::TesseraError;

/// Large buffers (tiles, result columns) get transparent huge pages: see
/// `tessera-alloc`. Rust's allocations in this module only; buffers
/// handed to pyarrow are freed through their release callbacks, here.
#[global_allocator]
static ALLOC: tessera_alloc::HugePages = tessera_alloc::HugePages;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Read here, with the GIL held, not by the allocator on a read thread.
    tessera_alloc::set_from_environment();
    m.add("TesseraError", m.py().get_type::<TesseraError>())?;
    m.add_class::<array::Array>()?;
    m.add_class::<group::Group>()?;
    m.add_class::<registry::LabelRegistry>()?;
    m.add_function(wrap_pyfunction!(array::open_array, m)?)?;
    m.add_function(wrap_pyfunction!(group::open_group, m)?)?;
    m.add_function(wrap_pyfunction!(group::object_type, m)?)?;
    m.add_function(wrap_pyfunction!(write::create, m)?)?;
    m.add_function(wrap_pyfunction!(write::check_schema, m)?)?;
    m.add_function(wrap_pyfunction!(write::write, m)?)?;
    m.add_function(wrap_pyfunction!(write::write_bands, m)?)?;
    m.add_function(wrap_pyfunction!(objects::create_group, m)?)?;
    m.add_function(wrap_pyfunction!(objects::change_members, m)?)?;
    m.add_function(wrap_pyfunction!(objects::put_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(objects::evolve, m)?)?;
    m.add_function(wrap_pyfunction!(objects::delete_cells, m)?)?;
    m.add_function(wrap_pyfunction!(maintenance::consolidate, m)?)?;
    m.add_function(wrap_pyfunction!(maintenance::vacuum, m)?)?;
    m.add_function(wrap_pyfunction!(maintenance::delete_fragments, m)?)?;
    m.add_function(wrap_pyfunction!(maintenance::maintain_tree, m)?)?;
    m.add_function(wrap_pyfunction!(files::files_list, m)?)?;
    m.add_function(wrap_pyfunction!(files::files_size, m)?)?;
    m.add_function(wrap_pyfunction!(files::files_is_object, m)?)?;
    m.add_function(wrap_pyfunction!(files::files_read, m)?)?;
    m.add_function(wrap_pyfunction!(files::files_put, m)?)?;
    m.add_function(wrap_pyfunction!(files::files_delete, m)?)?;
    m.add_function(wrap_pyfunction!(files::files_delete_folder, m)?)?;
    m.add_function(wrap_pyfunction!(files::files_create_folder, m)?)?;
    Ok(())
}
