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

/// True when a coordinate (raw bytes) falls in any range (or there are none).
pub(crate) fn in_ranges(ranges: &[(Value, Value)], dt: Datatype, v: &[u8]) -> bool {
    if ranges.is_empty() {
        return true;
    }
    let k = Value::decode(dt, v);
    ranges.iter().any(|(a, b)| &k >= a && &k <= b)
}

/// One dimension's ranges, decoded once, for testing many coordinates:
/// 64-bit and 32-bit integers compare without building a [`Value`].
pub(crate) enum DimRanges<'r> {
    /// No range: every coordinate is inside.
    All,
    /// Signed or unsigned integers of `width` bytes, as inclusive bounds,
    /// sorted and merged (a coordinate is then found by binary search).
    Int {
        width: usize,
        signed: bool,
        dt: Datatype,
        bounds: Vec<(i128, i128)>,
    },
    /// Anything else, by [`Value`]'s order.
    Keys(&'r [(Value, Value)], Datatype),
}

impl<'r> DimRanges<'r> {
    pub(crate) fn new(ranges: &'r [(Value, Value)], dt: Datatype) -> DimRanges<'r> {
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
                bounds,
            },
            (Physical::UInt(w @ (4 | 8)), Some(bounds)) => DimRanges::Int {
                width: w as usize,
                signed: false,
                dt,
                bounds,
            },
            _ => DimRanges::Keys(ranges, dt),
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
                let (a, b) = (*a, *b);
                let at = |i: u32| {
                    let i = i as usize * 8;
                    i64::from_le_bytes(data[i..i + 8].try_into().expect("8 bytes")) as i128
                };
                return match among {
                    None => (0..(data.len() / 8) as u32)
                        .filter(|&i| (a..=b).contains(&at(i)))
                        .collect(),
                    Some(mut c) => {
                        c.retain(|&i| (a..=b).contains(&at(i)));
                        c
                    }
                };
            }
        }
        let inside = |i: &u32| {
            let i = *i as usize * w;
            self.contains(&data[i..i + w])
        };
        match among {
            None => (0..(data.len() / w.max(1)) as u32).filter(inside).collect(),
            Some(mut c) => {
                c.retain(inside);
                c
            }
        }
    }

    /// Whether the coordinate `v` lies in one of the ranges.
    #[inline]
    pub(crate) fn contains(&self, v: &[u8]) -> bool {
        match self {
            DimRanges::All => true,
            DimRanges::Int {
                width,
                signed,
                dt,
                bounds,
            } => {
                let x = match (v.len() == *width, width, signed) {
                    (true, 8, true) => i64::from_le_bytes(v.try_into().expect("8 bytes")) as i128,
                    (true, 8, false) => u64::from_le_bytes(v.try_into().expect("8 bytes")) as i128,
                    (true, _, true) => i32::from_le_bytes(v.try_into().expect("4 bytes")) as i128,
                    (true, _, false) => u32::from_le_bytes(v.try_into().expect("4 bytes")) as i128,
                    // Odd lengths read as Value reads them.
                    _ => Value::decode(*dt, v).as_int().unwrap_or_default(),
                };
                in_merged(bounds, x)
            }
            DimRanges::Keys(ranges, dt) => in_ranges(ranges, *dt, v),
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

/// How an MBR relates to the query ranges.
pub(crate) fn mbr_overlap(
    mbr: &[Range1D],
    ranges: &[Vec<(Value, Value)>],
    dims: &[tessera_schema::Dimension],
) -> Overlap {
    let mut full = true;
    for (j, r) in mbr.iter().enumerate() {
        if ranges[j].is_empty() {
            continue;
        }
        let (lo, hi) = (
            Value::decode(dims[j].datatype, &r.lo),
            Value::decode(dims[j].datatype, &r.hi),
        );
        let mut any = false;
        let mut covered = false;
        for (a, b) in &ranges[j] {
            if lo <= *b && *a <= hi {
                any = true;
                if *a <= lo && hi <= *b {
                    covered = true;
                }
            }
        }
        if !any {
            return Overlap::None;
        }
        full &= covered;
    }
    if full {
        Overlap::Full
    } else {
        Overlap::Partial
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let ranges: Vec<(Value, Value)> = bounds
            .iter()
            .map(|&(a, b)| (Value::Int(a), Value::Int(b)))
            .collect();
        let r = DimRanges::new(&ranges, Datatype::Int64);
        for x in [-15i64, 0, 7, 8, 125, 131, 132, 273] {
            let scan = bounds
                .iter()
                .any(|&(a, b)| a <= x as i128 && x as i128 <= b);
            assert_eq!(r.contains(&x.to_le_bytes()), scan, "{x}");
        }
    }
}
