//! Tile metadata: per-tile mins, maxes, sums and null counts, and the
//! fragment-level summary (`format_spec/fragment.md#tile-mins-maxes`,
//! `#tile-sums`, `#tile-null-count`, `#tile-fragment-min-max-sum-null-count`),
//! from format 11 (the summary from 12). Version 23's tile global order
//! bounds share the mins/maxes layout.
//!
//! Before format 21, libtiledb could write wrong tile metadata for nullable
//! fixed-size strings in dense arrays; [`trusted`] says when to rely on it.

use nom::multi::count as count_exact;
use tessera_tile::parse::{bytes, end, fits, parse, u64_le, FieldError, PResult};
use tessera_tile::ParseError;

/// Per-tile minimum (or maximum) values of one field. For fixed-sized
/// fields the buffer holds one cell per tile; for var-sized ones it holds
/// an offset per tile into a buffer of values. A field libtiledb keeps no
/// bounds for has none ([`len`](Self::len) is 0).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TileBounds {
    fixed: Vec<u8>,
    var: Vec<u8>,
    /// Bytes per value for a fixed-sized field; `None` when var-sized.
    cell_size: Option<usize>,
}

impl TileBounds {
    /// Parses the generic tile's payload: fixed buffer size (u64), var
    /// buffer size (u64), fixed buffer, var buffer. The order differs from
    /// the spec's table; this is what libtiledb writes and reads.
    /// `cell_size` is `None` for var-sized fields.
    pub fn parse(data: &[u8], cell_size: Option<u64>) -> Result<TileBounds, ParseError> {
        Ok(parse(data, "tile mins/maxes", 0, tile_bounds(cell_size))?.0)
    }

    fn offset(&self, t: usize) -> u64 {
        u64::from_le_bytes(self.fixed[8 * t..8 * t + 8].try_into().expect("8 bytes"))
    }

    /// Number of tiles with a value.
    pub fn len(&self) -> usize {
        match self.cell_size {
            Some(n) => self.fixed.len() / n,
            None => self.fixed.len() / 8,
        }
    }

    /// True when the field has no bounds.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of tile `t` (its bytes, in the field's datatype).
    pub fn get(&self, t: usize) -> Option<&[u8]> {
        if t >= self.len() {
            return None;
        }
        match self.cell_size {
            Some(n) => Some(&self.fixed[n * t..n * (t + 1)]),
            None => {
                let start = self.offset(t) as usize;
                let end = if t + 1 < self.len() {
                    self.offset(t + 1) as usize
                } else {
                    self.var.len()
                };
                Some(&self.var[start..end])
            }
        }
    }
}

/// One field's fragment-level metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSummary {
    /// Minimum value over the fragment (bytes of the field's datatype; empty when not kept).
    pub min: Vec<u8>,
    /// Maximum value.
    pub max: Vec<u8>,
    /// Sum, as the bits of an `i64` (signed integers), `u64` (unsigned) or
    /// `f64` (floats); see [`Sum`].
    pub sum: u64,
    /// Null cells.
    pub null_count: u64,
}

/// Parses the fragment min/max/sum/null count payload: for each of `fields`
/// fields, (u64 min size, min, u64 max size, max, u64 sum, u64 null count).
pub fn parse_summary(data: &[u8], fields: usize) -> Result<Vec<FieldSummary>, ParseError> {
    let summaries = |i| {
        // Each field takes at least 32 bytes.
        let n = fits(i, "number of fields", fields as u64, 32)?;
        let (i, out) = count_exact(field_summary, n)(i)?;
        end(i).map(|(i, ())| (i, out))
    };
    Ok(parse(data, "fragment min max sum null count", 0, summaries)?.0)
}

/// One field's summary: its minimum and maximum (each after a `u64`
/// size), sum and null count.
fn field_summary(i: &[u8]) -> PResult<'_, FieldSummary> {
    let (i, min) = u64_le("min size")(i)?;
    let (i, min) = bytes("min", min)(i)?;
    let (i, max) = u64_le("max size")(i)?;
    let (i, max) = bytes("max", max)(i)?;
    let (i, sum) = u64_le("sum")(i)?;
    let (i, null_count) = u64_le("null count")(i)?;
    let summary = FieldSummary {
        min: min.to_vec(),
        max: max.to_vec(),
        sum,
        null_count,
    };
    Ok((i, summary))
}

