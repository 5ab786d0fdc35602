//! Tile metadata as libtiledb's writer computes it (its tile metadata
//! generator and fragment summary): per tile a minimum and maximum for the
//! fields that keep them, a sum for those that keep one (saturating, in
//! `i64`, `u64` or `f64`), a null count; and the fragment-level summary
//! over the tiles.

use super::buffer::{FieldBuffer, FieldInfo};
use super::placement::FILL;
use std::cmp::Ordering;
use tessera_fragment::FieldSummary;
use tessera_schema::{CellValNum, Value};
use tessera_tile::datatype::Physical;
use tessera_tile::Datatype;

mod typed;

/// Whether a field keeps tile minimums and maximums: not dimensions (their
/// MBRs bound them); var-sized or multi-value cells only for CHAR and
/// STRING_ASCII; never ANY, BLOB or the Unicode strings.
pub(crate) fn has_min_max(f: &FieldInfo) -> bool {
    use Datatype as D;
    let text = matches!(f.datatype, D::Char | D::StringAscii);
    let single = f.cell_val_num == CellValNum::Fixed(1);
    !f.is_dimension
        && (single || text)
        && !matches!(
            f.datatype,
            D::Any
                | D::Blob
                | D::StringUtf8
                | D::StringUtf16
                | D::StringUtf32
                | D::StringUcs2
                | D::StringUcs4
        )
}

/// Whether a field keeps tile sums: single fixed-sized values, not ANY,
/// BLOB or strings (dimensions included).
pub(crate) fn has_sum(f: &FieldInfo) -> bool {
    use Datatype as D;
    f.cell_val_num == CellValNum::Fixed(1)
        && !matches!(
            f.datatype,
            D::Any
                | D::Blob
                | D::StringAscii
                | D::StringUtf8
                | D::StringUtf16
                | D::StringUtf32
                | D::StringUcs2
                | D::StringUcs4
        )
}

/// One tile's metadata for one field.
#[derive(Debug, Clone, Default)]
pub(crate) struct TileStats {
    pub min: Option<Vec<u8>>,
    pub max: Option<Vec<u8>>,
    /// The sum's bits.
    pub sum: u64,
    pub null_count: u64,
}

/// The number type a value's bytes hold, for comparing and summing as
/// libtiledb's typed code does.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    UInt(u64),
    Float(f64),
}

fn num(t: Datatype, b: &[u8]) -> Option<Num> {
    Some(match Value::decode(t, b) {
        Value::Int(v) if matches!(t.physical(), Physical::UInt(_)) => Num::UInt(v as u64),
        Value::Int(v) => Num::Int(v as i64),
        Value::Float(v) => Num::Float(v),
        // CHAR is C's signed char.
        Value::Bytes(_) if t == Datatype::Char => Num::Int(*b.first()? as i8 as i64),
        Value::Bytes(_) => return None,
    })
}

/// `a < b` as C compares the typed values (false when either is NaN).
fn less(a: Num, b: Num) -> bool {
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => a < b,
        (Num::UInt(a), Num::UInt(b)) => a < b,
        (Num::Float(a), Num::Float(b)) => a < b,
        _ => false,
    }
}

/// The type's largest and lowest values: where a numeric min and max start.
fn type_bounds(t: Datatype) -> (Vec<u8>, Vec<u8>) {
    let w = t.size() as usize;
    match t.physical() {
        Physical::Int(w8) => {
            let bits = 8 * w8 as u32;
            let max = (i64::MAX >> (64 - bits)).to_le_bytes()[..w].to_vec();
            let min = (i64::MIN >> (64 - bits)).to_le_bytes()[..w].to_vec();
            (max, min)
        }
        Physical::UInt(_) => (vec![0xff; w], vec![0; w]),
        Physical::Float(4) => (
            f32::MAX.to_le_bytes().to_vec(),
            f32::MIN.to_le_bytes().to_vec(),
        ),
        Physical::Float(_) => (
            f64::MAX.to_le_bytes().to_vec(),
            f64::MIN.to_le_bytes().to_vec(),
        ),
        Physical::Bytes => (vec![0x7f; w], vec![0x80; w]),
    }
}

/// Adds `v` to the sum whose bits are `bits`, as libtiledb saturates it
/// (once saturated it stays).
fn add(t: Datatype, bits: &mut u64, v: Num, saturated: &mut bool) {
    match v {
        Num::Int(v) => IntSum::resume(*bits, *saturated)
            .added(v)
            .store(bits, saturated),
        Num::UInt(v) => UIntSum::resume(*bits, *saturated)
            .added(v)
            .store(bits, saturated),
        Num::Float(v) => FloatSum::resume(*bits, *saturated)
            .added(v)
            .store(bits, saturated),
    }
    let _ = t;
}

