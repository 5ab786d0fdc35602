#![no_main]
//! Each filter's reverse path on arbitrary chunks: the first bytes pick the
//! version, the datatype and a pipeline; the rest is the tile.
use tessera_filters::{fuzzing::pipeline_from_selectors, TileDecoder};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some((p, ctx, tile)) = pipeline_from_selectors(data) {
        let _ = TileDecoder::new(&p, tile, &ctx).and_then(|d| d.decode());
        let _ = TileDecoder::new(&p, tile, &ctx).and_then(|d| d.decode_strings());
    }
});