/// A tile mins (or maxes) payload as a nom parser: the fixed buffer's
/// size, the var buffer's size (u64 each), the fixed buffer, the var
/// buffer. The order differs from the spec's table; this is what libtiledb
/// writes and reads. The fixed buffer holds whole values of `cell_size`
/// bytes, or for var-sized fields (`None`) rising u64 offsets inside the
/// var buffer, so that [`TileBounds::get`] needs no checks of its own.
fn tile_bounds<'a>(cell_size: Option<u64>) -> impl Fn(&'a [u8]) -> PResult<'a, TileBounds> {
    move |start| {
        let (i, fixed_len) = u64_le("buffer size")(start)?;
        let (i, var_len) = u64_le("var buffer size")(i)?;
        let offsets_at = i;
        let (i, fixed) = bytes("buffer", fixed_len)(i)?;
        let (i, var) = bytes("var buffer", var_len)(i)?;
        let (i, ()) = end(i)?;
        // Var-sized fields keep a u64 offset per tile.
        let step = cell_size.unwrap_or(8);
        if step == 0 || !(fixed.len() as u64).is_multiple_of(step) {
            let why = format!(
                "{} bytes is not a whole number of {step}-byte values",
                fixed.len()
            );
            return Err(FieldError::invalid(start, "buffer size", why));
        }
        if cell_size.is_none() {
            let mut prev = 0;
            for (t, o) in fixed.chunks_exact(8).enumerate() {
                let o = u64::from_le_bytes(o.try_into().expect("8 bytes"));
                if o < prev || o > var.len() as u64 {
                    let why = format!(
                        "offset {o} of tile {t} is below the previous one or past the {}-byte var buffer",
                        var.len()
                    );
                    return Err(FieldError::invalid(&offsets_at[8 * t..], "offset", why));
                }
                prev = o;
            }
        }
        let bounds = TileBounds {
            fixed: fixed.to_vec(),
            var: var.to_vec(),
            cell_size: cell_size.map(|n| n as usize),
        };
        Ok((i, bounds))
    }
}

/// The tile mins (or maxes) generic tile's payload, as
/// [`TileBounds::parse`] reads it: the fixed buffer (one cell per tile, or
/// for var-sized fields a u64 offset per tile into `var`), then `var`.
pub fn encode_bounds(fixed: &[u8], var: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + fixed.len() + var.len());
    out.extend_from_slice(&(fixed.len() as u64).to_le_bytes());
    out.extend_from_slice(&(var.len() as u64).to_le_bytes());
    out.extend_from_slice(fixed);
    out.extend_from_slice(var);
    out
}

/// A section of one u64 per tile (tile offsets, var sizes, sums, null
/// counts): the count, then the values.
pub fn encode_values(values: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 8 * values.len());
    out.extend_from_slice(&(values.len() as u64).to_le_bytes());
    values
        .iter()
        .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    out
}

/// The fragment summary's payload, as [`parse_summary`] reads it.
pub fn encode_summary(fields: &[FieldSummary]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields {
        for b in [&f.min, &f.max] {
            out.extend_from_slice(&(b.len() as u64).to_le_bytes());
            out.extend_from_slice(b);
        }
        out.extend_from_slice(&f.sum.to_le_bytes());
        out.extend_from_slice(&f.null_count.to_le_bytes());
    }
    out
}

/// A tile or fragment sum, read as the type libtiledb accumulates in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sum {
    /// Signed integers (saturating at the `i64` bounds).
    Int(i64),
    /// Unsigned integers (saturating at `u64::MAX`).
    UInt(u64),
    /// Floating point.
    Float(f64),
}

