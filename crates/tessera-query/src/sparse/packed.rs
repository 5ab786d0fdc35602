//! Integer coordinates packed into one `u64` that orders as the cells do
//! in row-major order: a deduplicating read sorts and compares one integer
//! a cell instead of decoding every coordinate at every comparison.

use rayon::prelude::*;
use tessera_tile::datatype::Physical;
use tessera_tile::Datatype;

/// How a read's coordinates pack: per dimension its byte width, whether
/// signed, its lowest coordinate (as ordered bits) and the bits its span
/// takes. The first dimension takes the highest bits.
pub(crate) struct Packing {
    dims: Vec<(usize, bool, u64, u32)>,
}

/// A coordinate's bytes as a `u64` that orders as the values do (signed
/// ones sign-extended with the sign bit flipped).
fn ordered(bytes: &[u8], width: usize, signed: bool) -> u64 {
    let mut b = [0u8; 8];
    b[..width].copy_from_slice(&bytes[..width]);
    let v = u64::from_le_bytes(b);
    if !signed {
        return v;
    }
    let shift = 64 - 8 * width as u32;
    (((v << shift) as i64 >> shift) as u64) ^ (1 << 63)
}

impl Packing {
    /// The packing of `n` cells' coordinates (`coordinate(i, j)`: cell
    /// `i`'s in dimension `j`, of `types`), if every dimension is an
    /// integer and their spans fit 64 bits together.
    pub(crate) fn of<'a>(
        types: &[Datatype],
        n: usize,
        coordinate: &(dyn Fn(usize, usize) -> &'a [u8] + Sync),
    ) -> Option<Packing> {
        let mut dims = Vec::with_capacity(types.len());
        for (j, t) in types.iter().enumerate() {
            let (width, signed) = match t.physical() {
                Physical::Int(w) => (w as usize, true),
                Physical::UInt(w) => (w as usize, false),
                _ => return None,
            };
            let (lo, hi) = (0..n)
                .into_par_iter()
                .map(|i| ordered(coordinate(i, j), width, signed))
                .fold(|| (u64::MAX, 0), |(lo, hi), v| (lo.min(v), hi.max(v)))
                .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
            let bits = 64 - hi.saturating_sub(lo).leading_zeros();
            dims.push((width, signed, lo, bits));
        }
        let packing = Packing { dims };
        (packing.bits() <= 64).then_some(packing)
    }

    /// The bits a key takes.
    pub(crate) fn bits(&self) -> u32 {
        self.dims.iter().map(|d| d.3).sum()
    }

    /// A cell's key (`coordinate(j)`: its coordinate in dimension `j`):
    /// each coordinate less its lowest, the first dimension's in the
    /// highest bits.
    pub(crate) fn key<'a>(&self, coordinate: &dyn Fn(usize) -> &'a [u8]) -> u64 {
        self.dims
            .iter()
            .enumerate()
            .fold(0, |key: u64, (j, &(width, signed, lo, bits))| {
                let v = ordered(coordinate(j), width, signed) - lo;
                key.checked_shl(bits).unwrap_or(0) | v
            })
    }
}

#[cfg(test)]
mod tests {
    use super::ordered;

    /// Ordered bits compare as the values do, every width and sign.
    #[test]
    fn ordered_bits_keep_the_values_order() {
        let signed: Vec<i64> = vec![i64::MIN, -70000, -129, -1, 0, 1, 127, 65535, i64::MAX];
        for w in [1usize, 2, 4, 8] {
            let fit: Vec<i64> = signed
                .iter()
                .copied()
                .filter(|v| w == 8 || (*v >= -(1 << (8 * w - 1)) && *v < (1 << (8 * w - 1))))
                .collect();
            let keys: Vec<u64> = fit
                .iter()
                .map(|v| ordered(&v.to_le_bytes(), w, true))
                .collect();
            assert!(
                keys.windows(2).all(|k| k[0] < k[1]),
                "signed width {w}: {fit:?}"
            );
            let unsigned: Vec<u64> = vec![0, 1, 200, 60000, 1 << 40, u64::MAX];
            let fit: Vec<u64> = unsigned
                .into_iter()
                .filter(|v| w == 8 || *v < 1 << (8 * w))
                .collect();
            let keys: Vec<u64> = fit
                .iter()
                .map(|v| ordered(&v.to_le_bytes(), w, false))
                .collect();
            assert!(
                keys.windows(2).all(|k| k[0] < k[1]),
                "unsigned width {w}: {fit:?}"
            );
        }
    }
}
