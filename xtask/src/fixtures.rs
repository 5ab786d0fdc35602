//! `cargo xtask fixtures`: `testdata/tiledb-<version>/` regenerated with
//! the real libtiledb of each pinned TileDB-Py, group and SOMA fixtures
//! with them, and `--reread` / `--check` of what is committed.

use crate::cases::{known_reason, read_case, render, stable, write_and_read_cases};
use crate::common::{root, run, venv, Error, NEWEST, VERSIONS};
use crate::{maintained, soma};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes the cases of one version; `only` limits it to some cases (the
/// others are left as they are, so adding a case does not rewrite them all).
fn generate(version: &str, out_root: &Path, only: &[&str]) -> Result<Vec<String>, Error> {
    let py = venv(version)?;
    let newest = venv(NEWEST)?;
    let dir = out_root.join(format!("tiledb-{version}"));
    if only.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::fs::create_dir_all(&dir)?;
    let out = run(Command::new(&py)
        .arg(root().join("xtask/fixtures/generate.py"))
        .arg(&dir)
        .args(only))?;
    let made: Value = serde_json::from_slice(&out.stdout)?;
    let cases: Vec<String> = made["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_owned))
        .collect();
    for (i, case) in cases.iter().enumerate() {
        eprintln!("[{version}] {}/{} {case}", i + 1, cases.len());
        let cdir = dir.join(case);
        let mut expected = read_case(&newest, &cdir)?;
        // The writer's own reader may crash where the newest does not
        // (TileDB-Py 0.19.1 on a dense array with a sparse fragment): that is
        // recorded as a disagreement, not a failed run.
        let by_writer = read_case(&py, &cdir).unwrap_or_else(|_| {
            let queries: Vec<Value> = expected["queries"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|q| json!({"name": q["name"], "error": "the writer's TileDB-Py failed (crashed) reading the case"}))
                .collect();
            json!({"queries": queries, "tiledb_py": version, "libtiledb": Value::Null})
        });
        let mut disagreements = Vec::new();
        if let (Some(a), Some(b)) = (
            expected["queries"].as_array(),
            by_writer["queries"].as_array(),
        ) {
            for (qa, qb) in a.iter().zip(b) {
                if qa.get("rows") != qb.get("rows") {
                    // Keep the first rows that differ, not whole copies.
                    let (ra, rb) = (
                        qa["rows"].as_array().cloned().unwrap_or_default(),
                        qb["rows"].as_array().cloned().unwrap_or_default(),
                    );
                    let diff: Vec<Value> = ra
                        .iter()
                        .zip(&rb)
                        .filter(|(a, b)| a != b)
                        .take(3)
                        .map(|(a, b)| json!({"newest": a, "writer": b}))
                        .collect();
                    disagreements.push(json!({
                        "query": qa["name"],
                        "rows": [ra.len(), rb.len()],
                        "first_differences": diff,
                        "writer_error": qb.get("error").cloned().unwrap_or(Value::Null),
                        "reason": known_reason(version),
                    }));
                }
            }
        }
        let case_info: Value =
            serde_json::from_str(&std::fs::read_to_string(cdir.join("case.json"))?)?;
        expected["case"] = case_info;
        expected["writer"] =
            json!({"tiledb_py": by_writer["tiledb_py"], "libtiledb": by_writer["libtiledb"]});
        expected["disagreements"] = Value::Array(disagreements);
        std::fs::write(cdir.join("expected.json"), render(&expected))?;
        std::fs::remove_file(cdir.join("case.json"))?;
    }
    Ok(cases)
}

/// Writes the group fixtures of one version into
/// `testdata/groups/tiledb-<version>/<case>/group`, with what the newest
/// TileDB-Py reads back (members listed recursively, metadata per group)
/// in `expected.json`.
fn generate_groups(version: &str, out_root: &Path) -> Result<(), Error> {
    let dir = out_root.join("groups").join(format!("tiledb-{version}"));
    let written_by = json!(version);
    write_and_read_cases(
        &venv(version)?,
        &venv(NEWEST)?,
        &root().join("xtask/fixtures/groups.py"),
        &dir,
        &format!("[{version}] group"),
        Some(&written_by),
    )
}

/// Reads every committed case again with the newest TileDB-Py and
/// replaces what it read in `expected.json` (exactly, floats to their last
/// digit), leaving the arrays, the case, the writer and the disagreements
/// as they are.
fn reread(testdata: &Path) -> Result<(), Error> {
    let newest = venv(NEWEST)?;
    for version in VERSIONS {
        let dir = testdata.join(format!("tiledb-{version}"));
        let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)?
            .flatten()
            .map(|e| e.path())
            .collect();
        cases.sort();
        for cdir in cases.iter().filter(|c| c.join("expected.json").is_file()) {
            eprintln!("[{version}] reread {}", cdir.display());
            let path = cdir.join("expected.json");
            let mut expected: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
            std::fs::write(
                cdir.join("case.json"),
                serde_json::to_string(&expected["case"])?,
            )?;
            let read = read_case(&newest, cdir);
            std::fs::remove_file(cdir.join("case.json"))?;
            for (k, v) in read?.as_object().into_iter().flatten() {
                expected[k] = v.clone();
            }
            std::fs::write(&path, render(&expected))?;
        }
    }
    Ok(())
}

pub(crate) fn fixtures(args: &[String]) -> Result<(), Error> {
    if args.iter().any(|a| a == "--reread") {
        return reread(&root().join("testdata"));
    }
    let check = args.iter().any(|a| a == "--check");
    let versions = picked_versions(args);
    let only: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--case")
        .map(|w| w[1].as_str())
        .collect();
    let testdata = root().join("testdata");
    let out_root = if check {
        root().join("target/fixtures-check")
    } else {
        testdata.clone()
    };
    let mut drift = 0;
    // SOMA fixtures: `--case soma` (or no --case) makes them.
    if only.is_empty() || only.contains(&"soma") {
        soma::generate_soma(&out_root)?;
    }
    if only == ["soma"] {
        return Ok(());
    }
    if only == ["maintained"] {
        return maintained::record(&versions);
    }
    for v in versions {
        // Group fixtures: `--case groups` (or no --case) makes them.
        if only.is_empty() || only.contains(&"groups") {
            generate_groups(v, &out_root)?;
        }
        let only: Vec<&str> = only
            .iter()
            .copied()
            .filter(|c| !["groups", "soma", "maintained"].contains(c))
            .collect();
        if only.is_empty() && args.iter().any(|a| a == "groups") {
            continue;
        }
        let cases = generate(v, &out_root, &only)?;
        if check {
            for c in cases {
                let new = out_root
                    .join(format!("tiledb-{v}"))
                    .join(&c)
                    .join("expected.json");
                let old = testdata
                    .join(format!("tiledb-{v}"))
                    .join(&c)
                    .join("expected.json");
                let parse = |p: &Path| -> Option<Value> {
                    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
                };
                match (parse(&old), parse(&new)) {
                    (Some(a), Some(b)) if stable(&a) == stable(&b) => {}
                    (None, _) => {
                        drift += 1;
                        println!("drift: tiledb-{v}/{c}: not committed");
                    }
                    _ => {
                        drift += 1;
                        println!("drift: tiledb-{v}/{c}: expectations differ");
                    }
                }
            }
        }
    }
    if check && drift > 0 {
        return Err(format!("{drift} case(s) drifted from the committed testdata").into());
    }
    // libtiledb's maintenance operations on the new fixtures.
    if !check && (only.is_empty() || only.contains(&"maintained")) {
        maintained::record(&picked_versions(args))?;
    }
    Ok(())
}

/// The releases `--version V` names, or every pinned one.
pub(crate) fn picked_versions(args: &[String]) -> Vec<&str> {
    let picked: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--version")
        .map(|w| w[1].as_str())
        .collect();
    if picked.is_empty() {
        VERSIONS.to_vec()
    } else {
        picked
    }
}
