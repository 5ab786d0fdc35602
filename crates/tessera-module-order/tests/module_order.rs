//! This crate's modules import one way only, lowest first as listed (the
//! crate root on top), and no files import one another in a cycle:
//! `tessera_module_order::check` says what it checks.

tessera_module_order::test!("paths", "import", "graph");

/// The Python bindings' order, checked from here: their library is an
/// extension module no Rust test harness links (`tessera-python` has no
/// Rust tests).
const PYTHON_ORDER: &[&str] = &[
    "error",
    "convert",
    "ranges",
    "read",
    "matrix",
    "registry",
    "view",
    "array",
    "group",
    "write",
    "files",
    "objects",
    "maintenance",
];

#[test]
fn the_python_bindings_import_one_way() {
    let python = concat!(env!("CARGO_MANIFEST_DIR"), "/../tessera-python");
    let imports = tessera_module_order::check(python, PYTHON_ORDER);
    assert!(
        imports >= PYTHON_ORDER.len() - 1,
        "only {imports} imports seen"
    );
}
