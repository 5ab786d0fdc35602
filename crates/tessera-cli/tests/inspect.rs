//! `tessera schema`, `fragments` and `meta` against what TileDB-Py reported.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

mod common;

fn run_json(args: &[&str]) -> Result<Value, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

#[test]
fn schemas_match_tiledb_py() {
    let mut failures = Vec::new();
    for path in common::cases() {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let array = path.parent().unwrap().join("array");
        let mut args = vec!["schema", array.to_str().unwrap(), "--json"];
        let key = case["case"]["key"].as_str().map(str::to_owned);
        if let Some(k) = &key {
            args.extend(["--key", k.as_str()]);
        }
        let name = path.parent().unwrap().display().to_string();
        let got = match run_json(&args) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let found =
            common::schema::schema_differences(&name, &got, &case["schema"], &case["enumerations"]);
        failures.extend(found);
    }
    assert!(
        failures.is_empty(),
        "{} schema differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn fragments_and_metadata_match_tiledb_py() {
    let mut failures = Vec::new();
    for path in common::cases() {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let array = path.parent().unwrap().join("array");
        let name = path.parent().unwrap().display().to_string();
        let key = case["case"]["key"].as_str().map(str::to_owned);
        let with_key = |mut a: Vec<String>| {
            if let Some(k) = &key {
                a.push("--key".into());
                a.push(k.clone());
            }
            a
        };
        let a = with_key(vec![
            "fragments".into(),
            array.display().to_string(),
            "--json".into(),
        ]);
        match run_json(&a.iter().map(String::as_str).collect::<Vec<_>>()) {
            Err(e) => failures.push(format!("{name}: fragments: {e}")),
            Ok(got) => {
                let exp = case["fragments"].as_array().unwrap();
                let got = got.as_array().unwrap();
                if got.len() != exp.len() {
                    failures.push(format!(
                        "{name}: {} fragments, TileDB-Py lists {}",
                        got.len(),
                        exp.len()
                    ));
                } else {
                    for (g, e) in got.iter().zip(exp) {
                        for k in [
                            "name",
                            "timestamp_range",
                            "version",
                            "sparse",
                            "cell_num",
                            "nonempty_domain",
                            "has_consolidated_metadata",
                        ] {
                            if g[k] != e[k] {
                                failures.push(format!(
                                    "{name}: fragment {}: {k}: tessera {}, TileDB-Py {}",
                                    e["name"], g[k], e[k]
                                ));
                            }
                        }
                    }
                }
            }
        }
        let a = with_key(vec![
            "meta".into(),
            array.display().to_string(),
            "--json".into(),
        ]);
        match run_json(&a.iter().map(String::as_str).collect::<Vec<_>>()) {
            Err(e) => failures.push(format!("{name}: meta: {e}")),
            Ok(got) => {
                if got != case["metadata"] {
                    failures.push(format!(
                        "{name}: metadata {got}, TileDB-Py {}",
                        case["metadata"]
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn errors_are_one_clear_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["read", "/nonexistent/array"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = Path::new("");
}

fn tessera(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

#[test]
fn view_writes_the_page_the_library_renders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let dense = root.join("tiledb-0.36.1/dense_1d_fragments/array");
    let dense = dense.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("tessera-view-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // To stdout: the library's page for the same options.
    let out = tessera(&["view", dense, "-o", "-", "--pixels", "5"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let options = tessera_view::ViewOptions {
        max_pixels: 5,
        ..Default::default()
    };
    let page = tessera_view::view(Path::new(dense), &options, (0, u64::MAX), None).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), page.document());
    // By default, a file named after the fixture, in the current folder.
    let out = tessera(&["view", dense, "--timestamp", "1"], &dir);
    assert!(out.status.success());
    let html = std::fs::read_to_string(dir.join("dense_1d_fragments.html")).unwrap();
    assert_eq!(
        html.matches(r#"class="fragment-time""#).count(),
        1,
        "opened at t = 1"
    );
    // A group, to a file named with -o.
    let group = root.join("groups/tiledb-0.36.1/group_nested/group");
    let out = tessera(&["view", group.to_str().unwrap(), "-o", "g.html"], &dir);
    assert!(out.status.success());
    assert!(std::fs::read_to_string(dir.join("g.html"))
        .unwrap()
        .contains(r#"<li class="member""#));
    // What the array lacks is named.
    let out = tessera(&["view", dense, "--attr", "nope", "-o", "-"], &dir);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no attribute `nope`"));
    let _ = std::fs::remove_dir_all(&dir);
}
