//! A condition over a tile's cells at once: each comparison writes one
//! answer per cell into a selection (`[bool]`), and AND, OR and NOT
//! combine selections, so the type and operator are chosen once per tile
//! rather than once per cell. Answers are those of [`Compiled::eval`]:
//! a comparison on a null cell fails, NOT negates what its operand
//! answered (nulls included), NaN is unordered.

use super::Compiled;
use crate::column::Column;
use rayon::prelude::*;
use tessera_schema::CellValNum;

/// One field's values over the cells a selection tests, cell `c` being
/// the `c`-th of the tile (or result) they come from.
#[derive(Debug, Clone, Copy)]
pub enum FieldCells<'a> {
    /// Cell `c`'s value is `data[c * width..(c + 1) * width]`.
    Fixed {
        /// The values back to back.
        data: &'a [u8],
        /// Bytes a cell.
        width: usize,
        /// One byte a cell, 0 for null; `None`: no cell is null.
        validity: Option<&'a [u8]>,
    },
    /// Cell `c`'s value is `data[offsets[c]..offsets[c + 1]]`.
    Var {
        /// The values back to back.
        data: &'a [u8],
        /// Each cell's start, then the end of the last.
        offsets: &'a [u64],
        /// One byte a cell, 0 for null; `None`: no cell is null.
        validity: Option<&'a [u8]>,
    },
    /// Every cell holds `value` (a field a fragment lacks: its fill value).
    Constant {
        /// The value.
        value: &'a [u8],
        /// Whether it is non-null.
        valid: bool,
    },
}

impl<'a> FieldCells<'a> {
    /// The cells of decoded buffers: var-sized where there are `offsets`,
    /// else `width` bytes a cell.
    pub fn of_buffers(
        data: &'a [u8],
        offsets: Option<&'a [u64]>,
        width: usize,
        validity: Option<&'a [u8]>,
    ) -> FieldCells<'a> {
        match offsets {
            Some(offsets) => FieldCells::Var {
                data,
                offsets,
                validity,
            },
            None => FieldCells::Fixed {
                data,
                width,
                validity,
            },
        }
    }

    /// The cells of a column.
    pub fn of_column(col: &'a Column) -> FieldCells<'a> {
        let width = match col.cell_val_num {
            CellValNum::Fixed(n) => n as usize * col.datatype.size() as usize,
            CellValNum::Var => col.datatype.size() as usize,
        };
        let (offsets, validity) = (col.offsets.as_deref(), col.validity.as_deref());
        FieldCells::of_buffers(&col.data, offsets, width, validity)
    }

    /// The value and validity of cell `c`.
    #[inline]
    pub fn cell(&self, c: usize) -> (&'a [u8], bool) {
        let value = match *self {
            FieldCells::Fixed { data, width, .. } => &data[c * width..(c + 1) * width],
            FieldCells::Var { data, offsets, .. } => {
                &data[offsets[c] as usize..offsets[c + 1] as usize]
            }
            FieldCells::Constant { value, .. } => value,
        };
        (value, self.valid(c))
    }

    /// The same field over cells `start..` only: cell `c` of the result is
    /// cell `start + c` of `self` (offsets keep pointing into the same data).
    pub fn from_cell(&self, start: usize) -> FieldCells<'a> {
        match *self {
            FieldCells::Fixed {
                data,
                width,
                validity,
            } => FieldCells::Fixed {
                data: &data[(start * width).min(data.len())..],
                width,
                validity: validity.map(|v| &v[start.min(v.len())..]),
            },
            FieldCells::Var {
                data,
                offsets,
                validity,
            } => FieldCells::Var {
                data,
                offsets: &offsets[start.min(offsets.len())..],
                validity: validity.map(|v| &v[start.min(v.len())..]),
            },
            c @ FieldCells::Constant { .. } => c,
        }
    }

    /// Whether cell `c` is non-null.
    #[inline]
    fn valid(&self, c: usize) -> bool {
        match *self {
            FieldCells::Fixed { validity, .. } | FieldCells::Var { validity, .. } => {
                validity.is_none_or(|v| v[c] != 0)
            }
            FieldCells::Constant { valid, .. } => valid,
        }
    }
}

