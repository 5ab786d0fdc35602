//! The cells a sparse writer holds for one field until it finishes: the
//! values back to back, a start offset per cell for var-sized fields, a
//! validity byte per cell for nullable ones.

use super::dense::FILL;
use crate::WriteError;
use tessera_query::Column;
use tessera_schema::CellValNum;
use tessera_tile::Datatype;

/// One field of a schema, as the writer needs it.
#[derive(Debug, Clone)]
pub(crate) struct FieldInfo {
    pub name: String,
    pub datatype: Datatype,
    pub cell_val_num: CellValNum,
    pub nullable: bool,
    pub is_dimension: bool,
}

impl FieldInfo {
    /// Bytes of one fixed-sized cell (of one value for var-sized fields).
    pub fn cell_size(&self) -> u64 {
        match self.cell_val_num {
            CellValNum::Fixed(n) => n as u64 * self.datatype.size(),
            CellValNum::Var => self.datatype.size(),
        }
    }
}

/// One field's cells.
#[derive(Debug, Clone, Default)]
pub(crate) struct FieldBuffer {
    pub data: Vec<u8>,
    /// Start of each cell in `data` (var-sized fields).
    pub offsets: Option<Vec<u64>>,
    /// One byte per cell, 0 for null (nullable fields).
    pub validity: Option<Vec<u8>>,
}

impl FieldBuffer {
    pub fn new(f: &FieldInfo) -> FieldBuffer {
        FieldBuffer {
            data: Vec::new(),
            offsets: f.cell_val_num.is_var().then(Vec::new),
            validity: f.nullable.then(Vec::new),
        }
    }

    /// The bytes of cell `i`.
    pub fn value(&self, i: usize, cell_size: usize) -> &[u8] {
        match &self.offsets {
            Some(o) => {
                let end = o.get(i + 1).map_or(self.data.len(), |&e| e as usize);
                &self.data[o[i] as usize..end]
            }
            None => &self.data[i * cell_size..(i + 1) * cell_size],
        }
    }

    /// Appends `col`'s cells, checked against the field: datatype, values
    /// per cell, sizes, validity.
    pub fn append(&mut self, f: &FieldInfo, col: &Column, cells: usize) -> Result<(), WriteError> {
        let bad = |why: String| WriteError::Input(format!("field `{}`: {why}", f.name));
        if col.datatype != f.datatype || col.cell_val_num != f.cell_val_num {
            return Err(bad(format!(
                "given {} x {:?}, the schema has {} x {:?}",
                col.datatype, col.cell_val_num, f.datatype, f.cell_val_num
            )));
        }
        match (&mut self.offsets, &col.offsets) {
            (Some(mine), Some(theirs)) => {
                if theirs.len() != cells + 1
                    || theirs.last().copied() != Some(col.data.len() as u64)
                {
                    return Err(bad(format!("{} offsets for {cells} cells", theirs.len())));
                }
                if theirs.windows(2).any(|w| w[0] > w[1]) {
                    return Err(bad("offsets are not monotone".into()));
                }
                let base = self.data.len() as u64 - theirs[0];
                mine.extend(theirs[..cells].iter().map(|o| o + base));
                self.data.extend_from_slice(&col.data[theirs[0] as usize..]);
            }
            (None, None) => {
                let want = cells as u64 * f.cell_size();
                if col.data.len() as u64 != want {
                    return Err(bad(format!(
                        "{} bytes for {cells} cells of {} bytes",
                        col.data.len(),
                        f.cell_size()
                    )));
                }
                self.data.extend_from_slice(&col.data);
            }
            _ => return Err(bad("var-sized cells expected or given, not both".into())),
        }
        match (&mut self.validity, &col.validity) {
            (Some(mine), Some(theirs)) if theirs.len() == cells => mine.extend_from_slice(theirs),
            (Some(mine), None) => mine.extend(std::iter::repeat_n(1u8, cells)),
            (Some(_), Some(theirs)) => {
                return Err(bad(format!(
                    "{} validity bytes for {cells} cells",
                    theirs.len()
                )))
            }
            (None, Some(v)) if v.iter().all(|&b| b != 0) => {}
            (None, Some(_)) => {
                return Err(bad("a null cell in a field that is not nullable".into()))
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// The cells in the order `idx` gives; [`FILL`] places `fill` (a
    /// cell's bytes and its validity byte).
    pub fn permuted(&self, idx: &[usize], cell_size: usize, fill: (&[u8], u8)) -> FieldBuffer {
        let mut out = FieldBuffer {
            data: Vec::with_capacity(self.data.len()),
            offsets: self.offsets.as_ref().map(|_| Vec::with_capacity(idx.len())),
            validity: self
                .validity
                .as_ref()
                .map(|_| Vec::with_capacity(idx.len())),
        };
        for &i in idx {
            if let Some(o) = &mut out.offsets {
                o.push(out.data.len() as u64);
            }
            let (value, valid) = match i {
                FILL => fill,
                i => (
                    self.value(i, cell_size),
                    self.validity.as_ref().map_or(1, |v| v[i]),
                ),
            };
            out.data.extend_from_slice(value);
            if let Some(v) = &mut out.validity {
                v.push(valid);
            }
        }
        out
    }
}
