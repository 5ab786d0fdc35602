//! What the tests share: a sparse matrix array of small tiles.

/// A new, empty 2-D sparse array at a fresh temporary path named after
/// `name`: int64 `soma_dim_0` and `soma_dim_1` (tiles of four rows and
/// three columns, seven cells a data tile) and one `soma_data` of
/// `value_type` (TileDB's name of a datatype).
pub fn small_tiled_array(name: &str, value_type: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "tessera-soma-{name}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let doc = tessera::schema::json::schema_from_json(&serde_json::json!({
        "array_type": "sparse", "capacity": 7,
        "dimensions": [
            {"name": "soma_dim_0", "type": "INT64", "domain": [0, 999], "tile_extent": 4},
            {"name": "soma_dim_1", "type": "INT64", "domain": [0, 999], "tile_extent": 3}],
        "attributes": [{"name": "soma_data", "type": value_type}],
    }))
    .unwrap();
    tessera::write::create_array(&dir, &doc, None, None).unwrap();
    dir
}
