//! A 2-D sparse array's cells straight into the arrays of a CSR matrix.
//! No COO copy of the cells is ever whole: cells come in global order,
//! which with row-major tiles is one band of rows (one tile of the first
//! dimension) after another. A batch's whole bands are placed in parallel,
//! each into its own stretch of the matrix's arrays, counted by row and
//! then written at their rows' slots; the band a batch ends in waits,
//! copied, for the rest of its cells in the next batch. What is held
//! besides the matrix is one read batch and one band.

mod band;
mod output;

use crate::{Positions, SomaError};
use band::{invalid, Band, Carried, Cells, Placing};
use output::{Given, Growing, Output};
use rayon::prelude::*;
use tessera::fragment::OpenArray;
use tessera::query::{Batches, ReadRequest, ReadResult, ReadSession};
use tessera::schema::CellValNum;
use tessera::tile::{ArrayType, Datatype, Layout};

/// A CSR matrix's arrays: values and column positions (4 or 8 bytes
/// each, little-endian) as bytes, in row order; row starts.
#[derive(Debug)]
pub struct CsrMatrix {
    data: Vec<u8>,
    indices: Vec<u8>,
    row_starts: Vec<i64>,
}

impl CsrMatrix {
    /// The values' bytes (the matrix's `data`).
    pub fn values(&self) -> &[u8] {
        &self.data
    }

    /// The column positions' bytes (the matrix's `indices`).
    pub fn column_positions(&self) -> &[u8] {
        &self.indices
    }

    /// Where each row's cells start, and the cell count at the end.
    pub fn row_starts(&self) -> &[i64] {
        &self.row_starts
    }

