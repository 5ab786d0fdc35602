//! `tessera group create|add|remove`: groups as libtiledb writes them
//! (`cargo xtask check-writes` has each TileDB-Py release list them); here,
//! what tessera lists after each change, the details version kept, and
//! the refusals.

mod common;

use common::{copy_dir, tessera, testdata};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn ls(group: &Path) -> Vec<Value> {
    let (ok, out, err) = tessera(&["ls", &s(group), "--recursive", "--json"]);
    assert!(ok, "{err}");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn ok(args: &[&str]) {
    let (ok, _, err) = tessera(args);
    assert!(ok, "{args:?}: {err}");
}

fn refused(args: &[&str], why: &str) {
    let (ok, _, err) = tessera(args);
    assert!(!ok, "{args:?} succeeded");
    assert!(err.contains(why), "{args:?}: {err}");
}

fn an_array(to: &Path) {
    copy_dir(&testdata().join("tiledb-0.36.1/sparse_2d/array"), to);
}

#[test]
fn create_add_and_remove_members() {
    let dir = scratch("tessera-group-writes");
    let g = dir.join("exp");
    ok(&["group", "create", &s(&g)]);
    assert!(ls(&g).is_empty());
    refused(&["group", "create", &s(&g)], "already a TileDB group");
    ok(&["group", "create", &s(&g.join("ms"))]);
    an_array(&g.join("obs"));
    an_array(&g.join("ms/var"));
    an_array(&dir.join("raw"));
    ok(&["group", "add", &s(&g), "obs", "--name", "obs", "--relative"]);
    ok(&["group", "add", &s(&g), "ms", "--relative"]);
    ok(&["group", "add", &s(&g.join("ms")), "var", "--relative"]);
    ok(&["group", "add", &s(&g), &s(&dir.join("raw"))]);
    let want = json!([
        {"path": "ms", "type": "group"},
        {"path": "ms/var", "type": "array"},
        {"path": "obs", "type": "array"},
        {"path": "raw", "type": "array"},
    ]);
    assert_eq!(json!(ls(&g)), want);
    // The same group a member twice: listed under both names.
    ok(&["group", "add", &s(&g), &s(&g.join("ms")), "--name", "ms2"]);
    assert_eq!(ls(&g).len(), 6);
    // A group that holds itself: listed, not entered again.
    ok(&[
        "group",
        "add",
        &s(&g.join("ms")),
        "..",
        "--name",
        "up",
        "--relative",
    ]);
    let paths: Vec<String> = ls(&g)
        .iter()
        .map(|m| m["path"].as_str().unwrap().to_owned())
        .collect();
    assert!(paths.contains(&"ms/up".to_owned()), "{paths:?}");
    assert!(!paths.iter().any(|p| p.starts_with("ms/up/")), "{paths:?}");
    // Refusals, none of which writes a details file.
    let files = || std::fs::read_dir(g.join("__group")).unwrap().count();
    let before = files();
    refused(
        &["group", "add", &s(&g), "obs", "--name", "obs", "--relative"],
        "already in the group",
    );
    refused(
        &["group", "add", &s(&g), "missing", "--relative"],
        "neither a TileDB array nor a group",
    );
    refused(
        &["group", "remove", &s(&g), "nothing"],
        "no member has that name or URI",
    );
    refused(
        &["group", "add", &dir.join("raw").display().to_string(), "x"],
        "not a TileDB group",
    );
    assert_eq!(files(), before);
    // Removed by name, and by URI (the unnamed absolute member).
    ok(&["group", "remove", &s(&g), "ms2"]);
    ok(&["group", "remove", &s(&g), &s(&dir.join("raw"))]);
    ok(&["group", "remove", &s(&g), "obs"]);
    assert_eq!(
        json!(ls(&g)),
        json!([{"path": "ms", "type": "group"}, {"path": "ms/up", "type": "group"}, {"path": "ms/var", "type": "array"}])
    );
    // Each change is a version-2 details file at format 22.
    for e in std::fs::read_dir(g.join("__group")).unwrap().flatten() {
        assert!(e.file_name().to_string_lossy().ends_with("_2"));
        assert_eq!(std::fs::read(e.path()).unwrap()[..4], 22u32.to_le_bytes());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A group libtiledb 2.13 wrote (details version 1, format 16) gets a
/// version-1 file listing every member, at format 16.
#[test]
fn a_version_1_group_is_changed_at_version_1() {
    let dir = scratch("tessera-group-v1");
    let g = dir.join("group");
    copy_dir(
        &testdata().join("groups/tiledb-0.19.1/group_nested/group"),
        &g,
    );
    let before: Vec<_> = std::fs::read_dir(g.join("__group"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    ok(&["group", "remove", &s(&g), "cells"]);
    let listed = ls(&g);
    assert!(!listed.iter().any(|m| m["path"] == "cells"), "{listed:?}");
    assert!(
        listed.iter().any(|m| m["path"] == "ms/RNA/X/data"),
        "{listed:?}"
    );
    let new: Vec<_> = std::fs::read_dir(g.join("__group"))
        .unwrap()
        .flatten()
        .filter(|e| !before.contains(&e.file_name()))
        .collect();
    assert_eq!(new.len(), 1);
    let name = new[0].file_name().to_string_lossy().into_owned();
    assert!(!name.ends_with("_2"), "{name}");
    assert_eq!(
        std::fs::read(new[0].path()).unwrap()[..4],
        16u32.to_le_bytes()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
