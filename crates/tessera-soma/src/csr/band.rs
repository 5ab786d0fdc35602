//! A band of rows' cells, and how they are placed into their stretch of a
//! CSR matrix's arrays.

use crate::{Positions, SomaError};

pub(super) fn invalid(message: impl Into<String>) -> SomaError {
    SomaError::Invalid(message.into())
}

/// Cells as raw little-endian columns: int64 rows and columns, values of
/// the attribute's width.
#[derive(Clone, Copy)]
pub(super) struct Cells<'a> {
    pub(super) rows: &'a [u8],
    pub(super) cols: &'a [u8],
    pub(super) values: &'a [u8],
}

impl<'a> Cells<'a> {
    pub(super) fn len(&self) -> usize {
        self.rows.len() / 8
    }

    pub(super) fn row(&self, i: usize) -> i64 {
        int64(&self.rows[i * 8..i * 8 + 8])
    }

    /// Cells `range` of these; `width`: bytes of a value.
    pub(super) fn part(&self, range: std::ops::Range<usize>, width: usize) -> Cells<'a> {
        Cells {
            rows: &self.rows[range.start * 8..range.end * 8],
            cols: &self.cols[range.start * 8..range.end * 8],
            values: &self.values[range.start * width..range.end * width],
        }
    }
}

fn int64(b: &[u8]) -> i64 {
    b.try_into().map_or(0, i64::from_le_bytes)
}

/// The cells of the band a batch ended in, copied out of it to wait for
/// the rest of the band in the next batch.
#[derive(Default)]
pub(super) struct Carried {
    pub(super) band: Option<i64>,
    pub(super) rows: Vec<u8>,
    pub(super) cols: Vec<u8>,
    pub(super) values: Vec<u8>,
}

impl Carried {
    pub(super) fn cells(&self) -> Cells<'_> {
        Cells {
            rows: &self.rows,
            cols: &self.cols,
            values: &self.values,
        }
    }

    pub(super) fn extend(&mut self, cells: Cells<'_>) {
        self.rows.extend_from_slice(cells.rows);
        self.cols.extend_from_slice(cells.cols);
        self.values.extend_from_slice(cells.values);
    }

    pub(super) fn clear(&mut self) {
        self.band = None;
        self.rows.clear();
        self.cols.clear();
        self.values.clear();
    }
}

/// A whole band's cells: what was carried of it and what the new batch
/// holds of it.
pub(super) struct Band<'a> {
    pub(super) index: i64,
    pub(super) parts: Vec<Cells<'a>>,
}

impl Band<'_> {
    pub(super) fn len(&self) -> usize {
        self.parts.iter().map(Cells::len).sum()
    }
}

/// How a band's cells are placed: where its rows and columns sit, and
/// the widths of a value and of a column position.
pub(super) struct Placing<'f> {
    pub(super) rows: &'f Positions,
    pub(super) cols: &'f Positions,
    pub(super) width: usize,
    pub(super) index_width: usize,
    /// The matrix's rows: no position reaches them.
    pub(super) n_rows: usize,
}