    /// The values, the column positions and the row starts, for a caller
    /// that moves them into arrays of its own.
    pub fn into_parts(self) -> (Vec<u8>, Vec<u8>, Vec<i64>) {
        (self.data, self.indices, self.row_starts)
    }
}
/// Builds a [`CsrMatrix`] from a read's batches.
pub struct CsrFill {
    rows: Positions,
    cols: Positions,
    /// The first dimension's domain start and tile extent: a row's band.
    tiling: Option<(i64, i64)>,
    width: usize,
    /// Bytes of a column position: 4 or 8.
    index_width: usize,
    carried: Carried,
    /// Cells a row position holds.
    row_counts: Vec<u64>,
    /// The last row position placed (bands come in row order).
    placed_up_to: Option<u64>,
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
            carried: Carried::default(),
            row_counts: vec![0; n_rows],
            placed_up_to: None,
        })
    }

    /// The batches [`CsrFill::read`] and [`CsrFill::read_into`] place:
    /// `request`'s ranges, with the attribute and the dimensions in global
    /// order, each batch within half its budget (two are held at once:
    /// one placed while the next is read).
    pub fn batches(
        &self,
        session: &ReadSession,
        request: ReadRequest,
        attribute: &str,
    ) -> Result<Batches, SomaError> {
        let mut request = request
            .attributes([attribute.to_owned()])
            .dimensions(true)
            .layout(Layout::GlobalOrder);
        if let Some(b) = request.batch_budget() {
            request = request.budget((b / 2).max(1));
        }
        Ok(session.batches(&request)?)
    }

    /// Reads `request` (its ranges and budget; the attribute and global
    /// order are set here) and places every cell into arrays of its own.
    pub fn read(
        self,
        session: &ReadSession,
        request: ReadRequest,
        attribute: &str,
    ) -> Result<CsrMatrix, SomaError> {
        let batches = self.batches(session, request, attribute)?;
        self.read_batches(batches)
    }

    /// Places every cell of `batches` (from [`CsrFill::batches`]) into
    /// arrays of its own.
    pub fn read_batches(self, batches: Batches) -> Result<CsrMatrix, SomaError> {
        let mut out = Growing::default();
        let row_starts = self.fill(batches, &mut out)?;
        Ok(CsrMatrix {
            data: out.data,
            indices: out.indices,
            row_starts,
        })
    }

    /// The bytes of a value.
    pub fn value_width(&self) -> usize {
        self.width
    }

    /// The bytes of a column position.
    pub fn index_width(&self) -> usize {
        self.index_width
    }

    /// Places every cell of `batches` (from [`CsrFill::batches`]) into
    /// `data` and `indices`, arrays the caller sized for the cells it
    /// expects (at most [`Batches::cell_bound`]); returns how many cells
    /// they hold and the row starts. More cells than they hold are an
    /// error.
    pub fn read_into(
        self,
        batches: Batches,
        data: &mut [u8],
        indices: &mut [u8],
    ) -> Result<(usize, Vec<i64>), SomaError> {
        let width = self.width;
        let mut out = Given {
            data,
            indices,
            used: (0, 0),
        };
        let row_starts = self.fill(batches, &mut out)?;
        Ok((out.used.0 / width, row_starts))
    }

    /// Places every cell of `batches` into `out`; returns the row starts.
    fn fill(mut self, batches: Batches, out: &mut dyn Output) -> Result<Vec<i64>, SomaError> {
        std::thread::scope(|scope| -> Result<(), SomaError> {
            let (tx, rx) = std::sync::mpsc::sync_channel(0);
            // The read goes on while a batch is placed; it stops when the
            // placing does (its channel closed).
            scope.spawn(move || {
                for batch in batches {
                    if tx.send(batch).is_err() {
                        break;
                    }
                }
            });
            for batch in rx {
                let batch = batch?;
                self.add(&batch, out)?;
                // Its buffers go to a later batch: no fresh pages to fault in.
                batch.recycle();
            }
            Ok(())
        })?;
        // The band the last batch ended in.
        let carried = std::mem::take(&mut self.carried);
        if let Some(index) = carried.band {
            let band = Band {
                index,
                parts: vec![carried.cells()],
            };
            self.place(vec![band], out)?;
        }
        let mut at = 0i64;
        let mut starts = Vec::with_capacity(self.row_counts.len() + 1);
        starts.push(0);
        for c in &self.row_counts {
            at += *c as i64;
            starts.push(at);
        }
        Ok(starts)
    }

    /// Places the batch's whole bands (with the band carried from the
    /// batch before, if this one holds the rest of it) and carries the
    /// band it ends in.
    fn add(&mut self, batch: &ReadResult, out: &mut dyn Output) -> Result<(), SomaError> {
        let [r, c, v] = &batch.columns[..] else {
            return Err(invalid(
                "a CSR read returned other than two dimensions and a value",
            ));
        };
        let n = batch.cell_count;
        if r.data.len() < n * 8 || c.data.len() < n * 8 || v.data.len() < n * self.width {
            return Err(invalid(
                "a CSR read returned columns shorter than its cells",
            ));
        }
        let cells = Cells {
            rows: &r.data[..n * 8],
            cols: &c.data[..n * 8],
            values: &v.data[..n * self.width],
        };
        let mut spans = self.bands_of(cells);
        let Some(&(last, _)) = spans.last() else {
            return Ok(());
        };
        let carried = std::mem::take(&mut self.carried);
        let mut bands = Vec::with_capacity(spans.len());
        match carried.band {
            Some(b) if b > spans[0].0 => return Err(invalid("cells came out of global order")),
            // The batch holds the rest of the band carried, and more.
            Some(b) if b == spans[0].0 && spans.len() > 1 => {
                let (_, first) = spans.remove(0);
                bands.push(Band {
                    index: b,
                    parts: vec![carried.cells(), cells.part(first, self.width)],
                });
            }
            Some(b) if b < spans[0].0 => bands.push(Band {
                index: b,
                parts: vec![carried.cells()],
            }),
            _ => {}
        }
        // The band the batch ends in waits for the next batch.
        let (_, tail) = spans.pop().expect("a band");
        bands.extend(spans.into_iter().map(|(index, span)| Band {
            index,
            parts: vec![cells.part(span, self.width)],
        }));
        self.place(bands, out)?;
        let mut carried = carried;
        if carried.band != Some(last) {
            carried.clear();
        }
        carried.band = Some(last);
        carried.extend(cells.part(tail, self.width));
        self.carried = carried;
        Ok(())
    }

    /// The band of the first dimension's `row`.
    fn band_of(&self, row: i64) -> i64 {
        self.tiling
            .map_or(0, |(lo, ext)| row.saturating_sub(lo).div_euclid(ext))
    }

    /// The raw rows of band `index`.
    fn band_rows(&self, index: i64) -> std::ops::Range<i64> {
        match self.tiling {
            None => i64::MIN..i64::MAX,
            Some((lo, ext)) => {
                let start = lo.saturating_add(index.saturating_mul(ext));
                start..start.saturating_add(ext)
            }
        }
    }

    /// The bands `cells` hold, in order: each band's index and its cells.
    /// Global order with row-major tiles gives a band's cells together and
    /// bands ascending, so each ends where a search finds the next; cells
    /// out of that order fall in a span not theirs, which placing refuses.
    fn bands_of(&self, cells: Cells<'_>) -> Vec<(i64, std::ops::Range<usize>)> {
        let n = cells.len();
        let mut spans = Vec::new();
        let mut start = 0;
        while start < n {
            let band = self.band_of(cells.row(start));
            let (mut lo, mut hi) = (start + 1, n);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match self.band_of(cells.row(mid)) <= band {
                    true => lo = mid + 1,
                    false => hi = mid,
                }
            }
            spans.push((band, start..lo));
            start = lo;
        }
        spans
    }

    /// Places whole `bands`, in parallel, each into its own stretch of the
    /// arrays after the cells placed so far; then counts their rows, in
    /// order.
    fn place(&mut self, bands: Vec<Band<'_>>, out: &mut dyn Output) -> Result<(), SomaError> {
        let (w, iw) = (self.width, self.index_width);
        let cells: usize = bands.iter().map(Band::len).sum();
        let rows: Vec<std::ops::Range<i64>> =
            bands.iter().map(|b| self.band_rows(b.index)).collect();
        let (mut data, mut indices) = out.stretch(cells * w, cells * iw)?;
        let mut stretches = Vec::with_capacity(bands.len());
        for band in &bands {
            let (d, rest) = std::mem::take(&mut data).split_at_mut(band.len() * w);
            let (i, more) = std::mem::take(&mut indices).split_at_mut(band.len() * iw);
            stretches.push((d, i));
            (data, indices) = (rest, more);
        }
        let placing = Placing {
            rows: &self.rows,
            cols: &self.cols,
            width: w,
            index_width: iw,
            n_rows: self.row_counts.len(),
        };
        let placed: Vec<Result<(u64, Vec<u64>), SomaError>> = (bands.par_iter())
            .zip(rows)
            .zip(stretches)
            .map(|((band, rows), (d, i))| placing.place(band, rows, d, i))
            .collect();
        for p in placed {
            let (lo, counts) = p?;
            if counts.is_empty() {
                continue;
            }
            // Placing refused positions past the matrix's rows.
            let hi = lo + counts.len() as u64 - 1;
            if self.placed_up_to.is_some_and(|p| lo <= p) {
                return Err(invalid(
                    "cells came out of row order, or past the rows asked for",
                ));
            }
            for (k, c) in counts.iter().enumerate() {
                self.row_counts[lo as usize + k] += c;
            }
            self.placed_up_to = Some(hi);
        }
        Ok(())
    }
}
