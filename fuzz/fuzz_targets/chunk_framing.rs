#![no_main]
//! The chunk framing of data tiles, tile after tile.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut r = tessera_tile::Reader::new(data, "fuzz");
    while !r.is_empty() {
        if tessera_tile::tile::ChunkList::parse(&mut r).is_err() {
            break;
        }
    }
});
