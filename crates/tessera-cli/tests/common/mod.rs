//! Helpers shared by the CLI tests: where the fixtures are.

use std::path::{Path, PathBuf};

#[allow(dead_code)] // not every test file compares schemas
pub mod schema;

/// The `testdata/` folder.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

#[allow(dead_code)] // not every test file uses every helper
/// Every `expected.json` under `testdata/tiledb-*/`.
pub fn cases() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for v in std::fs::read_dir(testdata())
        .expect("testdata exists")
        .flatten()
    {
        if !v.file_name().to_string_lossy().starts_with("tiledb-") {
            continue;
        }
        for c in std::fs::read_dir(v.path())
            .expect("version folder")
            .flatten()
        {
            let e = c.path().join("expected.json");
            if e.exists() {
                out.push(e);
            }
        }
    }
    out.sort();
    out
}

/// Runs the built `tessera` binary: (success, stdout, stderr).
#[allow(dead_code)] // not every test file uses every helper
pub fn tessera(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Copies the folder `from` (an array or a group) to `to`.
#[allow(dead_code)] // not every test file copies
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (s, d) = (e.path(), to.join(e.file_name()));
        if s.is_dir() {
            copy_dir(&s, &d)
        } else {
            std::fs::copy(&s, &d).unwrap();
        }
    }
}

/// A JSON value with object keys sorted (rows compare whatever their key
/// order).
#[allow(dead_code)] // not every test file compares rows
pub fn canonical(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), canonical(&m[*k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// Every record under `testdata/<folder>/<release>/`, sorted.
#[allow(dead_code)] // not every test file reads records
pub fn records(folder: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for release in std::fs::read_dir(testdata().join(folder))
        .unwrap()
        .flatten()
    {
        for record in std::fs::read_dir(release.path()).unwrap().flatten() {
            out.push(record.path());
        }
    }
    out.sort();
    out
}

/// `tessera read`'s JSON lines, canonical and sorted (rows compare as
/// sets, whatever their order and key order).
#[allow(dead_code)] // not every test file compares rows
pub fn sorted_rows(jsonl: &str) -> Vec<String> {
    let mut out: Vec<String> = jsonl
        .lines()
        .map(|l| canonical(&serde_json::from_str(l).unwrap()))
        .collect();
    out.sort();
    out
}

/// `tessera fragments --json`, as `xtask/fixtures/maintained.py` records
/// fragments: each one's timestamp range, cell count and whether its
/// footer comes from consolidated fragment metadata.
#[allow(dead_code)] // not every test file lists fragments
pub fn fragment_records(listed: &serde_json::Value) -> serde_json::Value {
    listed
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            serde_json::json!({"timestamp_range": f["timestamp_range"], "cell_num": f["cell_num"],
                "has_consolidated_metadata": f["has_consolidated_metadata"]})
        })
        .collect()
}