/// A tile's running sum in its own type, saturating as libtiledb's tile
/// metadata generator does: the one place its rules are written.
pub(super) trait Sum: Copy + Default {
    type Value: Copy;
    fn add(&mut self, v: Self::Value);
    fn bits(self) -> u64;
    fn saturated(self) -> bool;
    fn resume(bits: u64, saturated: bool) -> Self;
    fn added(mut self, v: Self::Value) -> Self {
        self.add(v);
        self
    }
    fn store(self, bits: &mut u64, saturated: &mut bool) {
        (*bits, *saturated) = (self.bits(), self.saturated());
    }
}

/// Signed integers: `i64`, pinned at its bound by an overflow.
#[derive(Clone, Copy, Default)]
pub(super) struct IntSum(i64, bool);

impl Sum for IntSum {
    type Value = i64;
    #[inline]
    fn add(&mut self, v: i64) {
        if self.1 {
            return;
        }
        match self.0.checked_add(v) {
            Some(r) => self.0 = r,
            None => *self = IntSum(if v > 0 { i64::MAX } else { i64::MIN }, true),
        }
    }
    fn bits(self) -> u64 {
        self.0 as u64
    }
    fn saturated(self) -> bool {
        self.1
    }
    fn resume(bits: u64, saturated: bool) -> Self {
        IntSum(bits as i64, saturated)
    }
}

/// Unsigned integers: `u64`, pinned at its maximum by an overflow.
#[derive(Clone, Copy, Default)]
pub(super) struct UIntSum(u64, bool);

impl Sum for UIntSum {
    type Value = u64;
    #[inline]
    fn add(&mut self, v: u64) {
        if self.1 {
            return;
        }
        match self.0.checked_add(v) {
            Some(r) => self.0 = r,
            None => *self = UIntSum(u64::MAX, true),
        }
    }
    fn bits(self) -> u64 {
        self.0
    }
    fn saturated(self) -> bool {
        self.1
    }
    fn resume(bits: u64, saturated: bool) -> Self {
        UIntSum(bits, saturated)
    }
}

/// Floats: `f64`; a value that would carry the sum past `f64::MAX` (an
/// infinity included) pins it at `f64::MAX` or `f64::MIN`.
#[derive(Clone, Copy, Default)]
pub(super) struct FloatSum(f64, bool);

impl Sum for FloatSum {
    type Value = f64;
    #[inline]
    fn add(&mut self, v: f64) {
        if self.1 {
            return;
        }
        let s = self.0;
        if (s < 0.0) == (v < 0.0) && s.abs() > f64::MAX - v.abs() {
            *self = FloatSum(if s < 0.0 { f64::MIN } else { f64::MAX }, true);
        } else {
            self.0 = s + v;
        }
    }
    fn bits(self) -> u64 {
        self.0.to_bits()
    }
    fn saturated(self) -> bool {
        self.1
    }
    fn resume(bits: u64, saturated: bool) -> Self {
        FloatSum(f64::from_bits(bits), saturated)
    }
}

/// Compares strings as C's `strncmp` over `n` bytes: as unsigned bytes,
/// stopping at a NUL.
fn strncmp(a: &[u8], b: &[u8], n: usize) -> Ordering {
    for i in 0..n {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0),
        );
        if x != y {
            return x.cmp(&y);
        }
        if x == 0 {
            break;
        }
    }
    Ordering::Equal
}

/// The cells of a tile whose metadata is computed, in the order libtiledb
/// visits them: all of its positions, or (a dense tile) those written, in
/// the write's row-major order, which the sums' rounding shows.
enum Visited {
    All(std::ops::Range<usize>),
    Listed(Vec<usize>),
}

impl Visited {
    /// The cells `range`; with `order` (each position's row-major place in
    /// the box written, or [`FILL`]) those written, sorted by place unless
    /// the tile's cell order already follows it.
    fn of(range: std::ops::Range<usize>, order: Option<&[usize]>) -> Visited {
        let Some(o) = order else {
            return Visited::All(range);
        };
        // Most tiles: every position written, places increasing (the
        // cell order is the write's); one pass, nothing listed.
        let mut prev = None;
        let in_order = o[range.clone()].iter().all(|&k| {
            let ok = k != FILL && prev.is_none_or(|p| p < k);
            prev = Some(k);
            ok
        });
        if in_order {
            return Visited::All(range);
        }
        let mut cells: Vec<usize> = range.clone().filter(|&i| o[i] != FILL).collect();
        let in_place = cells.is_sorted_by_key(|&i| o[i]);
        if !in_place {
            cells.sort_unstable_by_key(|&i| o[i]);
        }
        match in_place && cells.len() == range.len() {
            // Every position written, in place: no list needed.
            true => Visited::All(range),
            false => Visited::Listed(cells),
        }
    }

