#![no_main]
//! Fragment footers, against a real schema of two attributes and two dimensions.
#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tessera_fragment::footer::Footer::parse(data, common::schema(), 0);
    let _ = tessera_fragment::footer::peek_schema_name(data);
});
