//! Partitions of a read, so that engines (DataFusion's scan, Dask's
//! tasks) read them side by side, each only its own tiles: the first
//! dimension's range cut where the array's tiles end, planned from
//! metadata alone. A dense
//! array's cuts fall on space tiles (no tile read twice); a sparse array's
//! between its fragments' data tiles, their MBRs read off the R-trees, so
//! each partition holds about as many of the read's cells however the
//! cells lie (an even cut of the range gives one partition most of a
//! skewed array's cells). With a prune condition a dense array's tile rows
//! are weighed by the tiles metadata leaves to read and shared out, so
//! each partition decodes about as many.

use crate::dense::dense_tiles_may_match;
use crate::error::QueryError;
use tessera_cells::Expr;
use tessera_fragment::{FragmentMetadata, OpenArray, SectionWants};
use tessera_schema::{Dimension, Range1D, Value};
use tessera_storage::Storage;

/// Inclusive ranges by dimension name.
pub type Ranges = Vec<(String, Value, Value)>;

/// Up to `n` partitions of a read of `ranges` (inclusive, by dimension
/// name, several on a dimension meaning any of them; none: the whole
/// array) with prune condition `prune`, as [`cut`] makes them from the
/// ranges within the array's [`crate::extent`]. None at all when the
/// ranges select nothing.
///
/// ```
/// use tessera_fragment::OpenArray;
/// use tessera_query::partition::plan;
/// use tessera_query::Value;
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
/// let rows = [("x".to_string(), Value::Int(0), Value::Int(49))];
/// let parts = plan(&a, &LocalFs, &rows, 2, None).unwrap();
/// assert!(!parts.is_empty() && parts.len() <= 2);
/// assert_eq!(parts[0][0], ("x".to_string(), Value::Int(0), parts[0][0].2.clone()));
/// ```
pub fn plan(
    array: &OpenArray,
    storage: &dyn Storage,
    ranges: &[(String, Value, Value)],
    n: usize,
    prune: Option<&Expr>,
) -> Result<Vec<Ranges>, QueryError> {
    let dims = &array.schema.dimensions;
    let mut per_dim: Vec<Option<Vec<(Value, Value)>>> = vec![None; dims.len()];
    for (name, lo, hi) in ranges {
        let j =
            dims.iter()
                .position(|d| &d.name == name)
                .ok_or_else(|| QueryError::UnknownField {
                    kind: "dimension",
                    name: name.clone(),
                })?;
        per_dim[j]
            .get_or_insert_with(Vec::new)
            .push((lo.clone(), hi.clone()));
    }
    let extent = crate::extent(array)?;
    if !within_extent(array, &mut per_dim, &extent) {
        return Ok(Vec::new());
    }
    Ok(cut(array, storage, &per_dim, &extent, n, prune))
}

/// Narrows each dimension's ranges in `per_dim` to its `extent`; whether
/// any cell can be left (not where a range misses the extent, nor on a
/// sparse array with nothing written).
pub fn within_extent(
    array: &OpenArray,
    per_dim: &mut [Option<Vec<(Value, Value)>>],
    extent: &[Option<(Value, Value)>],
) -> bool {
    let schema = &array.schema;
    let mut nothing =
        schema.dimensions.is_empty() || (array.fragments.is_empty() && !schema.is_dense());
    for (j, r) in per_dim.iter_mut().enumerate() {
        if let (Some(r), Some(Some(ext))) = (r.as_mut(), extent.get(j)) {
            *r = intersect(r, std::slice::from_ref(ext));
        }
        nothing |= r.as_ref().is_some_and(Vec::is_empty);
    }
    !nothing
}

/// The pieces both of `a` and of `b` cover (ranges inclusive).
pub fn intersect(a: &[(Value, Value)], b: &[(Value, Value)]) -> Vec<(Value, Value)> {
    let mut out = Vec::new();
    for (lo, hi) in a {
        for (l, h) in b {
            let lo = lo.clone().max(l.clone());
            let hi = hi.clone().min(h.clone());
            if lo <= hi {
                out.push((lo, hi));
            }
        }
    }
    out
}

