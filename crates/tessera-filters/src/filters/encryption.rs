//! AES-256-GCM, the internal encryption filter (`format_spec/tile.md#encryption-filters`).
//!
//! Metadata: `num metadata parts: u32, num data parts: u32`, then per part
//! `plaintext length: u32, encrypted length: u32, IV: [u8; 12], tag: [u8; 16]`.
//! The data holds the encrypted metadata parts, then the encrypted data
//! parts. The tag is verified: a wrong key never yields data.

use super::parts::check_alloc;
use super::ChunkCx;
use crate::{EncryptionKey, FilterError};
use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce, Tag};
use tessera_tile::Reader;

/// Reverse: decrypt every part.
pub(crate) fn reverse(
    key: Option<&EncryptionKey>,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let key = key.ok_or(FilterError::MissingKey)?;
    let cipher = Aes256Gcm::new(key.as_bytes().into());
    let mut m = Reader::new(meta, "encryption filter metadata");
    let n_meta = m.u32("number of metadata parts")? as u64;
    let n_data = m.u32("number of data parts")? as u64;
    m.check_count("number of parts", n_meta + n_data, 36)?;
    let mut out_meta = Vec::new();
    let mut out_data = Vec::new();
    let mut d = Reader::new(data, "encrypted chunk data");
    for i in 0..n_meta + n_data {
        let plain = m.u32("plaintext length")? as u64;
        let enc = m.u32("encrypted length")? as u64;
        let iv = m.bytes("IV", 12)?;
        let tag = m.bytes("tag", 16)?;
        let ct = d.bytes("encrypted part", enc)?;
        check_alloc(plain, cx, "plaintext length")?;
        let mut buf = ct.to_vec();
        cipher
            .decrypt_in_place_detached(Nonce::from_slice(iv), b"", &mut buf, Tag::from_slice(tag))
            .map_err(|_| FilterError::Decrypt { chunk: cx.chunk })?;
        if buf.len() as u64 != plain {
            return Err(FilterError::Size {
                chunk: cx.chunk,
                message: format!("decrypted {} bytes, metadata says {plain}", buf.len()),
            });
        }
        if i < n_meta {
            &mut out_meta
        } else {
            &mut out_data
        }
        .extend_from_slice(&buf);
    }
    Ok((out_meta, out_data))
}

/// Reverses straight into `dst` when the chunk is one encrypted data part
/// (no metadata parts) of exactly `dst`'s length: the ciphertext is copied
/// in and decrypted in place, with no buffer in between. Returns `false`,
/// having done nothing, when that does not apply.
pub(crate) fn reverse_into(
    key: Option<&EncryptionKey>,
    meta: &[u8],
    data: &[u8],
    dst: &mut [u8],
    cx: &ChunkCx<'_>,
) -> Result<bool, FilterError> {
    let mut m = Reader::new(meta, "encryption filter metadata");
    let (n_meta, n_data) = (
        m.u32("number of metadata parts")?,
        m.u32("number of data parts")?,
    );
    if (n_meta, n_data) != (0, 1) {
        return Ok(false);
    }
    let plain = m.u32("plaintext length")? as usize;
    let enc = m.u32("encrypted length")? as u64;
    let iv = m.bytes("IV", 12)?;
    let tag = m.bytes("tag", 16)?;
    let ct = Reader::new(data, "encrypted chunk data").bytes("encrypted part", enc)?;
    if plain != dst.len() || ct.len() != dst.len() {
        return Ok(false);
    }
    let key = key.ok_or(FilterError::MissingKey)?;
    dst.copy_from_slice(ct);
    Aes256Gcm::new(key.as_bytes().into())
        .decrypt_in_place_detached(Nonce::from_slice(iv), b"", dst, Tag::from_slice(tag))
        .map_err(|_| FilterError::Decrypt { chunk: cx.chunk })?;
    Ok(true)
}

/// Forward: encrypt each metadata part and the data with fresh IVs.
pub(crate) fn forward(
    key: Option<&EncryptionKey>,
    meta: &[Vec<u8>],
    data: &[u8],
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    use aes_gcm::aead::{rand_core::RngCore, OsRng};
    let key = key.ok_or(FilterError::MissingKey)?;
    let cipher = Aes256Gcm::new(key.as_bytes().into());
    let parts: Vec<&[u8]> = meta.iter().map(Vec::as_slice).chain([data]).collect();
    let mut m = Vec::new();
    m.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    m.extend_from_slice(&1u32.to_le_bytes());
    let mut out = Vec::new();
    for p in parts {
        let mut iv = [0u8; 12];
        OsRng.fill_bytes(&mut iv);
        let mut buf = p.to_vec();
        let tag = cipher
            .encrypt_in_place_detached(Nonce::from_slice(&iv), b"", &mut buf)
            .map_err(|_| FilterError::Unsupported("AES-256-GCM encryption failed".into()))?;
        m.extend_from_slice(&(p.len() as u32).to_le_bytes());
        m.extend_from_slice(&(buf.len() as u32).to_le_bytes());
        m.extend_from_slice(&iv);
        m.extend_from_slice(&tag);
        out.extend_from_slice(&buf);
    }
    Ok((m, out))
}
