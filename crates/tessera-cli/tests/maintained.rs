//! Maintenance by tessera against libtiledb's own, without Python: every
//! record under `testdata/maintained/tiledb-<release>/` (`cargo xtask
//! maintained`) holds an operation (metadata put and deleted, cells
//! deleted, schema evolved, fragments, commits, fragment metadata or array
//! metadata consolidated and vacuumed), applied by that release's
//! libtiledb to a copy of a fixture, and what TileDB-Py 0.36.1 read back.
//! Here the `tessera` CLI applies the same operation to another copy, and
//! what tessera reads must be the same: rows at the same times, metadata
//! with datatypes, the schema, fragments left, and for commits and array
//! metadata the bytes of the consolidated files.

mod common;

use common::{canonical, copy_dir, fragment_records, records, sorted_rows, tessera, testdata};
use serde_json::Value;
use std::path::Path;

/// Runs `tessera` with `args`; an error names the command.
fn run(args: &[String]) -> Result<String, String> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out, err) = tessera(&args);
    if ok {
        Ok(out)
    } else {
        Err(format!("tessera {}: {}", args.join(" "), err.trim()))
    }
}

/// The `tessera` commands doing what `spec` says to the copy `path`.
fn commands(spec: &Value, path: &str) -> Vec<Vec<String>> {
    let mut all = operation_commands(spec, path);
    // Every command takes the key, as with libtiledb.
    for c in all.iter_mut() {
        c.extend(key_args(spec));
    }
    all
}

/// `--key KEY` where the spec's array is encrypted.
fn key_args(spec: &Value) -> Vec<String> {
    match spec["key"].as_str() {
        Some(k) => vec!["--key".into(), k.into()],
        None => vec![],
    }
}

fn operation_commands(spec: &Value, path: &str) -> Vec<Vec<String>> {
    let cmd = |parts: &[&str]| -> Vec<String> {
        let (verb, rest) = parts.split_first().unwrap();
        [*verb, path]
            .into_iter()
            .chain(rest.iter().copied())
            .map(str::to_owned)
            .collect()
    };
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    match spec["kind"].as_str().unwrap() {
        "meta" => meta_commands(spec, cmd(&["meta"])),
        "delete" => vec![cmd(&["delete", "--where", spec["cond"].as_str().unwrap()])],
        "evolve" => {
            let mut c = cmd(&["evolve"]);
            if let Some(add) = spec.get("add") {
                c.extend(["--add-attribute".into(), add.to_string()]);
            }
            if let Some(drop) = spec.get("drop") {
                c.extend(["--drop-attribute".into(), text(drop)]);
            }
            if let Some(expand) = spec.get("expand") {
                c.extend(["--expand-current-domain".into(), expand.to_string()]);
            }
            for (name, values) in spec["extend"].as_object().into_iter().flatten() {
                c.extend(["--extend-enumeration".into(), format!("{name}={values}")]);
            }
            vec![c]
        }
        "consolidate" => {
            let mode = spec["mode"].as_str().unwrap();
            let mut c = cmd(&["consolidate", "--mode", mode]);
            if spec["with_timestamps"] == true {
                c.push("--with-timestamps".into());
            }
            if spec["purge_deleted"] == true {
                c.push("--purge-deleted".into());
            }
            if let Some(w) = spec["window"].as_array() {
                c.extend(["--timestamp".into(), format!("{}:{}", w[0], w[1])]);
            }
            vec![c, cmd(&["vacuum", "--mode", mode])]
        }
        other => panic!("unknown operation {other}"),
    }
}

/// `tessera meta` puts: the untyped values and the deletions in one
/// command, each typed value in one of its own (`--type` applies to all).
fn meta_commands(spec: &Value, base: Vec<String>) -> Vec<Vec<String>> {
    let mut untyped = base.clone();
    let mut out = Vec::new();
    for e in spec["set"].as_array().unwrap() {
        let set = [
            "--set".into(),
            format!(
                "{}={}",
                e["key"].as_str().unwrap(),
                e["text"].as_str().unwrap()
            ),
        ];
        match e["type"].as_str() {
            None => untyped.extend(set),
            Some(t) => {
                let mut c = base.clone();
                c.extend(set);
                c.extend(["--type".into(), t.into()]);
                out.push(c);
            }
        }
    }
    for k in spec["delete"].as_array().into_iter().flatten() {
        untyped.extend(["--delete".into(), k.as_str().unwrap().into()]);
    }
    out.insert(0, untyped);
    out
}

/// A copy of a fixture tessera changed, and its key if encrypted.
struct Changed<'a> {
    dir: &'a Path,
    spec: &'a Value,
}

