//! Comparable coordinate and condition values.

use std::cmp::Ordering;
use tessera_tile::{datatype::Physical, Datatype};

/// A value that orders as TileDB orders coordinates of its type.
#[derive(Debug, Clone)]
pub enum Key {
    /// Integers (signed, unsigned, datetimes), widened.
    Int(i128),
    /// Floats.
    Float(f64),
    /// Strings and other bytes, ordered bytewise.
    Bytes(Vec<u8>),
}

impl Key {
    /// Reads one value of `t` from `b`.
    pub fn decode(t: Datatype, b: &[u8]) -> Key {
        Key::decode_physical(t.physical(), b)
    }

    /// [`Key::decode`] for a type's physical form.
    pub(crate) fn decode_physical(p: Physical, b: &[u8]) -> Key {
        let mut x = [0u8; 8];
        let n = b.len().min(8);
        x[..n].copy_from_slice(&b[..n]);
        match p {
            Physical::Int(w) => {
                let sh = 64 - 8 * w as u32;
                Key::Int((((u64::from_le_bytes(x) << sh) as i64) >> sh) as i128)
            }
            Physical::UInt(_) => Key::Int(u64::from_le_bytes(x) as i128),
            Physical::Float(4) => Key::Float(f32::from_le_bytes([x[0], x[1], x[2], x[3]]) as f64),
            Physical::Float(_) => Key::Float(f64::from_le_bytes(x)),
            Physical::Bytes => Key::Bytes(b.to_vec()),
        }
    }

    /// A bound given as text for a dimension of type `t` (the CLI's
    /// `--subarray x=LO:HI`): an integer for integer and datetime types,
    /// a number for floats, the bytes themselves for strings.
    ///
    /// ```
    /// use tessera_query::Key;
    /// use tessera_tile::Datatype;
    /// assert_eq!(Key::parse(" 7", Datatype::Int64).unwrap(), Key::Int(7));
    /// assert_eq!(Key::parse("2.5", Datatype::Float32).unwrap(), Key::Float(2.5));
    /// assert_eq!(Key::parse("ab", Datatype::StringAscii).unwrap(), Key::Bytes(b"ab".to_vec()));
    /// assert!(Key::parse("x", Datatype::Int8).is_err());
    /// ```
    pub fn parse(text: &str, t: Datatype) -> Result<Key, crate::QueryError> {
        let invalid = |what: &str| crate::QueryError::Invalid(format!("`{text}` is not {what}"));
        Ok(match t.physical() {
            Physical::Int(_) | Physical::UInt(_) => Key::Int(
                text.trim()
                    .parse::<i128>()
                    .map_err(|_| invalid("an integer"))?,
            ),
            Physical::Float(_) => Key::Float(
                text.trim()
                    .parse::<f64>()
                    .map_err(|_| invalid("a number"))?,
            ),
            Physical::Bytes => Key::Bytes(text.as_bytes().to_vec()),
        })
    }

    /// The integer, for integer keys.
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Key::Int(v) => Some(*v),
            _ => None,
        }
    }
}

impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Key) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Key) -> Ordering {
        match (self, o) {
            (Key::Int(a), Key::Int(b)) => a.cmp(b),
            (Key::Float(a), Key::Float(b)) => a.total_cmp(b),
            (Key::Int(a), Key::Float(b)) => (*a as f64).total_cmp(b),
            (Key::Float(a), Key::Int(b)) => a.total_cmp(&(*b as f64)),
            (Key::Bytes(a), Key::Bytes(b)) => a.cmp(b),
            (Key::Bytes(_), _) => Ordering::Greater,
            (_, Key::Bytes(_)) => Ordering::Less,
        }
    }
}
