//! The geometry of reads: dense tile grids, ranges on a dimension, how an
//! MBR meets a subarray. Below everything that plans or runs a read.

use crate::QueryError;
use tessera_fragment::Overlap;
use tessera_schema::{ArraySchema, Range1D, Value};
use tessera_tile::Datatype;

/// A dense dimension's tile grid: domain, tile extent, and the range a
/// read covers by default (the current domain where one is set).
pub(crate) struct Grid {
    pub lo: i128,
    pub hi: i128,
    pub ext: i128,
    pub start: i128,
    pub end: i128,
}

/// The tile grid of dimension `j` (integer dimensions; others error).
pub(crate) fn dense_grid(schema: &ArraySchema, j: usize) -> Result<Grid, QueryError> {
    let d = &schema.dimensions[j];
    let (lo, hi) = d
        .domain
        .as_ref()
        .and_then(|(a, b)| {
            Some((
                Value::decode(d.datatype, a).as_int()?,
                Value::decode(d.datatype, b).as_int()?,
            ))
        })
        .ok_or_else(|| {
            QueryError::Invalid(format!("dimension `{}` has no integer domain", d.name))
        })?;
    let ext = d
        .tile_extent
        .as_ref()
        .and_then(|t| Value::decode(d.datatype, t).as_int())
        .unwrap_or(hi - lo + 1)
        .max(1);
    let (start, end) = schema
        .current_domain
        .as_ref()
        .and_then(|c| c.ndrectangle.as_ref())
        .and_then(|rect| {
            Some((
                Value::decode(d.datatype, &rect.get(j)?.lo).as_int()?,
                Value::decode(d.datatype, &rect.get(j)?.hi).as_int()?,
            ))
        })
        .unwrap_or((lo, hi));
    Ok(Grid {
        lo,
        hi,
        ext,
        start,
        end,
    })
}

/// One dimension's ranges, decoded once, for testing many coordinates:
/// 64-bit and 32-bit integers compare without building a [`Value`].
pub(crate) enum DimRanges {
    /// No range: every coordinate is inside.
    All,
    /// Signed or unsigned integers of `width` bytes, as inclusive bounds,
    /// sorted and merged (a coordinate is then found by binary search), and
    /// where there are many within a short span, as a table of bits.
    Int {
        width: usize,
        signed: bool,
        dt: Datatype,
        bounds: Vec<(i128, i128)>,
        bits: Option<Bits>,
    },
    /// Anything else, by [`Value`]'s order, sorted and merged as `Int`'s
    /// are (a coordinate is then found by binary search).
    Keys(Vec<(Value, Value)>, Datatype),
}

impl DimRanges {
    pub(crate) fn new(ranges: &[(Value, Value)], dt: Datatype) -> DimRanges {
        use tessera_tile::datatype::Physical;
        if ranges.is_empty() {
            return DimRanges::All;
        }
        let ints: Option<Vec<(i128, i128)>> = ranges
            .iter()
            .map(|(a, b)| Some((a.as_int()?, b.as_int()?)))
            .collect();
        let ints = ints.map(merged);
        match (dt.physical(), ints) {
            (Physical::Int(w @ (4 | 8)), Some(bounds)) => DimRanges::Int {
                width: w as usize,
                signed: true,
                dt,
                bits: Bits::of(&bounds),
                bounds,
            },
            (Physical::UInt(w @ (4 | 8)), Some(bounds)) => DimRanges::Int {
                width: w as usize,
                signed: false,
                dt,
                bits: Bits::of(&bounds),
                bounds,
            },
            _ => DimRanges::Keys(merged_keys(ranges), dt),
        }
    }

