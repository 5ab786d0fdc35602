#![no_main]
//! R-trees, before and after format 5, with fixed and var-sized dimensions.
#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let v = tessera_tile::FormatVersion::new(if data[0].is_multiple_of(2) { 4 } else { 22 });
    if let Ok(t) = tessera_fragment::RTree::parse(&data[1..], v, &common::schema().dimensions) {
        let _ = t.tiles_overlapping(&|_| tessera_fragment::Overlap::Partial);
    }
});
