//! Where a piece of a read is cut in two: on a dimension's ranges, at a
//! space-tile boundary, or (sparse) at the edge of tiles' MBRs that shares
//! the fewest cells.

use crate::geometry::dense_grid;
use tessera_schema::Value;
use tessera_tile::Datatype;

/// Per-dimension inclusive ranges of one piece; an empty list means "all".
pub(super) type Piece = Vec<Ranges>;
/// Inclusive ranges on one dimension.
pub(super) type Ranges = Vec<(Value, Value)>;

/// Cuts along the first dimension of `order` holding more than one
/// coordinate; if that one cannot be cut, the piece cannot be (the order
/// would break).
pub(super) fn first_cut(
    piece: &Piece,
    order: &[usize],
    types: &[Datatype],
) -> Option<(Piece, Piece)> {
    let j = order.iter().copied().find(|&j| !single(&piece[j]))?;
    cut(piece, j, types[j], None)
}

/// Whether a range list holds one coordinate.
pub(super) fn single(r: &[(Value, Value)]) -> bool {
    r.len() == 1 && r[0].0 == r[0].1
}

/// Coordinates in an integer range list (0 for others, which sort last).
pub(super) fn width(r: &[(Value, Value)]) -> i128 {
    r.iter()
        .map(|(a, b)| match (a, b) {
            (Value::Int(a), Value::Int(b)) => b - a + 1,
            _ => 0,
        })
        .sum()
}

/// The first dimension of `order` whose ranges span more than one space
/// tile, with its tile grid (origin, extent); `Some(None)` where none
/// does, `None` where a dimension has no integer tile grid (no tile
/// arithmetic, so no cut can keep tiles whole).
pub(super) fn tile_spanning(
    schema: &tessera_schema::ArraySchema,
    piece: &Piece,
    order: &[usize],
) -> Option<Option<(usize, (i128, i128))>> {
    for &j in order {
        let g = dense_grid(schema, j).ok()?;
        if spans_tiles(&piece[j], g.lo, g.ext)? {
            return Some(Some((j, (g.lo, g.ext))));
        }
    }
    Some(None)
}

/// Whether a range list (sorted) covers more than one space tile; `None`
/// when the dimension's ranges are not integers (no tile arithmetic).
pub(super) fn spans_tiles(r: &[(Value, Value)], lo: i128, ext: i128) -> Option<bool> {
    let (a, b) = (r.first()?.0.as_int()?, r.last()?.1.as_int()?);
    Some((a - lo) / ext != (b - lo) / ext)
}

/// Cuts dimension `j` of a piece in two: a list of several ranges in
/// half, else the one range at its middle (at a space-tile boundary when
/// `tiles` is given).
pub(super) fn cut(
    piece: &Piece,
    j: usize,
    t: Datatype,
    tiles: Option<(i128, i128)>,
) -> Option<(Piece, Piece)> {
    let r = &piece[j];
    let (left, right): (Ranges, Ranges) = if let Some((lo, ext)) = tiles {
        // At the space-tile boundary nearest the middle: every cell left of
        // it precedes every cell right of it in global order, whichever
        // ranges it falls between or inside.
        let (a, b) = (r.first()?.0.as_int()?, r.last()?.1.as_int()?);
        let first = lo + ((a - lo) / ext + 1) * ext;
        let last = lo + ((b - lo) / ext) * ext;
        if first > b {
            return None;
        }
        let mid = a + (b - a + 1) / 2;
        cut_at(r, (lo + ((mid - lo) / ext) * ext).clamp(first, last))?
    } else if r.len() > 1 {
        let h = r.len() / 2;
        (r[..h].to_vec(), r[h..].to_vec())
    } else {
        let (a, b) = r.first()?;
        match (a, b) {
            (Value::Int(a), Value::Int(b)) if a < b => {
                let m = a + (b - a + 1) / 2; // first coordinate of the right half
                (
                    vec![(Value::Int(*a), Value::Int(m - 1))],
                    vec![(Value::Int(m), Value::Int(*b))],
                )
            }
            (Value::Float(a), Value::Float(b)) if a < b => {
                let m = a + (b - a) / 2.0;
                // The next representable value of the dimension's own type.
                let (m, next) = if t == Datatype::Float32 {
                    let m = m as f32;
                    (f64::from(m), f64::from(m.next_up()))
                } else {
                    (m, m.next_up())
                };
                if !(m >= *a && next <= *b) {
                    return None;
                }
                (
                    vec![(Value::Float(*a), Value::Float(m))],
                    vec![(Value::Float(next), Value::Float(*b))],
                )
            }
            _ => return None,
        }
    };
    let mut l = piece.clone();
    let mut rr = piece.clone();
    l[j] = left;
    rr[j] = right;
    Some((l, rr))
}

