//! Each footer gate, on both sides: a minimal footer of the version before
//! the gate and of the gate's own version, encoded as the writer encodes
//! it, decoded, and compared with what was encoded. The snapshots show
//! which fields each version has. The R-tree and file names are checked the
//! same way on both sides of the gates that change them.

use tessera_fragment::footer::{field_count, Footer};
use tessera_fragment::gates;
use tessera_fragment::RTree;
use tessera_schema::{list_schemas, load_schema, ArraySchema, Range1D};
use tessera_storage::LocalFs;
use tessera_tile::{FormatVersion, Gate};

/// A sparse schema with two int64 dimensions and two attributes, one
/// var-sized and nullable.
fn schema() -> ArraySchema {
    let array = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/sparse_2d/array");
    let files = list_schemas(&LocalFs, &array).unwrap();
    load_schema(&LocalFs, &array, files.last().unwrap(), None).unwrap()
}

/// `count` offsets from `first`, one apart: each array of the footer gets
/// its own hundred, so the snapshot shows which array is which.
fn seq(first: u64, count: usize) -> Vec<u64> {
    (first..first + count as u64).collect()
}

/// A footer of `version` with every field that version has, set.
fn minimal(schema: &ArraySchema, version: FormatVersion) -> Footer {
    let has = |g: Gate| version.has(g);
    let (ts, del) = (has(gates::TIMESTAMPS), has(gates::DELETE_METADATA));
    let every = field_count(schema, version, ts, del);
    let attrs = schema.attributes.len();
    let (all, var) = match has(gates::SPLIT_COORDINATES) {
        true => (every, every),
        false => (attrs + 1, attrs),
    };
    let validity = has(gates::VALIDITY);
    let tile_metadata = has(gates::TILE_METADATA);
    let arr = |on: bool, first: u64, n: usize| if on { seq(first, n) } else { Vec::new() };
    let range = |lo: i64, hi: i64| Range1D {
        lo: lo.to_le_bytes().to_vec(),
        hi: hi.to_le_bytes().to_vec(),
    };
    let dims = schema.dimensions.len();
    Footer {
        version,
        schema_name: has(gates::SCHEMA_NAME).then(|| schema.name.clone()),
        dense: false,
        non_empty_domain: Some(vec![range(1, 9), range(2, 8)]),
        sparse_tile_num: 3,
        last_tile_cell_num: 2,
        has_timestamps: ts,
        has_delete_meta: del,
        file_sizes: seq(100, all),
        file_var_sizes: seq(200, var),
        file_validity_sizes: arr(validity, 300, every),
        rtree_offset: 400,
        tile_offsets: seq(500, all),
        tile_var_offsets: seq(600, var),
        tile_var_sizes: seq(700, var),
        tile_validity_offsets: arr(validity, 800, every),
        tile_min_offsets: arr(tile_metadata, 900, every),
        tile_max_offsets: arr(tile_metadata, 1000, every),
        tile_sum_offsets: arr(tile_metadata, 1100, every),
        tile_null_count_offsets: arr(tile_metadata, 1200, every),
        fragment_summary_offset: has(gates::FRAGMENT_METADATA_SUMMARY).then_some(1300),
        processed_conditions_offset: has(gates::PROCESSED_CONDITIONS).then_some(1400),
        tile_global_order_offsets: has(gates::OPTIONAL_SECTIONS)
            .then(|| (seq(1500, dims), seq(1600, dims))),
        size: 0,
    }
}

/// The footer of `version`, encoded then decoded: equal to the one
/// encoded, its size that of the bytes.
fn round_trip(schema: &ArraySchema, version: FormatVersion) -> Footer {
    let mut footer = minimal(schema, version);
    let bytes = footer.encode(schema);
    footer.size = bytes.len() as u64;
    let back = Footer::parse(&bytes, schema, 0).unwrap();
    assert_eq!(back, footer, "version {version}");
    back
}

