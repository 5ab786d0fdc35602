//! Columnar read results: data, offsets and validity per field.

use rayon::prelude::*;
pub(crate) use tessera_cells::Column;
use tessera_schema::CellValNum;
use tessera_tile::Datatype;

/// The cells a read returned.
#[derive(Debug, Clone, Default)]
pub struct ReadResult {
    /// The columns: dimensions first (schema order), then attributes.
    /// Without the dimensions when [`ReadResult::grid`] describes them.
    pub columns: Vec<Column>,
    /// Number of cells.
    pub cell_count: usize,
    /// The coordinates of a dense read, described instead of stored, when
    /// the query asked for that ([`crate::ReadRequest::coordinate_grid`]).
    pub grid: Option<CoordinateGrid>,
    /// Where [`ReadResult::recycle`] hands the buffers back: the context of
    /// the query that read them.
    pub(crate) context: Option<std::sync::Arc<crate::ReadContext>>,
}

/// One dimension of a [`CoordinateGrid`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridDimension {
    /// Dimension name.
    pub name: String,
    /// Its datatype (an integer, datetime or time type: dense dimensions).
    pub datatype: Datatype,
    /// Its ranges (inclusive), in the order the result visits them.
    pub ranges: Vec<(i128, i128)>,
}

/// The coordinates of a dense read's cells, which are not stored on disk
/// but follow from the subarray and the layout: every combination of the
/// dimensions' range coordinates, the dimension first in `order` varying
/// slowest. A dense read of N cells in two int64 dimensions would
/// otherwise build 16 N bytes of coordinate columns, more than most
/// attributes. [`CoordinateGrid::cursor`] walks the cells in order;
/// [`CoordinateGrid::columns`] builds the columns.
///
/// ```
/// use tessera_query::{CoordinateGrid, GridDimension};
/// use tessera_tile::Datatype;
/// let dim = |name: &str, ranges| GridDimension {
///     name: name.into(),
///     datatype: Datatype::Int64,
///     ranges,
/// };
/// // Rows 1..=2 and 7, columns 0..=1, row-major.
/// let g = CoordinateGrid {
///     dimensions: vec![dim("r", vec![(1, 2), (7, 7)]), dim("c", vec![(0, 1)])],
///     order: vec![0, 1],
/// };
/// assert_eq!(g.cell_count(), 6);
/// let mut cells = Vec::new();
/// let mut c = g.cursor();
/// for _ in 0..g.cell_count() {
///     cells.push(c.coordinates().to_vec());
///     c.advance();
/// }
/// assert_eq!(cells, [[1, 0], [1, 1], [2, 0], [2, 1], [7, 0], [7, 1]]);
/// assert_eq!(g.coordinates(5), [7, 1]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinateGrid {
    /// The dimensions, in schema order.
    pub dimensions: Vec<GridDimension>,
    /// Indexes into `dimensions`, from the slowest varying to the fastest.
    pub order: Vec<usize>,
}

impl CoordinateGrid {
    /// Coordinates per dimension.
    fn counts(&self) -> Vec<u128> {
        self.dimensions
            .iter()
            .map(|d| {
                d.ranges
                    .iter()
                    .map(|(a, b)| (b - a + 1).max(0) as u128)
                    .sum()
            })
            .collect()
    }

    /// Number of cells (saturating).
    pub fn cell_count(&self) -> usize {
        let n = self
            .counts()
            .iter()
            .fold(1u128, |a, &c| a.saturating_mul(c));
        usize::try_from(n).unwrap_or(usize::MAX)
    }

    /// The coordinates of cell `i` (schema order).
    pub fn coordinates(&self, i: usize) -> Vec<i128> {
        let counts = self.counts();
        let mut out = vec![0; self.dimensions.len()];
        let mut rest = i as u128;
        for &j in self.order.iter().rev() {
            let mut k = rest % counts[j].max(1);
            rest /= counts[j].max(1);
            for &(a, b) in &self.dimensions[j].ranges {
                let len = (b - a + 1) as u128;
                if k < len {
                    out[j] = a + k as i128;
                    break;
                }
                k -= len;
            }
        }
        out
    }

