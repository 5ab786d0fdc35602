//! The cells a sparse writer holds for one field until it finishes: the
//! values back to back, a start offset per cell for var-sized fields, a
//! validity byte per cell for nullable ones.

use super::placement::{Run, FILL};
use crate::WriteError;
use tessera_cells::Column;
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

    /// Drops the first `k` cells (written out as a tile).
    pub fn drain_front(&mut self, k: usize, cell_size: usize) {
        match &mut self.offsets {
            Some(o) => {
                let cut = o.get(k).map_or(self.data.len() as u64, |&c| c);
                self.data.drain(..cut as usize);
                o.drain(..k);
                o.iter_mut().for_each(|x| *x -= cut);
            }
            None => {
                self.data.drain(..k * cell_size);
            }
        }
        if let Some(v) = &mut self.validity {
            v.drain(..k);
        }
    }

    /// The bytes of cell `i`.
    pub fn value(&self, i: usize, cell_size: usize) -> &[u8] {
        self.cells().value(i, cell_size)
    }

    /// The cells, borrowed.
    pub fn cells(&self) -> FieldCells<'_> {
        FieldCells {
            data: &self.data,
            offsets: self.offsets.as_deref(),
            validity: self.validity.as_deref(),
            pieces: &[],
        }
    }

    /// Bytes the cells `r` hold (values, offsets, validity).
    pub fn bytes_of(&self, r: std::ops::Range<usize>, cell_size: usize) -> u64 {
        let values = match &self.offsets {
            Some(o) => {
                let end = o.get(r.end).map_or(self.data.len() as u64, |&e| e);
                end - o.get(r.start).copied().unwrap_or(end) + 8 * r.len() as u64
            }
            None => (r.len() * cell_size) as u64,
        };
        values + self.validity.as_ref().map_or(0, |_| r.len() as u64)
    }

    /// Checks `col` (of `cells` cells) against the field: datatype, values
    /// per cell, sizes, offsets, validity.
    pub fn check(&self, f: &FieldInfo, col: &Column, cells: usize) -> Result<(), WriteError> {
        let bad = |why: String| Err(WriteError::Input(format!("field `{}`: {why}", f.name)));
        if col.datatype != f.datatype || col.cell_val_num != f.cell_val_num {
            return bad(format!(
                "given {} x {:?}, the schema has {} x {:?}",
                col.datatype, col.cell_val_num, f.datatype, f.cell_val_num
            ));
        }
        match (&self.offsets, &col.offsets) {
            (Some(_), Some(theirs)) => {
                if theirs.len() != cells + 1
                    || theirs.last().copied() != Some(col.data.len() as u64)
                {
                    return bad(format!("{} offsets for {cells} cells", theirs.len()));
                }
                if theirs.windows(2).any(|w| w[0] > w[1]) {
                    return bad("offsets are not monotone".into());
                }
            }
            (None, None) => {
                let want = cells as u64 * f.cell_size();
                if col.data.len() as u64 != want {
                    return bad(format!(
                        "{} bytes for {cells} cells of {} bytes",
                        col.data.len(),
                        f.cell_size()
                    ));
                }
            }
            _ => return bad("var-sized cells expected or given, not both".into()),
        }
        match (&self.validity, &col.validity) {
            (Some(_), Some(theirs)) if theirs.len() != cells => {
                bad(format!("{} validity bytes for {cells} cells", theirs.len()))
            }
            (None, Some(v)) if v.contains(&0) => {
                bad("a null cell in a field that is not nullable".into())
            }
            _ => Ok(()),
        }
    }

    /// Appends `col`'s cells, [`check`](Self::check)ed before.
    pub fn append(&mut self, col: &Column, cells: usize) {
        match (&mut self.offsets, &col.offsets) {
            (Some(mine), Some(theirs)) => {
                let base = self.data.len() as u64 - theirs[0];
                mine.extend(theirs[..cells].iter().map(|o| o + base));
                self.data.extend_from_slice(&col.data[theirs[0] as usize..]);
            }
            _ => self.data.extend_from_slice(&col.data),
        }
        match (&mut self.validity, &col.validity) {
            (Some(mine), Some(theirs)) => mine.extend_from_slice(theirs),
            (Some(mine), None) => mine.extend(std::iter::repeat_n(1u8, cells)),
            _ => {}
        }
    }

    /// As [`append`](Self::append), taking `col`: when nothing is held its
    /// buffers become these, with no copy.
    pub fn append_owned(&mut self, col: Column, cells: usize) {
        let starts_at_zero = col.offsets.as_ref().is_none_or(|o| o.first() == Some(&0));
        // Held cells may have no bytes (empty strings, or nulls' validity
        // alone): any cell held is appended to, not replaced.
        let holds = !self.data.is_empty()
            || self.offsets.as_ref().is_some_and(|o| !o.is_empty())
            || self.validity.as_ref().is_some_and(|v| !v.is_empty());
        if holds || !starts_at_zero {
            return self.append(&col, cells);
        }
        self.data = col.data;
        if let (Some(mine), Some(mut theirs)) = (&mut self.offsets, col.offsets) {
            theirs.truncate(cells);
            *mine = theirs;
        }
        if let Some(mine) = &mut self.validity {
            *mine = col.validity.unwrap_or_else(|| vec![1; cells]);
        }
    }

    /// The cells in the order `idx` gives; see [`FieldCells::permuted`].
    pub fn permuted(&self, idx: &[usize], cell_size: usize, fill: (&[u8], u8)) -> FieldBuffer {
        self.cells().permuted(idx, cell_size, fill)
    }
}

