#![no_main]
//! Timestamped names of fragments, commits and schemas.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Some(n) = tessera_fragment::TimestampedName::parse(s) {
            let _ = n.implied_version();
        }
        let _ = tessera_schema::schema::parse_timestamps(s);
    }
});
