//! Cells from rows of JSON, in exactly the form `tessera read --format
//! jsonl` prints them: one object per cell, dimensions and attributes by
//! name; integers exact, floats as numbers or `"NaN"`, `"inf"`, `"-inf"`;
//! BOOL as true/false; datetimes as raw integers; text as strings (a
//! fixed-sized cell padded with NUL bytes); BLOB as hex; several values as
//! a list; `null` for a null cell; enumerated attributes as their keys.
//! So `tessera read A | tessera write B` copies A's cells into B. The CSV
//! form (`--format csv`) comes as text fields ([`Rows::push_text`]).

use crate::WriteError;
use serde_json::Value as Json;
use tessera_cells::Column;
use tessera_schema::{ArraySchema, CellValNum};
use tessera_tile::datatype::Physical;
use tessera_tile::Datatype;

/// Rows collected into columns, one per dimension and attribute.
pub struct Rows {
    columns: Vec<Column>,
    nullable: Vec<bool>,
    cells: usize,
}

impl Rows {
    /// Empty columns for `schema`'s dimensions, then its attributes.
    pub fn new(schema: &ArraySchema) -> Rows {
        let dims = schema
            .dimensions
            .iter()
            .map(|d| (d.name.clone(), true, d.datatype, d.cell_val_num, false));
        let attrs = schema.attributes.iter().map(|a| {
            (
                a.name.clone(),
                false,
                a.datatype,
                a.cell_val_num,
                a.nullable,
            )
        });
        let (columns, nullable) = dims
            .chain(attrs)
            .map(|(name, is_dimension, datatype, cell_val_num, nullable)| {
                let col = Column {
                    name,
                    is_dimension,
                    datatype,
                    cell_val_num,
                    data: Vec::new(),
                    offsets: cell_val_num.is_var().then(|| vec![0]),
                    validity: nullable.then(Vec::new),
                };
                (col, nullable)
            })
            .unzip();
        Rows {
            columns,
            nullable,
            cells: 0,
        }
    }

    /// Cells held.
    pub fn len(&self) -> usize {
        self.cells
    }

    /// Bytes of the cells held.
    pub fn bytes(&self) -> usize {
        let bytes = |c: &Column| {
            c.data.len()
                + c.offsets.as_ref().map_or(0, |o| 8 * o.len())
                + c.validity.as_ref().map_or(0, Vec::len)
        };
        self.columns.iter().map(bytes).sum()
    }

    /// Whether no cell is held.
    pub fn is_empty(&self) -> bool {
        self.cells == 0
    }

    /// Adds the cell `row` (from input line `line`, for messages).
    pub fn push(&mut self, row: &Json, line: usize) -> Result<(), WriteError> {
        let obj = row.as_object().ok_or_else(|| {
            WriteError::Input(format!("line {line}: expected a JSON object, found {row}"))
        })?;
        if let Some(k) = obj
            .keys()
            .find(|k| !self.columns.iter().any(|c| &c.name == *k))
        {
            return Err(WriteError::Input(format!(
                "line {line}: no field `{k}` in the schema"
            )));
        }
        // Each value is checked before any is added, so a bad row adds nothing.
        let mut cell = Vec::with_capacity(self.columns.len());
        for (c, &nullable) in self.columns.iter().zip(&self.nullable) {
            let at =
                |why: String| WriteError::Input(format!("line {line}, field `{}`: {why}", c.name));
            match obj.get(&c.name) {
                None | Some(Json::Null) if nullable => cell.push(None),
                None => return Err(at("missing".into())),
                Some(Json::Null) => return Err(at("null, but the field is not nullable".into())),
                Some(v) => cell.push(Some(
                    encode_cell(c.datatype, c.cell_val_num, v).map_err(at)?,
                )),
            }
        }
        for (c, v) in self.columns.iter_mut().zip(cell) {
            let valid = v.is_some();
            let bytes = v.unwrap_or_else(|| null_cell(c.datatype, c.cell_val_num));
            c.data.extend_from_slice(&bytes);
            if let Some(o) = &mut c.offsets {
                o.push(c.data.len() as u64);
            }
            if let Some(val) = &mut c.validity {
                val.push(valid as u8);
            }
        }
        self.cells += 1;
        Ok(())
    }

    /// Adds a cell given as text fields (`name`, `value`), as `tessera
    /// read --format csv` prints them: numbers, `NaN`, `inf`, `-inf`,
    /// `true`/`false`, hex for BLOB, text as it is, several values as a
    /// JSON list; an empty field is null where the field is nullable (else
    /// the empty string, for text). Checked as [`Rows::push`] checks.
    pub fn push_text(&mut self, fields: &[(&str, &str)], line: usize) -> Result<(), WriteError> {
        let mut obj = serde_json::Map::with_capacity(fields.len());
        for &(name, text) in fields {
            let field = self
                .columns
                .iter()
                .zip(&self.nullable)
                .find(|(c, _)| c.name == name);
            let value = match field {
                None => Json::Null, // refused by name in `push`
                Some((_, &nullable)) if nullable && text.is_empty() => Json::Null,
                Some((c, _)) => text_value(c.datatype, text).map_err(|why| {
                    WriteError::Input(format!("line {line}, field `{name}`: {why}"))
                })?,
            };
            obj.insert(name.to_owned(), value);
        }
        self.push(&Json::Object(obj), line)
    }