/// One field's cells, borrowed (from a [`FieldBuffer`], or from the
/// caller's memory): what laying tiles out reads.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FieldCells<'a> {
    pub data: &'a [u8],
    /// Start of each cell in `data` (var-sized fields).
    pub offsets: Option<&'a [u64]>,
    /// One byte per cell, 0 for null (nullable fields).
    pub validity: Option<&'a [u8]>,
    /// Fixed-sized cells that lie in several pieces of memory, in order,
    /// each a whole number of cells (an Arrow file's batches, read where
    /// they lie); `data` is empty then. Only runs copy from pieces
    /// ([`runs_into`](Self::runs_into)).
    pub pieces: &'a [&'a [u8]],
}

impl<'a> FieldCells<'a> {
    /// The bytes of cell `i`.
    pub fn value(&self, i: usize, cell_size: usize) -> &'a [u8] {
        match self.offsets {
            Some(o) => {
                let end = o.get(i + 1).map_or(self.data.len(), |&e| e as usize);
                &self.data[o[i] as usize..end]
            }
            None => &self.data[i * cell_size..(i + 1) * cell_size],
        }
    }

    /// The cells in the order `idx` gives; [`FILL`] places `fill` (a
    /// cell's bytes and its validity byte).
    pub fn permuted(&self, idx: &[usize], cell_size: usize, fill: (&[u8], u8)) -> FieldBuffer {
        self.permuted_into(idx, cell_size, fill, Vec::new())
    }

    /// [`permuted`](Self::permuted), fixed-sized cells with no validity
    /// gathered into `data` (its memory reused).
    pub fn permuted_into(
        &self,
        idx: &[usize],
        cell_size: usize,
        fill: (&[u8], u8),
        data: Vec<u8>,
    ) -> FieldBuffer {
        if self.offsets.is_none() && self.validity.is_none() {
            return self.gathered(idx, cell_size, fill.0, data);
        }
        let mut out = FieldBuffer {
            // Grown as the cells come: `idx` may take few of many.
            data: Vec::new(),
            offsets: self.offsets.map(|_| Vec::with_capacity(idx.len())),
            validity: self.validity.map(|_| Vec::with_capacity(idx.len())),
        };
        for &i in idx {
            if let Some(o) = &mut out.offsets {
                o.push(out.data.len() as u64);
            }
            let (value, valid) = match i {
                FILL => fill,
                i => (self.value(i, cell_size), self.validity.map_or(1, |v| v[i])),
            };
            out.data.extend_from_slice(value);
            if let Some(v) = &mut out.validity {
                v.push(valid);
            }
        }
        out
    }

    /// The `positions` cells of a tile (fixed-sized cells, no validity)
    /// whose written cells are `runs` (in position order), the rest zeros;
    /// `data`'s memory reused. Each run is one copy.
    pub fn runs_into(
        &self,
        runs: &[Run],
        positions: usize,
        cell_size: usize,
        mut data: Vec<u8>,
    ) -> FieldBuffer {
        data.clear();
        data.reserve(positions * cell_size);
        for r in runs {
            data.resize(r.at * cell_size, 0);
            self.extend_with(&mut data, r.place * cell_size, r.len * cell_size);
        }
        data.resize(positions * cell_size, 0);
        FieldBuffer {
            data,
            offsets: None,
            validity: None,
        }
    }

    /// Appends the `len` bytes from byte `start` of the cells to `out`,
    /// from `data` or across the pieces.
    fn extend_with(&self, out: &mut Vec<u8>, mut start: usize, mut len: usize) {
        if self.pieces.is_empty() {
            out.extend_from_slice(&self.data[start..start + len]);
            return;
        }
        for piece in self.pieces {
            if len == 0 {
                break;
            }
            if start >= piece.len() {
                start -= piece.len();
                continue;
            }
            let take = len.min(piece.len() - start);
            out.extend_from_slice(&piece[start..start + take]);
            (start, len) = (0, len - take);
        }
        assert_eq!(len, 0, "cells past the pieces' end");
    }

    /// [`permuted`](Self::permuted) for fixed-sized cells with no
    /// validity: blocks of cells copied in parallel, each run of
    /// consecutive cells (a row of a dense tile) with one copy.
    fn gathered(
        &self,
        idx: &[usize],
        cell_size: usize,
        fill: &[u8],
        mut data: Vec<u8>,
    ) -> FieldBuffer {
        use rayon::prelude::*;
        const BLOCK: usize = 1 << 16;
        data.clear();
        data.resize(idx.len() * cell_size, 0);
        if cell_size > 0 {
            data.par_chunks_mut(BLOCK * cell_size)
                .zip(idx.par_chunks(BLOCK))
                .for_each(|(out, idx)| self.gather_runs(idx, cell_size, fill, out));
        }
        FieldBuffer {
            data,
            offsets: None,
            validity: None,
        }
    }

    /// Copies the cells `idx` (fixed-sized, [`FILL`] for `fill`) into
    /// `out`, a run of consecutive cells at a time.
    fn gather_runs(&self, idx: &[usize], cell_size: usize, fill: &[u8], out: &mut [u8]) {
        let mut k = 0;
        while k < idx.len() {
            let first = idx[k];
            let mut n = 1;
            if first == FILL {
                while k + n < idx.len() && idx[k + n] == FILL {
                    n += 1;
                }
                for cell in out[k * cell_size..(k + n) * cell_size].chunks_exact_mut(cell_size) {
                    cell.copy_from_slice(fill);
                }
            } else {
                while k + n < idx.len() && idx[k + n] == first + n {
                    n += 1;
                }
                out[k * cell_size..(k + n) * cell_size]
                    .copy_from_slice(&self.data[first * cell_size..(first + n) * cell_size]);
            }
            k += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(values: &[&str]) -> Column {
        let mut offsets = vec![0u64];
        let mut data = Vec::new();
        for v in values {
            data.extend_from_slice(v.as_bytes());
            offsets.push(data.len() as u64);
        }
        Column {
            name: "s".into(),
            is_dimension: false,
            datatype: Datatype::StringAscii,
            cell_val_num: CellValNum::Var,
            data,
            offsets: Some(offsets),
            validity: None,
        }
    }

    /// Cells of no bytes held (empty strings) are appended to, not
    /// replaced by the next batch; draining the front keeps the rest.
    #[test]
    fn empty_cells_held_survive_the_next_batch_and_drains() {
        let f = FieldInfo {
            name: "s".into(),
            datatype: Datatype::StringAscii,
            cell_val_num: CellValNum::Var,
            nullable: false,
            is_dimension: false,
        };
        let mut b = FieldBuffer::new(&f);
        b.append_owned(strings(&["", ""]), 2);
        b.append_owned(strings(&["ab", "c"]), 2);
        let cells: Vec<&[u8]> = (0..4).map(|i| b.value(i, 1)).collect();
        assert_eq!(cells, [&b""[..], b"", b"ab", b"c"]);
        b.drain_front(3, 1);
        assert_eq!(b.value(0, 1), b"c");
        assert_eq!(b.offsets.as_deref(), Some(&[0u64][..]));
    }

    /// Gathering by runs places every cell as a cell-by-cell copy would:
    /// runs of consecutive cells, of padding, single cells, and blocks
    /// that cut runs.
    #[test]
    fn gathered_runs_place_each_cell() {
        let f = FieldInfo {
            name: "v".into(),
            datatype: Datatype::Int16,
            cell_val_num: CellValNum::Fixed(1),
            nullable: false,
            is_dimension: false,
        };
        let mut b = FieldBuffer::new(&f);
        b.data = (0..200_000u32)
            .flat_map(|v| (v as u16).to_le_bytes())
            .collect();
        let mut idx: Vec<usize> = (5..70_000).collect();
        idx.extend([FILL; 300]);
        idx.extend((100..150).rev());
        idx.extend(150_000..199_999);
        idx.push(FILL);
        idx.extend([7, 8, 9, 3]);
        let got = b.permuted(&idx, 2, (&[0xab, 0xcd], 0));
        let want: Vec<u8> = idx
            .iter()
            .flat_map(|&i| match i {
                FILL => [0xab, 0xcd],
                i => [b.data[2 * i], b.data[2 * i + 1]],
            })
            .collect();
        assert_eq!(got.data, want);
    }
}
