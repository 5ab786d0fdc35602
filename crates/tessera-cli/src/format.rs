//! The JSONL value contract: how each cell value is written.
//!
//! Integers as JSON integers (exact for all of int64 and uint64); floats in
//! shortest round-trip form (float32 cells: shortest that round-trips as
//! float32), NaN and infinities as the strings "NaN", "inf", "-inf"; BOOL as
//! true/false; DATETIME_* and TIME_* as the raw integer; STRING_ASCII,
//! STRING_UTF8 and CHAR as a JSON string, byte for byte as TileDB-Py reads
//! it (`Column::string_value`: NUL bytes kept in var-sized attributes, one
//! NUL byte alone, the default fill, as ""); BLOB as lowercase hex;
//! multi-value or var-sized numeric cells as a JSON array; null as null.

use tessera::query::Column;
use tessera::schema::CellValNum;
use tessera::tile::{datatype::Physical, Datatype};

pub(crate) fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

pub(crate) fn push_f64(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "\"inf\"" } else { "\"-inf\"" });
    } else {
        out.push_str(ryu::Buffer::new().format_finite(v));
    }
}

pub(crate) fn push_f32(out: &mut String, v: f32) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "\"inf\"" } else { "\"-inf\"" });
    } else {
        out.push_str(ryu::Buffer::new().format_finite(v));
    }
}

/// A string cell as text: its bytes as TileDB reads them back
/// ([`Column::string_value`]: NUL bytes kept in var-sized attributes), not
/// valid UTF-8 replaced.
fn text(col: &Column, i: usize) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(col.string_value(i))
}

/// Writes one scalar of `t` from exactly `b`.
fn push_scalar(out: &mut String, t: Datatype, b: &[u8]) {
    let mut x = [0u8; 8];
    x[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    match (t, t.physical()) {
        (Datatype::Bool, _) => out.push_str(if b.first().copied().unwrap_or(0) != 0 {
            "true"
        } else {
            "false"
        }),
        (_, Physical::Int(w)) => {
            let sh = 64 - 8 * w as u32;
            out.push_str(itoa::Buffer::new().format(((u64::from_le_bytes(x) << sh) as i64) >> sh));
        }
        (_, Physical::UInt(_)) => out.push_str(itoa::Buffer::new().format(u64::from_le_bytes(x))),
        (_, Physical::Float(4)) => push_f32(out, f32::from_le_bytes([x[0], x[1], x[2], x[3]])),
        (_, Physical::Float(_)) => push_f64(out, f64::from_le_bytes(x)),
        (_, Physical::Bytes) => push_hex(out, b),
    }
}

fn push_hex(out: &mut String, b: &[u8]) {
    out.push('"');
    for byte in b {
        out.push_str(&format!("{byte:02x}"));
    }
    out.push('"');
}

/// Writes a dense coordinate (an integer of the dimension's type) as
/// [`push_value`] writes it from a column.
pub fn push_coordinate(out: &mut String, v: i128) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// Writes cell `i` of `col` as a JSON value.
pub fn push_value(out: &mut String, col: &Column, i: usize) {
    if !col.is_valid(i) {
        out.push_str("null");
        return;
    }
    let b = col.value(i);
    let t = col.datatype;
    if t.is_string() {
        push_json_str(out, &text(col, i));
    } else if t.is_blob() || t == Datatype::Any {
        push_hex(out, b);
    } else if col.cell_val_num == CellValNum::Fixed(1) {
        push_scalar(out, t, b);
    } else {
        out.push('[');
        for (k, v) in b.chunks_exact(t.size() as usize).enumerate() {
            if k > 0 {
                out.push(',');
            }
            push_scalar(out, t, v);
        }
        out.push(']');
    }
}

/// Writes the value of cell `i` for CSV: the JSON form, with strings unquoted
/// (and quoted CSV-style when they need it).
pub fn push_csv_value(out: &mut String, col: &Column, i: usize) {
    if !col.is_valid(i) {
        return;
    }
    if col.datatype.is_string() {
        // The text itself, not its JSON form.
        let s = text(col, i);
        if s.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&s.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(&s);
        }
        return;
    }
    let mut v = String::new();
    push_value(&mut v, col, i);
    if v.starts_with('[') {
        out.push('"');
        out.push_str(&v);
        out.push('"');
    } else {
        out.push_str(v.trim_matches('"'));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(t: Datatype, cvn: CellValNum, data: Vec<u8>) -> Column {
        Column {
            name: "c".into(),
            is_dimension: false,
            datatype: t,
            cell_val_num: cvn,
            data,
            offsets: None,
            validity: None,
        }
    }

    #[test]
    fn values_follow_the_contract() {
        let mut s = String::new();
        push_value(
            &mut s,
            &col(
                Datatype::UInt64,
                CellValNum::Fixed(1),
                u64::MAX.to_le_bytes().to_vec(),
            ),
            0,
        );
        assert_eq!(s, "18446744073709551615");
        s.clear();
        push_value(
            &mut s,
            &col(
                Datatype::Float32,
                CellValNum::Fixed(1),
                0.1f32.to_le_bytes().to_vec(),
            ),
            0,
        );
        assert_eq!(s, "0.1");
        s.clear();
        push_value(
            &mut s,
            &col(
                Datatype::Float64,
                CellValNum::Fixed(1),
                f64::NEG_INFINITY.to_le_bytes().to_vec(),
            ),
            0,
        );
        assert_eq!(s, "\"-inf\"");
        s.clear();
        let mut blob = col(Datatype::Blob, CellValNum::Var, vec![0xab, 0x01]);
        blob.offsets = Some(vec![0, 2]);
        push_value(&mut s, &blob, 0);
        assert_eq!(s, "\"ab01\"");
        s.clear();
        push_value(
            &mut s,
            &col(Datatype::Int8, CellValNum::Fixed(2), vec![0xff, 2]),
            0,
        );
        assert_eq!(s, "[-1,2]");
    }
}
