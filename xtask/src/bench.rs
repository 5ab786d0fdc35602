//! `cargo xtask bench`: tessera against libtiledb on the same arrays, with
//! the floor of each read (`floor.rs`) beside them.

use crate::common::{root, venv, Error};
use crate::dist::Profile::Profiling;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cargo feature of `tessera sql`.
const SQL: [&str; 1] = ["tessera-cli/sql"];

/// `cargo xtask bench [--scale S] [--rounds N] [--only TEXT]`. With
/// `--only`, just the cases whose `array / case` holds TEXT run, and the
/// table is printed, not written into docs/PERFORMANCE.md.
pub fn bench(args: &[String]) -> Result<(), Error> {
    let opt = |name: &str, default: &str| option(args, name, default);
    let scale = opt("--scale", "1");
    let rounds = opt("--rounds", "5");
    let only = opt("--only", "");
    let python = venv("0.36.1")?;
    let dir = root().join("target/bench").join(format!("scale-{scale}"));
    eprintln!("generating benchmark arrays in {} (once)", dir.display());
    // Runs a step with its output on the terminal.
    let step = |cmd: &mut Command, what: &str| -> Result<(), Error> {
        if cmd.status()?.success() {
            Ok(())
        } else {
            Err(format!("{what} failed").into())
        }
    };
    step(
        Command::new(&python)
            .arg(root().join("xtask/bench/generate.py"))
            .arg(&dir)
            .arg(&scale),
        "generating the benchmark arrays",
    )?;
    // The binaries as shipped (`cargo xtask dist`: statically linked on
    // glibc Linux; symbols kept), the floor's too, so both start as fast.
    eprintln!("building release binaries (profile profiling)");
    let bin = crate::dist::build(&["tessera-cli", "xtask"], &[], Profiling)?;
    let results = dir.join("results.md");
    step(
        Command::new(&python)
            .arg(root().join("xtask/bench/bench.py"))
            .arg(&dir)
            .arg(bin.join("tessera"))
            .arg(bin.join("xtask"))
            .arg(&rounds)
            .arg(&results)
            .arg(&only),
        "the benchmark",
    )?;
    if !only.is_empty() {
        println!("{}", std::fs::read_to_string(&results)?);
        return Ok(());
    }
    // The table goes into docs/PERFORMANCE.md, under this host's processor.
    let table = format!(
        "Run: `cargo xtask bench --scale {scale} --rounds {rounds}`. \
         Times are best / median of {rounds} alternating rounds, whole processes, page cache warm. \
         Ratios are medians of tessera's whole process (statically linked, as `cargo xtask dist` \
         builds it) over libtiledb's read alone (its interpreter start-up, import and context \
         excluded), and over its read plus the creation of its context (the library's start-up).\n\n{}",
        std::fs::read_to_string(&results)?
    );
    into_performance_doc("bench", &table)?;
    println!("{table}");
    Ok(())
}

/// `cargo xtask bench-write [--scale S] [--rounds N] [--only TEXT]`:
/// writing the bench's 10-million-cell sparse array and its dense 8192²
/// array, tessera (the shipped binary, from an Arrow IPC file; the Python
/// package, from numpy) against libtiledb (TileDB-Py 0.36.1, from the same
/// Arrow file and from numpy) in the same run (`xtask/bench/write.py`);
/// `--only` runs the cases whose label holds TEXT. Prints the table.
pub fn bench_write(args: &[String]) -> Result<(), Error> {
    let opt = |name: &str, default: &str| option(args, name, default);
    let (scale, rounds) = (opt("--scale", "1"), opt("--rounds", "5"));
    let only = opt("--only", "");
    let python = venv("0.36.1")?;
    let dir = root().join("target/bench").join(format!("scale-{scale}"));
    let generated = Command::new(&python)
        .arg(root().join("xtask/bench/generate.py"))
        .arg(&dir)
        .arg(&scale)
        .status()?;
    if !generated.success() {
        return Err("generating the benchmark arrays failed".into());
    }
    let bin = crate::dist::build(&["tessera-cli"], &[], Profiling)?;
    // The dense array is written from Python too (a box from numpy).
    install_wheel(&python)?;
    let ran = Command::new(&python)
        .arg(root().join("xtask/bench/write.py"))
        .arg(&dir)
        .arg(bin.join("tessera"))
        .arg(&rounds)
        .arg(&only)
        .status()?;
    if !ran.success() {
        return Err("the write benchmark failed".into());
    }
    Ok(())
}

