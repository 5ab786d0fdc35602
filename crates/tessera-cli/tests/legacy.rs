//! Arrays written by old TileDB releases (`testdata/legacy`, see its
//! README).

mod common;

use common::tessera;
use std::path::PathBuf;

fn legacy() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/legacy");
    assert!(p.exists(), "{} is absent", p.display());
    Some(p)
}

#[test]
fn legacy_arrays_read_as_their_readme_says() {
    let Some(root) = legacy() else { return };
    let a = |n: &str| root.join(n).display().to_string();

    // TileDB 1.4 (format 1): coordinates in one __coords.tdb file.
    let (ok, out, err) = tessera(&[
        "read",
        &a("non_split_coords_v1_4_0"),
        "--subarray",
        "d1=1:4",
        "--subarray",
        "d2=10:10",
        "--layout",
        "row-major",
    ]);
    assert!(ok, "{err}");
    let vals: Vec<i64> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["a"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(vals, vec![1, 2, 3, 4]);

    // TileDB 2.4 (format 10): one cell at the empty string; a var tile with no chunks.
    let (ok, out, err) = tessera(&["read", &a("zero_var_chunks_v10")]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), r#"{"d":"","a":1}"#);

    // TileDB 2.7 (format 11): a schema and no fragments.
    let (ok, _, err) = tessera(&["schema", &a("sparse_array_v11")]);
    assert!(ok, "{err}");
    let (ok, out, err) = tessera(&["read", &a("sparse_array_v11")]);
    assert!(ok && out.is_empty(), "{err}");

    // TileDB 1.3 (before format 1): refused with a clear error, like libtiledb.
    let (ok, _, err) = tessera(&["read", &a("dense_array_v1_3_0")]);
    assert!(
        !ok && err.starts_with("error: ") && !err.contains("panicked"),
        "{err}"
    );

    // Format u32::MAX: rejected, not misparsed.
    let (ok, _, err) = tessera(&["read", &a("experimental_array_vUINT32_MAX")]);
    assert!(!ok && err.contains("4294967295"), "{err}");
}
