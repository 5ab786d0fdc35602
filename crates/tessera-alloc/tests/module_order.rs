//! This crate's modules import one way only, lowest first as listed (the
//! crate root on top), and no files import one another in a cycle:
//! `tessera_module_order::check` says what it checks.

tessera_module_order::test!("madvise", "heap");
