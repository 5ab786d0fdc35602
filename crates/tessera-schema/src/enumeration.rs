//! Enumeration files (`format_spec/enumeration.md`), as libtiledb writes them:
//! `version: u32, name, path name` (each with a `u32` length), `datatype: u8,
//! cell val num: u32, ordered: bool, data size: u64, data`, and for var-sized
//! values `offsets size: u64, offsets`.

use crate::schema::CellValNum;
use crate::SchemaError;
use serde::Serialize;
use tessera_tile::{Datatype, Reader};

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
    /// Parses an enumeration generic tile payload.
    pub fn parse(payload: &[u8]) -> Result<Enumeration, SchemaError> {
        let mut r = Reader::new(payload, "enumeration");
        let version = r.u32("version number")?;
        let n = r.u32("name length")?;
        let name = r.string("name", n as u64)?;
        let n = r.u32("path name length")?;
        let path_name = r.string("path name", n as u64)?;
        let at = r.position();
        let id = r.u8("datatype")?;
        let datatype = Datatype::from_id(id)
            .ok_or_else(|| r.invalid_at(at, "datatype", format!("unknown datatype id {id}")))?;
        let cvn = r.u32("cell val num")?;
        let cell_val_num = if cvn == u32::MAX {
            CellValNum::Var
        } else {
            CellValNum::Fixed(cvn)
        };
        let ordered = r.bool("ordered")?;
        let size = r.u64("data size")?;
        let data = r.bytes("data", size)?;
        let values = match cell_val_num {
            CellValNum::Var => {
                let osize = r.u64("offsets size")?;
                let offs = r.u64_array("offsets", osize / 8)?;
                let mut v = Vec::with_capacity(offs.len());
                for (i, &o) in offs.iter().enumerate() {
                    let end = offs.get(i + 1).copied().unwrap_or(data.len() as u64);
                    if o > end || end > data.len() as u64 {
                        return Err(r
                            .invalid(
                                "offsets",
                                format!("offset {i} ({o}..{end}) is out of order or past the data"),
                            )
                            .into());
                    }
                    v.push(data[o as usize..end as usize].to_vec());
                }
                v
            }
            CellValNum::Fixed(0) => return Err(r.invalid("cell val num", "0").into()),
            CellValNum::Fixed(n) => data
                .chunks(n as usize * datatype.size() as usize)
                .map(<[u8]>::to_vec)
                .collect(),
        };
        r.finish()?;
        Ok(Enumeration {
            version,
            name,
            path_name,
            datatype,
            cell_val_num,
            ordered,
            values,
        })
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
