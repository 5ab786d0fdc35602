#![no_main]
//! Each filter's reverse path on arbitrary chunks: the first bytes pick the
//! version, the datatype and a pipeline; the rest is the tile.
use tessera_filters::{fuzzing::pipeline_from_selectors, unfilter_tile, unfilter_var_string_tile};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some((p, ctx, tile)) = pipeline_from_selectors(data) {
        let _ = unfilter_tile(&p, tile, &ctx);
        let _ = unfilter_var_string_tile(&p, tile, &ctx);
    }
});
