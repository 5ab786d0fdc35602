//! Consolidation and vacuum by tessera on an S3 server, read back by
//! TileDB-Py through S3 (`xtask/fixtures/check_s3_maintained.py`): part of
//! `cargo xtask check-writes` where moto is installed (`.ci/run` sets
//! `TESSERA_MOTO_SERVER`; under CI it must be).

use crate::common::{root, run, venv, Error};
use std::path::PathBuf;
use std::process::Command;

/// Runs the check with each TileDB-Py release on its own fixtures, and
/// with the newest on every release's.
pub fn check_s3_maintained() -> Result<(), Error> {
    let Ok(moto) = std::env::var("TESSERA_MOTO_SERVER") else {
        if std::env::var("CI").as_deref() == Ok("true") {
            return Err(
                "CI checks maintenance on S3: set TESSERA_MOTO_SERVER to moto_server".into(),
            );
        }
        eprintln!("TESSERA_MOTO_SERVER not set: maintenance on S3 not checked");
        return Ok(());
    };
    let moto = PathBuf::from(moto);
    let moto_py = moto.with_file_name("python");
    let tessera = crate::sequences::tessera_binary()?;
    let checks: [(&str, &[&str]); 2] = [
        ("0.19.1", &["0.19.1"]),
        ("0.36.1", &["0.19.1", "0.31.1", "0.36.1"]),
    ];
    for (reader, releases) in checks {
        let report = run(Command::new(venv(reader)?)
            .arg(root().join("xtask/fixtures/check_s3_maintained.py"))
            .arg(&moto)
            .arg(&moto_py)
            .arg(root().join("xtask/bench/s3_upload.py"))
            .arg(&tessera)
            .arg(std::env::current_exe()?)
            .arg(root().join("testdata"))
            .args(releases))?;
        eprint!("{}", String::from_utf8_lossy(&report.stdout));
    }
    Ok(())
}