    fn len(&self) -> usize {
        match self {
            Visited::All(r) => r.len(),
            Visited::Listed(v) => v.len(),
        }
    }

    /// Calls `each` with the cells in order.
    fn for_each(&self, mut each: impl FnMut(usize)) {
        match self {
            Visited::All(r) => r.clone().for_each(&mut each),
            Visited::Listed(v) => v.iter().copied().for_each(&mut each),
        }
    }
}

/// The metadata of the cells `range` of `buf`, one tile of field `f`;
/// with `order` (a dense fragment's: each tile position's row-major place
/// in the box written, or [`FILL`]), only of the cells written, not of the
/// padding around them, in row-major order.
pub(crate) fn tile_stats(
    f: &FieldInfo,
    buf: &FieldBuffer,
    range: std::ops::Range<usize>,
    order: Option<&[usize]>,
) -> TileStats {
    let cells = Visited::of(range, order);
    let valid = |i: usize| buf.validity.as_ref().is_none_or(|v| v[i] != 0);
    let mut s = TileStats::default();
    let var = f.cell_val_num.is_var();
    // libtiledb counts nulls of var-sized fields only where it keeps bounds.
    if (!var || has_min_max(f)) && buf.validity.is_some() {
        cells.for_each(|i| s.null_count += u64::from(!valid(i)));
    }
    let text = matches!(f.datatype, Datatype::Char | Datatype::StringAscii);
    if (has_min_max(f) || has_sum(f)) && !text && f.cell_val_num == CellValNum::Fixed(1) {
        if let Some(bounds) = typed::numbers(f, buf, &cells, &valid) {
            let all_null = s.null_count == cells.len() as u64 && f.nullable;
            if has_min_max(f) && !all_null {
                (s.min, s.max) = (Some(bounds.min), Some(bounds.max));
            }
            s.sum = bounds.sum;
            return s;
        }
    }
    decoded_stats(f, buf, &cells, s)
}

/// [`tile_stats`] of any field, each value decoded on its own (`s`
/// holding the null count).
fn decoded_stats(f: &FieldInfo, buf: &FieldBuffer, cells: &Visited, mut s: TileStats) -> TileStats {
    let valid = |i: usize| buf.validity.as_ref().is_none_or(|v| v[i] != 0);
    let var = f.cell_val_num.is_var();
    let text = matches!(f.datatype, Datatype::Char | Datatype::StringAscii);
    if has_min_max(f) {
        let cs = f.cell_size() as usize;
        let (mut min, mut max): (Option<&[u8]>, Option<&[u8]>) = (None, None);
        let (start_lo, start_hi) = type_bounds(f.datatype);
        // Numbers: the current bounds decoded once, and where they are.
        let mut lo = num(f.datatype, &start_lo);
        let mut hi = num(f.datatype, &start_hi);
        cells.for_each(|i| {
            if !valid(i) {
                return;
            }
            let v = buf.value(i, cs);
            if text {
                let cmp = |a: &[u8], b: &[u8]| match var {
                    true => strncmp(a, b, a.len().min(b.len())).then(a.len().cmp(&b.len())),
                    false => strncmp(a, b, cs),
                };
                if min.is_none_or(|m| cmp(m, v).is_gt()) {
                    min = Some(v);
                }
                if max.is_none_or(|m| cmp(m, v).is_lt()) {
                    max = Some(v);
                }
            } else if let (Some(x), Some(l), Some(h)) = (num(f.datatype, v), lo, hi) {
                if !less(l, x) {
                    (lo, min) = (Some(x), Some(v));
                }
                if !less(x, h) {
                    (hi, max) = (Some(x), Some(v));
                }
            }
        });
        if !text {
            min = min.or(Some(&start_lo));
            max = max.or(Some(&start_hi));
        }
        // A tile of nulls only keeps no bounds (zeros are stored).
        let all_null = s.null_count == cells.len() as u64 && f.nullable;
        if !all_null {
            (s.min, s.max) = (min.map(<[u8]>::to_vec), max.map(<[u8]>::to_vec));
        }
    }
    if has_sum(f) {
        let cs = f.cell_size() as usize;
        let mut saturated = false;
        cells.for_each(|i| {
            if !valid(i) {
                return;
            }
            if let Some(x) = num(f.datatype, buf.value(i, cs)) {
                add(f.datatype, &mut s.sum, x, &mut saturated);
            }
        });
    }
    s
}

