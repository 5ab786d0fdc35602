//! Bytes as lowercase hex and back: how BLOB cells, keys and raw values
//! are written in text (JSON lines, the schema's JSON form, `--key`).

/// `b` as lowercase hex digits.
///
/// ```
/// assert_eq!(tessera_tile::hex::encode(&[0, 0xab]), "00ab");
/// ```
pub fn encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bytes hex digits `s` stand for (either case).
///
/// ```
/// assert_eq!(tessera_tile::hex::decode("00AB").unwrap(), vec![0, 0xab]);
/// assert!(tessera_tile::hex::decode("abc").is_err());
/// ```
pub fn decode(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("`{s}` is not hex: an odd number of digits"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .ok_or_else(|| format!("`{s}` is not hex"))
        })
        .collect()
}
