//! `cargo xtask fixtures --case soma`: single-cell experiments written by
//! real TileDB-SOMA (`tiledbsoma`, pinned, with the libtiledb it bundles)
//! into `testdata/soma/<case>/experiment`, and in `expected.json` what
//! tiledbsoma reads back: the tree of members and every array's rows
//! (`xtask/fixtures/soma.py`).

use crate::common::{root, run, Error};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned tiledbsoma (2.3.0 bundles libtiledb 2.30) and the AnnData
/// it is fed from.
const PACKAGES: &[&str] = &["tiledbsoma==2.3.0", "anndata==0.12.19"];

/// The venv with tiledbsoma, created on first use.
fn soma_venv() -> Result<PathBuf, Error> {
    let dir = root().join("target/soma/venv");
    let py = dir.join("bin/python");
    if !py.exists() {
        eprintln!("creating venv for tiledbsoma");
        run(Command::new("python3").args(["-m", "venv"]).arg(&dir))?;
        run(Command::new(dir.join("bin/pip"))
            .args(["install", "-q"])
            .args(PACKAGES))?;
    }
    Ok(py)
}

/// Writes every SOMA case under `out_root/soma/`, with what tiledbsoma
/// reads back.
pub fn generate_soma(out_root: &Path) -> Result<(), Error> {
    let py = soma_venv()?;
    let script = root().join("xtask/fixtures/soma.py");
    crate::cases::write_and_read_cases(&py, &py, &script, &out_root.join("soma"), "soma", None)
}
