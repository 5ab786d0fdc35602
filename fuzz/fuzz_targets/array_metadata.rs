#![no_main]
//! Array metadata entries.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut m = std::collections::BTreeMap::new();
    let _ = tessera_fragment::array_metadata::apply_entries(data, &mut m);
    for v in m.values() {
        let _ = v.to_json();
    }
});
