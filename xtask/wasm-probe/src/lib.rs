//! tessera's read core inside WebAssembly, driven by a JavaScript host
//! (`run.mjs`, in Node): the host hands over an array's files, the module
//! reads every cell with the push decoder (its needs answered from those
//! files in memory: no file, thread or clock of the host's is touched) and
//! gives back a summary of the cells as JSON, which the host checks against
//! what libtiledb read (each fixture's `expected.json`).
//!
//! The exports speak numbers only, so the host needs no generated glue:
//! [`probe_alloc`] a buffer, write the files into it, [`probe_read`] them,
//! read the summary at the pointer returned (a little-endian `u32` length,
//! then that many bytes of JSON), [`probe_free`] both.

use serde_json::{json, Map, Value as Json};
use std::path::Path;
use tessera_filters::EncryptionKey;
use tessera_query::push::PushDecoder;
use tessera_query::{ReadRequest, ReadResult};
use tessera_schema::{CellValNum, Value};
use tessera_tile::storage::Memory;
use tessera_tile::Datatype;

/// Where the array's files are put: paths in the blob are below it.
const ROOT: &str = "/array";

/// A buffer of `len` bytes for the host to write into.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn probe_alloc(len: usize) -> *mut u8 {
    let mut buf = Vec::<u8>::with_capacity(len);
    let at = buf.as_mut_ptr();
    std::mem::forget(buf);
    at
}

/// Frees a buffer [`probe_alloc`] or [`probe_read`] gave, of `len` bytes.
///
/// # Safety
/// `at` and `len` must be those of one such buffer, freed once.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn probe_free(at: *mut u8, len: usize) {
    // SAFETY: the caller gives back a buffer this module made with this
    // capacity (see above).
    drop(unsafe { Vec::from_raw_parts(at, 0, len) });
}

/// Reads the array whose files are in the `len` bytes at `blob` (each
/// file: its path's length as a little-endian `u32`, the path relative to
/// the array, its length as a `u64`, its bytes), with the 32-byte key at
/// `key` if it is not null. Returns a buffer of a `u32` length and the
/// summary's JSON (see [`summary`]); its size is that length plus 4.
///
/// # Safety
/// `blob` must point to `len` readable bytes, `key` to 32 or be null.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn probe_read(blob: *const u8, len: usize, key: *const u8) -> *mut u8 {
    // SAFETY: as the caller promises.
    let blob = unsafe { std::slice::from_raw_parts(blob, len) };
    let key = (!key.is_null()).then(|| {
        let mut k = [0u8; 32];
        // SAFETY: as the caller promises.
        k.copy_from_slice(unsafe { std::slice::from_raw_parts(key, 32) });
        EncryptionKey::new(k)
    });
    let answer = match files(blob) {
        Ok(storage) => summary(&storage, key),
        Err(e) => json!({ "error": e }),
    };
    let text = answer.to_string().into_bytes();
    let mut out = Vec::with_capacity(4 + text.len());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(&text);
    let at = out.as_mut_ptr();
    std::mem::forget(out);
    at
}

/// The files of `blob`, in memory under [`ROOT`].
pub fn files(mut blob: &[u8]) -> Result<Memory, String> {
    let mut storage = Memory::default();
    while !blob.is_empty() {
        let n = u32::from_le_bytes(take(&mut blob, "path length")?) as usize;
        let path = take_bytes(&mut blob, n, "path")?;
        let path = String::from_utf8(path.to_vec()).map_err(|e| e.to_string())?;
        let size = u64::from_le_bytes(take(&mut blob, "length")?);
        let size = usize::try_from(size).map_err(|e| e.to_string())?;
        let bytes = take_bytes(&mut blob, size, "bytes")?.to_vec();
        storage.insert(Path::new(ROOT).join(path), bytes);
    }
    Ok(storage)
}

/// The next `N` bytes of `blob` (a file's `what`), taken off it.
fn take<const N: usize>(blob: &mut &[u8], what: &str) -> Result<[u8; N], String> {
    let head = take_bytes(blob, N, what)?;
    head.try_into().map_err(|_| format!("a file's {what}"))
}

/// The next `n` bytes of `blob` (a file's `what`), taken off it.
fn take_bytes<'b>(blob: &mut &'b [u8], n: usize, what: &str) -> Result<&'b [u8], String> {
    if blob.len() < n {
        return Err(format!("the files end inside a file's {what}"));
    }
    let (head, rest) = blob.split_at(n);
    *blob = rest;
    Ok(head)
}

/// Every cell of the array in `storage` read by the push decoder, its
/// needs answered from `storage`: `{"cells": n, "batches": b, "columns":
/// {name: {"sum": s, "float32": f}}}`, `s` the sum of a column of one
/// number a cell and no nulls (`null` for other columns), `f` whether its
/// values are FLOAT32; or `{"error": message}`.
pub fn summary(storage: &Memory, key: Option<EncryptionKey>) -> Json {
    let decoder = PushDecoder::new(Path::new(ROOT), key, ReadRequest::new());
    let (mut cells, mut batches) = (0usize, 0usize);
    let mut sums: Map<String, Json> = Map::new();
    for batch in decoder.read_from(storage) {
        match batch {
            Ok(b) => {
                cells += b.cell_count;
                batches += 1;
                add_sums(&b, &mut sums);
            }
            Err(e) => return json!({ "error": e.to_string() }),
        }
    }
    json!({ "cells": cells, "batches": batches, "columns": sums })
}

/// Adds each column's sum of `batch` to `sums` (see [`summary`]).
fn add_sums(batch: &ReadResult, sums: &mut Map<String, Json>) {
    for c in &batch.columns {
        let width = c.datatype.size() as usize;
        let one_number = c.offsets.is_none()
            && c.validity.is_none()
            && c.cell_val_num == CellValNum::Fixed(1)
            && width > 0;
        let sum = one_number.then(|| {
            c.data
                .chunks_exact(width)
                .map(|b| match Value::decode(c.datatype, b) {
                    Value::Int(i) => i as f64,
                    Value::Float(f) => f,
                    Value::Bytes(_) => f64::NAN,
                })
                .sum::<f64>()
        });
        let before = sums.get(&c.name).and_then(|s| s["sum"].as_f64());
        let total = match (sum, before) {
            (Some(s), Some(b)) => Some(s + b),
            (Some(s), None) if !sums.contains_key(&c.name) => Some(s),
            _ => None,
        };
        let total = total.filter(|t| t.is_finite());
        let float32 = c.datatype == Datatype::Float32;
        sums.insert(c.name.clone(), json!({ "sum": total, "float32": float32 }));
    }
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
        assert!(err.contains("path length"), "{err}");
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
