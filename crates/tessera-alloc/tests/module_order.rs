//! This crate is one file (with inline modules): its paths resolve, and
//! `tessera_module_order::check` finds no module outside an empty order.

#[test]
fn modules_import_one_way() {
    tessera_module_order::check(env!("CARGO_MANIFEST_DIR"), &[]);
}
