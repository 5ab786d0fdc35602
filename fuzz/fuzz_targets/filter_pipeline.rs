#![no_main]
//! Filter pipeline serialization, for every version and field datatype.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let version = tessera_tile::FormatVersion::new(1 + data[0] as u32 % 23);
    let dt = tessera_tile::Datatype::from_id(data[1] % 44).unwrap_or(tessera_tile::Datatype::Int32);
    let _ = tessera_filters::FilterPipeline::parse(&data[2..], 2, version, dt);
});
