//! What the host checks of a read: its cells counted and its numeric
//! columns summed.

use serde_json::{json, Map, Value as Json};
use tessera_query::ReadResult;
use tessera_schema::{CellValNum, Value};
use tessera_tile::Datatype;

/// A read's batches tallied: `{"cells": n, "batches": b, "columns":
/// {name: {"sum": s, "float32": f}}}`, `s` the sum of a column of one
/// number a cell and no nulls (`null` for other columns), `f` whether its
/// values are FLOAT32.
#[derive(Debug, Default)]
pub struct Tally {
    cells: usize,
    batches: usize,
    sums: Map<String, Json>,
}

impl Tally {
    /// Adds `batch`.
    pub fn add(&mut self, batch: &ReadResult) {
        self.cells += batch.cell_count;
        self.batches += 1;
        for c in &batch.columns {
            let width = c.datatype.size() as usize;
            let one_number = c.offsets.is_none()
                && c.validity.is_none()
                && c.cell_val_num == CellValNum::Fixed(1)
                && width > 0;
            let sum = one_number.then(|| {
                c.data
                    .chunks_exact(width)
                    .map(|b| match Value::decode(c.datatype, b) {
                        Value::Int(i) => i as f64,
                        Value::Float(f) => f,
                        Value::Bytes(_) => f64::NAN,
                    })
                    .sum::<f64>()
            });
            let before = self.sums.get(&c.name).map(|s| s["sum"].as_f64());
            let total = match (sum, before) {
                (Some(s), Some(Some(b))) => Some(s + b),
                (Some(s), None) => Some(s),
                _ => None,
            };
            let total = total.filter(|t| t.is_finite());
            let float32 = c.datatype == Datatype::Float32;
            let entry = json!({ "sum": total, "float32": float32 });
            self.sums.insert(c.name.clone(), entry);
        }
    }

    /// The tally as JSON.
    pub fn to_json(&self) -> Json {
        json!({ "cells": self.cells, "batches": self.batches, "columns": self.sums })
    }
}
