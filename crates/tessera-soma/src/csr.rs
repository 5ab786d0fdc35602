//! A 2-D sparse array's cells straight into the arrays of a CSR matrix.
//! No COO copy of the cells is ever whole: cells come in global order, a
//! band of rows (one tile of the first dimension) at a time, and each band
//! is counted and placed by row into chunks of the final arrays before the
//! next arrives, so what is held besides the matrix is one band and one
//! read batch.

use crate::{Positions, SomaError};
use tessera::fragment::OpenArray;
use tessera::query::{ReadRequest, ReadResult, ReadSession};
use tessera::schema::CellValNum;
use tessera::tile::{ArrayType, Datatype, Layout};

fn invalid(message: impl Into<String>) -> SomaError {
    SomaError::Invalid(message.into())
}

/// The cells of the band of rows being gathered.
#[derive(Default)]
struct Band {
    index: Option<i64>,
    rows: Vec<u64>,
    cols: Vec<u64>,
    values: Vec<u8>,
}

/// A CSR matrix's arrays: values and column positions (4 or 8 bytes
/// each, little-endian) as bytes in chunks, a band of rows each, in row
/// order; row starts.
#[derive(Debug)]
pub struct CsrChunks {
    data: Vec<Vec<u8>>,
    indices: Vec<Vec<u8>>,
    row_starts: Vec<i64>,
}

impl CsrChunks {
    /// The values' bytes, joined (the chunks are the matrix's `data` in
    /// order).
    pub fn values(&self) -> Vec<u8> {
        self.data.concat()
    }

    /// The column positions' bytes, joined.
    pub fn column_positions(&self) -> Vec<u8> {
        self.indices.concat()
    }

    /// Where each row's cells start, and the cell count at the end.
    pub fn row_starts(&self) -> &[i64] {
        &self.row_starts
    }

    /// The values' chunks, the column positions' chunks and the row
    /// starts: for a caller that copies each chunk into its own arrays
    /// and frees it.
    pub fn into_parts(self) -> (Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<i64>) {
        (self.data, self.indices, self.row_starts)
    }
}

/// Builds [`CsrChunks`] from a read's batches.
pub struct CsrFill {
    rows: Positions,
    cols: Positions,
    /// The first dimension's domain start and tile extent: a row's band.
    tiling: Option<(i64, i64)>,
    width: usize,
    /// Bytes of a column position: 4 or 8.
    index_width: usize,
    band: Band,
    /// Cells a row position holds.
    row_counts: Vec<u64>,
    /// The last row position placed (bands come in row order).
    placed_up_to: Option<u64>,
    out: CsrChunks,
}

impl CsrFill {
    /// A fill for `array`'s `attribute` into a matrix of `n_rows` rows
    /// with `index_width`-byte column positions; [`SomaError::Unsupported`]
    /// (the caller reads another way) unless the array is sparse and 2-D
    /// with int64 dimensions, row-major tiles, no duplicates and one
    /// fixed-size, non-nullable value a cell.
    pub fn new(
        array: &OpenArray,
        attribute: &str,
        n_rows: usize,
        index_width: usize,
        rows: Positions,
        cols: Positions,
    ) -> Result<CsrFill, SomaError> {
        let s = &array.schema;
        let a = s.attribute(attribute).ok_or_else(|| {
            SomaError::Invalid(format!("the array has no attribute `{attribute}`"))
        })?;
        let int64 = s.dimensions.iter().all(|d| d.datatype == Datatype::Int64);
        let fits = s.array_type == ArrayType::Sparse
            && s.dimensions.len() == 2
            && int64
            && s.tile_order == Layout::RowMajor
            && !s.allows_dups
            && a.cell_val_num == CellValNum::Fixed(1)
            && !a.nullable
            && matches!(index_width, 4 | 8);
        if !fits {
            return Err(SomaError::Unsupported(
                "CSR straight from the read: 2-D int64, row-major tiles, no duplicates, one value a cell"
                    .into(),
            ));
        }
        let d0 = &s.dimensions[0];
        let tiling = match (d0.domain_values(), d0.tile_extent_value()) {
            (Some((lo, _)), Some(ext)) => lo
                .as_int()
                .zip(ext.as_int())
                .and_then(|(l, e)| Some((i64::try_from(l).ok()?, i64::try_from(e).ok()?.max(1)))),
            _ => None,
        };
        Ok(CsrFill {
            rows,
            cols,
            tiling,
            width: a.datatype.size() as usize,
            index_width,
            band: Band::default(),
            row_counts: vec![0; n_rows],
            placed_up_to: None,
            out: CsrChunks {
                data: Vec::new(),
                indices: Vec::new(),
                row_starts: Vec::new(),
            },
        })
    }

