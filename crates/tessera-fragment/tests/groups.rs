//! Opening groups costs one listing per group level: the details folder
//! (on an object store, each listing is a request).

use std::path::PathBuf;
use tessera_fragment::group::OpenGroup;
use tessera_storage::{LocalFs, Recording};

#[test]
fn a_recursive_listing_lists_each_groups_details_folder_once() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/groups/tiledb-0.36.1/group_nested/group");
    let rec = Recording::new(LocalFs, &root);
    let g = OpenGroup::open(&rec, &root, 0, u64::MAX, None).unwrap();
    let all = g.list(&rec, true).unwrap();
    assert_eq!(all.len(), 7);
    let listings: Vec<String> = rec
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("list"))
        .collect();
    // The group, ms, ms/RNA and ms/RNA/X: their details folders, once each.
    assert_eq!(
        listings,
        [
            "list __group",
            "list ms/__group",
            "list ms/RNA/__group",
            "list ms/RNA/X/__group"
        ],
        "{listings:?}"
    );
}

#[test]
fn an_empty_group_and_a_non_group_are_told_apart() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let empty = data.join("groups/tiledb-0.36.1/group_empty/group");
    let g = OpenGroup::open(&LocalFs, &empty, 0, u64::MAX, None).unwrap();
    assert!(g.members.is_empty());
    let array = data.join("tiledb-0.36.1/sparse_2d/array");
    let e = OpenGroup::open(&LocalFs, &array, 0, u64::MAX, None).unwrap_err();
    assert!(e.to_string().contains("not a TileDB group"), "{e}");
}
