//! A comparison of a number field with one value, the value decoded once
//! and each cell compared on its own type: what most conditions test, per
//! cell, over millions of cells. Same answers as the general comparison
//! (`compare` in `condition.rs`: IEEE rules for floats, NaN unordered so
//! only `!=` holds, -0 equal to 0), which takes everything else.

use super::holds;
use tessera_fragment::condition::CompareOp;
use tessera_tile::datatype::Physical;

/// `cell op value` for cells of one number type.
#[derive(Debug, Clone, Copy)]
pub struct NumberTest {
    op: CompareOp,
    value: Number,
    /// Bytes of a cell.
    pub width: usize,
}

/// A number type and the value compared with.
#[derive(Debug, Clone, Copy)]
enum Number {
    Int { signed: bool, value: i128 },
    Float { value: f64 },
}

impl NumberTest {
    /// The test of `op` against `values` (one value) for cells of physical
    /// type `p`, when both are numbers of a common width.
    pub fn of(op: CompareOp, p: Physical, values: &[Vec<u8>]) -> Option<NumberTest> {
        use CompareOp as O;
        if !matches!(op, O::Lt | O::Le | O::Gt | O::Ge | O::Eq | O::Ne) {
            return None;
        }
        let [bytes] = values else { return None };
        let (width, value) = match p {
            Physical::Int(w @ (1 | 2 | 4 | 8)) => (
                w,
                Number::Int {
                    signed: true,
                    value: 0,
                },
            ),
            Physical::UInt(w @ (1 | 2 | 4 | 8)) => (
                w,
                Number::Int {
                    signed: false,
                    value: 0,
                },
            ),
            Physical::Float(w @ (4 | 8)) => (w, Number::Float { value: 0.0 }),
            _ => return None,
        };
        let width = width as usize;
        if bytes.len() != width {
            return None;
        }
        let value = match value {
            Number::Int { signed, .. } => Number::Int {
                signed,
                value: int(bytes, signed),
            },
            Number::Float { .. } => Number::Float {
                value: float(bytes),
            },
        };
        Some(NumberTest { op, value, width })
    }

    /// Keeps of `cells` those that pass, cell `c`'s value at
    /// `data[c * width..]`: the type and comparison are chosen once, then
    /// one loop of native comparisons on the cells' own type (IEEE rules
    /// for floats, as [`NumberTest::holds`]). A value outside an integer
    /// type's range takes the general test.
    pub fn retain(&self, data: &[u8], cells: &mut Vec<u32>) {
        self.run(data, Target::Retain(cells));
    }

    /// Sets `out[i]` to whether cell `cells[i]` passes, as
    /// [`NumberTest::retain`] decides it: the selection of a tile's cells
    /// that [`Compiled::retain`](super::Compiled::retain) combines.
    pub fn select(&self, data: &[u8], cells: &[u32], out: &mut [bool]) {
        self.run(data, Target::Select(cells, out));
    }

    fn run(&self, data: &[u8], target: Target<'_>) {
        use CompareOp as O;
        macro_rules! typed {
            ($t:ty, $as:ty, $v:expr) => {{
                let v: $as = $v;
                let at = |c: usize| <$t as LeCell>::at(data, c);
                return match self.op {
                    O::Lt => target.apply(at, |x| (x as $as) < v),
                    O::Le => target.apply(at, |x| (x as $as) <= v),
                    O::Gt => target.apply(at, |x| (x as $as) > v),
                    O::Ge => target.apply(at, |x| (x as $as) >= v),
                    O::Eq => target.apply(at, |x| (x as $as) == v),
                    _ => target.apply(at, |x| (x as $as) != v),
                };
            }};
        }
        match (self.value, self.width) {
            (Number::Float { value }, 8) => typed!(f64, f64, value),
            (Number::Float { value }, 4) => typed!(f32, f64, value),
            (Number::Int { signed, value }, w) => match (signed, w) {
                (true, 1) if i8::try_from(value).is_ok() => typed!(i8, i8, value as i8),
                (true, 2) if i16::try_from(value).is_ok() => typed!(i16, i16, value as i16),
                (true, 4) if i32::try_from(value).is_ok() => typed!(i32, i32, value as i32),
                (true, 8) if i64::try_from(value).is_ok() => typed!(i64, i64, value as i64),
                (false, 1) if u8::try_from(value).is_ok() => typed!(u8, u8, value as u8),
                (false, 2) if u16::try_from(value).is_ok() => typed!(u16, u16, value as u16),
                (false, 4) if u32::try_from(value).is_ok() => typed!(u32, u32, value as u32),
                (false, 8) if u64::try_from(value).is_ok() => typed!(u64, u64, value as u64),
                _ => {}
            },
            _ => {}
        }
        let w = self.width;
        target.apply(|c| &data[c * w..(c + 1) * w], |b| self.holds(b))
    }

    /// Whether the cell `b` (exactly `width` bytes) passes.
    #[inline]
    pub fn holds(&self, b: &[u8]) -> bool {
        match self.value {
            Number::Int { signed, value } => holds(self.op, Some(int(b, signed).cmp(&value))),
            Number::Float { value } => holds(self.op, float(b).partial_cmp(&value)),
        }
    }
}

