//! Sequences of maintenance steps by tessera, against what libtiledb read
//! of tessera's own copy after each step, without Python: every record
//! under `testdata/sequences/tiledb-<release>/` (`cargo xtask sequences`)
//! holds a fixture, its steps (consolidations and vacuums of every mode
//! in several orders, writes, deletes and metadata puts between), and what
//! that release's TileDB-Py read of the copy tessera changed after each
//! step, where it also checked that libtiledb doing the same steps left
//! the same fragments, commits and lists. Here the `tessera` CLI applies
//! the steps again, and after each, what tessera reads must be what
//! libtiledb read: every row, and the fragments left.

mod common;

use common::{canonical, copy_dir, fragment_records, records, sorted_rows, tessera, testdata};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A fixture's copy that tessera changes step by step.
struct Copy<'c> {
    dir: PathBuf,
    case: &'c Value,
}

impl Copy<'_> {
    /// `tessera VERB COPY ARGS... [--key KEY]`: its output, or an error
    /// naming the command.
    fn tessera(&self, verb: &str, args: &[&str]) -> Result<String, String> {
        let dir = self.dir.display().to_string();
        let mut all = vec![verb, dir.as_str()];
        all.extend(args);
        if let Some(k) = self.case["key"].as_str() {
            all.extend(["--key", k]);
        }
        match tessera(&all) {
            (true, out, _) => Ok(out),
            (false, _, err) => Err(format!("tessera {}: {}", all.join(" "), err.trim())),
        }
    }

    /// Applies one step as `xtask/fixtures/sequences.py` does.
    fn step(&self, step: &str) -> Result<(), String> {
        let (verb, arg) = step.split_once(' ').ok_or(format!("step `{step}`"))?;
        match verb {
            "consolidate" | "vacuum" => self.tessera(verb, &["--mode", arg])?,
            "write" => {
                let cells: String = self.case["write"]
                    .as_array()
                    .ok_or("cells to write")?
                    .iter()
                    .map(|c| format!("{c}\n"))
                    .collect();
                let input = self.dir.with_extension("jsonl");
                std::fs::write(&input, cells).map_err(|e| e.to_string())?;
                let input = input.display().to_string();
                self.tessera("write", &["--input", &input, "--timestamp", arg])?
            }
            "delete" => {
                let cond = self.case["delete"].as_str().ok_or("a condition")?;
                self.tessera("delete", &["--where", cond, "--timestamp", arg])?
            }
            "meta" => self.tessera(
                "meta",
                &["--set", &format!("step={arg}"), "--timestamp", arg],
            )?,
            _ => return Err(format!("unknown step `{step}`")),
        };
        Ok(())
    }

    /// The rows tessera reads (at the latest time, or at `timestamp`),
    /// canonical and sorted.
    fn rows(&self, timestamp: Option<u64>) -> Result<Vec<String>, String> {
        let t = timestamp.map(|t| t.to_string());
        let args: Vec<&str> = t.iter().flat_map(|t| ["--timestamp", t.as_str()]).collect();
        Ok(sorted_rows(&self.tessera("read", &args)?))
    }

    /// The fragments tessera lists, as `maintained.py` records them.
    fn fragments(&self) -> Result<Value, String> {
        let listed = serde_json::from_str(&self.tessera("fragments", &["--json"])?)
            .map_err(|e| format!("tessera fragments --json: {e}"))?;
        Ok(fragment_records(&listed))
    }

    /// What differs from the record (`rows` before the first step, then
    /// each step's) after each step.
    fn differences(&self, rows: &Value, steps: &[Value]) -> Result<Vec<String>, String> {
        let mut found = Vec::new();
        let mut want = recorded_rows(rows)?;
        for (n, recorded) in steps.iter().enumerate() {
            let step = recorded["step"].as_str().ok_or("a step")?;
            let at = format!("step {} ({step})", n + 1);
            self.step(step).map_err(|e| format!("{at}: {e}"))?;
            // Rows are recorded where they changed.
            if !recorded["rows"].is_null() {
                want = recorded_rows(&recorded["rows"])?;
            }
            let mut reads = vec![(None, want.clone())];
            for earlier in recorded["earlier"].as_array().into_iter().flatten() {
                reads.push((
                    earlier["timestamp"].as_u64(),
                    recorded_rows(&earlier["rows"])?,
                ));
            }
            for (timestamp, want) in reads {
                let got = self.rows(timestamp)?;
                if got != want {
                    let first = got.iter().zip(&want).find(|(a, b)| a != b);
                    let when = timestamp.map_or("the latest time".into(), |t| format!("time {t}"));
                    found.push(format!(
                        "{at}: rows at {when}: tessera {}, libtiledb {}; first differing {first:?}",
                        got.len(),
                        want.len()
                    ));
                }
            }
            let fragments = self.fragments()?;
            if canonical(&fragments) != canonical(&recorded["fragments"]) {
                found.push(format!(
                    "{at}: fragments: tessera {fragments}, libtiledb {}",
                    recorded["fragments"]
                ));
            }
        }
        Ok(found)
    }
}

/// Recorded rows, canonical and sorted.
fn recorded_rows(rows: &Value) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = rows
        .as_array()
        .ok_or("rows")?
        .iter()
        .map(canonical)
        .collect();
    out.sort();
    Ok(out)
}

/// The steps of the sequence recorded at `path`, replayed on a copy under
/// `scratch`: how many, and what differed.
fn sequence_differences(path: &Path, scratch: &Path) -> (usize, Vec<String>) {
    let record: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let case = &record["case"];
    let id = case["id"].as_str().unwrap();
    let release = path.parent().and_then(Path::file_name).unwrap();
    let dir = scratch.join(release).join(id);
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&testdata().join(case["path"].as_str().unwrap()), &dir);
    let recorded = record["steps"].as_array().unwrap();
    let copy = Copy { dir, case };
    let failures = match copy.differences(&record["rows"], recorded) {
        Ok(found) => (found.into_iter())
            .map(|f| format!("{release:?} {id}: {f}"))
            .collect(),
        Err(e) => vec![format!("{release:?} {id}: {e}")],
    };
    (recorded.len(), failures)
}

/// Sequences side by side (each on its own copy): most of a step's time
/// is a `tessera` process starting, on one core.
#[test]
fn tessera_reads_each_step_as_libtiledb_read_it() {
    use rayon::prelude::*;
    let scratch = std::env::temp_dir().join(format!("tessera-sequences-{}", std::process::id()));
    let records = records("sequences");
    let done: Vec<(usize, Vec<String>)> = (records.par_iter())
        .map(|path| sequence_differences(path, &scratch))
        .collect();
    let _ = std::fs::remove_dir_all(&scratch);
    let steps: usize = done.iter().map(|(n, _)| n).sum();
    let failures: Vec<String> = done.into_iter().flat_map(|(_, f)| f).collect();
    assert!(
        records.len() >= 100,
        "only {} sequence records",
        records.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{} sequences, {steps} steps: tessera reads what libtiledb read",
        records.len()
    );
}
