//! What every task shares: the workspace root, commands run with their
//! output shown on failure, the pinned TileDB-Py releases and their venvs,
//! folders copied.

use std::path::{Path, PathBuf};
use std::process::Command;

/// TileDB-Py versions pinned for fixtures (libtiledb 2.13 to 2.30).
pub(crate) const VERSIONS: &[&str] = &["0.19.1", "0.23.5", "0.25.1", "0.31.1", "0.36.1"];

/// The reader whose answers are the expectations.
pub(crate) const NEWEST: &str = "0.36.1";

pub(crate) type Error = Box<dyn std::error::Error>;

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

pub(crate) fn run(cmd: &mut Command) -> Result<std::process::Output, Error> {
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

/// Has the libtiledb of every TileDB-Py process this program starts read
/// sparse arrays without merging their tiles ahead of the read. In
/// libtiledb 2.30 (TileDB-Py 0.36.1) the merge's last task can free its
/// merge unit after its query is gone (the race TileDB-Inc/TileDB#5723
/// removes), which crashed checks now and then (SIGSEGV) on arrays they
/// read correctly when run again. The merge only orders tile loading:
/// without it the cells read are the same. libtiledb takes its
/// configuration from `TILEDB_*` variables, which children inherit; called
/// first thing in `main`, before any thread starts.
pub(crate) fn without_libtiledb_tile_merge() {
    std::env::set_var(
        "TILEDB_SM_QUERY_SPARSE_GLOBAL_ORDER_PREPROCESS_TILE_MERGE",
        "0",
    );
}

/// The venv of a TileDB-Py version, created and installed on first use.
pub(crate) fn venv(version: &str) -> Result<PathBuf, Error> {
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
pub(crate) fn venvs() -> Result<(), Error> {
    let made: Vec<_> = VERSIONS
        .iter()
        .map(|v| std::thread::spawn(move || venv(v).map(drop).map_err(|e| e.to_string())))
        .collect();
    for m in made {
        m.join().map_err(|_| "making a venv panicked")??;
    }
    Ok(())
}

pub(crate) fn copy_dir(from: &Path, to: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)?.flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()))?;
        } else {
            std::fs::copy(&p, to.join(e.file_name()))?;
        }
    }
    Ok(())
}
