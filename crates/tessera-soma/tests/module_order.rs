//! This crate's modules import one way only, lowest first as listed (the
//! crate root on top): `tessera_module_order::check` says what it checks.

tessera_module_order::test!("error", "positions", "registration", "csr", "bands");
