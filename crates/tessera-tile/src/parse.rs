//! nom parsers of the format's fields, each naming the field it reads.
//!
//! A structure's decoder is a nom parser built from these: one function of
//! the format version per structure, reading the fields the version has
//! (`nom::combinator::cond(version.has(GATE), ...)`), so that one visible
//! place says which field exists from which version. On failure the
//! [`FieldError`] keeps the field's name and where its bytes start;
//! [`parse`] turns it into a [`ParseError`] naming the file, structure,
//! field and absolute byte offset.
//! Counts and lengths read off disk are checked against the bytes left
//! before anything is allocated.
//!
//! ```
//! use nom::combinator::cond;
//! use tessera_tile::parse::{parse, u32_le, u64_le, PResult};
//! use tessera_tile::{FormatVersion, Gate};
//!
//! const SIZE: Gate = Gate::since(10);
//! /// A version, then (from version 10) a size.
//! fn header(i: &[u8]) -> PResult<'_, (FormatVersion, Option<u64>)> {
//!     let (i, version) = u32_le("version")(i)?;
//!     let version = FormatVersion::new(version);
//!     let (i, size) = cond(version.has(SIZE), u64_le("size"))(i)?;
//!     Ok((i, (version, size)))
//! }
//! let (v9, _) = parse(&[9, 0, 0, 0], "header", 0, header).unwrap();
//! assert_eq!(v9.1, None);
//! let e = parse(&[10, 0, 0, 0, 1], "header", 100, header).unwrap_err();
//! assert_eq!(e.to_string(), "header: field `size` at byte offset 104 needs 8 bytes but only 1 remain");
//! ```

use crate::error::{ParseError, ParseErrorKind};
use nom::number::complete as num;
use std::borrow::Cow;

/// What a field parser returns: the input left and the value, or a
/// [`FieldError`].
pub type PResult<'a, T> = nom::IResult<&'a [u8], T, FieldError<'a>>;

/// Why a field could not be parsed, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError<'a> {
    /// The input at the field's first byte.
    pub input: &'a [u8],
    /// The field being parsed (empty where a bare nom parser failed).
    pub field: Cow<'static, str>,
    /// The structure the field belongs to, where it is not the outermost.
    pub structure: Option<&'static str>,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

impl<'a> FieldError<'a> {
    /// The field at `input` holds a value the format does not allow.
    pub fn invalid(input: &'a [u8], field: &'static str, why: impl Into<String>) -> nom::Err<Self> {
        nom::Err::Failure(FieldError {
            input,
            field: field.into(),
            structure: None,
            kind: ParseErrorKind::Invalid(why.into()),
        })
    }

    /// The field at `input` needs `needed` bytes.
    pub fn truncated(input: &'a [u8], field: &'static str, needed: u64) -> nom::Err<Self> {
        nom::Err::Error(FieldError {
            input,
            field: field.into(),
            structure: None,
            kind: ParseErrorKind::Truncated {
                needed,
                available: input.len() as u64,
            },
        })
    }
}

impl<'a> nom::error::ParseError<&'a [u8]> for FieldError<'a> {
    fn from_error_kind(input: &'a [u8], kind: nom::error::ErrorKind) -> Self {
        FieldError {
            input,
            field: "".into(),
            structure: None,
            kind: ParseErrorKind::Invalid(format!("{kind:?} failed")),
        }
    }

    fn append(_: &'a [u8], _: nom::error::ErrorKind, other: Self) -> Self {
        other
    }
}

impl<'a> nom::error::ContextError<&'a [u8]> for FieldError<'a> {
    /// Names the field of a bare nom parser (`nom::error::context`).
    fn add_context(_: &'a [u8], field: &'static str, mut other: Self) -> Self {
        if other.field.is_empty() {
            other.field = field.into();
        }
        other
    }
}