/// Up to `n` partitions of the read with ranges `per_dim` (`None`: the
/// dimension's whole `extent`, as [`crate::extent`] gives it) and prune
/// condition `prune`. Only a single integer range on the first dimension
/// is cut; anything else is one partition. Every partition names each
/// dimension it narrows, the first always.
///
/// ```
/// use tessera_fragment::OpenArray;
/// use tessera_query::partition::cut;
/// use tessera_query::{extent, Value};
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_large/array");
/// let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
/// let whole = vec![None; a.schema.dimensions.len()];
/// let parts = cut(&a, &LocalFs, &whole, &extent(&a).unwrap(), 4, None);
/// assert!(parts.len() > 1);
/// // Side by side, the partitions cover the first dimension once.
/// assert!(parts.windows(2).all(|w| match (&w[0][0].2, &w[1][0].1) {
///     (Value::Int(end), Value::Int(next)) => end + 1 == *next,
///     _ => false,
/// }));
/// ```
pub fn cut(
    array: &OpenArray,
    storage: &dyn Storage,
    per_dim: &[Option<Vec<(Value, Value)>>],
    extent: &[Option<(Value, Value)>],
    n: usize,
    prune: Option<&Expr>,
) -> Vec<Ranges> {
    let dims = &array.schema.dimensions;
    let fixed: Ranges = per_dim
        .iter()
        .zip(dims)
        .skip(1)
        .flat_map(|(r, d)| {
            r.iter()
                .flatten()
                .map(|(lo, hi)| (d.name.clone(), lo.clone(), hi.clone()))
        })
        .collect();
    let first: Vec<(Value, Value)> = match (&per_dim[0], &extent[0]) {
        (Some(r), _) => r.clone(),
        (None, Some(e)) => vec![e.clone()],
        (None, None) => Vec::new(),
    };
    let with = |pieces: Vec<(Value, Value)>| -> Ranges {
        pieces
            .into_iter()
            .map(|(lo, hi)| (dims[0].name.clone(), lo, hi))
            .chain(fixed.iter().cloned())
            .collect()
    };
    let single = match first.as_slice() {
        [(Value::Int(lo), Value::Int(hi))] => Some((*lo, *hi)),
        _ => None,
    };
    let Some((lo, hi)) = single.filter(|_| n > 1) else {
        return vec![with(first)];
    };
    if array.schema.is_dense() {
        let rows = TileRows::new(&dims[0], lo, hi);
        if let Some(shares) = prune.and_then(|c| rows.shared(array, storage, &fixed, c, n)) {
            let ints = |share: Vec<(i128, i128)>| {
                let share = share.into_iter();
                with(share.map(|(a, b)| (Value::Int(a), Value::Int(b))).collect())
            };
            return shares.into_iter().map(ints).collect();
        }
    }
    let pieces = if array.schema.is_dense() {
        dense_cuts(&dims[0], lo, hi, n)
    } else {
        match sparse_tiles(array, storage, per_dim, lo, hi) {
            Some(tiles) => balanced_cuts(tiles, lo, hi, n),
            // An R-tree that does not load (the read names the error) or
            // MBRs that are not integers: even cuts.
            None => tile_cuts(lo, hi, n, 1, lo),
        }
    };
    pieces
        .into_iter()
        .map(|(a, b)| with(vec![(Value::Int(a), Value::Int(b))]))
        .collect()
}

/// Cuts of a dense array's `[lo, hi]` on its first dimension's space tiles.
fn dense_cuts(dim: &Dimension, lo: i128, hi: i128, n: usize) -> Vec<(i128, i128)> {
    let rows = TileRows::new(dim, lo, hi);
    tile_cuts(lo, hi, n, rows.tile, rows.origin)
}

/// Rows weighed at most: more are cut evenly.
const MOST_ROWS_WEIGHED: i128 = 4096;

/// The space-tile rows of a dense array's first dimension within `[lo, hi]`.
struct TileRows {
    lo: i128,
    hi: i128,
    /// The tile extent.
    tile: i128,
    /// Where tiles start: the domain's first coordinate.
    origin: i128,
}

impl TileRows {
    fn new(dim: &Dimension, lo: i128, hi: i128) -> TileRows {
        let tile = dim
            .tile_extent
            .as_ref()
            .and_then(|t| Value::decode(dim.datatype, t).as_int())
            .unwrap_or(1)
            .max(1);
        let origin = dim
            .domain
            .as_ref()
            .and_then(|(a, _)| Value::decode(dim.datatype, a).as_int())
            .unwrap_or(lo);
        TileRows {
            lo,
            hi,
            tile,
            origin,
        }
    }