impl Compiled {
    /// Keeps of `cells` those for which the condition holds, `field(at)`
    /// giving the values of the field at position `at` over the tile.
    /// Same answers as [`Compiled::eval`] on each cell.
    ///
    /// ```
    /// use tessera_cells::{Expr, FieldCells};
    /// use tessera_fragment::condition::CompareOp;
    /// use tessera_tile::Datatype;
    /// let e = Expr::Compare { field: "a".into(), op: CompareOp::Lt, values: vec![3i32.to_le_bytes().to_vec()] };
    /// let c = e.compile(&|_| Some((0, Datatype::Int32)));
    /// let data: Vec<u8> = [5i32, 1, 3, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// let mut cells = vec![0, 1, 2, 3];
    /// c.retain(&|_| FieldCells::Fixed { data: &data, width: 4, validity: None }, &mut cells);
    /// assert_eq!(cells, [1, 3]);
    /// ```
    pub fn retain<'a>(&self, field: &dyn Fn(usize) -> FieldCells<'a>, cells: &mut Vec<u32>) {
        // One comparison of a field without nulls (most conditions):
        // the cells kept in the comparison's own loop.
        if let Some((at, t)) = self.number_test() {
            if let FieldCells::Fixed {
                data,
                width,
                validity: None,
            } = field(at)
            {
                if width == t.width {
                    return t.retain(data, cells);
                }
            }
        }
        let mut keep = vec![false; cells.len()];
        self.select(field, cells, &mut keep);
        let mut k = keep.iter();
        cells.retain(|_| *k.next().expect("one answer a cell"));
    }

    /// Whether the condition holds for each cell of `cols` (a result's
    /// columns, the condition compiled against them by
    /// [`Expr::compile_columns`](crate::Expr::compile_columns)), `n` cells
    /// in all; blocks of cells are tested in parallel.
    pub fn select_columns(&self, cols: &[Column], n: usize) -> Vec<bool> {
        const BLOCK: usize = 1 << 16;
        let fields: Vec<FieldCells<'_>> = cols.iter().map(FieldCells::of_column).collect();
        let mut out = vec![false; n];
        let index: Vec<u32> = (0..BLOCK.min(n) as u32).collect();
        out.par_chunks_mut(BLOCK).enumerate().for_each(|(b, out)| {
            let start = b * BLOCK;
            let block: Vec<FieldCells<'_>> = fields.iter().map(|f| f.from_cell(start)).collect();
            self.select(&|at| block[at], &index[..out.len()], out);
        });
        out
    }

    /// Sets `out[i]` to whether the condition holds for cell `cells[i]`.
    pub fn select<'a>(
        &self,
        field: &dyn Fn(usize) -> FieldCells<'a>,
        cells: &[u32],
        out: &mut [bool],
    ) {
        debug_assert_eq!(cells.len(), out.len());
        match self {
            Compiled::Const(b) => out.fill(*b),
            Compiled::And(v) | Compiled::Or(v) => {
                let and = matches!(self, Compiled::And(_));
                let Some((first, rest)) = v.split_first() else {
                    return out.fill(and);
                };
                first.select(field, cells, out);
                let mut more = vec![false; cells.len()];
                for e in rest {
                    e.select(field, cells, &mut more);
                    for (o, m) in out.iter_mut().zip(&more) {
                        *o = if and { *o & *m } else { *o | *m };
                    }
                }
            }
            Compiled::Not(e) => {
                e.select(field, cells, out);
                out.iter_mut().for_each(|o| *o = !*o);
            }
            Compiled::IsNull { at, negated } => {
                let f = field(*at);
                for (o, &c) in out.iter_mut().zip(cells) {
                    *o = f.valid(c as usize) == *negated;
                }
            }
            Compiled::Compare { at, number, .. } => {
                let f = field(*at);
                if let (
                    Some(t),
                    FieldCells::Fixed {
                        data,
                        width,
                        validity,
                    },
                ) = (number, f)
                {
                    if width == t.width {
                        t.select(data, cells, out);
                        if let Some(v) = validity {
                            for (o, &c) in out.iter_mut().zip(cells) {
                                *o &= v[c as usize] != 0;
                            }
                        }
                        return;
                    }
                }
                for (o, &c) in out.iter_mut().zip(cells) {
                    let (bytes, valid) = f.cell(c as usize);
                    *o = valid && self.compares(bytes);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Expr;
    use tessera_fragment::condition::CompareOp;
    use tessera_tile::Datatype;

    /// Nested AND/OR/NOT over a nullable float, a string and a field held
    /// constant: each cell selected as `eval` answers it alone.
    #[test]
    fn selects_as_each_cell_alone() {
        let f64s = [1.0f64, f64::NAN, -0.0, 7.5, 2.0, 0.0];
        let floats: Vec<u8> = f64s.iter().flat_map(|v| v.to_le_bytes()).collect();
        let valid = [1u8, 1, 0, 1, 1, 1];
        let strings = b"abbcccdz";
        let offsets = [0u64, 1, 3, 3, 6, 7, 8];
        let cmp = |field: &str, op, v: Vec<u8>| Expr::Compare {
            field: field.into(),
            op,
            values: vec![v],
        };
        let exprs = [
            cmp("a", CompareOp::Lt, 2.0f64.to_le_bytes().to_vec()),
            Expr::Not(Box::new(cmp(
                "a",
                CompareOp::Ge,
                0.0f64.to_le_bytes().to_vec(),
            ))),
            Expr::Or(vec![
                cmp("s", CompareOp::Eq, b"bb".to_vec()),
                Expr::And(vec![
                    Expr::IsNull {
                        field: "a".into(),
                        negated: true,
                    },
                    cmp("s", CompareOp::Gt, b"c".to_vec()),
                ]),
            ]),
            Expr::And(vec![
                cmp("k", CompareOp::Eq, 4i32.to_le_bytes().to_vec()),
                cmp("a", CompareOp::Ne, 7.5f64.to_le_bytes().to_vec()),
            ]),
            Expr::Compare {
                field: "s".into(),
                op: CompareOp::In,
                values: vec![b"a".to_vec(), b"z".to_vec()],
            },
            Expr::IsNull {
                field: "a".into(),
                negated: false,
            },
            Expr::Const(true),
            Expr::And(vec![]),
        ];
        let four = 4i32.to_le_bytes();
        let field = |at: usize| match at {
            0 => FieldCells::Fixed {
                data: &floats,
                width: 8,
                validity: Some(&valid),
            },
            1 => FieldCells::Var {
                data: strings,
                offsets: &offsets,
                validity: None,
            },
            _ => FieldCells::Constant {
                value: &four,
                valid: true,
            },
        };
        let position = |name: &str| match name {
            "a" => Some((0, Datatype::Float64)),
            "s" => Some((1, Datatype::StringAscii)),
            _ => Some((2, Datatype::Int32)),
        };
        for e in &exprs {
            let c = e.compile(&position);
            let cells: Vec<u32> = (0..6).rev().collect();
            let want: Vec<u32> = cells
                .iter()
                .copied()
                .filter(|&i| c.eval(&|at| field(at).cell(i as usize)))
                .collect();
            let mut got = cells.clone();
            c.retain(&field, &mut got);
            assert_eq!(got, want, "{e:?}");
            // From a later cell on, the same answers for the same cells.
            let tail: Vec<u32> = (0..3).collect();
            let mut out = vec![false; 3];
            c.select(&|at| field(at).from_cell(3), &tail, &mut out);
            let each: Vec<bool> = (3..6).map(|i| c.eval(&|at| field(at).cell(i))).collect();
            assert_eq!(out, each, "{e:?} from cell 3");
        }
    }
}
