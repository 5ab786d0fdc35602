//! moto, a real S3 protocol server (`TESSERA_MOTO_SERVER` names its
//! `moto_server`), on a free port of loopback, serving one bucket.

use crate::emulator::{self, Emulator};
use std::process::{Command, Stdio};

/// The bucket the emulator serves.
pub const BUCKET: &str = "fixtures";

/// Starts moto on a free port and makes the bucket; `None` without moto.
pub fn moto() -> Option<Emulator> {
    let program = emulator::program("TESSERA_MOTO_SERVER", "S3")?;
    Some(emulator::started("moto_server", || start(&program)))
}

/// One moto on a free port, serving the bucket.
fn start(program: &str) -> Result<Emulator, String> {
    let port = crate::ports::free_port();
    let mut child = Command::new(program)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("moto_server starts");
    // moto takes unsigned requests; creating the bucket again in
    // us-east-1 is a 200 too.
    let what = format!("moto_server on {port}");
    emulator::serving(&mut child, &what, || {
        let asked = emulator::http(port, &format!("PUT /{BUCKET} HTTP/1.1"), b"");
        emulator::bucket_made(asked, &["200"])
    })?;
    let env = vec![
        ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}")),
        ("AWS_ACCESS_KEY_ID", "test".into()),
        ("AWS_SECRET_ACCESS_KEY", "test".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ALLOW_HTTP", "true".into()),
    ];
    // moto keeps objects in memory: its data folder stays empty.
    let data = emulator::data_folder("moto", port);
    Ok(Emulator::new(child, format!("s3://{BUCKET}"), env, data))
}