/// `cargo xtask bench-consolidate [--scale S] [--rounds N]`: consolidating
/// the bench's 20-fragment dense array and a 100-fragment sparse array,
/// tessera (the shipped binary) against libtiledb (TileDB-Py 0.36.1) in
/// the same run (`xtask/bench/consolidate.py`); prints the table.
pub fn bench_consolidate(args: &[String]) -> Result<(), Error> {
    let (python, dir, bin, rounds) = prepare(args, "3")?;
    let ran = Command::new(&python)
        .arg(root().join("xtask/bench/consolidate.py"))
        .arg(&dir)
        .arg(bin.join("tessera"))
        .arg(&rounds)
        .status()?;
    if !ran.success() {
        return Err("the consolidation benchmark failed".into());
    }
    Ok(())
}

/// `cargo xtask bench-s3 [--scale S] [--rounds N] [--rig DIR] [--delay MS]
/// [--mbps MB] [--only TEXT]`: every bench case read from the S3 rig of
/// DIR (default `../shared/bench/s3`: s3s-fs behind its proxy, MS a
/// request (default 20), MB/s a connection (default 100)) by tessera and
/// by libtiledb in the same run, with requests, bytes and the rig's floor
/// (xtask/bench/s3.py). The table goes into docs/PERFORMANCE.md unless
/// `--only` picks cases.
pub fn bench_s3(args: &[String]) -> Result<(), Error> {
    let (python, dir, bin, rounds) = prepare(args, "3")?;
    let only = option(args, "--only", "");
    let rig = S3Rig::built(args)?;
    let run = Run {
        python: &python,
        script: "s3.py",
        out: dir.join("s3-results.md"),
        marker: if only.is_empty() { "bench-s3" } else { "" },
        failed: "the S3 benchmark failed",
    };
    run.into_doc(&[
        dir.as_os_str(),
        bin.join("tessera").as_os_str(),
        rig.server.as_os_str(),
        rig.proxy.as_os_str(),
        OsStr::new(&rounds),
        OsStr::new(&rig.delay),
        OsStr::new(&rig.mbps),
        OsStr::new(&only),
    ])
}

/// `cargo xtask bench-s3-consolidate [--scale S] [--rounds N] [--rig DIR]`:
/// consolidating the 20-fragment dense and 100-fragment sparse arrays where
/// they live on S3, tessera (waiting for its requests, and awaiting them:
/// `xtask consolidate-async`) against libtiledb in the same run, on the rig
/// of DIR (default `../shared/bench/s3`: s3s-fs, built once into
/// target/bench-s3, behind its delaying proxy); time, peak RSS, local disk
/// written, requests and bytes (xtask/bench/s3_consolidate.py). The table
/// goes into docs/PERFORMANCE.md.
pub fn bench_s3_consolidate(args: &[String]) -> Result<(), Error> {
    let (python, dir, rounds) = bench_arrays(args, "3")?;
    // The awaited consolidation's process (`xtask consolidate-async`)
    // built with the CLI, as `cargo xtask bench` builds them.
    let bin = crate::dist::build(&["tessera-cli", "xtask"], &[], Profiling)?;
    let xtask = bin.join("xtask");
    let rig = S3Rig::built(args)?;
    let run = Run {
        python: &python,
        script: "s3_consolidate.py",
        out: dir.join("s3-consolidate-results.md"),
        marker: "bench-s3-consolidate",
        failed: "the S3 consolidation benchmark failed",
    };
    run.into_doc(&[
        dir.as_os_str(),
        bin.join("tessera").as_os_str(),
        xtask.as_os_str(),
        rig.server.as_os_str(),
        rig.proxy.as_os_str(),
        OsStr::new(&rounds),
    ])
}

