//! This crate's modules import one way only, lowest first as listed (the
//! crate root on top), and no files import one another in a cycle:
//! `tessera_module_order::check` says what it checks.

tessera_module_order::test!(
    "error",
    "gates",
    "name",
    "atomic",
    "folder",
    "arrow",
    "open",
    "carry",
    "commits",
    "create",
    "fragment",
    "purge",
    "consolidate_plan",
    "consolidate",
    "delete",
    "rows",
    "evolve",
    "fragment_meta",
    "group",
    "metadata",
    "maintain_async",
);