    /// Each row's first and last coordinate within `[lo, hi]`; `None` for
    /// more than [`MOST_ROWS_WEIGHED`].
    fn spans(&self) -> Option<Vec<(i128, i128)>> {
        let row = |c: i128| (c - self.origin) / self.tile;
        if row(self.hi) - row(self.lo) >= MOST_ROWS_WEIGHED {
            return None;
        }
        let mut out = Vec::new();
        let mut start = self.lo;
        while start <= self.hi {
            let end = (self.origin + (row(start) + 1) * self.tile - 1).min(self.hi);
            out.push((start, end));
            start = end + 1;
        }
        Some(out)
    }

    /// The rows shared out among up to `n` partitions by the tiles of each
    /// that metadata leaves a read with prune condition `prune` (and the
    /// other dimensions' ranges `fixed`) to decode; rows with none go to
    /// no partition. `None` where metadata rules out no tile, or cannot
    /// judge a row.
    fn shared(
        &self,
        array: &OpenArray,
        storage: &dyn Storage,
        fixed: &Ranges,
        prune: &Expr,
        n: usize,
    ) -> Option<Vec<Vec<(i128, i128)>>> {
        let name = &array.schema.dimensions[0].name;
        let mut weighed = Vec::new();
        let mut ruled_out = false;
        for (a, b) in self.spans()? {
            let mut ranges = vec![(name.clone(), Value::Int(a), Value::Int(b))];
            ranges.extend(fixed.iter().cloned());
            let tally = dense_tiles_may_match(storage, array, &ranges, prune).ok()??;
            ruled_out |= tally.may_match < tally.total;
            weighed.push((tally.may_match, (a, b)));
        }
        ruled_out.then(|| share(weighed, n))
    }
}

/// Spans of the first dimension, each with its weight, shared out among
/// up to `n` partitions of about equal weight: the heaviest first, each to
/// the lightest partition so far. Spans of no weight are left out;
/// partitions hold their spans in order, neighbours merged.
fn share(mut weighed: Vec<(u64, (i128, i128))>, n: usize) -> Vec<Vec<(i128, i128)>> {
    weighed.retain(|(w, _)| *w > 0);
    weighed.sort_by_key(|&(w, span)| (std::cmp::Reverse(w), span));
    let mut parts: Vec<(u64, Vec<(i128, i128)>)> = vec![(0, Vec::new()); n.max(1)];
    for (w, span) in weighed {
        let lightest = (parts.iter_mut()).min_by_key(|(load, _)| *load);
        if let Some((load, spans)) = lightest {
            *load += w;
            spans.push(span);
        }
    }
    parts
        .into_iter()
        .filter(|(_, spans)| !spans.is_empty())
        .map(|(_, mut spans)| {
            spans.sort_unstable();
            let mut merged: Vec<(i128, i128)> = Vec::with_capacity(spans.len());
            for (a, b) in spans {
                match merged.last_mut() {
                    Some(last) if last.1 + 1 == a => last.1 = b,
                    _ => merged.push((a, b)),
                }
            }
            merged
        })
        .collect()
}

/// `[lo, hi]` cut into up to `n` pieces of equal width, rounded up to
/// whole tiles of `tile` from `origin`.
fn tile_cuts(lo: i128, hi: i128, n: usize, tile: i128, origin: i128) -> Vec<(i128, i128)> {
    let span = hi - lo + 1;
    let step = ((span + n as i128 - 1) / n as i128).max(1);
    let step = ((step + tile - 1) / tile) * tile;
    let mut out = Vec::new();
    let mut start = lo;
    while start <= hi {
        // Ends on a tile boundary (relative to the domain's origin): the
        // last whole tile the step reaches, at least the start's own tile.
        let mut end = start.saturating_add(step - 1);
        if tile > 1 {
            let start_tile_end = origin + ((start - origin) / tile + 1) * tile - 1;
            end = (origin + ((end - origin + 1) / tile) * tile - 1).max(start_tile_end);
        }
        let end = end.min(hi);
        out.push((start, end));
        start = end + 1;
    }
    out
}

/// A sparse data tile as the cuts see it: its MBR's first-dimension span
/// (within the read's range) and its cell count.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TileSpan {
    lo: i128,
    hi: i128,
    cells: u64,
}

