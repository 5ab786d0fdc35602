//! Tile metadata of single fixed-sized numbers, computed on the values'
//! own type: the same comparisons and saturating sums as the general
//! path in `stats.rs` (which decodes each value into a [`Num`]), a loop
//! per type instead of a decode per cell.

use super::{type_bounds, FloatSum, IntSum, Sum, UIntSum, Visited};
use crate::fragment::buffer::{FieldBuffer, FieldInfo};
use tessera_tile::datatype::Physical;

/// A tile's minimum and maximum (bytes of the values chosen, or the
/// type's bounds when none is) and its sum's bits.
pub(super) struct Numbers {
    pub min: Vec<u8>,
    pub max: Vec<u8>,
    pub sum: u64,
}

/// A number type read from little-endian bytes, summed in `Self::Sum`.
trait Number: Copy + PartialOrd {
    const WIDTH: usize;
    type Sum: Sum;
    fn read(b: &[u8]) -> Self;
    fn wide(self) -> <Self::Sum as Sum>::Value;
    fn bytes(self) -> Vec<u8>;

    /// Adds every value of `values` (as they lie, none null) to `acc`.
    fn fold_all(values: &[u8], acc: &mut Bounds<Self>) {
        fold_cells(values, acc)
    }
}

/// Adds the values of `values` to `acc` one by one.
fn fold_cells<T: Number>(values: &[u8], acc: &mut Bounds<T>) {
    values
        .chunks_exact(T::WIDTH)
        .for_each(|c| acc.add(T::read(c)));
}

macro_rules! number {
    ($t:ty, FloatSum, $as:ty) => {
        number!($t, FloatSum, $as, {
            fn fold_all(values: &[u8], acc: &mut Bounds<Self>) {
                fold_floats(values, acc)
            }
        });
    };
    ($t:ty, $sum:ty, $as:ty) => {
        number!($t, $sum, $as, {});
    };
    ($t:ty, $sum:ty, $as:ty, { $($fold:tt)* }) => {
        impl Number for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            type Sum = $sum;
            #[inline]
            fn read(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("one value"))
            }
            #[inline]
            fn wide(self) -> $as {
                self as $as
            }
            fn bytes(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
            $($fold)*
        }
    };
}

number!(i8, IntSum, i64);
number!(i16, IntSum, i64);
number!(i32, IntSum, i64);
number!(i64, IntSum, i64);
number!(u8, UIntSum, u64);
number!(u16, UIntSum, u64);
number!(u32, UIntSum, u64);
number!(u64, UIntSum, u64);
number!(f32, FloatSum, f64);
number!(f64, FloatSum, f64);

/// The metadata of the valid cells `cells` of `buf` (field `f`, one
/// number per cell), or `None` for a type that is not a number.
pub(super) fn numbers(
    f: &FieldInfo,
    buf: &FieldBuffer,
    cells: &Visited,
    valid: &dyn Fn(usize) -> bool,
) -> Option<Numbers> {
    Some(match f.datatype.physical() {
        Physical::Int(1) => fold::<i8>(f, buf, cells, valid),
        Physical::Int(2) => fold::<i16>(f, buf, cells, valid),
        Physical::Int(4) => fold::<i32>(f, buf, cells, valid),
        Physical::Int(8) => fold::<i64>(f, buf, cells, valid),
        Physical::UInt(1) => fold::<u8>(f, buf, cells, valid),
        Physical::UInt(2) => fold::<u16>(f, buf, cells, valid),
        Physical::UInt(4) => fold::<u32>(f, buf, cells, valid),
        Physical::UInt(8) => fold::<u64>(f, buf, cells, valid),
        Physical::Float(4) => fold::<f32>(f, buf, cells, valid),
        Physical::Float(8) => fold::<f64>(f, buf, cells, valid),
        _ => return None,
    })
}

fn fold<T: Number>(
    f: &FieldInfo,
    buf: &FieldBuffer,
    cells: &Visited,
    valid: &dyn Fn(usize) -> bool,
) -> Numbers {
    let (start_lo, start_hi) = type_bounds(f.datatype);
    // The bounds start at the type's extremes; a value replacing one is
    // the bound from then on, so the bound's bytes are the minimum's.
    let mut acc = Bounds::<T> {
        lo: T::read(&start_lo),
        hi: T::read(&start_hi),
        sum: T::Sum::default(),
    };
    let data = &buf.data;
    match cells {
        // Every cell of a range, none null (most tiles): one pass over
        // the values as they lie.
        Visited::All(r) if buf.validity.is_none() => {
            T::fold_all(&data[r.start * T::WIDTH..r.end * T::WIDTH], &mut acc)
        }
        _ => cells.for_each(|i| {
            if valid(i) {
                acc.add(T::read(&data[i * T::WIDTH..(i + 1) * T::WIDTH]));
            }
        }),
    }
    let (lo, hi, sum) = (acc.lo, acc.hi, acc.sum.bits());
    Numbers {
        min: lo.bytes(),
        max: hi.bytes(),
        sum,
    }
}

