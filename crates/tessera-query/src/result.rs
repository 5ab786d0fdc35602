//! Columnar read results: data, offsets and validity per field.

use tessera_schema::CellValNum;
use tessera_tile::Datatype;

/// One field of a result.
#[derive(Debug, Clone)]
pub struct Column {
    /// Field name.
    pub name: String,
    /// True for dimensions.
    pub is_dimension: bool,
    /// Datatype of the values.
    pub datatype: Datatype,
    /// Values per cell.
    pub cell_val_num: CellValNum,
    /// The values of every cell, concatenated.
    pub data: Vec<u8>,
    /// For var-sized fields, the start of each cell in `data` plus a final end offset.
    pub offsets: Option<Vec<u64>>,
    /// For nullable attributes, one byte per cell (0 for null).
    pub validity: Option<Vec<u8>>,
}

impl Column {
    /// The bytes of cell `i`.
    pub fn value(&self, i: usize) -> &[u8] {
        match &self.offsets {
            Some(o) => &self.data[o[i] as usize..o[i + 1] as usize],
            None => {
                let s = match self.cell_val_num {
                    CellValNum::Fixed(n) => n as usize * self.datatype.size() as usize,
                    CellValNum::Var => self.datatype.size() as usize,
                };
                &self.data[i * s..(i + 1) * s]
            }
        }
    }

    /// Whether cell `i` is non-null.
    pub fn is_valid(&self, i: usize) -> bool {
        self.validity.as_ref().is_none_or(|v| v[i] != 0)
    }
}

impl Column {
    /// Sets the column's cells to those of `parts` (decoded tiles, or the
    /// cells picked from them), one after the other: values concatenated,
    /// offsets rebased, validity kept (all valid where a part has none).
    pub(crate) fn fill_from<'a>(
        &mut self,
        parts: impl Iterator<Item = &'a crate::tiles::FieldTile> + Clone,
    ) {
        let cells: usize = parts.clone().map(|t| t.cells as usize).sum();
        let nullable = self.validity.is_some();
        let mut b = ColumnBuilder::new(
            &self.name,
            self.is_dimension,
            self.datatype,
            self.cell_val_num,
            nullable,
            cells,
        );
        b.col
            .data
            .reserve_exact(parts.clone().map(|t| t.data.len()).sum());
        for t in parts {
            b.push_run(t, 0, t.cells as usize);
        }
        *self = b.col;
    }
}

/// The cells a read returned.
#[derive(Debug, Clone, Default)]
pub struct ReadResult {
    /// The columns: dimensions first (schema order), then attributes.
    pub columns: Vec<Column>,
    /// Number of cells.
    pub cell_count: usize,
}

impl ReadResult {
    /// The column with this name.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Hands this result's buffers back: the next read of this process
    /// (the next batch of [`crate::Batches`], say) fills them instead of
    /// fresh memory, whose every page the kernel must fault in and clear
    /// (on large dense reads, more time than decoding). The pool is
    /// bounded; what does not fit is freed.
    ///
    /// ```
    /// # use tessera_query::{Query, ReadResult};
    /// # fn run(q: Query<'_>) -> Result<(), tessera_query::QueryError> {
    /// for batch in q.batches(256 << 20)? {
    ///     let batch: ReadResult = batch?;
    ///     // ... use the cells ...
    ///     batch.recycle();
    /// }
    /// # Ok(()) }
    /// ```
    pub fn recycle(self) {
        for c in self.columns {
            crate::tiles::RESULT_BUFFERS.give(c.data);
            if let Some(v) = c.validity {
                crate::tiles::RESULT_BUFFERS.give(v);
            }
        }
    }

    /// Appends the cells of `other`, a result with the same columns (the
    /// next batch of the same read). An empty `self` takes `other` whole.
    pub fn append(&mut self, other: ReadResult) {
        if self.columns.is_empty() {
            *self = other;
            return;
        }
        for (c, o) in self.columns.iter_mut().zip(other.columns) {
            if let (Some(offs), Some(oo)) = (&mut c.offsets, &o.offsets) {
                let base = c.data.len() as u64;
                offs.extend(oo.iter().skip(1).map(|x| x + base));
            }
            c.data.extend_from_slice(&o.data);
            if let (Some(v), Some(ov)) = (&mut c.validity, &o.validity) {
                v.extend_from_slice(ov);
            }
        }
        self.cell_count += other.cell_count;
    }
}

/// Builds a column cell by cell.
#[derive(Debug)]
pub(crate) struct ColumnBuilder {
    pub col: Column,
}

impl ColumnBuilder {
    pub fn new(
        name: &str,
        is_dimension: bool,
        datatype: Datatype,
        cvn: CellValNum,
        nullable: bool,
        capacity: usize,
    ) -> Self {
        let fixed = match cvn {
            CellValNum::Fixed(n) => n as usize * datatype.size() as usize,
            CellValNum::Var => 0,
        };
        ColumnBuilder {
            col: Column {
                name: name.to_owned(),
                is_dimension,
                datatype,
                cell_val_num: cvn,
                data: crate::tiles::result_buffer(
                    capacity.saturating_mul(fixed.max(1)).min(1 << 30),
                ),
                offsets: cvn.is_var().then(|| {
                    let mut v = Vec::with_capacity(capacity.saturating_add(1).min(1 << 27));
                    v.push(0);
                    v
                }),
                validity: nullable.then(|| crate::tiles::result_buffer(capacity.min(1 << 30))),
            },
        }
    }

    /// Appends cells `from..to` of `tile` whole: one copy per buffer.
    pub fn push_run(&mut self, tile: &crate::tiles::FieldTile, from: usize, to: usize) {
        match (&mut self.col.offsets, &tile.offsets) {
            (Some(out), Some(o)) => {
                let base = self.col.data.len() as u64;
                let start = o[from];
                self.col
                    .data
                    .extend_from_slice(&tile.data[start as usize..o[to] as usize]);
                out.extend(o[from + 1..=to].iter().map(|e| base + (e - start)));
            }
            _ => {
                let w = tile.cell_size;
                self.col
                    .data
                    .extend_from_slice(&tile.data[from * w..to * w]);
            }
        }
        if let Some(v) = &mut self.col.validity {
            match &tile.validity {
                Some(tv) => v.extend_from_slice(&tv[from..to]),
                None => v.resize(v.len() + (to - from), 1),
            }
        }
    }

    #[inline]
    pub fn push(&mut self, value: &[u8], valid: bool) {
        self.col.data.extend_from_slice(value);
        if let Some(o) = &mut self.col.offsets {
            o.push(self.col.data.len() as u64);
        }
        if let Some(v) = &mut self.col.validity {
            v.push(valid as u8);
        }
    }
}