/// Runs `parser` over `data`, the bytes of `structure` starting at byte
/// `base` of their file; returns the value and the bytes it took.
pub fn parse<'a, T>(
    data: &'a [u8],
    structure: &'static str,
    base: u64,
    mut parser: impl FnMut(&'a [u8]) -> PResult<'a, T>,
) -> Result<(T, usize), ParseError> {
    match parser(data) {
        Ok((rest, v)) => Ok((v, data.len() - rest.len())),
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(ParseError {
            file: None,
            structure: e.structure.unwrap_or(structure),
            field: e.field.into_owned(),
            offset: base + position(data, e.input) as u64,
            kind: e.kind,
        }),
        Err(nom::Err::Incomplete(_)) => Err(ParseError {
            file: None,
            structure,
            field: String::new(),
            offset: base + data.len() as u64,
            kind: ParseErrorKind::Invalid("incomplete input".into()),
        }),
    }
}

/// Where `part` (a slice of `data`, the input a parser stopped at, which
/// may be a length-delimited part of it) starts in `data`.
fn position(data: &[u8], part: &[u8]) -> usize {
    let at = (part.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
    at.min(data.len())
}

/// Errors of `parser` name `structure`: a structure nested in another.
pub fn within<'a, T>(
    structure: &'static str,
    parser: impl Fn(&'a [u8]) -> PResult<'a, T>,
) -> impl Fn(&'a [u8]) -> PResult<'a, T> {
    move |i| {
        parser(i).map_err(|e| {
            e.map(|mut e| {
                e.structure.get_or_insert(structure);
                e
            })
        })
    }
}

/// A fixed-size number read by nom's `complete` parser `read`.
fn number<'a, T>(
    field: &'static str,
    size: u64,
    read: fn(&'a [u8]) -> nom::IResult<&'a [u8], T>,
) -> impl Fn(&'a [u8]) -> PResult<'a, T> {
    move |i| read(i).map_err(|_| FieldError::truncated(i, field, size))
}

/// A `uint8_t`.
pub fn u8_le<'a>(field: &'static str) -> impl Fn(&'a [u8]) -> PResult<'a, u8> {
    number(field, 1, num::le_u8)
}

/// A little-endian `uint32_t`.
pub fn u32_le<'a>(field: &'static str) -> impl Fn(&'a [u8]) -> PResult<'a, u32> {
    number(field, 4, num::le_u32)
}

/// A little-endian `uint64_t`.
pub fn u64_le<'a>(field: &'static str) -> impl Fn(&'a [u8]) -> PResult<'a, u64> {
    number(field, 8, num::le_u64)
}

/// A little-endian `uint16_t`.
pub fn u16_le<'a>(field: &'static str) -> impl Fn(&'a [u8]) -> PResult<'a, u16> {
    number(field, 2, num::le_u16)
}

/// A little-endian `int32_t`.
pub fn i32_le<'a>(field: &'static str) -> impl Fn(&'a [u8]) -> PResult<'a, i32> {
    number(field, 4, num::le_i32)
}

/// A little-endian `float`.
pub fn f32_le<'a>(field: &'static str) -> impl Fn(&'a [u8]) -> PResult<'a, f32> {
    number(field, 4, num::le_f32)
}

/// A little-endian `double`.
pub fn f64_le<'a>(field: &'static str) -> impl Fn(&'a [u8]) -> PResult<'a, f64> {
    number(field, 8, num::le_f64)
}

/// A `bool` stored as one byte (any non-zero value is true).
pub fn flag<'a>(field: &'static str) -> impl Fn(&'a [u8]) -> PResult<'a, bool> {
    move |i| u8_le(field)(i).map(|(i, b)| (i, b != 0))
}

/// The end of a structure: bytes left over are an error.
pub fn end(i: &[u8]) -> PResult<'_, ()> {
    match i.len() {
        0 => Ok((i, ())),
        n => Err(FieldError::invalid(
            i,
            "end",
            format!("{n} unexpected trailing bytes"),
        )),
    }
}

/// `len` bytes; `len` usually comes off disk, so it is checked against
/// what remains first.
pub fn bytes<'a>(field: &'static str, len: u64) -> impl Fn(&'a [u8]) -> PResult<'a, &'a [u8]> {
    move |i: &'a [u8]| match usize::try_from(len) {
        Ok(n) if n <= i.len() => Ok((&i[n..], &i[..n])),
        _ => Err(FieldError::truncated(i, field, len)),
    }
}

