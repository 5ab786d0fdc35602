//! `cargo xtask maintained [--version V]...`: libtiledb's own maintenance
//! operations on fixtures, recorded in `testdata/maintained/tiledb-<V>/`.
//!
//! Each operation is a JSON spec ([`operations`]): the release that wrote
//! the fixture applies it to a copy with its libtiledb
//! (`xtask/fixtures/maintained.py apply`), and the newest TileDB-Py reads
//! the copy back (`maintained.py read`). The record holds the spec and what
//! was read, so `crates/tessera-cli/tests/maintained.rs` can apply the same
//! spec with the `tessera` CLI and compare without Python. The same specs
//! drive the live comparison of `cargo xtask check-writes`
//! (`maintenance.rs`).

use crate::common::{root, run, venv, Error, NEWEST};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;

/// Metadata put by the `meta` operations: key, the `tessera meta --set`
/// text, its `--type`, and the value as JSON (`{"hex": ..}` for bytes).
fn metadata_entries() -> Value {
    let entry = |key: &str, text: &str, datatype: Option<&str>, value: Value| json!({"key": key, "text": text, "type": datatype, "value": value});
    json!([
        entry("added_int", "42", None, json!(42)),
        entry("added_float", "0.25", None, json!(0.25)),
        entry("ints", "[4, 5]", None, json!([4, 5])),
        entry("added_str", "x, y", None, json!("x, y")),
        entry(
            "added_blob",
            "00ff10",
            Some("BLOB"),
            json!({"hex": "00ff10"})
        ),
        entry("added_i16", "[-3, 4]", Some("INT16"), json!([-3, 4])),
    ])
}

/// Every operation recorded for `release`'s fixtures: `id` names the
/// record, `path` the array or group under `testdata/`.
pub fn operations(release: &str) -> Vec<Value> {
    let array = |case: &str| format!("tiledb-{release}/{case}/array");
    let mut ops = vec![
        json!({"id": "meta-array_metadata", "path": array("array_metadata"), "kind": "meta",
            "set": metadata_entries(), "delete": ["str"]}),
        json!({"id": "meta-group_nested", "kind": "meta",
            "path": format!("groups/tiledb-{release}/group_nested/group"),
            "set": metadata_entries(), "delete": ["str"]}),
        json!({"id": "evolve-sparse_2d", "path": array("sparse_2d"), "kind": "evolve",
            "add": {"name": "w", "type": "INT16", "fill_value": -7}, "drop": "i"}),
        json!({"id": "delete-sparse_2d", "path": array("sparse_2d"), "kind": "delete",
            "cond": "i < 0 or f > 0.5"}),
    ];
    // Encrypted arrays, with the key `xtask/fixtures/generate.py` wrote them with.
    let key = "3031323334353637383961626364654630313233343536373839616263646546";
    let fragments = array("encrypted_fragments");
    ops.extend([
        json!({"id": "meta-encrypted", "path": array("encrypted"), "kind": "meta", "key": key,
            "set": metadata_entries(), "delete": ["str"]}),
        json!({"id": "delete-encrypted", "path": array("encrypted"), "kind": "delete",
            "key": key, "cond": "d > 40 or a < 0.5"}),
        json!({"id": "fragments-encrypted_fragments", "path": fragments, "key": key,
            "kind": "consolidate", "mode": "fragments", "with_timestamps": false,
            "purge_deleted": false, "window": null, "every_time": false}),
        json!({"id": "fragments-encrypted_fragments-with_timestamps", "path": fragments,
            "key": key, "kind": "consolidate", "mode": "fragments", "with_timestamps": true,
            "purge_deleted": false, "window": null, "every_time": true}),
        json!({"id": "fragment_meta-encrypted_fragments", "path": fragments, "key": key,
            "kind": "consolidate", "mode": "fragment_meta", "every_time": true}),
        json!({"id": "commits-encrypted_fragments", "path": fragments, "key": key,
            "kind": "consolidate", "mode": "commits"}),
    ]);
    // Enumerations from libtiledb 2.17; a current domain from 2.26.
    if release >= "0.23" {
        ops.push(
            json!({"id": "evolve-enumerations", "path": array("enumerations"),
            "kind": "evolve", "extend": {"colors": ["purple", "teal"], "sizes": [40]}}),
        );
    }
    if release == "0.36.1" {
        ops.push(
            json!({"id": "evolve-current_domain", "path": array("current_domain"),
            "kind": "evolve", "expand": [[0, 99]]}),
        );
    }
    for case in ["deletes", "dense_1d_fragments", "sparse_dups"] {
        ops.push(json!({"id": format!("commits-{case}"), "path": array(case),
            "kind": "consolidate", "mode": "commits"}));
    }
    ops.push(
        json!({"id": "array_meta-array_metadata", "path": array("array_metadata"),
        "kind": "consolidate", "mode": "array_meta"}),
    );
    for case in [
        "random_sparse",
        "random_dense",
        "dense_3d_overlaps",
        "sparse_dups",
    ] {
        ops.push(
            json!({"id": format!("fragment_meta-{case}"), "path": array(case),
            "kind": "consolidate", "mode": "fragment_meta", "every_time": true}),
        );
    }
    ops.extend(fragment_consolidations(release));
    ops
}

