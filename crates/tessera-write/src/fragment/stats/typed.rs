//! Tile metadata of single fixed-sized numbers, computed on the values'
//! own type: the same comparisons and saturating sums as the general
//! path in `stats.rs` (which decodes each value into a [`Num`]), a loop
//! per type instead of a decode per cell.

use super::{add, less, type_bounds, Num, Visited};
use crate::fragment::buffer::{FieldBuffer, FieldInfo};
use tessera_tile::datatype::Physical;

/// A tile's minimum and maximum (bytes of the values chosen, or the
/// type's bounds when none is) and its sum's bits.
pub(super) struct Numbers {
    pub min: Vec<u8>,
    pub max: Vec<u8>,
    pub sum: u64,
}

/// A number type read from little-endian bytes.
trait Number: Copy {
    const WIDTH: usize;
    fn read(b: &[u8]) -> Self;
    fn num(self) -> Num;
    fn bytes(self) -> Vec<u8>;
}

macro_rules! number {
    ($t:ty, $variant:ident, $as:ty) => {
        impl Number for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            #[inline]
            fn read(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("one value"))
            }
            #[inline]
            fn num(self) -> Num {
                Num::$variant(self as $as)
            }
            fn bytes(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
        }
    };
}

number!(i8, Int, i64);
number!(i16, Int, i64);
number!(i32, Int, i64);
number!(i64, Int, i64);
number!(u8, UInt, u64);
number!(u16, UInt, u64);
number!(u32, UInt, u64);
number!(u64, UInt, u64);
number!(f32, Float, f64);
number!(f64, Float, f64);

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
    let (mut lo, mut hi) = (T::read(&start_lo), T::read(&start_hi));
    let (mut sum, mut saturated) = (0u64, false);
    let nullable = buf.validity.is_some();
    let data = &buf.data;
    cells.for_each(|i| {
        if nullable && !valid(i) {
            return;
        }
        let x = T::read(&data[i * T::WIDTH..(i + 1) * T::WIDTH]);
        // `min = lo < x ? lo : x`, as libtiledb's typed code compares: a
        // NaN on either side takes `x` (a select, no branch).
        lo = if less(lo.num(), x.num()) { lo } else { x };
        hi = if less(x.num(), hi.num()) { hi } else { x };
        add(f.datatype, &mut sum, x.num(), &mut saturated);
    });
    Numbers {
        min: lo.bytes(),
        max: hi.bytes(),
        sum,
    }
}