/// `len` bytes of UTF-8 text.
pub fn text<'a>(field: &'static str, len: u64) -> impl Fn(&'a [u8]) -> PResult<'a, String> {
    move |i| {
        let (rest, b) = bytes(field, len)(i)?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok((rest, s.to_owned())),
            Err(_) => Err(FieldError::invalid(i, field, "not valid UTF-8")),
        }
    }
}

/// A `uint64_t` length, then that many bytes of UTF-8 text.
pub fn sized_text<'a>(
    size_field: &'static str,
    field: &'static str,
) -> impl Fn(&'a [u8]) -> PResult<'a, String> {
    move |i| {
        let (i, n) = u64_le(size_field)(i)?;
        text(field, n)(i)
    }
}

/// `count` items of at least `elem_size` bytes each, checked against the
/// bytes left in `i` before a collection for them is allocated.
pub fn fits<'a>(
    i: &'a [u8],
    field: &'static str,
    count: u64,
    elem_size: u64,
) -> Result<usize, nom::Err<FieldError<'a>>> {
    match count.checked_mul(elem_size) {
        Some(total) if total <= i.len() as u64 => Ok(count as usize),
        _ => Err(FieldError::truncated(
            i,
            field,
            count.saturating_mul(elem_size),
        )),
    }
}

/// `count` little-endian `uint64_t` values; `count` is checked against the
/// bytes left before anything is allocated.
pub fn u64s<'a>(field: &'static str, count: u64) -> impl Fn(&'a [u8]) -> PResult<'a, Vec<u64>> {
    move |i| {
        let (rest, b) = bytes(field, count.saturating_mul(8))(i)?;
        let values = b
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        Ok((rest, values))
    }
}

/// A `u64` count named `count_field`, then that many `uint64_t` values.
pub fn counted_u64s<'a>(
    count_field: &'static str,
    field: &'static str,
) -> impl Fn(&'a [u8]) -> PResult<'a, Vec<u64>> {
    move |i| {
        let (i, n) = u64_le(count_field)(i)?;
        u64s(field, n)(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nom::combinator::cond;

    #[test]
    fn errors_name_the_field_and_its_offset() {
        let data = [7u8, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 2];
        let p = |i| {
            let (i, _) = u32_le("version")(i)?;
            let (i, n) = u64_le("count")(i)?;
            u64s("values", n)(i)
        };
        let e = parse(&data, "thing", 1000, p).unwrap_err();
        // A count off disk is checked before anything is allocated.
        assert!(u64s("offsets", u64::MAX / 4)(&data).is_err());
        assert_eq!(e.field, "values");
        assert_eq!(e.offset, 1012);
        assert_eq!(
            e.kind,
            ParseErrorKind::Truncated {
                needed: 24,
                available: 2
            }
        );
    }

    #[test]
    fn absurd_counts_fail_before_allocating() {
        let e = parse(&[0u8; 4], "thing", 0, u64s("values", u64::MAX)).unwrap_err();
        assert_eq!(e.field, "values");
    }

    #[test]
    fn gated_fields_and_nested_structures() {
        let data = [1u8, 0xff, 0xfe];
        let p = |i| {
            let (i, yes) = flag("present")(i)?;
            let (i, v) = cond(yes, within("inner", text("name", 2)))(i)?;
            Ok((i, v))
        };
        let e = parse(&data, "outer", 0, p).unwrap_err();
        assert_eq!(
            (e.structure, e.field.as_str(), e.offset),
            ("inner", "name", 1)
        );
        let (v, used) = parse(&[0u8], "outer", 0, p).unwrap();
        assert_eq!((v, used), (None, 1));
    }

    #[test]
    fn offsets_inside_length_delimited_parts() {
        // A 4-byte part whose second field is cut short: the offset is
        // where that field starts, though the part ends before the data.
        let data = [4u8, 1, 0, 0, 0, 9, 9];
        let p = |i| {
            let (i, n) = u8_le("part size")(i)?;
            let (i, part) = bytes("part", n as u64)(i)?;
            let (rest, _) = u8_le("first")(part)?;
            u32_le("second")(rest)?;
            Ok((i, ()))
        };
        let e = parse(&data, "outer", 50, p).unwrap_err();
        assert_eq!((e.field.as_str(), e.offset), ("second", 52));
    }
}
