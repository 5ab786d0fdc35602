//! Shared by the fuzz targets: a real schema with fixed and var-sized dimensions.
use std::sync::OnceLock;
use tessera_schema::{list_schemas, load_schema, ArraySchema};
use tessera_storage::LocalFs;

pub fn schema() -> &'static ArraySchema {
    static S: OnceLock<ArraySchema> = OnceLock::new();
    S.get_or_init(|| {
        let a = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/tiledb-0.36.1/sparse_strings/array");
        let f = list_schemas(&LocalFs, &a).unwrap();
        load_schema(&LocalFs, &a, f.last().unwrap(), None).unwrap()
    })
}