/// The fragment-level summary of one field from its tiles' metadata
/// (`cells(t)`: cells of tile `t`): tiles all null are left out.
pub(crate) fn field_summary(
    f: &FieldInfo,
    tiles: &[TileStats],
    cells: &dyn Fn(usize) -> u64,
) -> FieldSummary {
    let mut out = FieldSummary {
        min: Vec::new(),
        max: Vec::new(),
        sum: 0,
        null_count: tiles.iter().map(|t| t.null_count).sum(),
    };
    let counted = |t: usize| !f.nullable || tiles[t].null_count != cells(t);
    let text = matches!(f.datatype, Datatype::Char | Datatype::StringAscii);
    if has_min_max(f) && !text && !f.cell_val_num.is_var() {
        let (mut lo, mut hi) = type_bounds(f.datatype);
        for (_, s) in tiles.iter().enumerate().filter(|(t, _)| counted(*t)) {
            let (Some(a), Some(b)) = (&s.min, &s.max) else {
                continue;
            };
            // `min = min < a ? min : a`: a NaN on either side takes `a`.
            if let (Some(m), Some(x)) = (num(f.datatype, &lo), num(f.datatype, a)) {
                if !less(m, x) {
                    lo.clone_from(a);
                }
            }
            if let (Some(m), Some(x)) = (num(f.datatype, &hi), num(f.datatype, b)) {
                if !less(x, m) {
                    hi.clone_from(b);
                }
            }
        }
        out.min = lo;
        out.max = hi;
    } else if has_min_max(f) {
        let var = f.cell_val_num.is_var();
        let n = f.cell_size() as usize;
        let cmp = |a: &[u8], b: &[u8]| match var {
            true => strncmp(a, b, a.len().min(b.len())).then(a.len().cmp(&b.len())),
            false => strncmp(a, b, n),
        };
        let (mut lo, mut hi): (Option<&Vec<u8>>, Option<&Vec<u8>>) = (None, None);
        for (_, s) in tiles.iter().enumerate().filter(|(t, _)| counted(*t)) {
            if let Some(a) = &s.min {
                if lo.is_none_or(|m| cmp(m, a).is_gt()) {
                    lo = Some(a);
                }
            }
            if let Some(b) = &s.max {
                if hi.is_none_or(|m| cmp(m, b).is_lt()) {
                    hi = Some(b);
                }
            }
        }
        out.min = lo.cloned().unwrap_or_default();
        out.max = hi.cloned().unwrap_or_default();
    }
    if has_sum(f) {
        let mut saturated = false;
        for (_, s) in tiles.iter().enumerate().filter(|(t, _)| counted(*t)) {
            let v = match f.datatype.physical() {
                Physical::Float(_) => Num::Float(f64::from_bits(s.sum)),
                Physical::UInt(_) => Num::UInt(s.sum),
                _ => Num::Int(s.sum as i64),
            };
            add(f.datatype, &mut out.sum, v, &mut saturated);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-type loops give what decoding each value gives: bounds,
    /// sums (saturating ones too), NaNs, nulls, cells left out.
    #[test]
    fn typed_numbers_equal_decoded_values() {
        use Datatype as D;
        let types = [
            D::Int8,
            D::Int16,
            D::Int32,
            D::Int64,
            D::UInt8,
            D::UInt16,
            D::UInt32,
            D::UInt64,
            D::Float32,
            D::Float64,
            D::DatetimeMs,
            D::Bool,
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for t in types {
            for nullable in [false, true] {
                let f = FieldInfo {
                    name: "a".into(),
                    datatype: t,
                    cell_val_num: CellValNum::Fixed(1),
                    nullable,
                    is_dimension: false,
                };
                let w = t.size() as usize;
                let n = 500;
                let mut data = Vec::new();
                for i in 0..n {
                    let v = match (t, i % 7) {
                        (D::Float32, 0) => f32::NAN.to_le_bytes().to_vec(),
                        (D::Float64, 0) => f64::NAN.to_le_bytes().to_vec(),
                        (D::Float64, 1) => f64::MAX.to_le_bytes().to_vec(),
                        _ => next().to_le_bytes()[..w].to_vec(),
                    };
                    data.extend(v);
                }
                let buf = FieldBuffer {
                    data,
                    offsets: None,
                    validity: nullable.then(|| (0..n).map(|i| u8::from(i % 5 != 0)).collect()),
                };
                let order: Vec<usize> = (0..n)
                    .map(|i| if i % 11 == 3 { FILL } else { n - i })
                    .collect();
                for o in [None, Some(&order[..])] {
                    let typed = tile_stats(&f, &buf, 0..n, o);
                    let cells = Visited::of(0..n, o);
                    let mut s = TileStats::default();
                    cells.for_each(|i| {
                        s.null_count += u64::from(buf.validity.as_ref().is_some_and(|v| v[i] == 0))
                    });
                    let decoded = decoded_stats(&f, &buf, &cells, s);
                    let show = |s: &TileStats| {
                        format!("{:?} {:?} {:x} {}", s.min, s.max, s.sum, s.null_count)
                    };
                    assert_eq!(show(&typed), show(&decoded), "{t} nullable {nullable}");
                }
            }
        }
    }
}