impl Placing<'_> {
    /// Places `band`'s cells into its stretch of the arrays (`data`,
    /// `indices`): counted by row, then each written at its row's next
    /// slot, so a row's cells keep their order (ascending columns, as
    /// global order gives them). Returns the band's first row position
    /// and the cell count of each row from there. `rows`: the raw rows
    /// the band covers; a cell outside came out of global order.
    pub(super) fn place(
        &self,
        band: &Band<'_>,
        rows: std::ops::Range<i64>,
        data: &mut [u8],
        indices: &mut [u8],
    ) -> Result<(u64, Vec<u64>), SomaError> {
        // The band's lowest and highest rows: positions ascend with rows
        // (ids are ascending), so theirs bound every cell's.
        let (mut low, mut high) = (i64::MAX, i64::MIN);
        for part in &band.parts {
            for rb in part.rows.chunks_exact(8) {
                let row = int64(rb);
                low = low.min(row);
                high = high.max(row);
            }
        }
        if low > high {
            return Ok((0, Vec::new()));
        }
        if !rows.contains(&low) || !rows.contains(&high) {
            return Err(invalid("cells came out of global order"));
        }
        let (Some(lo), Some(hi)) = (self.rows.at(low), self.rows.at(high)) else {
            return Err(self.first_outside(band));
        };
        if hi < lo || hi >= self.n_rows as u64 {
            return Err(invalid(
                "cells came out of row order, or past the rows asked for",
            ));
        }
        // Where a row's position is: looked up again as cells are written
        // (a lookup costs less than keeping each cell's position).
        let mut next = vec![0usize; (hi - lo + 1) as usize];
        for part in &band.parts {
            let cells = part.rows.chunks_exact(8).zip(part.cols.chunks_exact(8));
            for (rb, cb) in cells {
                let row = int64(rb);
                let at = (self.rows.at(row)).ok_or_else(|| outside(row, int64(cb)))?;
                // Ids given out of order put a position below the band's.
                let slot = (at.checked_sub(lo)).and_then(|k| next.get_mut(k as usize));
                match slot {
                    Some(n) => *n += 1,
                    None => return Err(invalid("cells came out of global order")),
                }
            }
        }
        let counts = next.iter().map(|&c| c as u64).collect();
        let mut at = 0;
        for slot in next.iter_mut() {
            let start = at;
            at += *slot;
            *slot = start;
        }
        let slots = Slots {
            next,
            lo,
            rows: self.rows,
        };
        // Values of the common widths are copied as fixed-size arrays (a
        // copy of a width known only at run time is a call to memcpy).
        match self.width {
            1 => self.scatter::<1>(band, slots, data, indices),
            2 => self.scatter::<2>(band, slots, data, indices),
            4 => self.scatter::<4>(band, slots, data, indices),
            8 => self.scatter::<8>(band, slots, data, indices),
            _ => self.scatter::<0>(band, slots, data, indices),
        }?;
        Ok((lo, counts))
    }

    /// The error of the first cell of `band` whose row is not among the
    /// ids.
    fn first_outside(&self, band: &Band<'_>) -> SomaError {
        for part in &band.parts {
            for (rb, cb) in part.rows.chunks_exact(8).zip(part.cols.chunks_exact(8)) {
                if self.rows.at(int64(rb)).is_none() {
                    return outside(int64(rb), int64(cb));
                }
            }
        }
        invalid("internal error: no cell of the band is outside its rows")
    }

    /// Writes each of `band`'s cells at its row's next slot: its column
    /// position into `indices`, its value into `data`. `W`: the bytes of a
    /// value (0: `self.width`, whatever it is).
    fn scatter<const W: usize>(
        &self,
        band: &Band<'_>,
        mut slots: Slots<'_>,
        data: &mut [u8],
        indices: &mut [u8],
    ) -> Result<(), SomaError> {
        let w = if W == 0 { self.width } else { W };
        let too_wide = |c: u64| invalid(format!("column position {c} does not fit 32 bits"));
        for part in &band.parts {
            let cells = (part.rows.chunks_exact(8))
                .zip(part.cols.chunks_exact(8))
                .zip(part.values.chunks_exact(w));
            for ((rb, cb), value) in cells {
                let (row, col) = (int64(rb), int64(cb));
                let c = (self.cols.at(col)).ok_or_else(|| outside(row, col))?;
                let slot = slots.take(row).ok_or_else(|| outside(row, col))?;
                if self.index_width == 4 {
                    let c = u32::try_from(c).map_err(|_| too_wide(c))?;
                    indices[slot * 4..slot * 4 + 4].copy_from_slice(&c.to_le_bytes());
                } else {
                    indices[slot * 8..slot * 8 + 8].copy_from_slice(&c.to_le_bytes());
                }
                let to = &mut data[slot * w..(slot + 1) * w];
                match <&[u8; W]>::try_from(value) {
                    Ok(fixed) if W > 0 => to.copy_from_slice(fixed),
                    _ => to.copy_from_slice(value),
                }
            }
        }
        Ok(())
    }
}

/// Where the next cell of each row of a band goes.
struct Slots<'b> {
    /// Per row position from `lo`, the next slot.
    next: Vec<usize>,
    lo: u64,
    /// Where rows sit.
    rows: &'b Positions,
}

impl Slots<'_> {
    /// The slot of the next cell of `row`, taken (`None`: a row counted
    /// nowhere, which counting refused first).
    fn take(&mut self, row: i64) -> Option<usize> {
        let at = self.rows.at(row)?;
        let slot = self
            .next
            .get_mut(usize::try_from(at.checked_sub(self.lo)?).ok()?)?;
        *slot += 1;
        Some(*slot - 1)
    }
}

/// A cell whose row or column is not among those asked for.
fn outside(row: i64, col: i64) -> SomaError {
    invalid(format!(
        "cell ({row}, {col}) is outside the rows and columns asked for"
    ))
}