/// The data tiles of every visible fragment that may hold cells of the
/// read: those whose MBR meets the read's ranges on every dimension.
fn sparse_tiles(
    array: &OpenArray,
    storage: &dyn Storage,
    per_dim: &[Option<Vec<(Value, Value)>>],
    lo: i128,
    hi: i128,
) -> Option<Vec<TileSpan>> {
    let dims = &array.schema.dimensions;
    // The R-trees in one batch where requests cost a round trip (the
    // read needs them too, and keeps them).
    let rtrees = SectionWants {
        rtree: true,
        ..SectionWants::default()
    };
    let wants: Vec<_> = array
        .fragments
        .iter()
        .map(|f| (f, rtrees.clone()))
        .collect();
    FragmentMetadata::fetch_sections(storage, &wants);
    let mut tiles = Vec::new();
    for fragment in &array.fragments {
        let tree = fragment.rtree(storage).ok()?;
        for (t, mbr) in tree.leaves().iter().enumerate() {
            if mbr.len() != dims.len() {
                return None;
            }
            if !meets(dims, per_dim, mbr) {
                continue;
            }
            let a = Value::decode(dims[0].datatype, &mbr[0].lo).as_int()?;
            let b = Value::decode(dims[0].datatype, &mbr[0].hi).as_int()?;
            let (a, b) = (a.max(lo), b.min(hi));
            if a <= b {
                let cells = fragment.cell_num(t as u64);
                tiles.push(TileSpan {
                    lo: a,
                    hi: b,
                    cells,
                });
            }
        }
    }
    Some(tiles)
}

/// Whether an MBR meets one of the read's ranges on every dimension that has some.
fn meets(dims: &[Dimension], per_dim: &[Option<Vec<(Value, Value)>>], mbr: &[Range1D]) -> bool {
    dims.iter().zip(per_dim).zip(mbr).all(|((d, ranges), m)| {
        let Some(ranges) = ranges else { return true };
        let (a, b) = (
            Value::decode(d.datatype, &m.lo),
            Value::decode(d.datatype, &m.hi),
        );
        ranges.iter().any(|(lo, hi)| a <= *hi && *lo <= b)
    })
}

