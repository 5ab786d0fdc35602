//! This crate's modules import one way only, lowest first as listed (the
//! crate root on top), and no files import one another in a cycle:
//! `tessera_module_order::check` says what it checks.

tessera_module_order::test!(
    "error",
    "kept",
    "mapped",
    "readable",
    "listable",
    "hints",
    "storage",
    "write",
    "outbox",
    "local",
    "write_async",
    "memory",
    "recording",
    "vanished",
    "need",
    "fetched",
    "side_by_side",
    "location",
    "staged",
);
