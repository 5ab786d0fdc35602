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
    use std::os::unix::process::ExitStatusExt;
    let mut out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    // libtiledb (TileDB-Py 0.36.1's) now and then crashes reading an array
    // it reads correctly when the same check runs again (a SIGSEGV in a
    // fragment consolidation check that passed every rerun): a process
    // a signal ended runs once more, and says so. A second crash, or a
    // check that reports a difference, fails.
    if out.status.signal().is_some() {
        eprintln!(
            "warning: {cmd:?} ended by {}: running it once more",
            out.status
        );
        out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    }
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
