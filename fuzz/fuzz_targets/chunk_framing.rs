#![no_main]
//! The chunk framing of data tiles, tile after tile.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    while at < data.len() {
        match tessera_tile::tile::ChunkList::parse(&data[at..], at as u64) {
            // A framing takes at least its count; stop on none taken.
            Ok(list) if list.framed_len > 0 => at += list.framed_len,
            _ => break,
        }
    }
});