    /// A cursor on the first cell.
    pub fn cursor(&self) -> GridCursor<'_> {
        GridCursor {
            grid: self,
            range: vec![0; self.dimensions.len()],
            coords: self
                .dimensions
                .iter()
                .map(|d| d.ranges.first().map_or(0, |r| r.0))
                .collect(),
        }
    }

    /// The dimension columns, in schema order.
    pub fn columns(&self) -> Vec<Column> {
        self.columns_in(&crate::ReadContext::new())
    }

    /// [`CoordinateGrid::columns`], in buffers from `ctx`.
    pub(crate) fn columns_in(&self, ctx: &crate::ReadContext) -> Vec<Column> {
        self.columns_of(ctx, |_| true)
    }

    /// The columns of the dimensions `built` picks (by number), in schema
    /// order, in buffers from `ctx`; the others are not computed.
    pub(crate) fn columns_of(
        &self,
        ctx: &crate::ReadContext,
        built: impl Fn(usize) -> bool,
    ) -> Vec<Column> {
        let n = self.cell_count();
        let counts = self.counts();
        let mut strides = vec![1usize; self.dimensions.len()];
        let mut s = 1usize;
        for &j in self.order.iter().rev() {
            strides[j] = s;
            s = s.saturating_mul(counts[j] as usize);
        }
        (self.dimensions.iter().zip(strides).enumerate())
            .filter(|(j, _)| built(*j))
            .map(|(_, (d, stride))| {
                let coords: Vec<i128> = d.ranges.iter().flat_map(|&(a, b)| a..=b).collect();
                let w = d.datatype.size() as usize;
                let data = dense_coords(ctx, n, w, &coords, stride);
                Column::fixed_dimension(d.name.clone(), d.datatype, data)
            })
            .collect()
    }
}

/// A position in a [`CoordinateGrid`], moved one cell at a time.
#[derive(Debug, Clone)]
pub struct GridCursor<'a> {
    grid: &'a CoordinateGrid,
    /// Per dimension, the range the coordinate is in.
    range: Vec<usize>,
    coords: Vec<i128>,
}

impl GridCursor<'_> {
    /// The coordinates of the current cell (schema order).
    pub fn coordinates(&self) -> &[i128] {
        &self.coords
    }

    /// Moves to the next cell: the fastest dimension first. Past the last
    /// cell, the cursor starts over.
    pub fn advance(&mut self) {
        for &j in self.grid.order.iter().rev() {
            let ranges = &self.grid.dimensions[j].ranges;
            let Some(&(_, hi)) = ranges.get(self.range[j]) else {
                continue;
            };
            if self.coords[j] < hi {
                self.coords[j] += 1;
                return;
            }
            if self.range[j] + 1 < ranges.len() {
                self.range[j] += 1;
                self.coords[j] = ranges[self.range[j]].0;
                return;
            }
            self.range[j] = 0;
            self.coords[j] = ranges[0].0;
        }
    }
}

impl ReadResult {
    /// The column with this name.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Builds the dimension columns a [`CoordinateGrid`] describes, in
    /// front of the attributes, and drops the grid: the result then holds
    /// every field as a column.
    pub fn materialize_coordinates(&mut self) {
        if let Some(g) = self.grid.take() {
            let mut cols = match &self.context {
                Some(ctx) => g.columns_in(ctx),
                None => g.columns(),
            };
            cols.append(&mut self.columns);
            self.columns = cols;
        }
    }