/// A little-endian integer of 1, 2, 4 or 8 bytes.
#[inline]
fn int(b: &[u8], signed: bool) -> i128 {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    let v = u64::from_le_bytes(x);
    let shift = 64 - 8 * b.len() as u32;
    match signed {
        true => (((v << shift) as i64) >> shift) as i128,
        false => v as i128,
    }
}

/// A little-endian float of 4 or 8 bytes.
#[inline]
fn float(b: &[u8]) -> f64 {
    match b.len() {
        4 => f32::from_le_bytes(b.try_into().expect("4 bytes")) as f64,
        _ => f64::from_le_bytes(b.try_into().expect("8 bytes")),
    }
}

/// What a typed comparison does with each cell's answer: keep the cells
/// that pass, or write each cell's answer beside it.
enum Target<'c> {
    Retain(&'c mut Vec<u32>),
    Select(&'c [u32], &'c mut [bool]),
}

impl Target<'_> {
    /// Runs `test` on each cell's value, `at(c)` reading cell `c`; one
    /// loop per type and operator, as each `test` is a type of its own.
    #[inline(always)]
    fn apply<V>(self, at: impl Fn(usize) -> V, test: impl Fn(V) -> bool) {
        match self {
            Target::Retain(cells) => cells.retain(|&c| test(at(c as usize))),
            Target::Select(cells, out) => {
                for (o, &c) in out.iter_mut().zip(cells) {
                    *o = test(at(c as usize));
                }
            }
        }
    }
}

/// A number type read from little-endian bytes: cell `i` of `data`.
trait LeCell: Copy {
    fn at(data: &[u8], i: usize) -> Self;
}

macro_rules! le_cell {
    ($($t:ty),*) => {$(
        impl LeCell for $t {
            #[inline(always)]
            fn at(data: &[u8], i: usize) -> $t {
                const W: usize = std::mem::size_of::<$t>();
                <$t>::from_le_bytes(data[i * W..i * W + W].try_into().expect("W bytes"))
            }
        }
    )*};
}
le_cell!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every number type, operator and awkward value (NaN, -0, the
    /// extremes, neighbours): the test answers as the general comparison.
    #[test]
    fn answers_as_the_general_comparison() {
        use CompareOp as O;
        let ops = [O::Lt, O::Le, O::Gt, O::Ge, O::Eq, O::Ne];
        let mut cases: Vec<(Physical, Vec<Vec<u8>>)> = Vec::new();
        let ints = [
            i64::MIN,
            -129,
            -128,
            -2,
            -1,
            0,
            1,
            2,
            127,
            128,
            255,
            256,
            i64::MAX,
        ];
        for w in [1usize, 2, 4, 8] {
            let cut = |v: i64| v.to_le_bytes()[..w].to_vec();
            cases.push((
                Physical::Int(w as u8),
                ints.iter().map(|&v| cut(v)).collect(),
            ));
            cases.push((
                Physical::UInt(w as u8),
                ints.iter().map(|&v| cut(v)).collect(),
            ));
        }
        let floats = [
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1e-300,
            1.0,
            2.5,
            f64::MAX,
            f64::NAN,
        ];
        cases.push((
            Physical::Float(8),
            floats.iter().map(|v| v.to_le_bytes().to_vec()).collect(),
        ));
        cases.push((
            Physical::Float(4),
            floats
                .iter()
                .map(|&v| (v as f32).to_le_bytes().to_vec())
                .collect(),
        ));
        let mut tested = 0;
        for (p, values) in &cases {
            for op in ops {
                for value in values {
                    let t =
                        NumberTest::of(op, *p, std::slice::from_ref(value)).expect("a number test");
                    let mut kept_by_each = Vec::new();
                    for (c, cell) in values.iter().enumerate() {
                        let want = super::super::compare(op, *p, cell, std::slice::from_ref(value));
                        assert_eq!(t.holds(cell), want, "{p:?} {op:?} {cell:?} {value:?}");
                        if want {
                            kept_by_each.push(c as u32);
                        }
                        tested += 1;
                    }
                    // A tile's cells at once keep the same ones.
                    let data = values.concat();
                    let mut cells: Vec<u32> = (0..values.len() as u32).rev().collect();
                    t.retain(&data, &mut cells);
                    cells.reverse();
                    assert_eq!(
                        cells, kept_by_each,
                        "{p:?} {op:?} {value:?}: a tile at once"
                    );
                    let all: Vec<u32> = (0..values.len() as u32).collect();
                    let mut out = vec![false; all.len()];
                    t.select(&data, &all, &mut out);
                    let want: Vec<bool> = all.iter().map(|c| kept_by_each.contains(c)).collect();
                    assert_eq!(out, want, "{p:?} {op:?} {value:?}: a selection");
                }
            }
        }
        assert!(tested > 5000);
        // IN, strings and odd widths keep the general comparison.
        let one = vec![vec![0u8; 8]];
        assert!(NumberTest::of(O::In, Physical::Int(8), &one).is_none());
        assert!(NumberTest::of(O::Eq, Physical::Bytes, &one).is_none());
        assert!(NumberTest::of(O::Eq, Physical::Int(4), &one).is_none());
    }
}