impl Changed<'_> {
    /// `tessera VERB COPY ARGS... [--key KEY]`.
    fn tessera(&self, verb: &str, args: &[&str]) -> Result<String, String> {
        let mut all = vec![verb.to_owned(), self.dir.display().to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        all.extend(key_args(self.spec));
        run(&all)
    }

    /// `tessera VERB COPY --json`, parsed.
    fn json(&self, verb: &str) -> Result<Value, String> {
        let out = self.tessera(verb, &["--json"])?;
        serde_json::from_str(&out).map_err(|e| format!("tessera {verb} --json: {e}"))
    }

    /// The rows read at `timestamp` (latest when null), canonical and sorted.
    fn rows(&self, timestamp: &Value) -> Result<Vec<String>, String> {
        let t = timestamp.as_u64().map(|t| t.to_string());
        let args: Vec<&str> = t.iter().flat_map(|t| ["--timestamp", t.as_str()]).collect();
        Ok(sorted_rows(&self.tessera("read", &args)?))
    }

    /// Each metadata key's datatype, as libtiledb names it.
    fn metadata_types(&self) -> Result<Value, String> {
        let key = self.spec["key"]
            .as_str()
            .map(tessera::filters::EncryptionKey::parse)
            .transpose()
            .map_err(|e| e.to_string())?;
        let map = tessera::fragment::array_metadata::read_metadata(
            &tessera::LocalFs,
            self.dir,
            (0, u64::MAX),
            key.as_ref(),
        )
        .map_err(|e| e.to_string())?;
        Ok(map
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.datatype.name())))
            .collect::<serde_json::Map<_, _>>()
            .into())
    }

    /// The fragments left, as `maintained.py` records them.
    fn fragments(&self) -> Result<Value, String> {
        Ok(fragment_records(&self.json("fragments")?))
    }

    /// What differs between what tessera reads of the copy and libtiledb's `result`.
    fn differences(&self, result: &Value) -> Result<Vec<String>, String> {
        let mut found = Vec::new();
        let mut check = |what: &str, got: Value, want: &Value| {
            if canonical(&got) != canonical(want) {
                found.push(format!("{what}: tessera {got}, libtiledb {want}"));
            }
        };
        check("metadata", self.json("meta")?, &result["metadata"]);
        check(
            "metadata types",
            self.metadata_types()?,
            &result["metadata_types"],
        );
        if result.get("fragments").is_some() {
            check("fragments", self.fragments()?, &result["fragments"]);
        }
        for (key, folder) in [("commit_files", "__commits"), ("metadata_files", "__meta")] {
            if let Some(want) = result.get(key) {
                check(folder, files(&self.dir.join(folder)), want);
            }
        }
        if let Some(schema) = result.get("schema") {
            let got = self.json("schema")?;
            let current = got.get("current_domain").cloned().unwrap_or(Value::Null);
            check("current domain", current, &result["current_domain"]);
            found.extend(common::schema::schema_differences(
                "schema",
                &got,
                schema,
                &result["enumerations"],
            ));
        }
        for read in result["reads"].as_array().into_iter().flatten() {
            let mut want: Vec<String> = read["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(canonical)
                .collect();
            want.sort();
            let got = self.rows(&read["timestamp"])?;
            if got != want {
                let first = got.iter().zip(&want).find(|(a, b)| a != b);
                let at = read["timestamp"]
                    .as_u64()
                    .map_or("the latest time".into(), |t| format!("time {t}"));
                found.push(format!(
                    "rows at {at}: tessera {}, libtiledb {}; first differing {first:?}",
                    got.len(),
                    want.len()
                ));
            }
        }
        Ok(found)
    }
}

/// A folder's files as `maintained.py` records them: the name without its
/// uuid (`__t1_t2_v.ext`) and the bytes in hex.
fn files(folder: &Path) -> Value {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let listed: Vec<Value> = names
        .iter()
        .map(|name| {
            let (stem, ext) = name.split_once('.').unwrap_or((name, ""));
            let parts: Vec<&str> = stem.split('_').collect();
            let kept: Vec<&str> = parts
                .iter()
                .take(4)
                .chain(parts.iter().skip(5))
                .copied()
                .collect();
            let dot = if ext.is_empty() { "" } else { "." };
            let data = std::fs::read(folder.join(name)).unwrap();
            let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
            serde_json::json!({"name": format!("{}{dot}{ext}", kept.join("_")), "hex": hex})
        })
        .collect();
    listed.into()
}

#[test]
fn maintenance_matches_libtiledb() {
    let scratch = std::env::temp_dir().join(format!("tessera-maintained-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let all = records("maintained");
    assert!(
        all.len() >= 100,
        "only {} records under testdata/maintained",
        all.len()
    );
    let mut failures = Vec::new();
    for record in &all {
        let text = std::fs::read_to_string(record).unwrap();
        let record_json: Value = serde_json::from_str(&text).unwrap();
        let spec = &record_json["spec"];
        let name = format!(
            "{}/{}",
            record_json["applied_by"].as_str().unwrap(),
            spec["id"].as_str().unwrap()
        );
        let copy = scratch.join(name.replace('/', "-"));
        copy_dir(&testdata().join(spec["path"].as_str().unwrap()), &copy);
        let outcome = commands(spec, &copy.display().to_string())
            .iter()
            .try_for_each(|c| run(c).map(drop))
            .and_then(|()| Changed { dir: &copy, spec }.differences(&record_json["result"]));
        match outcome {
            Ok(found) if found.is_empty() => {}
            Ok(found) => failures.push(format!("{name}:\n    {}", found.join("\n    "))),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        failures.is_empty(),
        "{} of {} operations differ from libtiledb's:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
    eprintln!("{} operations as libtiledb's own", all.len());
}
