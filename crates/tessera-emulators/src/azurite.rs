//! Azurite, Azure's storage emulator (npm `azurite`; the path of its
//! `azurite-blob` in `TESSERA_AZURITE`), on a free port of loopback,
//! serving one container.

use crate::emulator::{self, Emulator};
use sha2::{Digest, Sha256};
use std::process::{Command, Stdio};

/// The container the emulator serves.
pub const CONTAINER: &str = "tessera";
/// Azurite's one account and its published key.
const ACCOUNT: &str = "devstoreaccount1";
const ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Starts Azurite on a free port with the container made; `None` without it.
pub fn azurite() -> Option<Emulator> {
    let program = emulator::program("TESSERA_AZURITE", "Azure")?;
    Some(emulator::started("azurite", || start(&program)))
}

fn start(program: &str) -> Result<Emulator, String> {
    let port = crate::ports::free_port();
    let data = emulator::data_folder("azurite", port);
    let mut child = Command::new(program)
        .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
        .args(["--silent", "--skipApiVersionCheck", "--location"])
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("azurite-blob starts");
    let what = format!("azurite on {port}");
    let ready = emulator::serving(&mut child, &what, || {
        emulator::bucket_made(create_container(port), &["201", "409"])
    });
    if let Err(e) = ready {
        let _ = std::fs::remove_dir_all(&data);
        return Err(e);
    }
    let env = vec![
        ("AZURE_STORAGE_USE_EMULATOR", "true".into()),
        (
            "AZURITE_BLOB_STORAGE_URL",
            format!("http://127.0.0.1:{port}"),
        ),
    ];
    Ok(Emulator::new(child, format!("az://{CONTAINER}"), env, data))
}

/// One `PUT /ACCOUNT/CONTAINER?restype=container`, signed with the
/// account's shared key as Azure's REST API asks; the whole answer.
fn create_container(port: u16) -> std::io::Result<String> {
    let date = server_date(port)?;
    let version = "2021-08-06";
    let to_sign = format!(
        "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n/{ACCOUNT}/{ACCOUNT}/{CONTAINER}\nrestype:container"
    );
    let key = base64_decode(ACCOUNT_KEY);
    let signature = base64_encode(&hmac_sha256(&key, to_sign.as_bytes()));
    emulator::http(
        port,
        &format!("PUT /{ACCOUNT}/{CONTAINER}?restype=container HTTP/1.1\r\nx-ms-date: {date}\r\nx-ms-version: {version}\r\nAuthorization: SharedKey {ACCOUNT}:{signature}"),
        b"",
    )
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

/// The time Azurite says it is (the `Date` of its answer to a plain
/// request), as a signed request must carry it.
fn server_date(port: u16) -> std::io::Result<String> {
    let answer = emulator::http(port, "GET / HTTP/1.1", b"")?;
    (answer.lines())
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("date").then(|| v.trim().to_owned())
        })
        .ok_or_else(|| std::io::Error::other(format!("no Date in Azurite's answer: {answer}")))
}
