//! Typed reading of values stored as bytes (domains, fill values, MBRs).

use serde::Serialize;
use std::cmp::Ordering;
use tessera_tile::{datatype::Physical, Datatype};

/// One value of some datatype, ordered as TileDB orders values of its
/// type: coordinates, domain bounds, fill values, MBRs, condition
/// operands.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// Integers (signed, unsigned, datetimes, times, BOOL), widened.
    Int(i128),
    /// FLOAT32 and FLOAT64.
    Float(f64),
    /// Strings, blobs and anything else, as raw bytes, ordered bytewise.
    Bytes(Vec<u8>),
}

/// Text that is not a value of the type asked for ([`Value::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not {expected}")]
pub struct ValueParseError {
    /// The text given.
    pub text: String,
    /// What a value of the type is ("an integer", "a number").
    pub expected: &'static str,
}

impl Value {
    /// Whether this is a float NaN (of either sign): no bound, sum or
    /// comparison TileDB keeps speaks for it.
    ///
    /// ```
    /// use tessera_schema::Value;
    /// assert!(Value::Float(-f64::NAN).is_nan());
    /// assert!(!Value::Float(f64::INFINITY).is_nan());
    /// assert!(!Value::Int(0).is_nan());
    /// ```
    pub fn is_nan(&self) -> bool {
        matches!(self, Value::Float(x) if x.is_nan())
    }

    /// Decodes one value of `t` from `b` (strings take all of `b`).
    pub fn decode(t: Datatype, b: &[u8]) -> Value {
        Value::decode_physical(t.physical(), b)
    }

    /// [`Value::decode`] for a type's physical form.
    pub fn decode_physical(p: Physical, b: &[u8]) -> Value {
        let mut x = [0u8; 8];
        let n = b.len().min(8);
        x[..n].copy_from_slice(&b[..n]);
        match p {
            Physical::Int(w) => {
                let sh = 64 - 8 * w as u32;
                Value::Int((((u64::from_le_bytes(x) << sh) as i64) >> sh) as i128)
            }
            Physical::UInt(_) => Value::Int(u64::from_le_bytes(x) as i128),
            Physical::Float(4) => Value::Float(f32::from_le_bytes([x[0], x[1], x[2], x[3]]) as f64),
            Physical::Float(_) => Value::Float(f64::from_le_bytes(x)),
            Physical::Bytes => Value::Bytes(b.to_vec()),
        }
    }

    /// A value given as text for type `t` (the CLI's `--subarray
    /// x=LO:HI`): an integer for integer and datetime types, a number for
    /// floats, the bytes themselves for strings.
    ///
    /// ```
    /// use tessera_schema::Value;
    /// use tessera_tile::Datatype;
    /// assert_eq!(Value::parse(" 7", Datatype::Int64).unwrap(), Value::Int(7));
    /// assert_eq!(Value::parse("2.5", Datatype::Float32).unwrap(), Value::Float(2.5));
    /// assert_eq!(Value::parse("ab", Datatype::StringAscii).unwrap(), Value::Bytes(b"ab".to_vec()));
    /// assert!(Value::parse("x", Datatype::Int8).is_err());
    /// ```
    pub fn parse(text: &str, t: Datatype) -> Result<Value, ValueParseError> {
        let invalid = |expected| ValueParseError {
            text: text.to_string(),
            expected,
        };
        Ok(match t.physical() {
            Physical::Int(_) | Physical::UInt(_) => Value::Int(
                text.trim()
                    .parse::<i128>()
                    .map_err(|_| invalid("an integer"))?,
            ),
            Physical::Float(_) => Value::Float(
                text.trim()
                    .parse::<f64>()
                    .map_err(|_| invalid("a number"))?,
            ),
            Physical::Bytes => Value::Bytes(text.as_bytes().to_vec()),
        })
    }

    /// The integer, for integer values.
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// A human-readable rendering (strings as text).
    pub fn display(&self) -> String {
        match self {
            Value::Int(v) => v.to_string(),
            Value::Float(v) => format!("{v:?}"),
            Value::Bytes(b) => format!("{:?}", String::from_utf8_lossy(b)),
        }
    }

    /// As JSON (strings as text, NaN and infinities as strings).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Int(v) => match (i64::try_from(*v), u64::try_from(*v)) {
                (Ok(i), _) => i.into(),
                (_, Ok(u)) => u.into(),
                _ => v.to_string().into(),
            },
            Value::Float(v) if v.is_nan() => "NaN".into(),
            Value::Float(v) if v.is_infinite() => (if *v > 0.0 { "inf" } else { "-inf" }).into(),
            Value::Float(v) => {
                serde_json::Number::from_f64(*v).map_or(serde_json::Value::Null, Into::into)
            }
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned().into(),
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, o: &Value) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Value {}

impl PartialOrd for Value {
    fn partial_cmp(&self, o: &Value) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Values of one type order as TileDB orders them (floats by total
/// order, strings bytewise); an integer and a float (a condition's
/// operand against a field) compare as numbers; bytes after numbers.
impl Ord for Value {
    fn cmp(&self, o: &Value) -> Ordering {
        match (self, o) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => a.total_cmp(b),
            (Value::Int(a), Value::Float(b)) => (*a as f64).total_cmp(b),
            (Value::Float(a), Value::Int(b)) => a.total_cmp(&(*b as f64)),
            (Value::Bytes(a), Value::Bytes(b)) => a.cmp(b),
            (Value::Bytes(_), _) => Ordering::Greater,
            (_, Value::Bytes(_)) => Ordering::Less,
        }
    }
}

/// The values packed in `bytes` as JSON: one text value for string types,
/// otherwise each value of `t` decoded.
pub fn values_to_json(t: Datatype, bytes: &[u8]) -> Vec<serde_json::Value> {
    if t.is_string() {
        return vec![String::from_utf8_lossy(bytes).into_owned().into()];
    }
    bytes
        .chunks_exact(t.size().max(1) as usize)
        .map(|b| Value::decode(t, b).to_json())
        .collect()
}

/// The value itself when there is exactly one, else the list.
pub fn scalar_or_list(mut v: Vec<serde_json::Value>) -> serde_json::Value {
    if v.len() == 1 {
        v.pop().unwrap_or(serde_json::Value::Null)
    } else {
        v.into()
    }
}