    /// Reads `request` (its ranges and budget; the attribute and global
    /// order are set here) and places every cell.
    pub fn read(
        mut self,
        session: &ReadSession,
        request: ReadRequest,
        attribute: &str,
    ) -> Result<CsrChunks, SomaError> {
        let request = request
            .attributes([attribute.to_owned()])
            .dimensions(true)
            .layout(Layout::GlobalOrder);
        for batch in session.batches(&request)? {
            self.add(&batch?)?;
        }
        self.flush()?;
        let mut at = 0i64;
        let mut starts = Vec::with_capacity(self.row_counts.len() + 1);
        starts.push(0);
        for c in &self.row_counts {
            at += *c as i64;
            starts.push(at);
        }
        self.out.row_starts = starts;
        Ok(self.out)
    }

    fn add(&mut self, batch: &ReadResult) -> Result<(), SomaError> {
        let [r, c, v] = &batch.columns[..] else {
            return Err(invalid(
                "a CSR read returned other than two dimensions and a value",
            ));
        };
        let n = batch.cell_count;
        let int64 = |b: &[u8]| b.try_into().map_or(0, i64::from_le_bytes);
        let cells = r
            .data
            .chunks_exact(8)
            .zip(c.data.chunks_exact(8))
            .zip(v.data.chunks_exact(self.width));
        // The rows of the band being gathered: a cell outside starts another.
        let mut rows_of_band = self.band_rows();
        for ((rb, cb), value) in cells.take(n) {
            let (row, col) = (int64(rb), int64(cb));
            if !rows_of_band.contains(&row) {
                let band = self
                    .tiling
                    .map_or(0, |(lo, ext)| (row - lo).div_euclid(ext));
                match self.band.index {
                    Some(b) if band < b => return Err(invalid("cells came out of global order")),
                    Some(b) if band > b => self.flush()?,
                    _ => {}
                }
                self.band.index = Some(band);
                rows_of_band = self.band_rows();
            }
            let (Some(rp), Some(cp)) = (self.rows.at(row), self.cols.at(col)) else {
                return Err(invalid(format!(
                    "cell ({row}, {col}) is outside the rows and columns asked for"
                )));
            };
            self.band.rows.push(rp);
            self.band.cols.push(cp);
            self.band.values.extend_from_slice(value);
        }
        Ok(())
    }

    /// The raw rows of the band being gathered (none before the first).
    fn band_rows(&self) -> std::ops::Range<i64> {
        match (self.band.index, self.tiling) {
            (None, _) => 0..0,
            (Some(_), None) => i64::MIN..i64::MAX,
            (Some(b), Some((lo, ext))) => {
                let start = lo.saturating_add(b.saturating_mul(ext));
                start..start.saturating_add(ext)
            }
        }
    }

    /// Places the band's cells into a chunk: counted by row, then each
    /// written at its row's next slot (a row's cells keep their order:
    /// ascending columns, as global order gives them).
    fn flush(&mut self) -> Result<(), SomaError> {
        let band = &mut self.band;
        let n = band.rows.len();
        if n == 0 {
            return Ok(());
        }
        let lo = *band.rows.iter().min().unwrap_or(&0);
        let hi = *band.rows.iter().max().unwrap_or(&0);
        if self.placed_up_to.is_some_and(|p| lo <= p) || hi as usize >= self.row_counts.len() {
            return Err(invalid(
                "cells came out of row order, or past the rows asked for",
            ));
        }
        let mut next = vec![0usize; (hi - lo + 1) as usize];
        for &r in &band.rows {
            next[(r - lo) as usize] += 1;
        }
        let mut at = 0;
        for (k, count) in next.iter_mut().enumerate() {
            self.row_counts[lo as usize + k] += *count as u64;
            let start = at;
            at += *count;
            *count = start;
        }
        let (w, iw) = (self.width, self.index_width);
        let mut data = vec![0u8; n * w];
        let mut indices = vec![0u8; n * iw];
        let too_wide = |c: u64| invalid(format!("column position {c} does not fit 32 bits"));
        for (i, (&r, &c)) in band.rows.iter().zip(&band.cols).enumerate() {
            let slot = &mut next[(r - lo) as usize];
            let to = &mut indices[*slot * iw..(*slot + 1) * iw];
            match iw {
                4 => to.copy_from_slice(&u32::try_from(c).map_err(|_| too_wide(c))?.to_le_bytes()),
                _ => to.copy_from_slice(&c.to_le_bytes()),
            }
            data[*slot * w..(*slot + 1) * w].copy_from_slice(&band.values[i * w..(i + 1) * w]);
            *slot += 1;
        }
        self.out.data.push(data);
        self.out.indices.push(indices);
        self.placed_up_to = Some(hi);
        // The band's buffers are kept for the next one.
        band.rows.clear();
        band.cols.clear();
        band.values.clear();
        Ok(())
    }
}
