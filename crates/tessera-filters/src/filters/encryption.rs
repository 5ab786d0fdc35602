//! AES-256-GCM, the internal encryption filter (`format_spec/tile.md#encryption-filters`).
//!
//! Metadata: `num metadata parts: u32, num data parts: u32`, then per part
//! `plaintext length: u32, encrypted length: u32, IV: [u8; 12], tag: [u8; 16]`.
//! The data holds the encrypted metadata parts, then the encrypted data
//! parts. The tag is verified: a wrong key never yields data.

use super::parts::check_alloc;
use super::ChunkCx;
use crate::chunk_metadata::{encryption, DataParts, EncryptedPart, EncryptionMetadata};
use crate::{EncryptionKey, FilterError};
use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce, Tag};
use tessera_tile::parse::parse;

/// Reverse: decrypt every part.
pub(crate) fn reverse(
    key: Option<&EncryptionKey>,
    meta: &[u8],
    data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    let key = key.ok_or(FilterError::MissingKey)?;
    let cipher = Aes256Gcm::new(key.as_bytes().into());
    let (m, _) = parse(meta, "encryption filter metadata", 0, encryption)?;
    let mut out_meta = Vec::new();
    let mut out_data = Vec::new();
    let mut d = DataParts::new(data, "encrypted chunk data");
    let metadata_parts = m.metadata_parts.iter().map(|p| (p, true));
    for (p, is_metadata) in metadata_parts.chain(m.data_parts.iter().map(|p| (p, false))) {
        let ct = d.take("encrypted part", p.encrypted.into())?;
        let plain = u64::from(p.plaintext);
        check_alloc(plain, cx, "plaintext length")?;
        let mut buf = ct.to_vec();
        cipher
            .decrypt_in_place_detached(
                Nonce::from_slice(&p.iv),
                b"",
                &mut buf,
                Tag::from_slice(&p.tag),
            )
            .map_err(|_| FilterError::Decrypt { chunk: cx.chunk })?;
        if buf.len() as u64 != plain {
            return Err(FilterError::Size {
                chunk: cx.chunk,
                message: format!("decrypted {} bytes, metadata says {plain}", buf.len()),
            });
        }
        if is_metadata {
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
    let (m, _) = parse(meta, "encryption filter metadata", 0, encryption)?;
    let [p] = m.data_parts[..] else {
        return Ok(false);
    };
    if !m.metadata_parts.is_empty() {
        return Ok(false);
    }
    let ct =
        DataParts::new(data, "encrypted chunk data").take("encrypted part", p.encrypted.into())?;
    if p.plaintext as usize != dst.len() || ct.len() != dst.len() {
        return Ok(false);
    }
    let (iv, tag) = (&p.iv, &p.tag);
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
    let mut out = Vec::new();
    let mut part = |p: &[u8]| -> Result<EncryptedPart, FilterError> {
        let mut iv = [0u8; 12];
        OsRng.fill_bytes(&mut iv);
        let mut buf = p.to_vec();
        let tag = cipher
            .encrypt_in_place_detached(Nonce::from_slice(&iv), b"", &mut buf)
            .map_err(|_| FilterError::Unsupported("AES-256-GCM encryption failed".into()))?;
        out.extend_from_slice(&buf);
        Ok(EncryptedPart {
            plaintext: p.len() as u32,
            encrypted: buf.len() as u32,
            iv,
            tag: tag.into(),
        })
    };
    let metadata_parts = meta.iter().map(|m| part(m)).collect::<Result<_, _>>()?;
    let m = EncryptionMetadata {
        metadata_parts,
        data_parts: vec![part(data)?],
    };
    Ok((m.encode(), out))
}
