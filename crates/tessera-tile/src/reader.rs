//! A bounded, position-tracking byte reader built on `nom`.
//!
//! Every read names the field it is reading; a failure becomes a
//! [`ParseError`] with the structure, the field, the absolute byte offset and
//! (when set) the file. Counts and lengths read off disk are checked against
//! the bytes remaining *before* anything is allocated.

use crate::error::{ParseError, ParseErrorKind};
use nom::number::complete as num;

type NomResult<'a, T> = nom::IResult<&'a [u8], T, nom::error::Error<&'a [u8]>>;

/// A cursor over a byte slice that reports errors with context.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Absolute offset of `data[0]` in its file.
    base: u64,
    structure: &'static str,
    file: Option<&'a str>,
}

impl<'a> Reader<'a> {
    /// A reader over `data`, decoding `structure`.
    pub fn new(data: &'a [u8], structure: &'static str) -> Self {
        Reader {
            data,
            pos: 0,
            base: 0,
            structure,
            file: None,
        }
    }

    /// Sets the absolute file offset of the first byte (for error messages).
    pub fn at_offset(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    /// Sets the file name used in error messages.
    pub fn in_file(mut self, file: &'a str) -> Self {
        self.file = Some(file);
        self
    }

    /// The file named in error messages, if set.
    pub fn file(&self) -> Option<&'a str> {
        self.file
    }

    /// The structure currently being decoded.
    pub fn structure(&self) -> &'static str {
        self.structure
    }

    /// Position relative to the start of the slice.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Absolute position in the file.
    pub fn file_offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// True when every byte was consumed.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// An error of kind `Invalid` at the current position.
    pub fn invalid(&self, field: impl Into<String>, why: impl Into<String>) -> ParseError {
        self.invalid_at(self.pos, field, why)
    }

    /// An error of kind `Invalid` at relative position `pos`.
    pub fn invalid_at(
        &self,
        pos: usize,
        field: impl Into<String>,
        why: impl Into<String>,
    ) -> ParseError {
        ParseError {
            file: self.file.map(str::to_owned),
            structure: self.structure,
            field: field.into(),
            offset: self.base + pos as u64,
            kind: ParseErrorKind::Invalid(why.into()),
        }
    }

    fn truncated(&self, field: &str, needed: u64) -> ParseError {
        ParseError {
            file: self.file.map(str::to_owned),
            structure: self.structure,
            field: field.to_owned(),
            offset: self.file_offset(),
            kind: ParseErrorKind::Truncated {
                needed,
                available: self.remaining() as u64,
            },
        }
    }

    fn run<T>(
        &mut self,
        field: &str,
        size: usize,
        p: impl FnOnce(&'a [u8]) -> NomResult<'a, T>,
    ) -> Result<T, ParseError> {
        match p(self.rest()) {
            Ok((_, v)) => {
                self.pos += size;
                Ok(v)
            }
            Err(_) => Err(self.truncated(field, size as u64)),
        }
    }

    /// Reads a `uint8_t`.
    pub fn u8(&mut self, field: &str) -> Result<u8, ParseError> {
        self.run(field, 1, num::le_u8)
    }
    /// Reads a little-endian `uint32_t`.
    pub fn u32(&mut self, field: &str) -> Result<u32, ParseError> {
        self.run(field, 4, num::le_u32)
    }
    /// Reads a little-endian `uint64_t`.
    pub fn u64(&mut self, field: &str) -> Result<u64, ParseError> {
        self.run(field, 8, num::le_u64)
    }

    /// Borrows `len` bytes; `len` usually comes off disk, so it is checked
    /// against what remains first.
    pub fn bytes(&mut self, field: &str, len: u64) -> Result<&'a [u8], ParseError> {
        if len > self.remaining() as u64 {
            return Err(self.truncated(field, len));
        }
        let len = len as usize;
        let out = &self.data[self.pos..self.pos + len];
        self.pos += len;
        Ok(out)
    }

    /// Skips `len` bytes.
    pub fn skip(&mut self, field: &str, len: u64) -> Result<(), ParseError> {
        self.bytes(field, len).map(|_| ())
    }

    /// Checks that `count` elements of `elem_size` bytes fit in what remains,
    /// and returns `count` as a `usize` ready for `Vec::with_capacity`.
    pub fn check_count(
        &self,
        field: &str,
        count: u64,
        elem_size: u64,
    ) -> Result<usize, ParseError> {
        match count.checked_mul(elem_size) {
            Some(total) if total <= self.remaining() as u64 => Ok(count as usize),
            _ => Err(self.truncated(field, count.saturating_mul(elem_size))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_tracks_offsets() {
        let data = [1u8, 2, 0, 0, 0, 9];
        let mut r = Reader::new(&data, "thing").at_offset(100);
        assert_eq!(r.u8("a").unwrap(), 1);
        assert_eq!(r.u32("b").unwrap(), 2);
        assert_eq!(r.file_offset(), 105);
        let e = r.u32("c").unwrap_err();
        assert_eq!(e.offset, 105);
        assert_eq!(
            e.kind,
            ParseErrorKind::Truncated {
                needed: 4,
                available: 1
            }
        );
        assert!(e.to_string().contains("field `c` at byte offset 105"));
    }

    #[test]
    fn huge_lengths_are_rejected_before_allocating() {
        let data = [0u8; 16];
        let mut r = Reader::new(&data, "thing").in_file("f.tdb");
        assert!(r.bytes("blob", u64::MAX).is_err());
        let e = r.check_count("n", 3, u64::MAX).unwrap_err();
        assert_eq!(e.file.as_deref(), Some("f.tdb"));
    }
}