/// A tile's running bounds and sum.
struct Bounds<T: Number> {
    lo: T,
    hi: T,
    sum: T::Sum,
}

impl<T: Number> Bounds<T> {
    #[inline]
    fn add(&mut self, x: T) {
        // `min = lo < x ? lo : x`, as libtiledb's typed code compares: a
        // NaN on either side takes `x` (a select, no branch).
        self.lo = if self.lo < x { self.lo } else { x };
        self.hi = if x < self.hi { self.hi } else { x };
        self.sum.add(x.wide());
    }
}

/// Values of a block: where the sum of one goes cell by cell again.
const BLOCK: usize = 512;

/// Below this, a running sum and the values added to it are far from
/// where the overflow test fires (their sum's magnitude near `f64::MAX`).
const FAR_FROM_OVERFLOW: f64 = 1e300;

/// A float's bounds and sum, bit for bit as cell by cell, with the
/// overflow test taken once a block: each block is summed in order
/// without it, tracking the largest running sum; a block whose sums all
/// stay far from `f64::MAX` (so that the test could not have fired, and
/// no NaN or infinity came in) is kept, any other goes again cell by
/// cell. A loop without branches runs at the latency of its additions.
fn fold_floats<T: Number<Sum = FloatSum> + Float>(values: &[u8], acc: &mut Bounds<T>) {
    for block in values.chunks(BLOCK * T::WIDTH) {
        let FloatSum(start, saturated) = acc.sum;
        if saturated || start.is_nan() || start.abs() >= FAR_FROM_OVERFLOW {
            fold_cells(block, acc);
            continue;
        }
        let (mut lo, mut hi, mut sum, mut far) = (acc.lo, acc.hi, start, 0f64);
        for c in block.chunks_exact(T::WIDTH) {
            let x = T::read(c);
            lo = if lo < x { lo } else { x };
            hi = if x < hi { hi } else { x };
            sum += x.widened();
            far = if far < sum.abs() { sum.abs() } else { far };
        }
        if sum.is_finite() && far < FAR_FROM_OVERFLOW {
            (acc.lo, acc.hi, acc.sum) = (lo, hi, FloatSum(sum, false));
        } else {
            fold_cells(block, acc);
        }
    }
}

/// A float type, widened to `f64` for its sum.
trait Float: Copy {
    fn widened(self) -> f64;
}

impl Float for f32 {
    #[inline]
    fn widened(self) -> f64 {
        self as f64
    }
}

impl Float for f64 {
    #[inline]
    fn widened(self) -> f64 {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start<T: Number<Sum = FloatSum>>(lo: T, hi: T) -> Bounds<T> {
        Bounds {
            lo,
            hi,
            sum: FloatSum::default(),
        }
    }

    /// Whether the block loop and the cell loop give the same bounds and
    /// sum, bit for bit, from the type's bounds `lo` and `hi`.
    fn same<T: Number<Sum = FloatSum> + Float>(bytes: &[u8], lo: T, hi: T) -> bool {
        let (mut fast, mut slow) = (start(lo, hi), start(lo, hi));
        fold_floats(bytes, &mut fast);
        fold_cells(bytes, &mut slow);
        let bits = |b: &Bounds<T>| (b.lo.bytes(), b.hi.bytes(), b.sum.0.to_bits(), b.sum.1);
        bits(&fast) == bits(&slow)
    }

    /// Blocks give, bit for bit, what the cell-by-cell loop gives, for
    /// arrays of plain blocks with one block (the second) holding zeros of
    /// both signs where the least value is zero, a NaN, values whose sum
    /// overflows, an infinity, or large values that do not overflow; and
    /// for a part block at the end.
    #[test]
    fn float_blocks_equal_the_cell_loop() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let n = BLOCK * 5 + 77;
        for kind in 0..6 {
            let mut values: Vec<f64> = (0..n).map(|_| next() * 1e6).collect();
            let second = &mut values[BLOCK..2 * BLOCK];
            match kind {
                // The last zero, +0, in lane 0; an earlier -0 in lane 7.
                1 => {
                    second[7] = -0.0;
                    second[8] = 0.0;
                }
                2 => second[40] = f64::NAN,
                3 => second
                    .iter_mut()
                    .step_by(50)
                    .for_each(|v| *v = f64::MAX / 3.0),
                4 => second[3] = f64::NEG_INFINITY,
                5 => second.iter_mut().for_each(|v| *v *= 1e296),
                _ => {}
            }
            if kind == 1 {
                values.iter_mut().for_each(|v| *v = v.abs());
                values[BLOCK + 7] = -0.0;
            }
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert!(same(&bytes, f64::MAX, f64::MIN), "f64, kind {kind}");
            let bytes: Vec<u8> = values
                .iter()
                .flat_map(|v| (*v as f32).to_le_bytes())
                .collect();
            assert!(same(&bytes, f32::MAX, f32::MIN), "f32, kind {kind}");
        }
    }
}
