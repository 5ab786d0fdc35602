//! Project tasks: `cargo xtask fixtures [--check] [--version V]... [--case C]...`
//! `cargo xtask fuzz [--time S] [--target T]...`, `cargo xtask bench` and
//! `cargo xtask dist` (the shipped binary, statically linked: `dist.rs`).
//!
//! `fixtures` regenerates `testdata/tiledb-<version>/` with the real libtiledb:
//! one Python venv per pinned TileDB-Py version under `target/tiledb-py/`,
//! `xtask/fixtures/generate.py` writes the arrays with that version, and
//! `xtask/fixtures/read.py` records what TileDB-Py reads back, both with the
//! writing version and with the newest one. The newest reader's answer is
//! the expectation; where the two disagree the case records both and why.
//! `maintained` (`maintained.rs`) records libtiledb's own maintenance
//! operations on the fixtures, for `tessera-cli`'s `tests/maintained.rs`;
//! `sequences` (`sequences.rs`) sequences of maintenance steps done by
//! tessera and libtiledb side by side, for `tests/sequences.rs`.

mod bench;
mod dist;
mod groups;
mod maintained;
mod maintenance;
mod random;
mod s3_maintained;
mod sequences;
mod soma;
mod writes;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// TileDB-Py versions pinned for fixtures (libtiledb 2.13 to 2.30).
const VERSIONS: &[&str] = &["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"];
/// The reader whose answers are the expectations.
const NEWEST: &str = "0.36.1";

type Error = Box<dyn std::error::Error>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn run(cmd: &mut Command) -> Result<std::process::Output, Error> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        // Check scripts report what differs on stdout: show both.
        // The status says how it ended (a signal shows as one).
        return Err(format!(
            "{cmd:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(out)
}

/// The venv of a TileDB-Py version, created and installed on first use.
fn venv(version: &str) -> Result<PathBuf, Error> {
    let dir = root().join("target/tiledb-py").join(version);
    let py = dir.join("bin/python");
    // Written once pip succeeded: a venv whose install failed half-way is
    // made again, not taken as ready.
    let installed = dir.join("tessera-installed");
    if !installed.exists() {
        eprintln!("creating venv for TileDB-Py {version}");
        run(Command::new("python3").args(["-m", "venv"]).arg(&dir))?;
        let numpy = if version < "0.30" { "numpy<2" } else { "numpy" };
        run(Command::new(dir.join("bin/pip")).args([
            "install",
            "-q",
            &format!("tiledb=={version}"),
            numpy,
        ]))?;
        std::fs::write(&installed, version)?;
    }
    Ok(py)
}

/// `cargo xtask venvs`: every pinned TileDB-Py venv, made side by side
/// (downloads, mostly waiting on the network). CI makes them while it
/// compiles.
fn venvs() -> Result<(), Error> {
    let made: Vec<_> = VERSIONS
        .iter()
        .map(|v| std::thread::spawn(move || venv(v).map(drop).map_err(|e| e.to_string())))
        .collect();
    for m in made {
        m.join().map_err(|_| "making a venv panicked")??;
    }
    Ok(())
}

fn read_case(py: &Path, case: &Path) -> Result<Value, Error> {
    let out = run(Command::new(py)
        .arg(root().join("xtask/fixtures/read.py"))
        .arg(case))?;
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Why the writer's TileDB-Py may read differently (known reader bugs).
fn known_reason(writer: &str) -> &'static str {
    match writer {
        "0.19.1" => "TileDB-Py 0.19.1 returns no validity masks (nulls read as values); the newest reader is right",
        "0.23.5" | "0.25.1" => "TileDB-Py of this version inverts validity masks in multi_index results; the newest reader is right",
        _ => "the readers disagree; the newest libtiledb reader is taken as right",
    }
}

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

/// JSON with one top-level field per line and one result row per line:
/// small, and readable in diffs.
fn render(v: &Value) -> String {
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
fn stable(v: &Value) -> Value {
    json!({
        "schema": v["schema"],
        "metadata": v["metadata"],
        "queries": v["queries"],
        "fragments": v["fragments"].as_array().map(|fs| fs.iter().map(|f| json!({
            "timestamp_range": f["timestamp_range"], "version": f["version"], "cell_num": f["cell_num"],
            "nonempty_domain": f["nonempty_domain"], "sparse": f["sparse"]})).collect::<Vec<_>>()),
    })
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

/// Reads every committed case again with the newest TileDB-Py and
/// replaces what it read in `expected.json`, leaving the arrays, the case,
/// the writer and the disagreements as they are. (Until session 16 the
/// expectations went through a JSON parser that could round a float's
/// last digit; this writes them exactly.)
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

fn fixtures(args: &[String]) -> Result<(), Error> {
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
fn picked_versions(args: &[String]) -> Vec<&str> {
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

/// Fuzz targets under `fuzz/` (cargo-fuzz, nightly).
const FUZZ_TARGETS: &[&str] = &[
    "generic_tile",
    "chunk_framing",
    "filter_pipeline",
    "filter_reverse",
    "array_schema",
    "enumeration",
    "fragment_footer",
    "rtree",
    "delete_condition",
    "array_metadata",
    "timestamped_name",
    "array_folder",
];

/// Seeds for `array_folder`: every file of every fixture with its selector.
fn seed_array_folder(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir)?;
    let fixtures = tessera::fuzzing::load_fixtures(&root().join("testdata"))?;
    for (n, seed) in tessera::fuzzing::seeds(&fixtures).into_iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{n}")), seed)?;
    }
    Ok(())
}

/// Seeds a corpus with small files from testdata (every kind of structure).
fn seed_corpus(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir)?;
    let mut stack = vec![
        root().join("testdata/tiledb-0.36.1"),
        root().join("testdata/tiledb-0.19.1"),
    ];
    let mut n = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)?.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if e.metadata()?.len() <= 64 * 1024 && p.extension().is_none_or(|x| x != "json")
            {
                std::fs::copy(&p, dir.join(format!("seed-{n}")))?;
                n += 1;
            }
        }
    }
    Ok(())
}

