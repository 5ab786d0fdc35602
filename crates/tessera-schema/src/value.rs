//! Typed reading of values stored as bytes (domains, fill values, MBRs).

use serde::Serialize;
use std::cmp::Ordering;
use tessera_tile::{datatype::Physical, Datatype};

/// One value of some datatype.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// Signed integers, datetimes and times.
    Int(i64),
    /// Unsigned integers and BOOL.
    UInt(u64),
    /// FLOAT32 and FLOAT64.
    Float(f64),
    /// Strings, blobs and anything else, as raw bytes.
    Bytes(Vec<u8>),
}

impl Value {
    /// Decodes one value of `t` from exactly `b` (strings take all of `b`).
    pub fn decode(t: Datatype, b: &[u8]) -> Value {
        let mut x = [0u8; 8];
        let n = b.len().min(8);
        x[..n].copy_from_slice(&b[..n]);
        match t.physical() {
            Physical::Int(w) => {
                let sh = 64 - 8 * w as u32;
                Value::Int(((u64::from_le_bytes(x) << sh) as i64) >> sh)
            }
            Physical::UInt(_) => Value::UInt(u64::from_le_bytes(x)),
            Physical::Float(4) => Value::Float(f32::from_le_bytes([x[0], x[1], x[2], x[3]]) as f64),
            Physical::Float(_) => Value::Float(f64::from_le_bytes(x)),
            Physical::Bytes => Value::Bytes(b.to_vec()),
        }
    }

    /// Orders two values of the same datatype as TileDB does (strings bytewise).
    pub fn compare(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::UInt(a), Value::UInt(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => a.total_cmp(b),
            (Value::Bytes(a), Value::Bytes(b)) => a.cmp(b),
            _ => Ordering::Equal,
        }
    }

    /// A human-readable rendering (strings as text).
    pub fn display(&self) -> String {
        match self {
            Value::Int(v) => v.to_string(),
            Value::UInt(v) => v.to_string(),
            Value::Float(v) => format!("{v:?}"),
            Value::Bytes(b) => format!("{:?}", String::from_utf8_lossy(b)),
        }
    }

    /// As JSON (strings as text, NaN and infinities as strings).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Int(v) => (*v).into(),
            Value::UInt(v) => (*v).into(),
            Value::Float(v) if v.is_nan() => "NaN".into(),
            Value::Float(v) if v.is_infinite() => (if *v > 0.0 { "inf" } else { "-inf" }).into(),
            Value::Float(v) => {
                serde_json::Number::from_f64(*v).map_or(serde_json::Value::Null, Into::into)
            }
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned().into(),
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
