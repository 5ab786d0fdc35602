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

/// `cargo xtask fuzz [--time SECONDS] [--target NAME]...`: runs each target
/// for a bounded time on the nightly toolchain and reports the outcome.
pub(crate) fn fuzz(args: &[String]) -> Result<(), Error> {
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
