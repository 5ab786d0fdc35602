//! `cargo xtask fixtures --case soma`: single-cell experiments written by
//! real TileDB-SOMA (`tiledbsoma`, pinned, with the libtiledb it bundles)
//! into `testdata/soma/<case>/experiment`, and in `expected.json` what
//! tiledbsoma reads back: the tree of members and every array's rows
//! (`xtask/fixtures/soma.py`).

use crate::{root, run, Error};
use serde_json::Value;
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
    let dir = out_root.join("soma");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let out = run(Command::new(&py).arg(&script).arg("write").arg(&dir))?;
    let made: Value = serde_json::from_slice(&out.stdout)?;
    for case in made["cases"].as_array().into_iter().flatten() {
        let case = case.as_str().unwrap_or_default();
        eprintln!("soma {case}");
        let cdir = dir.join(case);
        let out = run(Command::new(&py).arg(&script).arg("read").arg(&cdir))?;
        let mut expected: Value = serde_json::from_slice(&out.stdout)?;
        let info: Value = serde_json::from_str(&std::fs::read_to_string(cdir.join("case.json"))?)?;
        expected["case"] = info;
        std::fs::write(
            cdir.join("expected.json"),
            serde_json::to_string_pretty(&expected)? + "\n",
        )?;
        std::fs::remove_file(cdir.join("case.json"))?;
    }
    Ok(())
}
