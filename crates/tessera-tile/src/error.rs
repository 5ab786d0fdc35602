//! The parse error shared by every decoder: what, where, and why.

use std::fmt;

/// Why a structure could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// The bytes ended before the field did.
    Truncated {
        /// Bytes the field needs.
        needed: u64,
        /// Bytes that were left.
        available: u64,
    },
    /// A field holds a value the format does not allow.
    Invalid(String),
}

/// A decoding failure, naming the file, the structure, the field and the byte
/// offset at which it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file the bytes came from, when known.
    pub file: Option<String>,
    /// The structure being decoded (e.g. `generic tile header`).
    pub structure: &'static str,
    /// The field being decoded (e.g. `persisted size`).
    pub field: String,
    /// Absolute byte offset of the field in the file.
    pub offset: u64,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

impl ParseError {
    /// Attaches the file name, unless one is already set.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        if self.file.is_none() {
            self.file = Some(file.into());
        }
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ParseErrorKind::Truncated { needed, available } => write!(
                f,
                "{}: field `{}` at byte offset {} needs {} bytes but only {} remain",
                self.structure, self.field, self.offset, needed, available
            )?,
            ParseErrorKind::Invalid(why) => write!(
                f,
                "{}: field `{}` at byte offset {}: {}",
                self.structure, self.field, self.offset, why
            )?,
        }
        if let Some(file) = &self.file {
            write!(f, " (in {file})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}