    /// Hands this result's buffers back to the [`crate::ReadContext`] of
    /// the query that read it: the next read given that context (the next
    /// batch of [`crate::Batches`], say) fills them instead of fresh memory,
    /// whose every page the kernel must fault in and clear (on large dense
    /// reads, more time than decoding). The context is bounded; what does
    /// not fit is freed.
    ///
    /// ```
    /// # use tessera_query::{ReadRequest, ReadResult, ReadSession};
    /// # fn run(session: ReadSession) -> Result<(), tessera_query::QueryError> {
    /// for batch in session.batches(&ReadRequest::new().budget(256 << 20))? {
    ///     let batch: ReadResult = batch?;
    ///     // ... use the cells ...
    ///     batch.recycle();
    /// }
    /// # Ok(()) }
    /// ```
    pub fn recycle(self) {
        let Some(ctx) = self.context else { return };
        for c in self.columns {
            ctx.results.give(c.data);
            if let Some(v) = c.validity {
                ctx.results.give(v);
            }
        }
    }

    /// Appends the cells of `other`, a result with the same columns (the
    /// next batch of the same read). An empty `self` takes `other` whole.
    pub fn append(&mut self, mut other: ReadResult) {
        if self.columns.is_empty() && self.grid.is_none() {
            *self = other;
            return;
        }
        // Two grids in a row are not one grid.
        self.materialize_coordinates();
        other.materialize_coordinates();
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
    /// Sets `column`'s cells to those of `parts` (decoded tiles, or the
    /// cells picked from them), one after the other: values concatenated,
    /// offsets rebased, validity kept (all valid where a part has none).
    pub(crate) fn refill<'a>(
        column: &mut Column,
        ctx: &crate::ReadContext,
        parts: impl Iterator<Item = &'a crate::decode::FieldTile> + Clone,
    ) {
        let cells: usize = parts.clone().map(|t| t.cells as usize).sum();
        let nullable = column.validity.is_some();
        let mut b = ColumnBuilder::new(
            ctx,
            &column.name,
            column.is_dimension,
            column.datatype,
            column.cell_val_num,
            nullable,
            cells,
        );
        b.col
            .data
            .reserve_exact(parts.clone().map(|t| t.data.len()).sum());
        for t in parts {
            b.push_run(t, 0, t.cells as usize);
        }
        *column = b.col;
    }

