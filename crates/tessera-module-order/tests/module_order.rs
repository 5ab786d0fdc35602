//! This crate's modules import one way only, lowest first as `ORDER`
//! lists them (the crate root on top), and no files import one another in
//! a cycle: `tessera_module_order::check` says what it checks.

/// The top-level modules, lowest first: a module may use only those
/// before it.
const ORDER: &[&str] = &["paths", "import", "graph"];

#[test]
fn modules_import_one_way() {
    let imports = tessera_module_order::check(env!("CARGO_MANIFEST_DIR"), ORDER);
    assert!(
        imports >= ORDER.len().saturating_sub(1),
        "only {imports} imports seen: the scan is broken"
    );
}

/// The Python bindings' order, checked from here: their library is an
/// extension module no Rust test harness links (`tessera-python` has no
/// Rust tests).
const PYTHON_ORDER: &[&str] = &[
    "error", "convert", "ranges", "read", "array", "group", "write",
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