/// `[lo, hi]` cut after the tiles (in the order their spans end) that
/// bring the cells to each `k/n` of the whole: every cut at a tile's end,
/// so a tile is read twice only where another tile's MBR reaches over it.
fn balanced_cuts(mut tiles: Vec<TileSpan>, lo: i128, hi: i128, n: usize) -> Vec<(i128, i128)> {
    tiles.sort_by_key(|t| (t.hi, t.lo));
    let total: u128 = tiles.iter().map(|t| u128::from(t.cells)).sum();
    let n = n as u128;
    let mut out = Vec::new();
    let (mut start, mut seen, mut k) = (lo, 0u128, 1u128);
    for t in &tiles {
        seen += u128::from(t.cells);
        if k < n && seen * n >= total * k && t.hi >= start && t.hi < hi {
            out.push((start, t.hi));
            start = t.hi + 1;
            // A tile heavier than a share passes several targets at once.
            while k < n && seen * n >= total * k {
                k += 1;
            }
        }
    }
    out.push((start, hi));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(lo: i128, hi: i128, cells: u64) -> TileSpan {
        TileSpan { lo, hi, cells }
    }

    /// The cells of `tiles` each piece reads (a tile's cells spread evenly over its span).
    fn cells_in(tiles: &[TileSpan], pieces: &[(i128, i128)]) -> Vec<f64> {
        pieces
            .iter()
            .map(|&(a, b)| {
                tiles
                    .iter()
                    .map(|t| {
                        let (l, h) = (t.lo.max(a), t.hi.min(b));
                        if l > h {
                            0.0
                        } else {
                            t.cells as f64 * (h - l + 1) as f64 / (t.hi - t.lo + 1) as f64
                        }
                    })
                    .sum()
            })
            .collect()
    }

    fn covers(pieces: &[(i128, i128)], lo: i128, hi: i128) {
        assert_eq!(pieces.first().unwrap().0, lo);
        assert_eq!(pieces.last().unwrap().1, hi);
        for w in pieces.windows(2) {
            assert!(w[0].0 <= w[0].1, "{pieces:?}");
            assert_eq!(w[0].1 + 1, w[1].0, "{pieces:?}");
        }
    }

    #[test]
    fn skewed_cells_are_shared_where_even_cuts_are_not() {
        // 100 tiles of 1000 cells in [0, 99], then one tile of 1000 in
        // [100, 999_999]: even cuts of four would give the first piece
        // nearly everything.
        let mut tiles: Vec<TileSpan> = (0..100).map(|i| span(i, i, 1000)).collect();
        tiles.push(span(100, 999_999, 1000));
        let pieces = balanced_cuts(tiles.clone(), 0, 999_999, 4);
        covers(&pieces, 0, 999_999);
        assert_eq!(pieces.len(), 4);
        for c in cells_in(&tiles, &pieces) {
            assert!((24_000.0..=27_000.0).contains(&c), "{c} in {pieces:?}");
        }
        let even = tile_cuts(0, 999_999, 4, 1, 0);
        assert!(cells_in(&tiles, &even)[0] > 100_000.0);
    }

    #[test]
    fn cuts_fall_between_tiles_and_cover_the_range() {
        // Row-major tiles of 7 cells whose spans touch (a row split over
        // two tiles): every cut ends a tile.
        let tiles: Vec<TileSpan> = (0..30).map(|i| span(i * 3, i * 3 + 3, 7)).collect();
        for n in 1..12 {
            let pieces = balanced_cuts(tiles.clone(), 0, 95, n);
            covers(&pieces, 0, 95);
            assert!(pieces.len() <= n);
            for &(_, b) in &pieces[..pieces.len() - 1] {
                assert!(tiles.iter().any(|t| t.hi == b), "{b} ends no tile");
            }
        }
    }

    #[test]
    fn heavy_or_missing_tiles_give_fewer_pieces() {
        // One tile holds nearly all: two pieces at most around it.
        let tiles = vec![span(0, 5, 1), span(6, 6, 1_000_000), span(7, 9, 1)];
        let pieces = balanced_cuts(tiles, 0, 9, 8);
        covers(&pieces, 0, 9);
        assert!(pieces.len() <= 3, "{pieces:?}");
        // No tiles: the whole range.
        assert_eq!(balanced_cuts(Vec::new(), 3, 8, 4), vec![(3, 8)]);
        // Tiles reaching over one another (Hilbert order): still a cover.
        let tiles: Vec<TileSpan> = (0..20).map(|i| span(i % 5, 50 + i, 10)).collect();
        let pieces = balanced_cuts(tiles, 0, 80, 4);
        covers(&pieces, 0, 80);
    }

    #[test]
    fn weighed_rows_are_shared_evenly_and_empty_ones_dropped() {
        // Eight rows of ten coordinates; rows 2 and 6 hold nothing to read.
        let weights = [6, 5, 0, 6, 6, 8, 0, 8];
        let weighed = (weights.iter().enumerate())
            .map(|(i, &w)| (w, (i as i128 * 10, i as i128 * 10 + 9)))
            .collect();
        let parts = share(weighed, 2);
        assert_eq!(parts.len(), 2);
        let load = |spans: &[(i128, i128)]| -> u64 {
            (spans.iter())
                .flat_map(|&(a, b)| (a / 10)..=(b / 10))
                .map(|r| weights[r as usize])
                .sum()
        };
        let loads: Vec<u64> = parts.iter().map(|p| load(p)).collect();
        assert_eq!(loads.iter().sum::<u64>(), 39);
        assert!(loads.iter().all(|&l| l == 19 || l == 20), "{parts:?}");
        for p in &parts {
            // In order, merged, and no row without weight.
            assert!(p.windows(2).all(|w| w[0].1 + 1 < w[1].0), "{p:?}");
            assert!(p
                .iter()
                .all(|&(a, b)| !(a..=b).contains(&25) && !(a..=b).contains(&65)));
        }
        // Nothing to read: no partition.
        assert!(share(vec![(0, (0, 9))], 4).is_empty());
    }

    #[test]
    fn dense_cuts_stay_on_space_tiles() {
        let pieces = tile_cuts(3, 40, 3, 10, 0);
        covers(&pieces, 3, 40);
        for &(_, b) in &pieces[..pieces.len() - 1] {
            assert_eq!((b + 1) % 10, 0, "{pieces:?}");
        }
    }
}