/// Fragment consolidations: dense and sparse, duplicates, with timestamps
/// (read then at every time), a window of fragments; deletes (kept with
/// timestamps, or purged) from libtiledb 2.17.
fn fragment_consolidations(release: &str) -> Vec<Value> {
    let mut runs: Vec<(&str, bool, bool, Option<[u64; 2]>)> = vec![
        ("random_sparse", false, false, None),
        ("random_dense", false, false, None),
        ("dense_1d_fragments", false, false, None),
        ("dense_3d_overlaps", false, false, None),
        ("sparse_dups", false, false, None),
        ("random_sparse", true, false, None),
        ("sparse_dups", true, false, None),
        // The window 2..4 of five fragments.
        ("random_sparse", true, false, Some([2, 4])),
    ];
    if release >= "0.23" {
        runs.extend([
            ("deletes", true, false, None),
            ("deletes_overwritten", true, false, None),
            ("deletes", false, true, None),
            ("deletes_overwritten", false, true, None),
        ]);
    }
    runs.into_iter()
        .map(|(case, with_timestamps, purge_deleted, window)| {
            let mut id = format!("fragments-{case}");
            for (on, tag) in [
                (with_timestamps, "-with_timestamps"),
                (purge_deleted, "-purge_deleted"),
                (window.is_some(), "-window"),
            ] {
                if on {
                    id.push_str(tag);
                }
            }
            json!({"id": id, "path": format!("tiledb-{release}/{case}/array"),
                "kind": "consolidate", "mode": "fragments",
                "with_timestamps": with_timestamps, "purge_deleted": purge_deleted,
                "window": window, "every_time": with_timestamps})
        })
        .collect()
}

/// Records every operation of each release in `releases`.
pub fn record(releases: &[&str]) -> Result<(), Error> {
    let script = root().join("xtask/fixtures/maintained.py");
    let reader = venv(NEWEST)?;
    for &release in releases {
        let out_dir = root().join(format!("testdata/maintained/tiledb-{release}"));
        let _ = std::fs::remove_dir_all(&out_dir);
        std::fs::create_dir_all(&out_dir)?;
        let python = venv(release)?;
        let mut n = 0;
        for spec in operations(release) {
            let id = spec["id"].as_str().ok_or("an id")?;
            let source = root()
                .join("testdata")
                .join(spec["path"].as_str().ok_or("a path")?);
            if !source.is_dir() {
                continue;
            }
            let work: PathBuf = root().join("target/maintained").join(release).join(id);
            let text = spec.to_string();
            run(Command::new(&python)
                .arg(&script)
                .args(["apply", &text])
                .arg(&source)
                .arg(&work))?;
            let read = run(Command::new(&reader)
                .arg(&script)
                .args(["read", &text])
                .arg(&work))?;
            let read: Value = serde_json::from_slice(&read.stdout)?;
            let record = json!({"applied_by": release, "spec": spec, "result": read});
            let mut text = serde_json::to_string(&record)?;
            text.push('\n');
            std::fs::write(out_dir.join(format!("{id}.json")), text)?;
            n += 1;
        }
        eprintln!("tiledb-{release}: {n} operations recorded");
    }
    Ok(())
}