impl Sum {
    /// Reads stored sum bits for a field of datatype `t`; `None` for types
    /// libtiledb does not sum.
    pub fn from_bits(t: tessera_tile::Datatype, bits: u64) -> Option<Sum> {
        use tessera_tile::Datatype as D;
        Some(match t {
            D::Float32 | D::Float64 => Sum::Float(f64::from_bits(bits)),
            D::UInt8 | D::UInt16 | D::UInt32 | D::UInt64 => Sum::UInt(bits),
            D::Int8 | D::Int16 | D::Int32 | D::Int64 => Sum::Int(bits as i64),
            _ => return None,
        })
    }
}

/// Orders two cells of a field as libtiledb orders them for mins and
/// maxes: single numbers by value, everything else (strings, multi-value
/// cells) bytewise.
pub fn compare_cells(
    t: tessera_tile::Datatype,
    n: tessera_schema::CellValNum,
    a: &[u8],
    b: &[u8],
) -> std::cmp::Ordering {
    use tessera_schema::Value;
    if n == tessera_schema::CellValNum::Fixed(1) {
        Value::decode(t, a).cmp(&Value::decode(t, b))
    } else {
        a.cmp(b)
    }
}

/// Whether tile metadata of a field can be relied on: not for nullable
/// fixed-size strings in dense fragments before format 21.
pub fn trusted(
    version: tessera_tile::FormatVersion,
    dense: bool,
    nullable: bool,
    string_fixed: bool,
) -> bool {
    version.has(crate::gates::DENSE_NULLABLE_STRING_TILE_METADATA)
        || !(dense && nullable && string_fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(fixed: &[u8], var: &[u8]) -> Vec<u8> {
        let mut b = (fixed.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(&(var.len() as u64).to_le_bytes());
        b.extend_from_slice(fixed);
        b.extend_from_slice(var);
        b
    }

    #[test]
    fn trusted_on_both_sides_of_its_gate() {
        let gate = crate::gates::DENSE_NULLABLE_STRING_TILE_METADATA.version();
        let before = tessera_tile::FormatVersion::new(gate.number() - 1);
        // Before the gate only dense, nullable, fixed-size string fields are
        // distrusted; every other combination is trusted on both sides.
        for dense in [false, true] {
            for nullable in [false, true] {
                for string_fixed in [false, true] {
                    let suspect = dense && nullable && string_fixed;
                    assert_eq!(trusted(before, dense, nullable, string_fixed), !suspect);
                    assert!(trusted(gate, dense, nullable, string_fixed));
                }
            }
        }
    }

    #[test]
    fn fixed_and_var_bounds() {
        let b = TileBounds::parse(&payload(&[1, 0, 2, 0], &[]), Some(2)).unwrap();
        assert_eq!(
            (b.len(), b.get(1), b.get(2)),
            (2, Some(&[2u8, 0][..]), None)
        );
        let offs: Vec<u8> = [0u64, 3].iter().flat_map(|o| o.to_le_bytes()).collect();
        let b = TileBounds::parse(&payload(&offs, b"abcde"), None).unwrap();
        assert_eq!((b.get(0), b.get(1)), (Some(&b"abc"[..]), Some(&b"de"[..])));
        let empty = TileBounds::parse(&payload(&[], &[]), Some(4)).unwrap();
        assert!(empty.is_empty());
    }

    #[test]
    fn bad_bounds_are_errors() {
        assert!(TileBounds::parse(&payload(&[1, 0, 2], &[]), Some(2)).is_err());
        let offs: Vec<u8> = [4u64, 2].iter().flat_map(|o| o.to_le_bytes()).collect();
        assert!(TileBounds::parse(&payload(&offs, b"abcde"), None).is_err());
        let offs: Vec<u8> = 9u64.to_le_bytes().to_vec();
        assert!(TileBounds::parse(&payload(&offs, b"abcde"), None).is_err());
        let mut b = payload(&[1, 2], &[]);
        b[0] = 200; // buffer size past the payload
        assert!(TileBounds::parse(&b, Some(2)).is_err());
        assert!(parse_summary(&[0; 8], usize::MAX).is_err());
    }
}
