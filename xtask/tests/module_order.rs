//! The tasks' modules import one way only, lowest first as listed (the
//! crate root on top), and no files import one another in a cycle:
//! `tessera_module_order::check` says what it checks.

tessera_module_order::test!(
    "common",
    "floor",
    "cases",
    "random",
    "dist",
    "bench",
    "soma",
    "maintained",
    "fixtures",
    "fuzz",
    "groups",
    "maintenance",
    "sequences",
    "s3_maintained",
    "write_async",
    "maintain_async",
    "writes",
);
