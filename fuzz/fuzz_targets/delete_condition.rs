#![no_main]
//! Serialized delete conditions (depth-limited trees).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tessera_fragment::Condition::parse(data);
});