    /// The columns held, leaving these rows empty.
    pub fn take(&mut self) -> Vec<Column> {
        self.cells = 0;
        self.columns
            .iter_mut()
            .map(|c| Column {
                name: c.name.clone(),
                is_dimension: c.is_dimension,
                datatype: c.datatype,
                cell_val_num: c.cell_val_num,
                data: std::mem::take(&mut c.data),
                offsets: c.offsets.as_mut().map(|o| std::mem::replace(o, vec![0])),
                validity: c.validity.as_mut().map(std::mem::take),
            })
            .collect()
    }
}

/// A text field's JSON value for a field of type `t`.
fn text_value(t: Datatype, text: &str) -> Result<Json, String> {
    let plain = t.is_string() || t.is_blob() || t == Datatype::Any;
    if plain || matches!(text, "NaN" | "inf" | "-inf") {
        return Ok(Json::String(text.to_owned()));
    }
    if text.is_empty() {
        return Ok(Json::Null);
    }
    serde_json::from_str(text).map_err(|_| format!("expected a {t} value, found {text:?}"))
}

/// What a null cell stores: the type's fill value (nothing, var-sized).
fn null_cell(t: Datatype, cvn: CellValNum) -> Vec<u8> {
    match cvn {
        CellValNum::Var => Vec::new(),
        _ => tessera_schema::default_fill_value(t, cvn),
    }
}

/// One cell's bytes from its JSON value.
fn encode_cell(t: Datatype, cvn: CellValNum, v: &Json) -> Result<Vec<u8>, String> {
    let bytes = if t.is_string() {
        v.as_str()
            .ok_or_else(|| format!("expected a string, found {v}"))?
            .as_bytes()
            .to_vec()
    } else if t.is_blob() || t == Datatype::Any {
        let digits = v
            .as_str()
            .ok_or_else(|| format!("expected hex, found {v}"))?;
        tessera_tile::hex::decode(digits)?
    } else if cvn == CellValNum::Fixed(1) {
        scalar(t, v)?
    } else {
        let items = v
            .as_array()
            .ok_or_else(|| format!("expected a list of {t} values, found {v}"))?;
        let mut out = Vec::with_capacity(items.len() * t.size() as usize);
        for x in items {
            out.extend(scalar(t, x)?);
        }
        out
    };
    match cvn {
        CellValNum::Fixed(n) if t.is_string() => {
            let size = n as usize * t.size() as usize;
            if bytes.len() > size {
                return Err(format!("{} bytes do not fit a cell of {size}", bytes.len()));
            }
            let mut b = bytes;
            b.resize(size, 0);
            Ok(b)
        }
        CellValNum::Fixed(n) if bytes.len() as u64 != n as u64 * t.size() => Err(format!(
            "{} values, a cell holds {n}",
            bytes.len() as u64 / t.size().max(1)
        )),
        _ => Ok(bytes),
    }
}

/// One value of a numeric type.
pub(crate) fn scalar(t: Datatype, v: &Json) -> Result<Vec<u8>, String> {
    let bad = || format!("expected a {t} value, found {v}");
    Ok(match t.physical() {
        Physical::Int(w) | Physical::UInt(w) => {
            let n: i128 = match v {
                Json::Bool(b) if t == Datatype::Bool => *b as i128,
                Json::Number(n) => n
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
                    .ok_or_else(bad)?,
                _ => return Err(bad()),
            };
            let bits = 8 * w as u32;
            let signed = matches!(t.physical(), Physical::Int(_));
            let (lo, hi) = match signed {
                true => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
                false => (0, (1i128 << bits) - 1),
            };
            if !(lo..=hi).contains(&n) {
                return Err(bad());
            }
            (n as u64).to_le_bytes()[..w as usize].to_vec()
        }
        Physical::Float(w) => {
            let x = match v {
                Json::Number(n) => n.as_f64().ok_or_else(bad)?,
                Json::String(s) => match s.as_str() {
                    "NaN" => f64::NAN,
                    "inf" => f64::INFINITY,
                    "-inf" => f64::NEG_INFINITY,
                    _ => return Err(bad()),
                },
                _ => return Err(bad()),
            };
            match w {
                4 => (x as f32).to_le_bytes().to_vec(),
                _ => x.to_le_bytes().to_vec(),
            }
        }
        Physical::Bytes => return Err(bad()),
    })
}
