#![no_main]
//! Generic tiles: header, pipeline, chunks, every filter's reverse path.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tessera_filters::read_generic_tile(
        data,
        Some(&tessera_filters::EncryptionKey::new([7u8; 32])),
        0,
    );
});
