#![no_main]
//! Enumeration payloads.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tessera_schema::Enumeration::parse(data);
});