/// Integer ranges cut before `m`: those parts below it, those from it on.
pub(super) fn cut_at(r: &[(Value, Value)], m: i128) -> Option<(Ranges, Ranges)> {
    let mut left = Vec::new();
    let mut right = Vec::new();
    for (x, y) in r {
        let (x, y) = (x.as_int()?, y.as_int()?);
        if x < m {
            left.push((Value::Int(x), Value::Int(y.min(m - 1))));
        }
        if y >= m {
            right.push((Value::Int(x.max(m)), Value::Int(y)));
        }
    }
    Some((left, right))
}

/// A cut of a sparse piece on one dimension before coordinate `at`, with
/// what it costs: the cells of tiles on both sides, and how far from an
/// even split it leaves the cells of the tiles on one side only.
pub(super) struct TileCut {
    pub(super) at: i128,
    balanced: bool,
    shared_cells: u64,
    imbalance: f64,
}

impl TileCut {
    /// Lower is better: balanced cuts first, then fewer shared cells.
    pub(super) fn score(&self) -> (bool, u64, u64) {
        (
            !self.balanced,
            self.shared_cells,
            (self.imbalance * 1e6) as u64,
        )
    }

    /// The best cut among the edges of `spans` (each tile's MBR on the
    /// dimension, clamped to the piece's `a..=b`, and its cells) that
    /// leaves each side fewer tiles than the whole.
    pub(super) fn best(spans: Vec<(i128, i128, u64)>, a: i128, b: i128) -> Option<TileCut> {
        let n = spans.len();
        let mut by_lo: Vec<(i128, u64)> = spans.iter().map(|s| (s.0, s.2)).collect();
        let mut by_hi: Vec<(i128, u64)> = spans.iter().map(|s| (s.1, s.2)).collect();
        by_lo.sort_unstable();
        by_hi.sort_unstable();
        let prefix = |v: &[(i128, u64)]| {
            let mut p = Vec::with_capacity(v.len() + 1);
            p.push(0u64);
            for (_, c) in v {
                p.push(p.last().copied().unwrap_or(0).saturating_add(*c));
            }
            p
        };
        let (lo_cells, hi_cells) = (prefix(&by_lo), prefix(&by_hi));
        let total = lo_cells[n];
        // Cutting before `m` splits a tile when its MBR starts before `m`
        // and ends at or after it.
        let candidates = spans
            .iter()
            .flat_map(|s| [s.0, s.1.saturating_add(1)])
            .filter(|&m| a < m && m <= b);
        let mut best: Option<TileCut> = None;
        for m in candidates {
            let started = by_lo.partition_point(|&(lo, _)| lo < m);
            let ended = by_hi.partition_point(|&(hi, _)| hi < m);
            // The left side reads the tiles started, the right those not
            // ended: each fewer than all when a tile ends before `m` and
            // another starts from it on.
            if ended == 0 || started == n {
                continue;
            }
            let left_only = hi_cells[ended];
            let right_only = total - lo_cells[started];
            let shared = lo_cells[started] - left_only;
            let f = match left_only + right_only {
                0 => 0.5,
                s => left_only as f64 / s as f64,
            };
            let c = TileCut {
                at: m,
                balanced: (0.25..=0.75).contains(&f),
                shared_cells: shared,
                imbalance: (f - 0.5).abs(),
            };
            if best.as_ref().is_none_or(|o| c.score() < o.score()) {
                best = Some(c);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::TileCut;

    #[test]
    fn tiles_are_cut_where_fewest_cells_are_shared() {
        // Four row blocks of 100 cells: the middle edge shares none.
        let blocks = vec![(0, 9, 100), (10, 19, 100), (20, 29, 100), (30, 39, 100)];
        let c = TileCut::best(blocks.clone(), 0, 39).unwrap();
        assert_eq!((c.at, c.shared_cells, c.balanced), (20, 0, true));
        // A tile across 5..=24 is shared by any balanced cut; of those, the
        // even one. The cut before 30 shares nothing but leaves 4/5 left.
        let mut straddled = blocks;
        straddled.push((5, 24, 100));
        let c = TileCut::best(straddled, 0, 39).unwrap();
        assert_eq!((c.at, c.shared_cells, c.balanced), (20, 100, true));
        // Two tiles over the same span: no cut leaves either side fewer.
        assert!(TileCut::best(vec![(0, 9, 5), (0, 9, 5)], 0, 9).is_none());
        // A lone small tile at the end is cut off when nothing is balanced.
        let c = TileCut::best(vec![(0, 90, 100), (91, 99, 1)], 0, 99).unwrap();
        assert_eq!((c.at, c.shared_cells, c.balanced), (91, 0, false));
    }
}
