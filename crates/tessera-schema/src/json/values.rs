//! Values in the schema's JSON form: numbers as JSON numbers (NaN and the
//! infinities as the strings `"NaN"`, `"inf"`, `"-inf"`), text as strings,
//! any other bytes as `{"hex": "..."}`. A cell of several values is a list;
//! a cell of text is one string.

use super::fields::{invalid, kind};
use crate::value::Value;
use crate::SchemaError;
use serde_json::Value as Json;
use tessera_tile::datatype::Physical;
use tessera_tile::Datatype;

/// One value of `t`, stored as `b`, as JSON.
pub(crate) fn value_to_json(t: Datatype, b: &[u8]) -> Json {
    match t.physical() {
        Physical::Bytes => bytes_to_json(t, b),
        _ => Value::decode(t, b).to_json(),
    }
}

/// A cell (several values of `t` packed in `b`) as JSON: text types as one
/// string, one value as itself, several as a list.
pub(crate) fn cell_to_json(t: Datatype, b: &[u8]) -> Json {
    let size = t.size().max(1) as usize;
    if t.physical() == Physical::Bytes || b.len() == size {
        return value_to_json(t, b);
    }
    b.chunks(size).map(|v| value_to_json(t, v)).collect()
}

/// Text of the UTF-8 text types as a string when it is valid UTF-8 (NUL
/// bytes included); anything else as hex, so every value round-trips.
fn bytes_to_json(t: Datatype, b: &[u8]) -> Json {
    let text = matches!(
        t,
        Datatype::Char | Datatype::StringAscii | Datatype::StringUtf8
    );
    match std::str::from_utf8(b) {
        Ok(s) if text => s.into(),
        _ => serde_json::json!({ "hex": tessera_tile::hex::encode(b) }),
    }
}

/// One value of `t` from JSON, as stored.
pub(crate) fn value_from_json(t: Datatype, v: &Json, path: &str) -> Result<Vec<u8>, SchemaError> {
    let bad = || invalid(path, format!("expected a {t} value, found {v}"));
    Ok(match t.physical() {
        Physical::Int(w) => {
            let n = int_of(v).ok_or_else(bad)?;
            let bits = 8 * w as u32;
            let (lo, hi) = (i128::MIN >> (128 - bits), i128::MAX >> (128 - bits));
            if !(lo..=hi).contains(&n) {
                return Err(bad());
            }
            (n as i64).to_le_bytes()[..w as usize].to_vec()
        }
        Physical::UInt(w) => {
            let n = int_of(v).ok_or_else(bad)?;
            let hi = if w == 8 {
                u64::MAX as i128
            } else {
                (1i128 << (8 * w)) - 1
            };
            if !(0..=hi).contains(&n) {
                return Err(bad());
            }
            (n as u64).to_le_bytes()[..w as usize].to_vec()
        }
        Physical::Float(4) => (float_of(v).ok_or_else(bad)? as f32).to_le_bytes().to_vec(),
        Physical::Float(_) => float_of(v).ok_or_else(bad)?.to_le_bytes().to_vec(),
        Physical::Bytes => bytes_from_json(t, v, path)?,
    })
}

/// A cell of `t` from JSON: a string or `{"hex"}` for byte types, else one
/// value or a list of values.
pub(crate) fn cell_from_json(t: Datatype, v: &Json, path: &str) -> Result<Vec<u8>, SchemaError> {
    match v {
        Json::Array(items) if t.physical() != Physical::Bytes => {
            let mut out = Vec::new();
            for (i, x) in items.iter().enumerate() {
                out.extend(value_from_json(t, x, &format!("{path}[{i}]"))?);
            }
            Ok(out)
        }
        _ => value_from_json(t, v, path),
    }
}

fn bytes_from_json(t: Datatype, v: &Json, path: &str) -> Result<Vec<u8>, SchemaError> {
    if let Some(s) = v.as_str() {
        return Ok(s.as_bytes().to_vec());
    }
    let hex = v
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get("hex"))
        .and_then(Json::as_str)
        .ok_or_else(|| {
            let found = kind(v);
            invalid(
                path,
                format!("expected a {t} value as a string or {{\"hex\": \"...\"}}, found {found}"),
            )
        })?;
    tessera_tile::hex::decode(hex).map_err(|why| invalid(path, why))
}

/// An integer: a JSON integer, `true`/`false` (for BOOL) or a string of one.
fn int_of(v: &Json) -> Option<i128> {
    match v {
        Json::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        Json::Bool(b) => Some(*b as i128),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A float: a JSON number or `"NaN"`, `"inf"`, `"-inf"` (any case).
fn float_of(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "nan" => Some(f64::NAN),
            "inf" | "+inf" | "infinity" => Some(f64::INFINITY),
            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
            other => other.parse().ok(),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_value_round_trips() {
        let cases: Vec<(Datatype, Vec<u8>)> = vec![
            (Datatype::Int8, vec![0x80]),
            (Datatype::Int64, i64::MIN.to_le_bytes().to_vec()),
            (Datatype::UInt64, u64::MAX.to_le_bytes().to_vec()),
            (Datatype::Float32, f32::NAN.to_le_bytes().to_vec()),
            (Datatype::Float64, f64::NEG_INFINITY.to_le_bytes().to_vec()),
            (Datatype::Float32, 0.1f32.to_le_bytes().to_vec()),
            (Datatype::DatetimeNs, (-5i64).to_le_bytes().to_vec()),
            (Datatype::Char, vec![0x80]),
            (Datatype::StringUtf8, b"a\0b".to_vec()),
            (Datatype::Blob, vec![0, 255]),
        ];
        for (t, b) in cases {
            let j = cell_to_json(t, &b);
            assert_eq!(cell_from_json(t, &j, "x").unwrap(), b, "{t} {j}");
        }
        let pair = [1i32.to_le_bytes(), 2i32.to_le_bytes()].concat();
        assert_eq!(
            cell_to_json(Datatype::Int32, &pair),
            serde_json::json!([1, 2])
        );
        assert_eq!(
            cell_from_json(Datatype::Int32, &serde_json::json!([1, 2]), "x").unwrap(),
            pair
        );
    }

    #[test]
    fn values_out_of_range_or_of_the_wrong_kind_name_the_field() {
        let e = value_from_json(
            Datatype::UInt8,
            &serde_json::json!(256),
            "attributes[0].fill_value",
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "invalid schema: attributes[0].fill_value: expected a UINT8 value, found 256"
        );
        assert!(value_from_json(Datatype::Int8, &serde_json::json!(-129), "x").is_err());
        assert!(value_from_json(Datatype::Float64, &serde_json::json!("x"), "x").is_err());
        assert!(value_from_json(Datatype::Blob, &serde_json::json!({"hex": "abc"}), "x").is_err());
    }
}
