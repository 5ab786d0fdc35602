//! Fixture cases written by one TileDB-Py and read back by another: what
//! a reader returned, stored as a case's `expected.json` in a stable,
//! diffable form.

use crate::common::{root, run, Error};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

pub(crate) fn read_case(py: &Path, case: &Path) -> Result<Value, Error> {
    let out = run(Command::new(py)
        .arg(root().join("xtask/fixtures/read.py"))
        .arg(case))?;
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Why the writer's TileDB-Py may read differently (known reader bugs).
pub(crate) fn known_reason(writer: &str) -> &'static str {
    match writer {
        "0.19.1" => "TileDB-Py 0.19.1 returns no validity masks (nulls read as values); the newest reader is right",
        "0.23.5" | "0.25.1" => "TileDB-Py of this version inverts validity masks in multi_index results; the newest reader is right",
        _ => "the readers disagree; the newest libtiledb reader is taken as right",
    }
}

/// JSON with one top-level field per line and one result row per line:
/// small, and readable in diffs.
pub(crate) fn render(v: &Value) -> String {
    let mut out = String::from("{\n");
    let obj = v.as_object().expect("object");
    for (i, (k, val)) in obj.iter().enumerate() {
        out.push_str(&format!("  {}: ", serde_json::to_string(k).expect("key")));
        if k == "queries" {
            out.push_str("[\n");
            let qs = val.as_array().cloned().unwrap_or_default();
            for (j, q) in qs.iter().enumerate() {
                let mut q = q.clone();
                let rows = q.as_object_mut().and_then(|o| o.remove("rows"));
                let head = serde_json::to_string(&q).expect("query");
                out.push_str("    ");
                out.push_str(&head[..head.len() - 1]);
                if let Some(Value::Array(rows)) = rows {
                    out.push_str(",\n     \"rows\": [");
                    for (r, row) in rows.iter().enumerate() {
                        out.push_str(if r == 0 { "\n      " } else { ",\n      " });
                        out.push_str(&serde_json::to_string(row).expect("row"));
                    }
                    out.push(']');
                }
                out.push('}');
                out.push_str(if j + 1 < qs.len() { ",\n" } else { "\n" });
            }
            out.push_str("  ]");
        } else {
            out.push_str(&serde_json::to_string(val).expect("value"));
        }
        out.push_str(if i + 1 < obj.len() { ",\n" } else { "\n" });
    }
    out.push_str("}\n");
    out
}

/// The parts of an expectation that must not drift (names carry UUIDs and
/// schema-creation times, which change on every regeneration).
pub(crate) fn stable(v: &Value) -> Value {
    json!({
        "schema": v["schema"],
        "metadata": v["metadata"],
        "queries": v["queries"],
        "fragments": v["fragments"].as_array().map(|fs| fs.iter().map(|f| json!({
            "timestamp_range": f["timestamp_range"], "version": f["version"], "cell_num": f["cell_num"],
            "nonempty_domain": f["nonempty_domain"], "sparse": f["sparse"]})).collect::<Vec<_>>()),
    })
}

/// Runs `script write DIR` with `writer` (a fresh DIR), then for each case
/// it names `script read DIR/CASE` with `reader`, and stores what that
/// printed as the case's `expected.json` with the case's `case.json` (and
/// the writer's release, if given) folded in.
pub(crate) fn write_and_read_cases(
    writer: &Path,
    reader: &Path,
    script: &Path,
    dir: &Path,
    label: &str,
    written_by: Option<&Value>,
) -> Result<(), Error> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let out = run(Command::new(writer).arg(script).arg("write").arg(dir))?;
    let made: Value = serde_json::from_slice(&out.stdout)?;
    for case in made["cases"].as_array().into_iter().flatten() {
        let case = case.as_str().unwrap_or_default();
        eprintln!("{label} {case}");
        let cdir = dir.join(case);
        let out = run(Command::new(reader).arg(script).arg("read").arg(&cdir))?;
        let mut expected: Value = serde_json::from_slice(&out.stdout)?;
        let info: Value = serde_json::from_str(&std::fs::read_to_string(cdir.join("case.json"))?)?;
        expected["case"] = info;
        if let Some(w) = written_by {
            expected["written_by"] = w.clone();
        }
        std::fs::write(
            cdir.join("expected.json"),
            serde_json::to_string_pretty(&expected)? + "\n",
        )?;
        std::fs::remove_file(cdir.join("case.json"))?;
    }
    Ok(())
}