    /// The cells of a fixed-sized coordinate tile (`w` bytes per cell)
    /// that lie in the ranges, among `among` (all cells when `None`).
    pub(crate) fn pick(&self, data: &[u8], w: usize, among: Option<Vec<u32>>) -> Vec<u32> {
        // No range: every cell, nothing tested.
        if let DimRanges::All = self {
            return among.unwrap_or_else(|| (0..(data.len() / w.max(1)) as u32).collect());
        }
        // One signed 64-bit range, the common case, in a tight loop.
        if let DimRanges::Int {
            width: 8,
            signed: true,
            bounds,
            ..
        } = self
        {
            if let ([(a, b)], 8) = (bounds.as_slice(), w) {
                return pick_i64(data, (*a, *b), among);
            }
        }
        // Many integer ranges within a short span (a list of genes, say):
        // one bit looked up per coordinate, signed 64-bit coordinates
        // (SOMA's joinids) in the tight loop, others by `contains` below.
        if let DimRanges::Int {
            width: 8,
            signed: true,
            bits: Some(bits),
            ..
        } = self
        {
            if w == 8 {
                return pick_i64_where(data, among, |v| bits.has(v as i128));
            }
        }
        // Many integer ranges and no table: coordinates come mostly in
        // order within a tile (the cell order), so each is placed from
        // where the last was.
        if let DimRanges::Int {
            width,
            bounds,
            bits: None,
            ..
        } = self
        {
            if *width == w && bounds.len() > 8 {
                let mut cursor = Cursor::new(bounds);
                return cells_where(data.len() / w, among, |i| {
                    let i = i as usize * w;
                    cursor.inside(self.int_of(&data[i..i + w]))
                });
            }
        }
        cells_where(data.len() / w.max(1), among, |i| {
            let i = i as usize * w;
            self.contains(&data[i..i + w])
        })
    }

    /// Whether the coordinate `v` lies in one of the ranges.
    #[inline]
    pub(crate) fn contains(&self, v: &[u8]) -> bool {
        match self {
            DimRanges::All => true,
            DimRanges::Int {
                bits: Some(bits), ..
            } => bits.has(self.int_of(v)),
            DimRanges::Int { bounds, .. } => in_merged(bounds, self.int_of(v)),
            DimRanges::Keys(ranges, dt) => {
                let k = Value::decode(*dt, v);
                let after = ranges.partition_point(|(a, _)| a <= &k);
                after > 0 && k <= ranges[after - 1].1
            }
        }
    }

    /// How the ranges meet the coordinates from `lo` to `hi` (raw bytes):
    /// `None` if no range does, else whether one covers them all.
    pub(crate) fn meets(&self, lo: &[u8], hi: &[u8]) -> Option<bool> {
        match self {
            DimRanges::All => Some(true),
            DimRanges::Int { bounds, .. } => {
                let (lo, hi) = (self.int_of(lo), self.int_of(hi));
                // Sorted and disjoint: only the first range ending at or
                // after `lo` can meet or cover the span.
                let (a, b) = *bounds.get(bounds.partition_point(|&(_, b)| b < lo))?;
                (a <= hi).then_some(a <= lo && hi <= b)
            }
            DimRanges::Keys(ranges, dt) => {
                let (lo, hi) = (Value::decode(*dt, lo), Value::decode(*dt, hi));
                // As for `Int`: only the first range ending at or after
                // `lo` can meet or cover the span.
                let (a, b) = ranges.get(ranges.partition_point(|(_, b)| b < &lo))?;
                (a <= &hi).then_some(a <= &lo && &hi <= b)
            }
        }
    }

    /// An integer coordinate's value (`Int` ranges only).
    #[inline]
    fn int_of(&self, v: &[u8]) -> i128 {
        let DimRanges::Int {
            width, signed, dt, ..
        } = self
        else {
            return 0;
        };
        match (v.len() == *width, width, signed) {
            (true, 8, true) => i64::from_le_bytes(v.try_into().expect("8 bytes")) as i128,
            (true, 8, false) => u64::from_le_bytes(v.try_into().expect("8 bytes")) as i128,
            (true, _, true) => i32::from_le_bytes(v.try_into().expect("4 bytes")) as i128,
            (true, _, false) => u32::from_le_bytes(v.try_into().expect("4 bytes")) as i128,
            // Odd lengths read as Value reads them.
            _ => Value::decode(*dt, v).as_int().unwrap_or_default(),
        }
    }
}

