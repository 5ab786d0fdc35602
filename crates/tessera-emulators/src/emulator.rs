//! A running emulator and what starting one takes: a free port, a data
//! folder, retries, a wait until it serves, plain HTTP requests.

use std::path::PathBuf;
use std::process::Child;

/// A running emulator; killed, and its data folder removed, when dropped.
pub struct Emulator {
    child: Child,
    /// The environment that points tessera (object_store) at it.
    env: Vec<(&'static str, String)>,
    /// The bucket or container the tests write under: `scheme://name`.
    pub root: String,
    data: PathBuf,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

impl Emulator {
    /// `child`, serving `root` once its bucket is made, configured by `env`,
    /// keeping its objects under `data`.
    pub(crate) fn new(
        child: Child,
        root: String,
        env: Vec<(&'static str, String)>,
        data: PathBuf,
    ) -> Self {
        Emulator {
            child,
            env,
            root,
            data,
        }
    }

    /// The environment that points tessera at the emulator.
    pub fn env(&self) -> &[(&'static str, String)] {
        &self.env
    }

    /// `make` run with this environment set in the process (a storage made
    /// from the environment, as `object_store` makes one), one at a time.
    pub fn with_env<T>(&self, make: impl FnOnce() -> T) -> T {
        let _held = ENV.lock().unwrap_or_else(|e| e.into_inner());
        for (k, v) in &self.env {
            std::env::set_var(k, v);
        }
        make()
    }
}

/// Held while an emulator's environment is set and used.
static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The program `variable` names, or `None` (the tests skip, saying so)
/// outside CI; CI must set it.
pub fn program(variable: &str, what: &str) -> Option<String> {
    match std::env::var(variable) {
        Ok(p) => Some(p),
        Err(_) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI runs the {what} tests: set {variable}"
            );
            eprintln!("{variable} not set: {what} tests skipped");
            None
        }
    }
}

/// A fresh folder for an emulator's data.
pub(crate) fn data_folder(name: &str, port: u16) -> PathBuf {
    let data = std::env::temp_dir().join(format!("tessera-{name}-{port}"));
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data).unwrap();
    data
}

/// An emulator from `start`, tried three times: a port found free may be
/// taken before the emulator binds it (the tests run in parallel), and an
/// emulator that exited is started again on another.
pub(crate) fn started(what: &str, mut start: impl FnMut() -> Result<Emulator, String>) -> Emulator {
    let mut last = String::new();
    for _ in 0..3 {
        match start() {
            Ok(e) => return e,
            Err(e) => last = e,
        }
    }
    panic!("{what} did not start: {last}");
}

/// Calls `ready` every 100 ms for 30 s until it says `child` serves
/// (`Ok(true)`): an error if `child` exits first (another took its port)
/// or never does. A server still starting may accept and then reset a
/// connection: a failed attempt is retried while `child` runs.
pub(crate) fn serving(
    child: &mut Child,
    what: &str,
    mut ready: impl FnMut() -> Result<bool, String>,
) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..300 {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{what} exited ({status}): {last}"));
        }
        match ready() {
            // Answered by our server only if it still runs.
            Ok(true) if matches!(child.try_wait(), Ok(None)) => return Ok(()),
            Ok(true) => last = "the port answered but the server exited".into(),
            Ok(false) => {}
            Err(e) => last = e,
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    Err(format!("{what} did not serve in 30 s: {last}"))
}

/// What an emulator answered a request making its bucket (the whole
/// answer, or the error of asking): made if its status is one of `made`
/// (an answer saying it exists already is among them where a retry may
/// see it); otherwise the answer, as the error.
pub(crate) fn bucket_made(answer: std::io::Result<String>, made: &[&str]) -> Result<bool, String> {
    let answer = answer.map_err(|e| e.to_string())?;
    match made
        .iter()
        .any(|status| answer.starts_with(&format!("HTTP/1.1 {status}")))
    {
        true => Ok(true),
        false => Err(answer),
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port` (`head` without the final
/// blank line, `Connection: close` added); the whole answer.
pub(crate) fn http(port: u16, head: &str, body: &[u8]) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    write!(
        s,
        "{head}\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    s.write_all(body)?;
    let mut answer = String::new();
    s.read_to_string(&mut answer)?;
    Ok(answer)
}