/// `cargo xtask bench-s3-faults [--scale S] [--rounds N] [--rig DIR]
/// [--delay MS] [--mbps MB] [--rates R,R,...]`: what retries cost. Large
/// and small reads of the S3 rig by tessera and by libtiledb in the same
/// run, while a seeded fault proxy between the rig's delaying proxy and
/// its server answers a share R of requests 503 SlowDown (default 0, 1 %
/// and 5 %), each reader against its own time with none
/// (xtask/bench/s3_faults.py). The table goes into docs/PERFORMANCE.md.
pub fn bench_s3_faults(args: &[String]) -> Result<(), Error> {
    let (python, dir, bin, rounds) = prepare(args, "3")?;
    let rates = option(args, "--rates", "0,0.01,0.05");
    let rig = S3Rig::built(args)?;
    let fault_proxy = root().join("crates/tessera-python/tests/fault_proxy.py");
    let run = Run {
        python: &python,
        script: "s3_faults.py",
        out: dir.join("s3-faults-results.md"),
        marker: "bench-s3-faults",
        failed: "the S3 retries benchmark failed",
    };
    run.into_doc(&[
        dir.as_os_str(),
        bin.join("tessera").as_os_str(),
        rig.server.as_os_str(),
        rig.proxy.as_os_str(),
        fault_proxy.as_os_str(),
        OsStr::new(&rounds),
        OsStr::new(&rig.delay),
        OsStr::new(&rig.mbps),
        OsStr::new(&rates),
    ])
}

/// `cargo xtask bench-dask [--scale S] [--rounds N] [--cells N]`: a Dask
/// read of the bench's largest array and a four-file ingestion of
/// `--cells` cells (default 40,000) on a two-worker `LocalCluster`,
/// against the same in one process and against TileDB-Py's
/// `from_tiledb` and tiledbsoma's register-and-append, in the same run
/// (xtask/bench/dask_bench.py). The table goes into docs/PERFORMANCE.md.
pub fn bench_dask(args: &[String]) -> Result<(), Error> {
    let (python, dir, rounds) = bench_arrays(args, "3")?;
    let cells = option(args, "--cells", "40000");
    pip(
        venv_of(&python)?,
        &[
            "tiledbsoma==2.3.0",
            "anndata==0.12.19",
            "scipy==1.17.1",
            "h5py",
            "dask[distributed,dataframe]==2026.8.0",
        ],
    )?;
    install_wheel(&python)?;
    let data = root().join(format!("target/bench/dask/cells-{cells}"));
    std::fs::create_dir_all(&data)?;
    let run = Run {
        python: &python,
        script: "dask_bench.py",
        out: data.join("results.md"),
        marker: "bench-dask",
        failed: "the Dask benchmark failed",
    };
    run.into_doc(&[
        dir.as_os_str(),
        data.as_os_str(),
        OsStr::new(&cells),
        OsStr::new(&rounds),
    ])
}

/// The value after `name` in `args`, or `default`.
fn option(args: &[String], name: &str, default: &str) -> String {
    args.windows(2)
        .find(|w| w[0] == name)
        .map_or(default.to_owned(), |w| w[1].clone())
}

/// The S3 rig (`--rig DIR`, default `../shared/bench/s3`): its server,
/// built once into target/bench-s3, its delaying proxy, and the delay of
/// a request (`--delay MS`, default 20) and most MB/s of a connection
/// (`--mbps MB`, default 100) it is run with.
struct S3Rig {
    server: PathBuf,
    proxy: PathBuf,
    delay: String,
    mbps: String,
}

impl S3Rig {
    fn built(args: &[String]) -> Result<S3Rig, Error> {
        let rig = args.windows(2).find(|w| w[0] == "--rig").map_or_else(
            || root().join("../shared/bench/s3"),
            |w| PathBuf::from(&w[1]),
        );
        let install = root().join("target/bench-s3");
        let built = Command::new("bash")
            .arg(rig.join("setup.sh"))
            .arg(&install)
            .stdout(std::process::Stdio::null())
            .status()?;
        if !built.success() {
            return Err(format!("building the S3 rig's server ({}) failed", rig.display()).into());
        }
        Ok(S3Rig {
            server: install.join("bin/s3s-fs"),
            proxy: rig.join("delay_proxy.py"),
            delay: option(args, "--delay", "20"),
            mbps: option(args, "--mbps", "100"),
        })
    }
}

/// A benchmark script that writes a Markdown table: run with its
/// arguments and `out`, its table goes into docs/PERFORMANCE.md between
/// `marker`'s lines and is printed.
struct Run<'p> {
    python: &'p Path,
    /// Under xtask/bench/.
    script: &'static str,
    out: PathBuf,
    /// Empty: the table is printed only.
    marker: &'static str,
    /// The error when the script fails.
    failed: &'static str,
}

