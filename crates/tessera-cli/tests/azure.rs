//! `az://` against Azurite, Azure's storage emulator (npm `azurite`; the
//! path of its `azurite-blob` in `TESSERA_AZURITE`, which CI sets): every
//! fixture reads through `az://` as it reads locally, and writes,
//! consolidation and vacuum leave an array that reads as the same steps
//! leave a local copy.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use tessera_object_store::{ObjectStorage, WritableStorage};

const CONTAINER: &str = "tessera";
/// Azurite's one account and its published key.
const ACCOUNT: &str = "devstoreaccount1";
const ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

struct Azurite {
    child: Child,
    url: String,
    _data: TempDir,
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts Azurite on a free port with the container made; `None` without it.
fn azurite() -> Option<Azurite> {
    let Ok(program) = std::env::var("TESSERA_AZURITE") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI runs the Azure tests: set TESSERA_AZURITE to azurite-blob"
        );
        eprintln!("TESSERA_AZURITE not set: Azure tests skipped");
        return None;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let data = TempDir(std::env::temp_dir().join(format!("tessera-azurite-{port}")));
    std::fs::create_dir_all(&data.0).unwrap();
    let child = Command::new(program)
        .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
        .args(["--silent", "--skipApiVersionCheck", "--location"])
        .arg(&data.0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("azurite-blob starts");
    let azurite = Azurite {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _data: data,
    };
    let mut last = String::new();
    for _ in 0..300 {
        match create_container(port) {
            Ok(a) if a.starts_with("HTTP/1.1 201") || a.starts_with("HTTP/1.1 409") => {
                return Some(azurite)
            }
            Ok(a) => last = a,
            Err(e) => last = e.to_string(),
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("azurite on {port} did not make the container: {last}");
}

/// One `PUT /ACCOUNT/CONTAINER?restype=container`, signed with the
/// account's shared key as Azure's REST API asks; the whole answer.
fn create_container(port: u16) -> std::io::Result<String> {
    let date = http_date(std::time::SystemTime::now());
    let version = "2021-08-06";
    let to_sign = format!(
        "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n/{ACCOUNT}/{ACCOUNT}/{CONTAINER}\nrestype:container"
    );
    let key = base64_decode(ACCOUNT_KEY);
    let signature = base64_encode(&hmac_sha256(&key, to_sign.as_bytes()));
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    write!(
        s,
        "PUT /{ACCOUNT}/{CONTAINER}?restype=container HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-ms-date: {date}\r\nx-ms-version: {version}\r\nAuthorization: SharedKey {ACCOUNT}:{signature}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    s.read_to_string(&mut answer)?;
    Ok(answer)
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let pad = |b: u8| block.iter().map(|k| k ^ b).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .to_vec()
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, b| n << 8 | *b as u32) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            match i <= chunk.len() {
                true => out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

fn base64_decode(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut n, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| *c != b'=') {
        let v = BASE64.iter().position(|b| *b == c).expect("base64") as u32;
        n = n << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((n >> bits) as u8);
        }
    }
    out
}

/// `time` as an HTTP date (`Fri, 27 Nov 2026 13:45:00 GMT`).
fn http_date(time: std::time::SystemTime) -> String {
    let secs = time
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64;
    let (days, rest) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[(month - 1) as usize],
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

fn env(a: &Azurite) -> Vec<(&'static str, String)> {
    vec![
        ("AZURE_STORAGE_USE_EMULATOR", "true".into()),
        ("AZURITE_BLOB_STORAGE_URL", a.url.clone()),
    ]
}

/// Held while the environment is set and a storage made from it.
static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn container(a: &Azurite) -> ObjectStorage {
    let _held = ENV.lock().unwrap_or_else(|e| e.into_inner());
    for (k, v) in env(a) {
        std::env::set_var(k, v);
    }
    ObjectStorage::for_uri(&format!("az://{CONTAINER}")).unwrap()
}

fn tessera(a: Option<&Azurite>, args: &[&str]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tessera"));
    cmd.args(args);
    if let Some(a) = a {
        cmd.envs(env(a));
    }
    let out = cmd.output().expect("tessera runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Uploads the files under `dir` as `uri/<path relative to dir>`.
fn upload(storage: &ObjectStorage, dir: &Path, uri: &str) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let key = Path::new(uri).join(p.strip_prefix(dir).unwrap());
                storage.put(&key, &std::fs::read(&p).unwrap()).unwrap();
            }
        }
    }
}

/// `SUB PATH [ARGS...] [--key K]` run on the local fixture and on its
/// copy in the container: both succeed or fail, and print the same.
fn same_output(a: &Azurite, sub: &[&str], local: &str, uri: &str, key: &Option<String>) {
    let mut rest: Vec<&str> = sub[1..].to_vec();
    if let Some(k) = key {
        rest.extend(["--key", k.as_str()]);
    }
    let (ok_l, l, err_l) = tessera(None, &[&sub[..1], &[local], &rest].concat());
    let (ok_a, got, err_a) = tessera(Some(a), &[&sub[..1], &[uri], &rest].concat());
    assert_eq!(ok_l, ok_a, "{uri}: {sub:?}: local {err_l} / az {err_a}");
    assert_eq!(got, l, "{uri}: {sub:?}");
}

#[test]
fn fixtures_read_through_azure_as_locally() {
    let Some(a) = azurite() else { return };
    let storage = container(&a);
    let mut read = 0;
    for release in ["tiledb-0.19.1", "tiledb-0.36.1"] {
        for case in std::fs::read_dir(testdata().join(release))
            .unwrap()
            .flatten()
        {
            let array = case.path().join("array");
            if !array.is_dir() {
                continue;
            }
            let expected: serde_json::Value = std::fs::read(case.path().join("expected.json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            let key = expected["case"]["key"].as_str().map(str::to_owned);
            let name = case.file_name().to_string_lossy().into_owned();
            let uri = format!("az://{CONTAINER}/{release}/{name}");
            upload(&storage, &array, &uri);
            let local = array.display().to_string();
            same_output(&a, &["read", "--format", "jsonl"], &local, &uri, &key);
            same_output(&a, &["schema"], &local, &uri, &key);
            read += 1;
        }
    }
    assert!(read > 100, "only {read} arrays read");
}

#[test]
fn writes_and_maintenance_through_azure_as_locally() {
    let Some(a) = azurite() else { return };
    let storage = container(&a);
    let fixture = testdata().join("tiledb-0.36.1/random_sparse/array");
    let uri = format!("az://{CONTAINER}/maintained");
    upload(&storage, &fixture, &uri);
    let local = std::env::temp_dir().join(format!("tessera-az-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&local);
    let copied = Command::new("cp")
        .arg("-r")
        .arg(&fixture)
        .arg(&local)
        .status();
    assert!(copied.unwrap().success());
    let local_s = local.display().to_string();
    let input = local.with_extension("arrow");
    let input_s = input.display().to_string();
    let (ok, _, err) = tessera(
        None,
        &["read", &local_s, "--format", "arrow", "-o", &input_s],
    );
    assert!(ok, "{err}");
    let steps: &[&[&str]] = &[
        &["write", "--input", &input_s, "--timestamp", "100"],
        &["meta", "--set", "a=1"],
        &["consolidate"],
        &["vacuum"],
        &["consolidate", "--mode", "commits"],
        &["vacuum", "--mode", "commits"],
        &["consolidate", "--mode", "fragment_meta"],
        &["vacuum", "--mode", "fragment_meta"],
        &["meta", "--set", "b=2"],
        &["consolidate", "--mode", "array_meta"],
        &["vacuum", "--mode", "array_meta"],
    ];
    for step in steps {
        for (at, az) in [(local_s.as_str(), None), (uri.as_str(), Some(&a))] {
            let (ok, _, err) = tessera(az, &[&step[..1], &[at], &step[1..]].concat());
            assert!(ok, "{step:?} on {at}: {err}");
        }
        same_output(&a, &["read", "--format", "jsonl"], &local_s, &uri, &None);
        same_output(&a, &["meta", "--json"], &local_s, &uri, &None);
        let (_, l, _) = tessera(None, &["fragments", &local_s]);
        let (_, r, _) = tessera(Some(&a), &["fragments", &uri]);
        assert_eq!(r.lines().count(), l.lines().count(), "after {step:?}");
    }
    // A new array created and written in the container.
    let (ok, schema, err) = tessera(None, &["schema", &local_s, "--json"]);
    assert!(ok, "{err}");
    let schema_file = local.with_extension("json");
    std::fs::write(&schema_file, schema).unwrap();
    let created = format!("az://{CONTAINER}/created");
    let schema_s = schema_file.display().to_string();
    let (ok, _, err) = tessera(Some(&a), &["create", &created, "--schema", &schema_s]);
    assert!(ok, "{err}");
    let (ok, _, err) = tessera(Some(&a), &["write", &created, "--input", &input_s]);
    assert!(ok, "{err}");
    let sorted = |s: String| {
        let mut v: Vec<String> = s.lines().map(str::to_owned).collect();
        v.sort();
        v
    };
    let (_, want, _) = tessera(None, &["read", &local_s, "--format", "jsonl"]);
    let (ok, got, err) = tessera(Some(&a), &["read", &created, "--format", "jsonl"]);
    assert!(ok, "{err}");
    assert_eq!(sorted(got), sorted(want));
    std::fs::remove_dir_all(&local).unwrap();
    std::fs::remove_file(&input).unwrap();
    std::fs::remove_file(&schema_file).unwrap();
}
