//! Enumeration files (`format_spec/enumeration.md`), as libtiledb writes them:
//! `version: u32, name, path name` (each with a `u32` length), `datatype: u8,
//! cell val num: u32, ordered: bool, data size: u64, data`, and for var-sized
//! values `offsets size: u64, offsets`.

use crate::schema::CellValNum;
use crate::SchemaError;
use serde::Serialize;
use tessera_tile::parse::{
    bytes, end, flag, parse, text, u32_le, u64_le, u64s, u8_le, FieldError, PResult,
};
use tessera_tile::Datatype;

/// An enumeration: the values an enumerated attribute's keys index.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Enumeration {
    /// Enumeration format version.
    pub version: u32,
    /// Name (as attributes refer to it).
    pub name: String,
    /// File name.
    pub path_name: String,
    /// Datatype of the values.
    pub datatype: Datatype,
    /// Values per cell.
    pub cell_val_num: CellValNum,
    /// Whether the values are ordered.
    pub ordered: bool,
    /// The values, one entry per key.
    pub values: Vec<Vec<u8>>,
}

impl Enumeration {
    /// Parses an enumeration generic tile payload (see [`enumeration`]).
    pub fn parse(payload: &[u8]) -> Result<Enumeration, SchemaError> {
        Ok(parse(payload, "enumeration", 0, enumeration)?.0)
    }

    /// The enumeration generic tile's payload, as [`Enumeration::parse`]
    /// reads it and libtiledb writes it: values packed back to back, and
    /// for var-sized values their offsets.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.version.to_le_bytes());
        for s in [&self.name, &self.path_name] {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out.push(self.datatype as u8);
        let cvn = match self.cell_val_num {
            CellValNum::Var => u32::MAX,
            CellValNum::Fixed(n) => n,
        };
        out.extend_from_slice(&cvn.to_le_bytes());
        out.push(self.ordered as u8);
        let size: usize = self.values.iter().map(Vec::len).sum();
        out.extend_from_slice(&(size as u64).to_le_bytes());
        self.values.iter().for_each(|v| out.extend_from_slice(v));
        if self.cell_val_num.is_var() {
            out.extend_from_slice(&(self.values.len() as u64 * 8).to_le_bytes());
            let mut at = 0u64;
            for v in &self.values {
                out.extend_from_slice(&at.to_le_bytes());
                at += v.len() as u64;
            }
        }
        out
    }
}

/// An enumeration payload as a nom parser: its version, name and path name
/// (each after a `u32` length), datatype, cell val num (`u32::MAX`:
/// var-sized), ordered flag, the values' bytes (after a `u64` size) and,
/// for var-sized values, their offsets (after a `u64` size in bytes).
pub fn enumeration(i: &[u8]) -> PResult<'_, Enumeration> {
    let (i, version) = u32_le("version number")(i)?;
    let (i, n) = u32_le("name length")(i)?;
    let (i, name) = text("name", n as u64)(i)?;
    let (i, n) = u32_le("path name length")(i)?;
    let (i, path_name) = text("path name", n as u64)(i)?;
    let (rest, id) = u8_le("datatype")(i)?;
    let Some(datatype) = Datatype::from_id(id) else {
        let why = format!("unknown datatype id {id}");
        return Err(FieldError::invalid(i, "datatype", why));
    };
    let (rest, cell_val_num) = match u32_le("cell val num")(rest)? {
        (_, 0) => return Err(FieldError::invalid(rest, "cell val num", "0")),
        (r, u32::MAX) => (r, CellValNum::Var),
        (r, n) => (r, CellValNum::Fixed(n)),
    };
    let (i, ordered) = flag("ordered")(rest)?;
    let (i, size) = u64_le("data size")(i)?;
    let (i, data) = bytes("data", size)(i)?;
    let (i, values) = match cell_val_num {
        CellValNum::Var => var_values(i, data)?,
        CellValNum::Fixed(n) => {
            let per_value = n as usize * datatype.size() as usize;
            (i, data.chunks(per_value).map(<[u8]>::to_vec).collect())
        }
    };
    let (i, ()) = end(i)?;
    let e = Enumeration {
        version,
        name,
        path_name,
        datatype,
        cell_val_num,
        ordered,
        values,
    };
    Ok((i, e))
}

/// Var-sized values: their offsets in `data` (a `u64` size in bytes, then
/// the offsets), each value running to the next offset or the end.
fn var_values<'a>(i: &'a [u8], data: &[u8]) -> PResult<'a, Vec<Vec<u8>>> {
    let (at, size) = u64_le("offsets size")(i)?;
    let (rest, offsets) = u64s("offsets", size / 8)(at)?;
    let mut values = Vec::with_capacity(offsets.len());
    for (k, &o) in offsets.iter().enumerate() {
        let end = offsets.get(k + 1).copied().unwrap_or(data.len() as u64);
        if o > end || end > data.len() as u64 {
            let why = format!("offset {k} ({o}..{end}) is out of order or past the data");
            return Err(FieldError::invalid(&at[8 * k..], "offsets", why));
        }
        values.push(data[o as usize..end as usize].to_vec());
    }
    Ok((rest, values))
}
