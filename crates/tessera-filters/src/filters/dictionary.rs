//! Dictionary encoding of var-sized strings (`format_spec/filters/dictionary_encoding.md`).
//!
//! The chunk metadata holds `ids width: u8, string length width: u8,
//! dictionary size: u32`, then the dictionary as `(length, bytes)` entries
//! whose lengths are big-endian integers of the given width. The data holds
//! one big-endian id per cell.

use super::rle::{byte_width, read_be, write_be};

/// Decodes ids against the serialized dictionary into `out_len` bytes and cell offsets.
pub(crate) fn decompress(
    ids: &[u8],
    id_w: u8,
    len_w: u8,
    dict: &[u8],
    out_len: usize,
) -> Result<(Vec<u8>, Vec<u64>), String> {
    let (iw, lw) = (id_w as usize, len_w as usize);
    if ![1, 2, 4, 8].contains(&iw) || ![1, 2, 4, 8].contains(&lw) {
        return Err(format!("invalid integer widths {iw}/{lw}"));
    }
    let mut words: Vec<&[u8]> = Vec::new();
    let mut i = 0usize;
    while i < dict.len() {
        if i + lw > dict.len() {
            return Err("dictionary truncated".into());
        }
        let l = read_be(&dict[i..i + lw]) as usize;
        i += lw;
        if l > dict.len() - i {
            return Err("dictionary word truncated".into());
        }
        words.push(&dict[i..i + l]);
        i += l;
    }
    if !ids.len().is_multiple_of(iw) {
        return Err(format!(
            "{} bytes of ids is not a whole number of {iw}-byte ids",
            ids.len()
        ));
    }
    let mut out = Vec::with_capacity(out_len);
    let mut offsets = Vec::with_capacity(ids.len() / iw);
    for id in ids.chunks_exact(iw) {
        let id = read_be(id) as usize;
        let w = words
            .get(id)
            .ok_or_else(|| format!("id {id} is not in the {}-word dictionary", words.len()))?;
        if w.len() > out_len - out.len() {
            return Err(format!("words expand past the expected {out_len} bytes"));
        }
        offsets.push(out.len() as u64);
        out.extend_from_slice(w);
    }
    if out.len() != out_len {
        return Err(format!("decoded {} bytes, expected {out_len}", out.len()));
    }
    Ok((out, offsets))
}

/// Encodes strings: returns (ids, id width, length width, serialized dictionary).
pub(crate) fn compress(strings: &[&[u8]]) -> (Vec<u8>, u8, u8, Vec<u8>) {
    let mut index = std::collections::HashMap::new();
    let mut words: Vec<&[u8]> = Vec::new();
    let mut ids = Vec::with_capacity(strings.len());
    for s in strings {
        let id = *index.entry(*s).or_insert_with(|| {
            words.push(s);
            words.len() - 1
        });
        ids.push(id as u64);
    }
    let iw = byte_width(strings.len() as u64);
    let lw = byte_width(strings.iter().map(|s| s.len() as u64).max().unwrap_or(0));
    let mut out = Vec::with_capacity(ids.len() * iw as usize);
    for id in ids {
        write_be(id, iw as usize, &mut out);
    }
    let mut dict = Vec::new();
    for w in words {
        write_be(w.len() as u64, lw as usize, &mut dict);
        dict.extend_from_slice(w);
    }
    (out, iw, lw, dict)
}
