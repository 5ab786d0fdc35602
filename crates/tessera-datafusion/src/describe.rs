//! Tables and scans as plain data: what another process (a Ballista
//! scheduler or executor) needs to make the same read: the array's URI,
//! the time range it was opened at and the fragments it saw, the columns,
//! ranges and condition of the scan. Serialised as JSON, so a plan is
//! readable in a log; a codec wraps these bytes (see `tessera-ballista`).
//!
//! The fragment list pins the read: a process opening the array later
//! reads exactly the fragments the planner saw, and fails, naming the
//! fragment, when one of them has gone (consolidated and vacuumed) rather
//! than answer from a different array.

use serde::{Deserialize, Serialize};
use tessera::filters::EncryptionKey;
use tessera::query::Value;

/// A table ([`crate::TesseraTable`]) as plain data.
///
/// The encryption key, when the array has one, travels with the
/// description: an executor cannot read the array without it. Run a
/// cluster reading encrypted arrays only on a network you trust.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDescription {
    /// The array's URI (a path, or an object-store URI).
    pub uri: String,
    /// The time range the array was opened at, milliseconds, inclusive.
    pub timestamp: (u64, u64),
    /// The AES-256-GCM key as 64 hex digits.
    pub key: Option<String>,
    /// The names of the fragments the table reads.
    pub fragments: Vec<String>,
}

/// A scan ([`crate::TesseraScan`]) as plain data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanDescription {
    /// The table scanned.
    pub table: TableDescription,
    /// The columns the scan returns, in order.
    pub fields: Vec<String>,
    /// The query condition (the `--where` grammar), if any.
    pub condition: Option<String>,
    /// The prune condition (the same grammar): tiles whose metadata
    /// rules it out go unread; absent from older descriptions.
    #[serde(default)]
    pub prune: Option<String>,
    /// Each partition's inclusive ranges: (dimension, low, high).
    pub partitions: Vec<Vec<(String, Bound, Bound)>>,
    /// At most this many rows per partition.
    pub limit: Option<usize>,
    /// Whether filters narrow the read (the table's statistics then only bound it).
    pub narrowed: bool,
}

/// One end of a range: a dimension value, exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Bound {
    /// An integer (or datetime), in decimal: i128 does not fit every JSON reader.
    Int(String),
    /// A float, as its IEEE 754 bits: JSON has no NaN or infinities.
    Float(u64),
    /// A string's bytes.
    Bytes(Vec<u8>),
}

impl From<&Value> for Bound {
    fn from(k: &Value) -> Bound {
        match k {
            Value::Int(i) => Bound::Int(i.to_string()),
            Value::Float(f) => Bound::Float(f.to_bits()),
            Value::Bytes(b) => Bound::Bytes(b.clone()),
        }
    }
}

impl Bound {
    /// The dimension value, or an error naming the text that is no integer.
    pub fn to_key(&self) -> Result<Value, String> {
        Ok(match self {
            Bound::Int(s) => Value::Int(
                s.parse()
                    .map_err(|_| format!("range bound {s:?} is not an integer"))?,
            ),
            Bound::Float(bits) => Value::Float(f64::from_bits(*bits)),
            Bound::Bytes(b) => Value::Bytes(b.clone()),
        })
    }
}

/// The key as 64 hex digits, as [`EncryptionKey::parse`] reads it.
pub(crate) fn key_hex(key: &EncryptionKey) -> String {
    key.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

macro_rules! json_bytes {
    ($t:ty, $what:literal) => {
        impl $t {
            /// The description as bytes (JSON).
            pub fn to_bytes(&self) -> Vec<u8> {
                serde_json::to_vec(self).expect("descriptions are plain data")
            }

            /// The description from [`Self::to_bytes`]'s bytes.
            pub fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
                serde_json::from_slice(bytes).map_err(|e| format!(concat!($what, ": {}"), e))
            }
        }
    };
}

json_bytes!(TableDescription, "table description");
json_bytes!(ScanDescription, "scan description");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_keep_every_value_exactly() {
        for k in [
            Value::Int(i128::MIN),
            Value::Int(u64::MAX as i128),
            Value::Float(f64::NEG_INFINITY),
            Value::Float(-0.0),
            Value::Bytes(b"a\0\xff".to_vec()),
        ] {
            let b = Bound::from(&k);
            let back: Bound = serde_json::from_slice(&serde_json::to_vec(&b).unwrap()).unwrap();
            let got = back.to_key().unwrap();
            match (&k, &got) {
                (Value::Float(a), Value::Float(b)) => assert_eq!(a.to_bits(), b.to_bits()),
                _ => assert_eq!(k, got),
            }
        }
        assert!(Bound::Int("1x".into()).to_key().is_err());
    }

    #[test]
    fn key_hex_parses_back() {
        let k = EncryptionKey::new(std::array::from_fn(|i| (i * 7) as u8));
        assert_eq!(
            EncryptionKey::parse(&key_hex(&k)).unwrap().as_bytes(),
            k.as_bytes()
        );
    }

    #[test]
    fn bad_bytes_are_an_error_naming_the_description() {
        let e = ScanDescription::from_bytes(b"{").unwrap_err();
        assert!(e.starts_with("scan description:"), "{e}");
    }
}