    /// A column builder whose buffers come from `ctx` (recycled results).
    pub fn new(
        ctx: &crate::ReadContext,
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
                data: ctx.result_buffer(capacity.saturating_mul(fixed.max(1)).min(1 << 30)),
                offsets: cvn.is_var().then(|| {
                    let mut v = Vec::with_capacity(capacity.saturating_add(1).min(1 << 27));
                    v.push(0);
                    v
                }),
                validity: nullable.then(|| ctx.result_buffer(capacity.min(1 << 30))),
            },
        }
    }

    /// Appends cells `from..to` of `tile` whole: one copy per buffer.
    pub fn push_run(&mut self, tile: &crate::decode::FieldTile, from: usize, to: usize) {
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
                let cells = &tile.data[from * w..to * w];
                // A single cell of a common width (scattered cells after
                // deduplication) copies inline rather than by a call.
                match cells.len() {
                    8 => self
                        .col
                        .data
                        .extend_from_slice(&<[u8; 8]>::try_from(cells).unwrap_or_default()),
                    4 => self
                        .col
                        .data
                        .extend_from_slice(&<[u8; 4]>::try_from(cells).unwrap_or_default()),
                    _ => self.col.data.extend_from_slice(cells),
                }
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

/// A dimension's column of a dense result of `n` cells (`w` bytes each):
/// each of `coords` repeats `stride` times in a row, and that sequence
/// repeats until the result is full. Written in parallel, in chunks.
pub(crate) fn dense_coords(
    ctx: &crate::ReadContext,
    n: usize,
    w: usize,
    coords: &[i128],
    stride: usize,
) -> Vec<u8> {
    // Small enough that a small result is still written by every thread.
    const CHUNK_CELLS: usize = 1 << 15;
    let period = coords.len().saturating_mul(stride);
    let mut data = ctx.result_filled(n * w, 0);
    if n == 0 || period == 0 {
        return data;
    }
    // A short period is built once and copied: the innermost dimension's
    // coordinates would otherwise be written one cell at a time.
    let cycle: Option<Vec<u8>> = (period * w <= 1 << 20).then(|| {
        let mut c = Vec::with_capacity(period * w);
        for v in coords {
            for _ in 0..stride {
                c.extend_from_slice(&v.to_le_bytes()[..w]);
            }
        }
        c
    });
    data.par_chunks_mut(CHUNK_CELLS * w)
        .enumerate()
        .for_each(|(k, out)| {
            let mut i = k * CHUNK_CELLS;
            let mut at = 0;
            while at < out.len() {
                let len = match &cycle {
                    Some(c) => {
                        let from = (i % period) * w;
                        let len = (c.len() - from).min(out.len() - at);
                        out[at..at + len].copy_from_slice(&c[from..from + len]);
                        len
                    }
                    None => {
                        // A run of one coordinate: one value, then doubling copies.
                        let v = &coords[(i / stride) % coords.len()].to_le_bytes()[..w];
                        let end = (at + (stride - i % stride) * w).min(out.len());
                        let run = &mut out[at..end];
                        run[..w].copy_from_slice(v);
                        let mut done = w;
                        while done < run.len() {
                            let k = done.min(run.len() - done);
                            run.copy_within(..k, done);
                            done += k;
                        }
                        run.len()
                    }
                };
                at += len;
                i += len / w;
            }
        });
    data
}

/// An empty result column for a dimension or an attribute of `schema`
/// (of no capacity: no buffer is taken from `ctx`'s pools).
pub(crate) fn field_column(
    ctx: &crate::ReadContext,
    schema: &tessera_schema::ArraySchema,
    field: tessera_fragment::Field,
) -> Column {
    use tessera_fragment::Field;
    let (name, is_dimension, datatype, cvn, nullable) = match field {
        Field::Dimension(j) => {
            let d = &schema.dimensions[j];
            (&d.name, true, d.datatype, d.cell_val_num, false)
        }
        Field::Attribute(i) => {
            let a = &schema.attributes[i];
            (&a.name, false, a.datatype, a.cell_val_num, a.nullable)
        }
        _ => unreachable!("results hold only dimensions and attributes"),
    };
    ColumnBuilder::new(ctx, name, is_dimension, datatype, cvn, nullable, 0).col
}

/// The `take` items of `rest` after its first `skip`; `rest` keeps what
/// follows them. Buffers are handed out in parts this way, safely.
pub(crate) fn cut<'o, T>(
    rest: &mut Option<&'o mut [T]>,
    skip: usize,
    take: usize,
) -> Option<&'o mut [T]> {
    let (_, after) = rest.take()?.split_at_mut(skip);
    let (part, after) = after.split_at_mut(take);
    *rest = Some(after);
    Some(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column cell by cell, as the layout defines it.
    fn naive_coords(n: usize, w: usize, coords: &[i128], stride: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| coords[(i / stride) % coords.len()].to_le_bytes()[..w].to_vec())
            .collect()
    }

    #[test]
    fn dense_coords_match_the_layout() {
        // Short periods (copied from one cycle) and long ones (runs),
        // chunk boundaries inside runs and cycles, widths 1 to 8.
        let ranges: Vec<i128> = (-3..40).chain(1000..1100).collect();
        for (n, w, count, stride) in [
            (0, 8, 5, 1),
            (7, 1, 7, 1),
            (1 << 19, 8, 64, 1),
            (1 << 19, 4, 143, 3),
            (3 << 18, 8, 143, 5000),
            (600_000, 2, 1, 600_000),
            ((1 << 20) + 5, 8, 143, 7333),
        ] {
            let coords = &ranges[..count];
            let period = count * stride;
            let n = if n == 0 {
                0
            } else {
                n - n % period.max(1) + period
            };
            assert_eq!(
                dense_coords(&crate::ReadContext::new(), n, w, coords, stride),
                naive_coords(n, w, coords, stride),
                "{n} cells of width {w}, {count} coordinates, stride {stride}"
            );
        }
    }
}