/// Both sides of `gate`, as one snapshot.
fn both_sides(name: &str, gate: Gate) {
    let schema = schema();
    let from = gate.version();
    let before = FormatVersion::new(from.number() - 1);
    let sides = serde_json::json!({
        "before": round_trip(&schema, before),
        "from": round_trip(&schema, from),
    });
    insta::assert_json_snapshot!(name, sides);
}

#[test]
fn split_coordinates() {
    both_sides("split_coordinates", gates::SPLIT_COORDINATES);
}

#[test]
fn validity() {
    both_sides("validity", gates::VALIDITY);
}

#[test]
fn schema_name() {
    both_sides("schema_name", gates::SCHEMA_NAME);
}

#[test]
fn tile_metadata() {
    both_sides("tile_metadata", gates::TILE_METADATA);
}

#[test]
fn fragment_metadata_summary() {
    both_sides(
        "fragment_metadata_summary",
        gates::FRAGMENT_METADATA_SUMMARY,
    );
}

#[test]
fn timestamps() {
    both_sides("timestamps", gates::TIMESTAMPS);
}

#[test]
fn delete_metadata() {
    both_sides("delete_metadata", gates::DELETE_METADATA);
}

#[test]
fn processed_conditions() {
    both_sides("processed_conditions", gates::PROCESSED_CONDITIONS);
}

#[test]
fn optional_sections() {
    both_sides("optional_sections", gates::OPTIONAL_SECTIONS);
}

/// Before the footer gate a fragment has no footer: its bytes are refused,
/// naming the version; from it, they decode.
#[test]
fn footer() {
    let schema = schema();
    let mut bytes = minimal(&schema, gates::FOOTER.version()).encode(&schema);
    assert!(Footer::parse(&bytes, &schema, 0).is_ok());
    bytes[..4].copy_from_slice(&(gates::FOOTER.version().number() - 1).to_le_bytes());
    let e = Footer::parse(&bytes, &schema, 0).unwrap_err().to_string();
    insta::assert_snapshot!("footer_before", e);
}

/// Truncated anywhere, a footer's error names the field cut short and its
/// byte offset, in every version.
#[test]
fn truncation_names_the_field() {
    let schema = schema();
    let mut seen = Vec::new();
    for v in [3, 5, 7, 10, 16, 22, 23] {
        let bytes = minimal(&schema, FormatVersion::new(v)).encode(&schema);
        let cut = bytes.len() - 3;
        let e = Footer::parse(&bytes[..cut], &schema, 1000).unwrap_err();
        seen.push(format!("v{v}: {e}"));
    }
    insta::assert_snapshot!("truncated", seen.join("\n"));
}

/// The R-tree on both sides of split coordinates: before it the payload
/// carries the dimension count and, after the fanout, the coordinates'
/// datatype. Each side encodes, parses back equal, and shows its head.
#[test]
fn rtree_split_coordinates() {
    let schema = schema();
    let dims = &schema.dimensions;
    let range = |lo: i64, hi: i64| Range1D {
        lo: lo.to_le_bytes().to_vec(),
        hi: hi.to_le_bytes().to_vec(),
    };
    let leaves = vec![
        vec![range(1, 4), range(2, 3)],
        vec![range(5, 9), range(2, 8)],
        vec![range(6, 7), range(4, 5)],
    ];
    let tree = RTree::build(leaves, 2, dims);
    assert_eq!(tree.levels.len(), 3);
    let side = |version: FormatVersion| {
        let bytes = tree.encode(version, dims);
        let back = RTree::parse(&bytes, version, dims).unwrap();
        assert_eq!(back, tree, "version {version}");
        let head: Vec<String> = bytes[..13].iter().map(|b| format!("{b:02x}")).collect();
        serde_json::json!({
            "version": version,
            "head": head.join(" "),
            "bytes": bytes.len(),
            "tree": back,
        })
    };
    let from = gates::SPLIT_COORDINATES.version();
    let before = FormatVersion::new(from.number() - 1);
    let sides = serde_json::json!({ "before": side(before), "from": side(from) });
    insta::assert_json_snapshot!("rtree_split_coordinates", sides);
}
