//! tessera's read core inside WebAssembly, driven by a JavaScript host
//! (`run.mjs`, in Node): the module reads every cell of an array with the
//! push decoder and gives back a summary of the cells as JSON, which the
//! host checks against what libtiledb read (each fixture's
//! `expected.json`). Two ways:
//! - the host hands over the array's files at once ([`probe_read`]), and
//!   the decoder's needs are answered from them in memory;
//! - the host does the I/O ([`probe_open`], [`probe_step`],
//!   [`probe_push`]): each step gives the decoder's needs, which the host
//!   reads from the array's folder and pushes back, as a browser would
//!   fetch them.
//!
//! No file, thread or clock of the host's is touched. The exports speak
//! numbers only, so the host needs no generated glue: [`probe_alloc`] a
//! buffer and write into it; a JSON answer is at the pointer returned (a
//! little-endian `u32` length, then that many bytes); [`probe_free`]
//! both.

mod bytes;
mod driven;
mod files;
mod tally;

pub use driven::Driven;
pub use files::files;
pub use tally::Tally;

use serde_json::{json, Value as Json};
use std::path::Path;
use tessera_filters::EncryptionKey;
use tessera_query::push::PushDecoder;
use tessera_query::ReadRequest;
use tessera_storage::Memory;

/// Where the array is: the paths the host is given and gives are below it.
pub(crate) const ROOT: &str = "/array";

/// A buffer of `len` bytes for the host to write into.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn probe_alloc(len: usize) -> *mut u8 {
    let mut buf = Vec::<u8>::with_capacity(len);
    let at = buf.as_mut_ptr();
    std::mem::forget(buf);
    at
}

/// Frees a buffer of `len` bytes this module gave.
///
/// # Safety
/// `at` and `len` must be those of one such buffer, freed once.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn probe_free(at: *mut u8, len: usize) {
    // SAFETY: the caller gives back a buffer this module made with this
    // capacity (`probe_alloc`, `answer`).
    drop(unsafe { Vec::from_raw_parts(at, 0, len) });
}

/// Reads the array whose files are the `len` bytes at `blob` (see
/// [`files`]), with the 32-byte key at `key` unless it is null: the
/// summary (see [`summary`]).
///
/// # Safety
/// `blob` must point to `len` readable bytes, `key` to 32 or be null.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn probe_read(blob: *const u8, len: usize, key: *const u8) -> *mut u8 {
    // SAFETY: as the caller promises.
    let (blob, key) = unsafe { (bytes_at(blob, len), key_at(key)) };
    answer(match files(blob) {
        Ok(storage) => summary(&storage, key),
        Err(e) => json!({ "error": e }),
    })
}

/// Starts a read the host does the I/O of ([`Driven`]), with the
/// 32-byte key at `key` unless it is null; [`probe_close`] ends it.
///
/// # Safety
/// `key` must point to 32 readable bytes or be null.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn probe_open(key: *const u8) -> *mut Driven {
    // SAFETY: as the caller promises.
    let key = unsafe { key_at(key) };
    Box::into_raw(Box::new(Driven::new(key)))
}

/// The read's next step ([`Driven::step`]).
///
/// # Safety
/// `read` must be one [`probe_open`] gave and not yet closed.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn probe_step(read: *mut Driven) -> *mut u8 {
    // SAFETY: as the caller promises.
    answer(unsafe { &mut *read }.step())
}

/// Pushes the `len` bytes of answers at `blob` ([`Driven::push`]):
/// `{"ok": true}` or `{"error": message}`.
///
/// # Safety
/// `read` must be one [`probe_open`] gave and not yet closed; `blob` must
/// point to `len` readable bytes.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn probe_push(read: *mut Driven, blob: *const u8, len: usize) -> *mut u8 {
    // SAFETY: as the caller promises.
    let (read, blob) = unsafe { (&mut *read, bytes_at(blob, len)) };
    answer(match read.push(blob) {
        Ok(()) => json!({ "ok": true }),
        Err(e) => json!({ "error": e }),
    })
}

/// Ends a read [`probe_open`] started.
///
/// # Safety
/// `read` must be one [`probe_open`] gave, closed once.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn probe_close(read: *mut Driven) {
    // SAFETY: as the caller promises: made by `Box::into_raw`.
    drop(unsafe { Box::from_raw(read) });
}