/// Inclusive integer ranges sorted by start, overlapping and adjacent
/// ones joined; empty ones (start after end) dropped.
fn merged(mut bounds: Vec<(i128, i128)>) -> Vec<(i128, i128)> {
    bounds.retain(|(a, b)| a <= b);
    bounds.sort_unstable();
    let mut out: Vec<(i128, i128)> = Vec::with_capacity(bounds.len());
    for (a, b) in bounds {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Merged integer ranges as one bit per value from the first range's
/// start to the last one's end: a coordinate is tested by one load rather
/// than a search. Made only for more than 8 ranges (fewer search as fast)
/// within [`Bits::MAX_SPAN`] values, filled a word at a time.
pub(crate) struct Bits {
    lo: i128,
    words: Vec<u64>,
}

impl Bits {
    /// The widest span a table covers: 1 << 22 values, 512 KiB.
    const MAX_SPAN: i128 = 1 << 22;

    /// The table of `bounds` (sorted, merged, as [`merged`] leaves them).
    fn of(bounds: &[(i128, i128)]) -> Option<Bits> {
        let (lo, hi) = (bounds.first()?.0, bounds.last()?.1);
        let span = hi.checked_sub(lo)?.checked_add(1)?;
        if bounds.len() <= 8 || span > Self::MAX_SPAN {
            return None;
        }
        let mut words = vec![0u64; (span as usize).div_ceil(64)];
        for &(a, b) in bounds {
            let (a, b) = ((a - lo) as usize, (b - lo) as usize);
            let (first, last) = (a / 64, b / 64);
            let head = u64::MAX << (a % 64);
            let tail = u64::MAX >> (63 - b % 64);
            if first == last {
                words[first] |= head & tail;
            } else {
                words[first] |= head;
                words[first + 1..last].fill(u64::MAX);
                words[last] |= tail;
            }
        }
        Some(Bits { lo, words })
    }

    /// Whether `x` lies in one of the ranges.
    #[inline]
    fn has(&self, x: i128) -> bool {
        let Ok(i) = usize::try_from(x.wrapping_sub(self.lo)) else {
            return false;
        };
        self.words
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
}

/// Ranges of values sorted by start, overlapping ones joined, empty ones
/// (start after end) dropped: [`merged`] for any [`Value`].
fn merged_keys(ranges: &[(Value, Value)]) -> Vec<(Value, Value)> {
    let mut sorted: Vec<(Value, Value)> = ranges.iter().filter(|(a, b)| a <= b).cloned().collect();
    sorted.sort();
    let mut out: Vec<(Value, Value)> = Vec::with_capacity(sorted.len());
    for (a, b) in sorted {
        match out.last_mut() {
            Some(last) if a <= last.1 => {
                if b > last.1 {
                    last.1 = b;
                }
            }
            _ => out.push((a, b)),
        }
    }
    out
}

/// Whether `x` lies in one of `bounds` (sorted, disjoint): a scan of a
/// few, a binary search of many (a read of thousands of scattered cells'
/// rows tests every coordinate against each range otherwise).
#[inline]
fn in_merged(bounds: &[(i128, i128)], x: i128) -> bool {
    if bounds.len() <= 8 {
        return bounds.iter().any(|&(a, b)| a <= x && x <= b);
    }
    let after = bounds.partition_point(|&(a, _)| a <= x);
    after > 0 && x <= bounds[after - 1].1
}

/// A subarray prepared for testing many MBRs against it: integer
/// ranges sorted and merged once, so an MBR is placed among thousands of
/// ranges by binary search.
pub(crate) struct MbrTest {
    dims: Vec<DimRanges>,
}

impl MbrTest {
    /// The test of MBRs against `ranges` (per dimension; empty: all).
    pub(crate) fn new(
        ranges: &[Vec<(Value, Value)>],
        dims: &[tessera_schema::Dimension],
    ) -> MbrTest {
        let dims = dims
            .iter()
            .enumerate()
            .map(|(j, d)| DimRanges::new(ranges.get(j).map_or(&[], Vec::as_slice), d.datatype))
            .collect();
        MbrTest { dims }
    }

    /// How an MBR relates to the ranges.
    pub(crate) fn overlap(&self, mbr: &[Range1D]) -> Overlap {
        let mut full = true;
        for (r, d) in mbr.iter().zip(&self.dims) {
            match d.meets(&r.lo, &r.hi) {
                None => return Overlap::None,
                Some(covered) => full &= covered,
            }
        }
        if full {
            Overlap::Full
        } else {
            Overlap::Partial
        }
    }
}

/// Places coordinates among sorted, disjoint ranges, each from where the
/// last one was: a coordinate equal to the last is answered at once, a
/// larger one is looked for from the last one's range on (a few steps,
/// then a binary search of the rest), a smaller one by a binary search.
struct Cursor<'b> {
    bounds: &'b [(i128, i128)],
    /// The last coordinate and its answer.
    last: Option<(i128, bool)>,
    /// The first range ending at or after the last coordinate.
    at: usize,
}

impl<'b> Cursor<'b> {
    fn new(bounds: &'b [(i128, i128)]) -> Self {
        Cursor {
            bounds,
            last: None,
            at: 0,
        }
    }

    #[inline]
    fn inside(&mut self, x: i128) -> bool {
        match self.last {
            Some((l, answer)) if l == x => return answer,
            Some((l, _)) if l < x => {}
            _ => self.at = 0,
        }
        let b = self.bounds;
        let mut i = self.at;
        // Every range before `i` ends before `x`.
        let mut steps = 0;
        while i < b.len() && b[i].1 < x {
            i += 1;
            steps += 1;
            if steps == 4 {
                i += b[i..].partition_point(|r| r.1 < x);
                break;
            }
        }
        self.at = i;
        let answer = i < b.len() && b[i].0 <= x;
        self.last = Some((x, answer));
        answer
    }
}

/// How an MBR relates to the query ranges (one MBR; [`MbrTest`] for many).
pub(crate) fn mbr_overlap(
    mbr: &[Range1D],
    ranges: &[Vec<(Value, Value)>],
    dims: &[tessera_schema::Dimension],
) -> Overlap {
    MbrTest::new(ranges, dims).overlap(mbr)
}

/// The cells among `among` (all `n` when `None`) for which `inside` holds,
/// in order.
fn cells_where(n: usize, among: Option<Vec<u32>>, mut inside: impl FnMut(u32) -> bool) -> Vec<u32> {
    match among {
        None => (0..n as u32).filter(|&i| inside(i)).collect(),
        Some(mut c) => {
            c.retain(|&i| inside(i));
            c
        }
    }
}

/// The cells of a tile of signed 64-bit coordinates inside `a..=b`,
/// among `among` (all cells when `None`): one unsigned comparison a cell.
fn pick_i64(data: &[u8], (a, b): (i128, i128), among: Option<Vec<u32>>) -> Vec<u32> {
    let (min, max) = (i64::MIN as i128, i64::MAX as i128);
    if a > b || a > max || b < min {
        return Vec::new();
    }
    let (lo, hi) = (a.max(min) as i64, b.min(max) as i64);
    let span = hi.wrapping_sub(lo) as u64;
    pick_i64_where(data, among, move |v: i64| v.wrapping_sub(lo) as u64 <= span)
}

/// The cells of a tile of signed 64-bit coordinates for which `inside`
/// holds, among `among` (all cells when `None`): every cell's index
/// written where the next pick goes, kept by advancing past it only when
/// inside (no branch to mispredict on a tile the ranges cut), and
/// `inside` inlined into the loop.
#[inline]
fn pick_i64_where(data: &[u8], among: Option<Vec<u32>>, inside: impl Fn(i64) -> bool) -> Vec<u32> {
    let at = |i: u32| {
        let i = i as usize * 8;
        data.get(i..i + 8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
    };
    match among {
        None => {
            let n = data.len() / 8;
            // Untouched room costs nothing: fresh pages come in as written.
            let mut out = vec![0u32; n];
            let mut k = 0;
            for (i, c) in data.chunks_exact(8).enumerate() {
                out[k] = i as u32;
                k += inside(i64::from_le_bytes(c.try_into().expect("8 bytes"))) as usize;
            }
            out.truncate(k);
            out
        }
        Some(mut c) => {
            let mut k = 0;
            for j in 0..c.len() {
                let i = c[j];
                c[k] = i;
                k += at(i).is_some_and(&inside) as usize;
            }
            c.truncate(k);
            c
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One signed 64-bit range: the tight loop picks what a scan picks,
    /// at the type's ends, with bounds past them and empty ranges.
    #[test]
    fn one_int64_range_picks_what_a_scan_picks() {
        let xs = [
            i64::MIN,
            -5,
            -1,
            0,
            1,
            4,
            5,
            6,
            i64::MAX - 1,
            i64::MAX,
            3,
            -6,
        ];
        let data: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let wide = i64::MAX as i128 + 10;
        for (a, b) in [
            (-5, 5),
            (0, 0),
            (6, 2),
            (-wide, 0),
            (1, wide),
            (-wide, wide),
            (wide, wide + 1),
            (-wide - 1, -wide),
        ] {
            let r = DimRanges::Int {
                width: 8,
                signed: true,
                dt: Datatype::Int64,
                bounds: vec![(a, b)],
                bits: None,
            };
            let scan = |i: &u32| (a..=b).contains(&(xs[*i as usize] as i128));
            let all: Vec<u32> = (0..xs.len() as u32).filter(scan).collect();
            assert_eq!(r.pick(&data, 8, None), all, "{a}..={b}");
            let among = vec![11, 0, 3, 9, 4, 7];
            let want: Vec<u32> = among.iter().copied().filter(scan).collect();
            assert_eq!(r.pick(&data, 8, Some(among)), want, "{a}..={b}, among");
        }
    }

    #[test]
    fn merged_ranges_find_what_a_scan_finds() {
        // Points, runs, overlaps, adjacency, an empty range, out of order.
        let mut bounds: Vec<(i128, i128)> = (0..40).map(|i| (i * 7, i * 7)).collect();
        bounds.extend([
            (100, 120),
            (115, 130),
            (131, 131),
            (5, 3),
            (-20, -10),
            (300, 290),
        ]);
        bounds.reverse();
        let m = merged(bounds.clone());
        assert!(m.windows(2).all(|w| w[0].1 + 1 < w[1].0), "{m:?}");
        assert!(m.len() > 8, "the binary search is exercised");
        for x in -30..320 {
            let scan = bounds.iter().any(|&(a, b)| a <= x && x <= b);
            assert_eq!(in_merged(&m, x), scan, "{x}");
        }
        // A run over whole words of the table, then the same ranges with a
        // far one too: searched, as no table spans them.
        bounds.push((400, 700));
        let far = bounds.iter().copied().chain([(1 << 40, 1 << 40)]).collect();
        for (bounds, table) in [(bounds, true), (far, false)] {
            let ranges: Vec<(Value, Value)> = bounds
                .iter()
                .map(|&(a, b)| (Value::Int(a), Value::Int(b)))
                .collect();
            let r = DimRanges::new(&ranges, Datatype::Int64);
            assert_eq!(matches!(r, DimRanges::Int { bits: Some(_), .. }), table);
            picks_what_a_scan_picks(&r, &bounds);
        }
    }

    /// `r` (made of `bounds`) picks from a tile's coordinates, and finds
    /// single ones, as a scan of `bounds` does.
    fn picks_what_a_scan_picks(r: &DimRanges, bounds: &[(i128, i128)]) {
        let inside = |x: i64| {
            bounds
                .iter()
                .any(|&(a, b)| a <= x as i128 && x as i128 <= b)
        };
        // Picking a tile's coordinates: runs in order, repeats, jumps back.
        let xs: Vec<i64> = (-25..720)
            .chain((0..300).rev().step_by(13))
            .chain([7, 7, 7, 300, 0, 1 << 40, i64::MIN, i64::MAX])
            .collect();
        let data: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let want: Vec<u32> = (0..xs.len() as u32)
            .filter(|&i| inside(xs[i as usize]))
            .collect();
        assert_eq!(r.pick(&data, 8, None), want);
        let among: Vec<u32> = (0..xs.len() as u32).step_by(3).collect();
        let want_among: Vec<u32> = want.iter().copied().filter(|i| i % 3 == 0).collect();
        assert_eq!(r.pick(&data, 8, Some(among)), want_among);
        for x in [-15i64, 0, 7, 8, 125, 131, 132, 273, 399, 400, 448, 700, 701] {
            assert_eq!(r.contains(&x.to_le_bytes()), inside(x), "{x}");
        }
    }

    #[test]
    fn string_and_float_ranges_find_what_a_scan_finds() {
        let s = |t: &str| Value::Bytes(t.as_bytes().to_vec());
        let strings: Vec<(Value, Value)> = (0..30u8)
            .map(|i| {
                let a = format!("k{:02}", (i * 7) % 50);
                (s(&a), s(&format!("{a}~")))
            })
            .chain([(s("b"), s("a")), (s("a"), s("c")), (s("bb"), s("d"))])
            .collect();
        let floats: Vec<(Value, Value)> = (0..20)
            .map(|i| {
                (
                    Value::Float(i as f64 * 1.5),
                    Value::Float(i as f64 * 1.5 + 0.7),
                )
            })
            .chain([
                (Value::Float(f64::NAN), Value::Float(f64::NAN)),
                (Value::Float(4.0), Value::Float(2.0)),
            ])
            .collect();
        let scan =
            |ranges: &[(Value, Value)], k: &Value| ranges.iter().any(|(a, b)| k >= a && k <= b);
        let meets_scan = |ranges: &[(Value, Value)], lo: &Value, hi: &Value| {
            let mut meets = None;
            for (a, b) in ranges {
                if lo <= b && a <= hi {
                    meets = Some(meets == Some(true) || (a <= lo && hi <= b));
                }
            }
            meets
        };
        let keys: Vec<Vec<u8>> = [
            "", "a", "b", "bz", "c", "k00", "k07~", "k1", "k49", "k5", "z",
        ]
        .iter()
        .map(|k| k.as_bytes().to_vec())
        .collect();
        let r = DimRanges::new(&strings, Datatype::StringAscii);
        assert!(matches!(&r, DimRanges::Keys(m, _) if m.windows(2).all(|w| w[0].1 < w[1].0)));
        for k in &keys {
            assert_eq!(
                r.contains(k),
                scan(&strings, &Value::Bytes(k.clone())),
                "{k:?}"
            );
            for h in &keys {
                let (lo, hi) = (Value::Bytes(k.clone()), Value::Bytes(h.clone()));
                if lo <= hi {
                    assert_eq!(
                        r.meets(k, h),
                        meets_scan(&strings, &lo, &hi),
                        "{k:?}..{h:?}"
                    );
                }
            }
        }
        let r = DimRanges::new(&floats, Datatype::Float64);
        let xs = [
            -1.0,
            0.0,
            0.7,
            0.8,
            1.5,
            3.0,
            3.6,
            28.5,
            29.2,
            30.0,
            f64::NAN,
            f64::INFINITY,
        ];
        for x in xs {
            assert_eq!(
                r.contains(&x.to_le_bytes()),
                scan(&floats, &Value::Float(x)),
                "{x}"
            );
            for y in xs {
                let (lo, hi) = (Value::Float(x), Value::Float(y));
                if lo <= hi {
                    let got = r.meets(&x.to_le_bytes(), &y.to_le_bytes());
                    assert_eq!(got, meets_scan(&floats, &lo, &hi), "{x}..{y}");
                }
            }
        }
    }

    #[test]
    fn mbrs_meet_ranges_as_their_cells_do() {
        // Scattered points and runs, some adjacent, out of order.
        let bounds: Vec<(i128, i128)> = vec![
            (40, 44),
            (3, 3),
            (5, 9),
            (10, 12),
            (20, 20),
            (22, 22),
            (24, 30),
            (60, 61),
            (63, 63),
            (0, 1),
            (70, 75),
        ];
        let ranges: Vec<Vec<(Value, Value)>> = vec![bounds
            .iter()
            .map(|&(a, b)| (Value::Int(a), Value::Int(b)))
            .collect()];
        let dims = [tessera_schema::Dimension {
            name: "d".into(),
            datatype: Datatype::Int64,
            cell_val_num: tessera_schema::CellValNum::Fixed(1),
            filters: tessera_filters::FilterPipeline::new(Vec::new(), 65536),
            filters_inherited: false,
            domain: None,
            tile_extent: None,
        }];
        let test = MbrTest::new(&ranges, &dims);
        let inside = |x: i128| bounds.iter().any(|&(a, b)| a <= x && x <= b);
        for lo in -2i64..80 {
            for hi in lo..80 {
                let mbr = [Range1D {
                    lo: lo.to_le_bytes().to_vec(),
                    hi: hi.to_le_bytes().to_vec(),
                }];
                let hits = (lo..=hi).filter(|&x| inside(x as i128)).count();
                let want = match hits {
                    0 => Overlap::None,
                    n if n as i64 == hi - lo + 1 => Overlap::Full,
                    _ => Overlap::Partial,
                };
                assert_eq!(test.overlap(&mbr), want, "[{lo}, {hi}]");
            }
        }
    }
}
