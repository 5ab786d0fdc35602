#![no_main]
//! Array schema payloads of every version.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tessera_schema::ArraySchema::parse(data, "__1_1_0123456789abcdef0123456789abcdef");
});
