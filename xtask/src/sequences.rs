//! Sequences of maintenance steps (consolidation and vacuum of every
//! mode, in several orders and twice over, between new writes, deletes
//! and metadata puts), done by tessera and by the fixture's own libtiledb
//! side by side (`xtask/fixtures/sequences.py`): after every step the
//! release reads tessera's copy as its own, and both copies hold the same
//! fragments, commits and lists. `cargo xtask sequences` records what
//! TileDB-Py 0.36.1 reads of tessera's copies after each step in
//! `testdata/sequences/tiledb-<V>/` for `crates/tessera-cli/tests/sequences.rs`; `cargo xtask check-writes`
//! runs the same comparison into `target/`.

use crate::common::{root, run, venv, Error, NEWEST};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The key `xtask/fixtures/generate.py` encrypts fixtures with.
const KEY: &str = "3031323334353637383961626364654630313233343536373839616263646546";

/// Timestamps of the steps that write: after every fixture's own.
const WRITE_AT: u64 = 50;
const DELETE_AT: u64 = 60;
const META_AT: u64 = 70;

/// Each mode consolidated, then vacuumed.
fn single_modes() -> Vec<(&'static str, Vec<String>)> {
    ["fragments", "commits", "fragment_meta", "array_meta"]
        .into_iter()
        .map(|m| (m, vec![format!("consolidate {m}"), format!("vacuum {m}")]))
        .collect()
}

/// Fragments, commits and fragment metadata consolidated, fragments and
/// commits vacuumed; after `between` (steps that write), the same again.
fn chained(between: &[String]) -> Vec<String> {
    let round = [
        "consolidate fragments",
        "consolidate commits",
        "consolidate fragment_meta",
        "vacuum fragments",
        "vacuum commits",
    ]
    .map(str::to_owned);
    let mut steps = round.to_vec();
    steps.extend_from_slice(between);
    steps.extend(round);
    steps
}

/// Orders other than the chained one, each step twice: commits vacuumed
/// before fragments, consolidations repeated with nothing new, writes and
/// deletes between, metadata consolidated twice.
fn shuffled(between: &[String]) -> Vec<String> {
    let mut steps: Vec<String> = [
        "consolidate commits",
        "consolidate fragments",
        "vacuum commits",
        "consolidate fragments",
        "consolidate commits",
        "vacuum fragments",
        "vacuum fragments",
    ]
    .map(str::to_owned)
    .to_vec();
    steps.extend_from_slice(between);
    steps.extend(
        [
            "consolidate fragment_meta",
            "consolidate fragments",
            "vacuum commits",
            "vacuum fragments",
            "consolidate commits",
            "vacuum commits",
            "vacuum fragment_meta",
        ]
        .map(str::to_owned),
    );
    steps.extend([
        format!("meta {META_AT}"),
        "consolidate array_meta".into(),
        format!("meta {}", META_AT + 1),
        "consolidate array_meta".into(),
        "vacuum array_meta".into(),
        "vacuum array_meta".into(),
    ]);
    steps
}

/// A fixture put through the sequences: its cells to write (tessera's
/// JSONL value forms) and a delete condition, where it has them.
struct Fixture {
    case: &'static str,
    key: Option<&'static str>,
    write: Option<Value>,
    delete: Option<&'static str>,
    /// The first release whose fixtures have it.
    since: &'static str,
}

fn fixtures() -> Vec<Fixture> {
    let f = |case, since, write: Option<Value>, delete| Fixture {
        case,
        key: None,
        write,
        delete,
        since,
    };
    vec![
        f("random_sparse", "0.19", None, Some("a > 500")),
        f(
            "dense_1d_fragments",
            "0.19",
            Some(json!([{"x": 5, "a": 55}, {"x": 6, "a": 66}])),
            None,
        ),
        // Before libtiledb 2.17 a vacuum list's absolute URIs name the
        // array where it was written: a copy elsewhere reads differently
        // with 2.13 (it keeps the listed fragments), so from 0.23 only.
        f(
            "consolidated",
            "0.23",
            Some(json!([{"d": 25, "a": 250}, {"d": 3, "a": 33}])),
            Some("a > 30"),
        ),
        f(
            "deletes",
            "0.19",
            Some(json!([{"d": 3, "a": 33, "b": 1.25}, {"d": 17, "a": 170, "b": 8.5}])),
            Some("a > 100"),
        ),
        // Consolidated by 2.13 with absolute vacuum lists, as above.
        f(
            "deletes_consolidated",
            "0.23",
            Some(json!([{"d": 8, "a": 80}, {"d": 12, "a": 120}])),
            Some("a < 3"),
        ),
        f(
            "schema_evolution",
            "0.19",
            Some(json!([{"d": 5, "a": 6, "b": 0.5}])),
            Some("a < 2"),
        ),
        f("enumerations", "0.23", None, None),
        f(
            "array_metadata",
            "0.19",
            Some(json!([{"d": 1, "a": 10}, {"d": 2, "a": 20}])),
            None,
        ),
        Fixture {
            key: Some(KEY),
            ..f(
                "encrypted_fragments",
                "0.19",
                Some(json!([{"d": 7, "a": 70, "s": "w7"}])),
                Some("a < 50"),
            )
        },
    ]
}

