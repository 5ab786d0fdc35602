//! Hilbert order: sparse arrays with a Hilbert cell order keep their cells
//! sorted by the Hilbert value of their coordinates (ties broken row-major).
//!
//! Each coordinate is first mapped to `bits = 63 / dimensions` bits:
//! numbers scale linearly from the dimension's domain onto
//! `[0, 2^bits - 1]` (in double precision, truncated); strings take their
//! first 8 bytes big-endian and keep the top `bits`. The Hilbert index of
//! the mapped point follows Skilling's transpose construction ("Programming
//! the Hilbert curve", AIP Conf. Proc. 707, 2004), bits read most
//! significant first across dimensions.

use tessera_schema::Dimension;
use tessera_schema::Value;
use tessera_tile::datatype::Physical;

/// Bits per dimension for `nd` dimensions.
pub fn bits(nd: usize) -> u32 {
    63 / nd.max(1) as u32
}

/// Hilbert values of cells of one array: the domain of each dimension is
/// decoded once, not per cell.
pub struct Mapping {
    bits: u32,
    /// Per dimension: `None` for strings, else the domain as doubles.
    domains: Vec<Option<(f64, f64)>>,
}

/// A coordinate as a double, as libtiledb converts it (strings: none).
fn as_f64(k: Value) -> Option<f64> {
    match k {
        Value::Int(v) => Some(v as f64),
        Value::Float(v) => Some(v),
        Value::Bytes(_) => None,
    }
}

impl Mapping {
    /// The mapping for these dimensions.
    pub fn new(dims: &[Dimension]) -> Mapping {
        let domains = dims
            .iter()
            .map(|d| {
                if d.datatype.physical() == Physical::Bytes {
                    return None;
                }
                let (lo, hi) = d.domain.as_ref()?;
                Some((
                    as_f64(Value::decode(d.datatype, lo))?,
                    as_f64(Value::decode(d.datatype, hi))?,
                ))
            })
            .collect();
        Mapping {
            bits: bits(dims.len()),
            domains,
        }
    }

    /// Maps coordinate `v` (raw bytes) of dimension `j` onto `[0, 2^bits - 1]`.
    pub fn coordinate(&self, dims: &[Dimension], j: usize, v: &[u8]) -> u64 {
        let bits = self.bits;
        if bits == 0 {
            return 0;
        }
        match self.domains[j] {
            Some((lo, hi)) => {
                let max = (1u64 << bits) - 1;
                let x = as_f64(Value::decode(dims[j].datatype, v)).unwrap_or(lo);
                ((x - lo) / (hi - lo) * max as f64) as u64
            }
            None if dims[j].datatype.physical() == Physical::Bytes => {
                // The first 8 bytes, big-endian; libtiledb widens each byte as a
                // signed char, so a byte of 0x80 or more sets every higher bit.
                let mut r = 0u64;
                for i in 0..8 {
                    r <<= 8;
                    if let Some(&b) = v.get(i) {
                        r |= b as i8 as i64 as u64;
                    }
                }
                r >> (64 - bits)
            }
            None => 0,
        }
    }

    /// The Hilbert value of a cell, given its coordinates' bytes.
    pub fn value<'v>(&self, dims: &[Dimension], coord: impl Fn(usize) -> &'v [u8]) -> u64 {
        let mut p: Vec<u64> = (0..dims.len())
            .map(|j| self.coordinate(dims, j, coord(j)))
            .collect();
        index(&mut p, self.bits)
    }
}

/// The Hilbert index of a point whose coordinates each have `bits` bits.
pub fn index(point: &mut [u64], bits: u32) -> u64 {
    let n = point.len();
    if n == 0 || bits == 0 {
        return 0;
    }
    // Axes to transpose: undo excess work level by level, then Gray-encode.
    let m = 1u64 << (bits - 1);
    let mut q = m;
    while q > 1 {
        let p = q - 1;
        for i in 0..n {
            if point[i] & q != 0 {
                point[0] ^= p;
            } else {
                let t = (point[0] ^ point[i]) & p;
                point[0] ^= t;
                point[i] ^= t;
            }
        }
        q >>= 1;
    }
    for i in 1..n {
        point[i] ^= point[i - 1];
    }
    let mut t = 0;
    q = m;
    while q > 1 {
        if point[n - 1] & q != 0 {
            t ^= q - 1;
        }
        q >>= 1;
    }
    for x in point.iter_mut() {
        *x ^= t;
    }
    // Interleave: bit b of every dimension, from the top bit down.
    let mut h = 0u64;
    for b in (0..bits).rev() {
        for x in point.iter() {
            h = (h << 1) | ((x >> b) & 1);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values libtiledb's own tests give for INT32 dimensions on [0, 100]
    /// and [0, 200] (tiledb/sm/array_schema/test/unit_dimension.cc).
    #[test]
    fn libtiledb_reference_values() {
        let b = bits(2);
        assert_eq!(b, 31);
        let max = (1u64 << b) - 1;
        let map = |v: f64, hi: f64| (v / hi * max as f64) as u64;
        assert_eq!(map(1.0, 100.0), 21474836);
        assert_eq!(map(1.0, 200.0), 10737418);
        assert_eq!(index(&mut [21474836, 10737418], b), 972175364522868);
    }

    /// On a 2-bit-per-axis grid the curve visits every cell once, each step
    /// to a neighbour.
    #[test]
    fn a_small_curve_is_continuous() {
        let mut seen = vec![None; 16];
        for x in 0..4u64 {
            for y in 0..4u64 {
                let h = index(&mut [x, y], 2) as usize;
                assert!(seen[h].is_none());
                seen[h] = Some((x as i64, y as i64));
            }
        }
        for w in seen.windows(2) {
            let ((a, b), (c, d)) = (w[0].unwrap(), w[1].unwrap());
            assert_eq!((a - c).abs() + (b - d).abs(), 1);
        }
    }
}