/// The `len` bytes at `at`.
///
/// # Safety
/// `at` must point to `len` readable bytes that outlive the slice.
#[allow(unsafe_code)]
unsafe fn bytes_at<'b>(at: *const u8, len: usize) -> &'b [u8] {
    // SAFETY: as the caller promises.
    unsafe { std::slice::from_raw_parts(at, len) }
}

/// The key of the 32 bytes at `at`, none if it is null.
///
/// # Safety
/// `at` must point to 32 readable bytes or be null.
#[allow(unsafe_code)]
unsafe fn key_at(at: *const u8) -> Option<EncryptionKey> {
    (!at.is_null()).then(|| {
        let mut k = [0u8; 32];
        // SAFETY: as the caller promises.
        k.copy_from_slice(unsafe { bytes_at(at, 32) });
        EncryptionKey::new(k)
    })
}

/// `json` as a buffer for the host: its length as a `u32`, then its text.
fn answer(json: Json) -> *mut u8 {
    let text = json.to_string().into_bytes();
    let mut out = Vec::with_capacity(4 + text.len());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(&text);
    let at = out.as_mut_ptr();
    std::mem::forget(out);
    at
}

/// Every cell of the array in `storage` read by the push decoder, its
/// needs answered from `storage`: the [`Tally`] of its batches, or
/// `{"error": message}`.
pub fn summary(storage: &Memory, key: Option<EncryptionKey>) -> Json {
    let decoder = PushDecoder::new(Path::new(ROOT), key, ReadRequest::new());
    let mut tally = Tally::default();
    for batch in decoder.read_from(storage) {
        match batch {
            Ok(b) => tally.add(&b),
            Err(e) => return json!({ "error": e.to_string() }),
        }
    }
    tally.to_json()
}

#[cfg(test)]
mod tests {
    use super::{files, summary};

    /// One file in the blob's layout.
    fn entry(path: &str, bytes: &[u8]) -> Vec<u8> {
        let mut e = (path.len() as u32).to_le_bytes().to_vec();
        e.extend_from_slice(path.as_bytes());
        e.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        e.extend_from_slice(bytes);
        e
    }

    /// The blob of the array at `dir`, every file below it.
    fn blob_of(dir: &std::path::Path, rel: &str, out: &mut Vec<u8>) {
        for e in std::fs::read_dir(dir.join(rel)).expect("fixture").flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let r = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if e.path().is_dir() {
                blob_of(dir, &r, out);
            } else {
                out.extend(entry(&r, &std::fs::read(e.path()).expect("file")));
            }
        }
    }

    #[test]
    fn a_blob_cut_short_is_an_error_naming_where() {
        let mut blob = entry("__schema/s", b"abc");
        assert!(files(&blob).is_ok());
        blob.pop();
        let Err(err) = files(&blob) else {
            panic!("a cut blob was taken whole")
        };
        assert!(err.contains("bytes"), "{err}");
        let Err(err) = files(&blob[..2]) else {
            panic!("two bytes were taken for a file")
        };
        assert!(err.contains("file's path"), "{err}");
    }

    /// The summary the module gives, natively: the fixture's cells as
    /// libtiledb read them.
    #[test]
    fn the_summary_counts_the_cells_libtiledb_read() {
        let case = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/tiledb-0.36.1/sparse_2d"
        );
        let case = std::path::Path::new(case);
        let mut blob = Vec::new();
        blob_of(&case.join("array"), "", &mut blob);
        let got = summary(&files(&blob).expect("files"), None);
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(case.join("expected.json")).expect("json"))
                .expect("json");
        let all = &expected["queries"][0];
        assert_eq!(all["name"], "all");
        let rows = all["rows"].as_array().expect("rows");
        assert_eq!(got["cells"].as_u64(), Some(rows.len() as u64), "{got}");
        let want: i64 = rows.iter().map(|r| r["i"].as_i64().expect("i")).sum();
        assert_eq!(
            got["columns"]["i"]["sum"].as_f64(),
            Some(want as f64),
            "{got}"
        );
    }
}
