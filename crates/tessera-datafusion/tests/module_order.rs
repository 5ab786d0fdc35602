//! This crate's modules import one way only, lowest first as `ORDER`
//! lists them (the crate root on top), and no files import one another in
//! a cycle: `tessera_module_order::check` says what it checks.

/// The top-level modules, lowest first: a module may use only those
/// before it.
const ORDER: &[&str] = &[
    "error",
    "tokens",
    "describe",
    "filter",
    "stats",
    "table",
    "partition",
    "scan",
    "provider",
];

#[test]
fn modules_import_one_way() {
    let imports = tessera_module_order::check(env!("CARGO_MANIFEST_DIR"), ORDER);
    assert!(
        imports >= ORDER.len().saturating_sub(1),
        "only {imports} imports seen: the scan is broken"
    );
}
