//! This crate's modules import one way only, lowest first as `ORDER`
//! lists them (the crate root on top), and no files import one another in
//! a cycle: `tessera_module_order::check` says what it checks.

/// The top-level modules, lowest first: a module may use only those
/// before it.
const ORDER: &[&str] = &[
    "error",
    "gates",
    "name",
    "atomic",
    "folder",
    "arrow",
    "open",
    "commits",
    "create",
    "fragment",
    "purge",
    "consolidate",
    "delete",
    "rows",
    "evolve",
    "fragment_meta",
    "group",
    "metadata",
];

#[test]
fn modules_import_one_way() {
    let imports = tessera_module_order::check(env!("CARGO_MANIFEST_DIR"), ORDER);
    assert!(
        imports >= ORDER.len().saturating_sub(1),
        "only {imports} imports seen: the scan is broken"
    );
}