impl Run<'_> {
    fn into_doc(self, args: &[&OsStr]) -> Result<(), Error> {
        let ran = Command::new(self.python)
            .arg(root().join("xtask/bench").join(self.script))
            .args(args)
            .arg(&self.out)
            .status()?;
        if !ran.success() {
            return Err(self.failed.into());
        }
        let table = std::fs::read_to_string(&self.out)?;
        if !self.marker.is_empty() {
            into_performance_doc(self.marker, &table)?;
        }
        println!("{table}");
        Ok(())
    }
}

/// The processor's model as `/proc/cpuinfo` names it.
fn processor() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The kind of host a figure was measured on, as the tables are kept: one
/// table per benchmark for each kind, as hosts are AMD or Intel.
fn host_kind(processor: &str) -> &'static str {
    if processor.contains("AMD") {
        "amd"
    } else if processor.contains("Intel") {
        "intel"
    } else {
        "other"
    }
}

/// Puts `table` into docs/PERFORMANCE.md as `marker`'s table for this
/// kind of host, between `<!-- MARKER:KIND:start -->` and
/// `<!-- MARKER:KIND:end -->` (KIND `amd`, `intel` or `other`), under a
/// line naming the processor. It replaces that kind's table, else a table
/// of no kind (`<!-- MARKER:start -->`), else it goes after the other
/// kinds' tables of `marker` (at the page's end the first time).
fn into_performance_doc(marker: &str, table: &str) -> Result<(), Error> {
    let doc = root().join("docs/PERFORMANCE.md");
    let text = std::fs::read_to_string(&doc)?;
    let cpu = processor();
    let kind = host_kind(&cpu);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let block = format!(
        "<!-- {marker}:{kind}:start -->\nProcessor: {cpu} ({cores} cores).\n\n{table}\n<!-- {marker}:{kind}:end -->"
    );
    std::fs::write(&doc, with_block(&text, marker, kind, &block))?;
    Ok(())
}

/// `text` with `block` in place of `marker`'s table for `kind` (see
/// [`into_performance_doc`]).
fn with_block(text: &str, marker: &str, kind: &str, block: &str) -> String {
    // Where the table marked `name` starts and ends, its markers included.
    let marked = |name: &str| -> Option<(usize, usize)> {
        let (start, end) = (
            format!("<!-- {name}:start -->"),
            format!("<!-- {name}:end -->"),
        );
        let a = text.find(&start)?;
        let b = a + text[a..].find(&end)? + end.len();
        Some((a, b))
    };
    let own = marked(&format!("{marker}:{kind}")).or_else(|| marked(marker));
    if let Some((a, b)) = own {
        return format!("{}{block}{}", &text[..a], &text[b..]);
    }
    let sibling_end = ["amd", "intel", "other"]
        .iter()
        .filter_map(|k| marked(&format!("{marker}:{k}")))
        .map(|(_, b)| b)
        .max();
    match sibling_end {
        Some(b) => format!("{}\n\n{block}{}", &text[..b], &text[b..]),
        None => format!("{text}\n{block}\n"),
    }
}

/// The options every benchmark takes: TileDB-Py 0.36.1's python, the
/// bench arrays (generated once), the shipped binaries and `--rounds`.
fn prepare(
    args: &[String],
    default_rounds: &str,
) -> Result<(PathBuf, PathBuf, PathBuf, String), Error> {
    let (python, dir, rounds) = bench_arrays(args, default_rounds)?;
    let bin = crate::dist::build(&["tessera-cli"], &[], Profiling)?;
    Ok((python, dir, bin, rounds))
}

/// The bench arrays of `--scale` (made once, by TileDB-Py 0.36.1), that
/// venv's Python and the `--rounds` asked for.
fn bench_arrays(
    args: &[String],
    default_rounds: &str,
) -> Result<(PathBuf, PathBuf, String), Error> {
    let opt = |name: &str, default: &str| option(args, name, default);
    let (scale, rounds) = (opt("--scale", "1"), opt("--rounds", default_rounds));
    let python = venv("0.36.1")?;
    let dir = root().join("target/bench").join(format!("scale-{scale}"));
    let generated = Command::new(&python)
        .arg(root().join("xtask/bench/generate.py"))
        .arg(&dir)
        .arg(&scale)
        .status()?;
    if !generated.success() {
        return Err("generating the benchmark arrays failed".into());
    }
    Ok((python, dir, rounds))
}