/// `cargo xtask fuzz [--time SECONDS] [--target NAME]...`: runs each target
/// for a bounded time on the nightly toolchain and reports the outcome.
fn fuzz(args: &[String]) -> Result<(), Error> {
    let time: u64 = args
        .windows(2)
        .find(|w| w[0] == "--time")
        .map(|w| w[1].parse())
        .transpose()?
        .unwrap_or(60);
    let picked: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--target")
        .map(|w| w[1].as_str())
        .collect();
    let targets: Vec<&str> = if picked.is_empty() {
        FUZZ_TARGETS.to_vec()
    } else {
        picked
    };
    let mut failed = Vec::new();
    for t in targets {
        let corpus = root().join("target/fuzz-corpus").join(t);
        if !corpus.exists() {
            if t == "array_folder" {
                seed_array_folder(&corpus)?;
            } else {
                seed_corpus(&corpus)?;
            }
        }
        eprintln!("fuzzing {t} for {time} s");
        let status = Command::new("cargo")
            .current_dir(root().join("fuzz"))
            .args(["+nightly", "fuzz", "run", t])
            .arg(&corpus)
            .args([
                "--",
                &format!("-max_total_time={time}"),
                "-rss_limit_mb=2048",
                "-timeout=10",
                "-print_final_stats=1",
            ])
            .status()?;
        if !status.success() {
            failed.push(t);
        }
    }
    if failed.is_empty() {
        println!("no crashes");
        Ok(())
    } else {
        Err(format!("crashes in {failed:?}: see fuzz/artifacts/").into())
    }
}

/// Large result buffers get transparent huge pages: see `tessera-alloc`.
#[global_allocator]
static ALLOC: tessera_alloc::HugePages = tessera_alloc::HugePages;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("fixtures") => fixtures(&args[1..]),
        Some("fuzz") => fuzz(&args[1..]),
        Some("bench") => bench::bench(&args[1..]),
        Some("floor") => bench::floor(&args[1..]),
        Some("bench-write") => bench::bench_write(&args[1..]),
        Some("dist") => dist::dist(),
        Some("check-writes") => writes::check_writes(),
        Some("venvs") => venvs(),
        Some("check-s3-maintained") => s3_maintained::check_s3_maintained(),
        Some("maintained") => maintained::record(&picked_versions(&args[1..])),
        Some("sequences") => sequences::record(&picked_versions(&args[1..])),
        // The maintenance sequences part of check-writes alone.
        Some("check-sequences") => sequences::check(&picked_versions(&args[1..])),
        Some("bench-consolidate") => bench::bench_consolidate(&args[1..]),
        Some("bench-s3") => bench::bench_s3(&args[1..]),
        Some("bench-ab") => bench::bench_ab(&args[1..]),
        Some("bench-s3-consolidate") => bench::bench_s3_consolidate(&args[1..]),
        Some("bench-python") => bench::bench_python(&args[1..]),
        Some("bench-sql") => bench::bench_sql(&args[1..]),
        // The fragment consolidation part of check-writes alone.
        Some("check-consolidation") => ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"]
            .iter()
            .try_for_each(|r| maintenance::check_fragment_consolidation(r)),
        // The maintenance part of check-writes alone.
        Some("check-maintenance") => VERSIONS
            .iter()
            .try_for_each(|r| maintenance::check_maintenance(r)),
        // The groups part of check-writes alone.
        Some("check-groups") => ["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"]
            .iter()
            .try_for_each(|r| groups::check_groups(r)),
        _ => Err("usage: cargo xtask fixtures [--check | --reread] [--version V]... [--case C]... | cargo xtask fuzz [--time S] [--target T]... | cargo xtask bench [--scale S] [--rounds N] [--only TEXT] | cargo xtask bench-write [--scale S] [--rounds N] | cargo xtask bench-ab --before REV [--scale S] [--rounds N] | cargo xtask bench-consolidate [--scale S] [--rounds N] | cargo xtask bench-s3 [--scale S] [--rounds N] [--rig DIR] [--delay MS] [--mbps MB] [--only TEXT] | cargo xtask bench-s3-consolidate [--scale S] [--rounds N] [--rig DIR] | cargo xtask bench-python [--scale S] [--rounds N] | cargo xtask bench-sql [--scale S] [--rounds N] | cargo xtask dist | cargo xtask check-writes | cargo xtask venvs | cargo xtask maintained [--version V]... | cargo xtask sequences [--version V]... | cargo xtask check-sequences [--version V]... | cargo xtask check-groups | cargo xtask check-maintenance | cargo xtask check-consolidation | cargo xtask check-s3-maintained".into()),
    };
    if let Err(e) = r {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
