#![no_main]
//! R-trees, before and after format 5, with fixed and var-sized dimensions.
use std::sync::OnceLock;
use tessera_schema::{list_schemas, load_schema, ArraySchema};
use tessera_tile::{storage::LocalFs, FormatVersion};

fn schema() -> &'static ArraySchema {
    static S: OnceLock<ArraySchema> = OnceLock::new();
    S.get_or_init(|| {
        let a = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/tiledb-0.36.1/sparse_strings/array");
        let f = list_schemas(&LocalFs, &a).unwrap();
        load_schema(&LocalFs, &a, f.last().unwrap(), None).unwrap()
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let v = FormatVersion(if data[0] % 2 == 0 { 4 } else { 22 });
    if let Ok(t) = tessera_fragment::RTree::parse(&data[1..], v, &schema().dimensions) {
        let _ = t.tiles_overlapping(&|_| tessera_fragment::Overlap::Partial);
    }
});