/// `cargo xtask bench-ab --before REV [--scale S] [--rounds N]`: the local
/// bench's cases read and the SQL bench's questions asked by the
/// `tessera` of revision REV (built in a git worktree under `target/ab/`)
/// and by this tree's, both in the release profile with `tessera sql`,
/// statically linked as `cargo xtask dist` links, alternating in the same
/// rounds (`xtask/bench/ab.py`); the table goes into docs/PERFORMANCE.md.
/// For a change meant to leave reads as they were.
pub fn bench_ab(args: &[String]) -> Result<(), Error> {
    let before = args
        .windows(2)
        .find(|w| w[0] == "--before")
        .map(|w| w[1].clone())
        .ok_or("bench-ab: --before REV is needed")?;
    let (python, dir, rounds) = bench_arrays(args, "7")?;
    let git = |args: &[&str]| -> Result<String, Error> {
        let out = Command::new("git")
            .current_dir(root())
            .args(args)
            .output()?;
        if !out.status.success() {
            return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let rev = git(&["rev-parse", "--short", &before])?;
    let after_rev = git(&["rev-parse", "--short", "HEAD"])?;
    let ab = root().join("target/ab");
    let tree = ab.join(format!("src-{rev}"));
    if !tree.exists() {
        git(&["worktree", "add", "--detach", &tree.to_string_lossy(), &rev])?;
    }
    eprintln!("building {rev} and this tree (release, with `tessera sql`)");
    // A target folder for each side: cargo names a path package's
    // artifacts by its path inside its workspace, so the two trees' crates
    // would take each other's place in one folder. Each binary is kept
    // under its side's name.
    let build = |workspace: &Path, side: &str| -> Result<PathBuf, Error> {
        let target = ab.join(format!("target-{side}"));
        let dir = crate::dist::build_at(workspace, &target, &["tessera-cli"], &SQL, "release")?;
        let kept = ab.join(format!("tessera-{side}"));
        std::fs::copy(dir.join("tessera"), &kept)?;
        Ok(kept)
    };
    let before_bin = build(&tree, "before")?;
    let after_bin = build(&root(), "after")?;
    let results = dir.join("ab.md");
    let ran = Command::new(&python)
        .arg(root().join("xtask/bench/ab.py"))
        .arg(&dir)
        .arg(&before_bin)
        .arg(&after_bin)
        .arg(&rounds)
        .arg(&results)
        .arg(&rev)
        .arg(format!("{after_rev} and its working tree"))
        .status()?;
    if !ran.success() {
        return Err("the A/B run failed".into());
    }
    let table = std::fs::read_to_string(&results)?;
    into_performance_doc("bench-ab", &table)?;
    println!("{table}");
    Ok(())
}

/// `cargo xtask bench-python [--scale S] [--rounds N]`: the bench arrays
/// read from Python into numpy and pyarrow by tessera's release wheel and
/// by TileDB-Py 0.36.1, each read in a fresh process (xtask/bench/
/// python.py); the table goes into docs/PERFORMANCE.md.
pub fn bench_python(args: &[String]) -> Result<(), Error> {
    let (python, dir, rounds) = bench_arrays(args, "3")?;
    install_wheel(&python)?;
    let run = Run {
        python: &python,
        script: "python.py",
        out: dir.join("python-results.md"),
        marker: "bench-python",
        failed: "the Python benchmark failed",
    };
    run.into_doc(&[dir.as_os_str(), OsStr::new(&rounds)])
}

/// `cargo xtask bench-sql [--scale S] [--rounds N]`: a grouped aggregate
/// and a filtered count over the bench's sparse and float64 dense arrays,
/// `tessera sql` (the shipped binary, with feature `sql`) against
/// TileDB-Py 0.36.1 with pandas (xtask/bench/sql.py); the table goes into
/// docs/PERFORMANCE.md.
pub fn bench_sql(args: &[String]) -> Result<(), Error> {
    let (python, dir, rounds) = bench_arrays(args, "3")?;
    pip(
        venv_of(&python)?,
        &["pyarrow==22.0.0", "pandas==2.3.3", "duckdb==2.0.1"],
    )?;
    let bin = crate::dist::build(&["tessera-cli"], &SQL, Profiling)?;
    let run = Run {
        python: &python,
        script: "sql.py",
        out: dir.join("sql-results.md"),
        marker: "bench-sql",
        failed: "the SQL benchmark failed",
    };
    run.into_doc(&[
        dir.as_os_str(),
        bin.join("tessera").as_os_str(),
        OsStr::new(&rounds),
    ])
}

/// `cargo xtask bench-soma [--rounds N] [--s3 [--rig DIR] [--delay MS]
/// [--mbps MB]]`: single-cell reads of a generated experiment (100,000
/// cells by 20,000 genes, 40 million values, written once by tiledbsoma
/// into target/bench/soma) by tessera.soma (the release wheel) and by
/// tiledbsoma 2.3.0, each question in a fresh process
/// (xtask/bench/soma.py): from local disk, or with `--s3` from the S3 rig
/// of DIR (default `../shared/bench/s3`, MS a request (default 20), MB/s a
/// connection (default 100)), both through the same proxy. The table goes
/// into docs/PERFORMANCE.md.
pub fn bench_soma(args: &[String]) -> Result<(), Error> {
    let flag = |name: &str, default: &str| option(args, name, default);
    let rounds = flag("--rounds", "3");
    let s3 = args.iter().any(|a| a == "--s3");
    let python = venv("0.36.1")?;
    pip(
        venv_of(&python)?,
        &["tiledbsoma==2.3.0", "anndata==0.12.19", "scipy==1.17.1"],
    )?;
    install_wheel(&python)?;
    let experiment = root().join("target/bench/soma/exp_100k");
    // An experiment made before obsm was part of it is made again.
    if !experiment.join("ms/RNA/obsm").exists() {
        let _ = std::fs::remove_dir_all(&experiment);
        let generated = Command::new(&python)
            .arg(root().join("xtask/bench/soma.py"))
            .arg("generate")
            .arg(&experiment)
            .status()?;
        if !generated.success() {
            return Err("generating the single-cell experiment failed".into());
        }
    }
    let mut run_args: Vec<std::ffi::OsString> =
        vec!["run".into(), experiment.into(), rounds.into()];
    if s3 {
        let rig = S3Rig::built(args)?;
        run_args.extend([
            rig.server.into(),
            rig.proxy.into(),
            rig.delay.into(),
            rig.mbps.into(),
        ]);
    }
    let run = Run {
        python: &python,
        script: "soma.py",
        out: root().join(match s3 {
            true => "target/bench/soma/soma-s3-results.md",
            false => "target/bench/soma/soma-results.md",
        }),
        marker: if s3 { "bench-soma-s3" } else { "bench-soma" },
        failed: "the single-cell benchmark failed",
    };
    let run_args: Vec<&OsStr> = run_args.iter().map(|a| a.as_os_str()).collect();
    run.into_doc(&run_args)
}

/// `cargo xtask bench-soma-ingest`: tessera.soma.io's ingestion, append
/// and add_X_layer against tiledbsoma.io's, in the same run, on generated
/// `.h5ad` files of `--cells` cells (and with `--large`, from_h5ad of a
/// file of ten times as many).
pub fn bench_soma_ingest(args: &[String]) -> Result<(), Error> {
    let flag = |name: &str, default: &str| option(args, name, default);
    let rounds = flag("--rounds", "3");
    let cells: u64 = flag("--cells", "100000")
        .parse()
        .map_err(|_| "--cells takes a number")?;
    let python = venv("0.36.1")?;
    pip(
        venv_of(&python)?,
        &[
            "tiledbsoma==2.3.0",
            "anndata==0.12.19",
            "scipy==1.17.1",
            "h5py",
        ],
    )?;
    install_wheel(&python)?;
    let dir = root().join("target/bench/soma_ingest");
    let generate = |name: &str, n: u64| -> Result<std::path::PathBuf, Error> {
        let data = dir.join(name);
        if !data.join("more.h5ad").exists() {
            let made = Command::new(&python)
                .arg(root().join("xtask/bench/soma_ingest.py"))
                .arg("generate")
                .arg(&data)
                .arg(n.to_string())
                .status()?;
            if !made.success() {
                return Err("generating the .h5ad files failed".into());
            }
        }
        Ok(data)
    };
    let mut run_args: Vec<std::ffi::OsString> = vec![
        "run".into(),
        generate(&format!("data-{cells}"), cells)?.into(),
        rounds.into(),
    ];
    if args.iter().any(|a| a == "--large") {
        run_args.push(generate(&format!("data-{}", cells * 10), cells * 10)?.into());
    }
    let run = Run {
        python: &python,
        script: "soma_ingest.py",
        out: dir.join("results.md"),
        marker: "bench-soma-ingest",
        failed: "the single-cell write benchmark failed",
    };
    let run_args: Vec<&OsStr> = run_args.iter().map(|a| a.as_os_str()).collect();
    run.into_doc(&run_args)
}

/// tessera's Python package, built as a release wheel (with symbols: the
/// `profiling` profile), installed into the
/// venv of `python` (TileDB-Py's), with what it needs.
fn install_wheel(python: &Path) -> Result<(), Error> {
    let venv = venv_of(python)?;
    pip(
        venv,
        &["maturin==1.16.0", "pyarrow==22.0.0", "pandas==2.3.3"],
    )?;
    let wheels = root().join("target/py/wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    let built = Command::new(venv.join("bin/maturin"))
        .args(["build", "--profile", "profiling", "-q", "-m"])
        .arg(root().join("crates/tessera-python/Cargo.toml"))
        .arg("-o")
        .arg(&wheels)
        .status()?;
    if !built.success() {
        return Err("building the release wheel failed".into());
    }
    let wheel = std::fs::read_dir(&wheels)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or("maturin made no wheel")?;
    pip(
        venv,
        &["--force-reinstall", "--no-deps", &wheel.to_string_lossy()],
    )
}

/// The virtual environment `python` runs in.
fn venv_of(python: &Path) -> Result<&Path, Error> {
    Ok(python
        .parent()
        .and_then(Path::parent)
        .ok_or("venv of TileDB-Py")?)
}

/// `pip install -q what` in `venv`.
fn pip(venv: &Path, what: &[&str]) -> Result<(), Error> {
    let ok = Command::new(venv.join("bin/pip"))
        .args(["install", "-q"])
        .args(what)
        .status()?;
    if ok.success() {
        Ok(())
    } else {
        Err(format!("pip install {what:?} failed").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_goes_beside_the_other_kind_of_host() {
        let page = "a\n<!-- b:intel:start -->\nold intel\n<!-- b:intel:end -->\nz\n";
        let amd = with_block(
            page,
            "b",
            "amd",
            "<!-- b:amd:start -->\nA\n<!-- b:amd:end -->",
        );
        assert_eq!(
            amd,
            "a\n<!-- b:intel:start -->\nold intel\n<!-- b:intel:end -->\n\n<!-- b:amd:start -->\nA\n<!-- b:amd:end -->\nz\n"
        );
        let again = with_block(
            &amd,
            "b",
            "amd",
            "<!-- b:amd:start -->\nB\n<!-- b:amd:end -->",
        );
        assert_eq!(again, amd.replace("\nA\n", "\nB\n"));
        // "b-ab" is another benchmark, not a kind of "b".
        let other = "<!-- b-ab:start -->\nx\n<!-- b-ab:end -->\n";
        assert_eq!(
            with_block(
                other,
                "b",
                "intel",
                "<!-- b:intel:start -->\nI\n<!-- b:intel:end -->"
            ),
            format!("{other}\n<!-- b:intel:start -->\nI\n<!-- b:intel:end -->\n")
        );
    }

    #[test]
    fn a_table_of_no_kind_is_replaced_by_this_kinds() {
        let page = "<!-- b:start -->\nold\n<!-- b:end -->\n";
        assert_eq!(
            with_block(
                page,
                "b",
                "amd",
                "<!-- b:amd:start -->\nnew\n<!-- b:amd:end -->"
            ),
            "<!-- b:amd:start -->\nnew\n<!-- b:amd:end -->\n"
        );
        assert_eq!(host_kind("AMD EPYC"), "amd");
        assert_eq!(host_kind("Intel(R) Xeon(R) Processor"), "intel");
    }
}