/// Every case for `release`'s fixtures.
pub fn cases(release: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for fixture in fixtures().iter().filter(|f| release >= f.since) {
        let mut between = Vec::new();
        if fixture.write.is_some() {
            between.push(format!("write {WRITE_AT}"));
        }
        if fixture.delete.is_some() {
            between.push(format!("delete {DELETE_AT}"));
        }
        let mut sequences = single_modes();
        sequences.push(("chained", chained(&between)));
        sequences.push(("shuffled", shuffled(&between)));
        for (name, steps) in sequences {
            out.push(json!({
                "id": format!("{}-{name}", fixture.case),
                "path": format!("tiledb-{release}/{}/array", fixture.case),
                "key": fixture.key,
                "write": fixture.write,
                "delete": fixture.delete,
                "steps": steps,
            }));
        }
    }
    out
}

/// The `tessera` binary: `TESSERA_BINARY` where set (CI passes the one
/// its `cargo test` run built), else built as `cargo test --workspace`
/// builds it.
pub fn tessera_binary() -> Result<PathBuf, Error> {
    if let Some(given) = std::env::var_os("TESSERA_BINARY") {
        return Ok(PathBuf::from(given));
    }
    let built = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["build", "-q", "--workspace", "--bins"])
        .status()?;
    if !built.success() {
        return Err("building the tessera CLI failed".into());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or(root().join("target"), PathBuf::from);
    Ok(target.join("debug/tessera"))
}

/// Runs every case of `release` with its TileDB-Py, records into `out`;
/// with `snapshots`, keeps tessera's copy after each step there.
fn run_release(
    release: &str,
    tessera: &Path,
    out: &Path,
    snapshots: Option<&Path>,
) -> Result<(), Error> {
    let work = root().join("target/sequences").join(release);
    std::fs::create_dir_all(&work)?;
    let cases_file = work.join("cases.json");
    std::fs::write(&cases_file, serde_json::to_string(&cases(release))?)?;
    let report = run(Command::new(venv(release)?)
        .arg(root().join("xtask/fixtures/sequences.py"))
        .arg(tessera)
        .arg(root().join("testdata"))
        .arg(work.join("copies"))
        .arg(&cases_file)
        .arg(out)
        .args(snapshots))?;
    eprint!("{}", String::from_utf8_lossy(&report.stdout));
    Ok(())
}

/// `cargo xtask sequences [--version V]...`: records into `testdata/`.
pub fn record(releases: &[&str]) -> Result<(), Error> {
    let tessera = tessera_binary()?;
    for release in releases {
        let out = root().join(format!("testdata/sequences/tiledb-{release}"));
        let _ = std::fs::remove_dir_all(&out);
        let snapshots = root()
            .join("target/sequences")
            .join(release)
            .join("snapshots");
        let _ = std::fs::remove_dir_all(&snapshots);
        run_release(release, &tessera, &out, Some(&snapshots))?;
        // What the newest TileDB-Py reads is the expectation (older ones
        // misread nulls), as for the fixtures.
        let report = run(Command::new(venv(NEWEST)?)
            .arg(root().join("xtask/fixtures/sequences.py"))
            .args([Path::new("reread"), &out, &snapshots]))?;
        eprint!("{}", String::from_utf8_lossy(&report.stdout));
    }
    Ok(())
}

/// Part of `cargo xtask check-writes`: every release, into `target/`.
pub fn check(releases: &[&str]) -> Result<(), Error> {
    let tessera = tessera_binary()?;
    for release in releases {
        let out = root()
            .join("target/sequences")
            .join(release)
            .join("records");
        run_release(release, &tessera, &out, None)?;
    }
    Ok(())
}
