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
}

macro_rules! number {
    ($t:ty, $sum:ty, $as:ty) => {
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
        Visited::All(r) if buf.validity.is_none() => data[r.start * T::WIDTH..r.end * T::WIDTH]
            .chunks_exact(T::WIDTH)
            .for_each(|c| acc.add(T::read(c))),
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
