//! The key of an encrypted array.

/// An AES-256-GCM key, as given to libtiledb. Its `Debug` form never
/// shows the key.
///
/// ```
/// use tessera_filters::EncryptionKey;
/// let key = EncryptionKey::new(*b"0123456789abcdeF0123456789abcdeF");
/// assert_eq!(format!("{key:?}"), "EncryptionKey(<redacted>)");
/// assert_eq!(&key.as_bytes()[..4], b"0123");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EncryptionKey([u8; 32]);

impl EncryptionKey {
    /// The key of these 32 bytes.
    pub const fn new(bytes: [u8; 32]) -> EncryptionKey {
        EncryptionKey(bytes)
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key from its text form: 64 hex digits, or the 32 bytes of the
    /// key themselves (as TileDB-Py's `sm.encryption_key` takes it). The
    /// error says which form was expected, never the text given.
    ///
    /// ```
    /// use tessera_filters::EncryptionKey;
    /// let k = EncryptionKey::parse(&"00".repeat(31).chars().chain("ff".chars()).collect::<String>()).unwrap();
    /// assert_eq!(k.as_bytes()[31], 0xff);
    /// assert_eq!(EncryptionKey::parse("0123456789abcdeF0123456789abcdef").unwrap().as_bytes()[0], b'0');
    /// assert!(EncryptionKey::parse("short").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<EncryptionKey, String> {
        let mut out = [0u8; 32];
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            for (i, byte) in out.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16)
                    .map_err(|_| "key: not hex digits".to_string())?;
            }
        } else if text.len() == 32 {
            out.copy_from_slice(text.as_bytes());
        } else {
            return Err(format!(
                "key: expected 64 hex digits (32 bytes), got {} characters",
                text.chars().count()
            ));
        }
        Ok(EncryptionKey(out))
    }
}

impl From<[u8; 32]> for EncryptionKey {
    fn from(bytes: [u8; 32]) -> Self {
        EncryptionKey(bytes)
    }
}

impl std::fmt::Debug for EncryptionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EncryptionKey(<redacted>)")
    }
}
