//! `cargo xtask fuzz`: every cargo-fuzz target run for a bounded time on
//! the nightly toolchain, its corpus seeded from testdata.

use crate::common::{root, Error};
use std::path::Path;
use std::process::Command;

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

/// `cargo xtask fuzz [--time SECONDS] [--jobs N] [--target NAME]...`:
/// runs each target for a bounded time on the nightly toolchain, `N` at
/// once (default 1), its corpus kept in `target/fuzz-corpus/<target>` from
/// run to run, its output in `target/fuzz-logs/<target>.log`; prints a
/// table row per target (minutes, executions, corpus files and bytes,
/// outcome) for docs/ROBUSTNESS.md.
pub(crate) fn fuzz(args: &[String]) -> Result<(), Error> {
    let value = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
    let time: u64 = value("--time")
        .map(|t| t.parse())
        .transpose()?
        .unwrap_or(60);
    let jobs: usize = value("--jobs").map(|j| j.parse()).transpose()?.unwrap_or(1);
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
    let logs = root().join("target/fuzz-logs");
    std::fs::create_dir_all(&logs)?;
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for batch in targets.chunks(jobs.max(1)) {
        let mut running = Vec::new();
        for &t in batch {
            let corpus = root().join("target/fuzz-corpus").join(t);
            if !corpus.exists() {
                if t == "array_folder" {
                    seed_array_folder(&corpus)?;
                } else {
                    seed_corpus(&corpus)?;
                }
            }
            eprintln!("fuzzing {t} for {time} s");
            let log = std::fs::File::create(logs.join(format!("{t}.log")))?;
            let child = Command::new("cargo")
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
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()?;
            running.push((t, corpus, child));
        }
        for (t, corpus, mut child) in running {
            let ok = child.wait()?.success();
            if !ok {
                failed.push(t);
            }
            let text = std::fs::read_to_string(logs.join(format!("{t}.log")))?;
            let runs = stat(&text, "stat::number_of_executed_units:").unwrap_or(0);
            let (files, bytes) = corpus_size(&corpus)?;
            let outcome = if ok {
                "no findings"
            } else {
                "FINDING: see fuzz/artifacts/"
            };
            rows.push(format!(
                "| `{t}` | {:.0} | {runs} | {files} ({} KiB) | {outcome} |",
                time as f64 / 60.0,
                bytes / 1024
            ));
        }
    }
    println!("| target | minutes | executions | corpus files | result |");
    println!("|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    if failed.is_empty() {
        println!("no crashes");
        Ok(())
    } else {
        Err(format!("crashes in {failed:?}: see fuzz/artifacts/").into())
    }
}

/// The number libFuzzer's final stats give for `key`.
fn stat(log: &str, key: &str) -> Option<u64> {
    log.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().parse().ok())
}

/// Files in a corpus folder and their bytes.
fn corpus_size(dir: &Path) -> Result<(u64, u64), Error> {
    let mut out = (0, 0);
    for e in std::fs::read_dir(dir)?.flatten() {
        out.0 += 1;
        out.1 += e.metadata()?.len();
    }
    Ok(out)
}
