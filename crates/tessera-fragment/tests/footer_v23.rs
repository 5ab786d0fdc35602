//! Format 23 footers (no released libtiledb writes them yet): hand-built from
//! the spec, with the tile global order section and an unknown section that
//! must be skipped.

use tessera_fragment::footer::Footer;
use tessera_schema::{list_schemas, load_schema};
use tessera_storage::LocalFs;

fn u32le(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}
fn u64le(v: u64) -> [u8; 8] {
    v.to_le_bytes()
}

#[test]
fn v23_footer_with_optional_sections() {
    let array = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/sparse_2d/array");
    let files = list_schemas(&LocalFs, &array).unwrap();
    let schema = load_schema(&LocalFs, &array, files.last().unwrap(), None).unwrap();
    // Two attributes, the coords slot and two dimensions: five fields.
    let num = 5u64;
    let mut b = Vec::new();
    b.extend(u32le(23));
    b.extend(u64le(schema.name.len() as u64));
    b.extend(schema.name.as_bytes());
    b.push(0); // sparse
    b.push(0); // non-empty domain present
    for (lo, hi) in [(1i64, 9i64), (2, 8)] {
        b.extend(lo.to_le_bytes());
        b.extend(hi.to_le_bytes());
    }
    b.extend(u64le(3)); // sparse tiles
    b.extend(u64le(2)); // last tile cell num
    b.push(0); // timestamps
    b.push(0); // delete meta
    for arr in 0..3 {
        for i in 0..num {
            b.extend(u64le(100 * arr + i)); // file sizes, var sizes, validity sizes
        }
    }
    b.extend(u64le(7)); // R-tree offset
    for arr in 0..8 {
        for i in 0..num {
            b.extend(u64le(1000 * (arr + 1) + i));
        }
    }
    b.extend(u64le(55)); // fragment summary
    b.extend(u64le(66)); // processed conditions
    b.extend(u32le(2)); // optional sections
    b.extend(u64le(0)); // tile global order
    b.extend(u32le(32));
    for v in [11u64, 12, 21, 22] {
        b.extend(u64le(v));
    }
    b.extend(u64le(999)); // unknown identifier: skipped
    b.extend(u32le(3));
    b.extend([1, 2, 3]);
    let size = b.len() as u64;
    b.extend(u64le(size)); // footer length

    let f = Footer::parse(&b, &schema, 0).unwrap();
    assert_eq!(f.version.number(), 23);
    assert_eq!(f.sparse_tile_num, 3);
    assert_eq!(f.tile_offsets, vec![1000, 1001, 1002, 1003, 1004]);
    assert_eq!(
        f.tile_null_count_offsets,
        vec![8000, 8001, 8002, 8003, 8004]
    );
    assert_eq!(f.processed_conditions_offset, Some(66));
    assert_eq!(
        f.tile_global_order_offsets,
        Some((vec![11, 12], vec![21, 22]))
    );
    assert_eq!(f.size, size);

    // A wrong size for the known section is an error naming it.
    let mut bad = b.clone();
    let at = bad.len() - 8 - (8 + 4 + 3) - 32 - 4;
    bad[at..at + 4].copy_from_slice(&u32le(31));
    let e = Footer::parse(&bad, &schema, 0).unwrap_err().to_string();
    assert!(e.contains("optional section"), "{e}");

    // Every truncation is an error, never a panic.
    for cut in 0..b.len() - 8 {
        assert!(
            Footer::parse(&b[..cut], &schema, 0).is_err(),
            "cut at {cut}"
        );
    }
}
