//! The R-tree of a fragment (`format_spec/fragment.md#r-tree`): levels of
//! MBRs from the root to the leaves; leaf `i` bounds data tile `i`.

use crate::{gates, FragmentError};
use nom::combinator::cond;
use nom::multi::count as count_exact;
use serde::Serialize;
use tessera_schema::schema::{encode_ndrange, ndrange};
use tessera_schema::{Dimension, Range1D, Value};
use tessera_tile::parse::{fits, parse, u32_le, u64_le, u8_le, FieldError, PResult};
use tessera_tile::FormatVersion;

/// How a tile's MBR relates to a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlap {
    /// Disjoint.
    None,
    /// Some cells may match.
    Partial,
    /// Every cell of the MBR is inside the query.
    Full,
}

/// An R-tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RTree {
    /// Fanout.
    pub fanout: u32,
    /// Levels, root first, leaves last.
    pub levels: Vec<Vec<Vec<Range1D>>>,
}

impl RTree {
    /// Parses an R-tree generic tile payload (see [`rtree`]).
    pub fn parse(
        payload: &[u8],
        version: FormatVersion,
        dims: &[Dimension],
    ) -> Result<RTree, FragmentError> {
        Ok(parse(payload, "R-tree", 0, rtree(version, dims))?.0)
    }

    /// The tree libtiledb builds over `leaves` (one MBR per data tile):
    /// each level above groups `fanout` neighbours of the level below into
    /// the MBR that bounds them, up to a single root. No leaves, no levels.
    pub fn build(leaves: Vec<Vec<Range1D>>, fanout: u32, dims: &[Dimension]) -> RTree {
        let mut levels = Vec::new();
        if !leaves.is_empty() {
            levels.push(leaves);
        }
        let step = fanout.max(2) as usize;
        while let Some(below) = levels.last().filter(|l| l.len() > 1) {
            let above: Vec<Vec<Range1D>> = below.chunks(step).map(|c| union(c, dims)).collect();
            levels.push(above);
        }
        levels.reverse();
        RTree { fanout, levels }
    }

    /// The R-tree generic tile's payload at `version`, as [`RTree::parse`]
    /// reads it: before split coordinates the dimension count and (after
    /// the fanout) the coordinates' datatype, then the levels from the
    /// root, each a count of MBRs and the MBRs.
    pub fn encode(&self, version: FormatVersion, dims: &[Dimension]) -> Vec<u8> {
        let legacy = !version.has(gates::SPLIT_COORDINATES);
        let mut out = Vec::new();
        if legacy {
            out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(&self.fanout.to_le_bytes());
        if legacy {
            out.push(dims.first().map_or(0, |d| d.datatype as u8));
        }
        out.extend_from_slice(&(self.levels.len() as u32).to_le_bytes());
        for level in &self.levels {
            out.extend_from_slice(&(level.len() as u64).to_le_bytes());
            for mbr in level {
                encode_ndrange(mbr, dims, &mut out);
            }
        }
        out
    }

    /// The root's MBR, which bounds every cell: a fragment's non-empty
    /// domain. Empty for a tree with no levels.
    pub fn root_mbr(&self) -> Vec<Range1D> {
        self.levels
            .first()
            .and_then(|l| l.first())
            .cloned()
            .unwrap_or_default()
    }

    /// The leaf MBRs: one per data tile.
    pub fn leaves(&self) -> &[Vec<Range1D>] {
        self.levels.last().map_or(&[], |l| l.as_slice())
    }

    /// The tiles whose MBRs `overlap` says may hold matches, with whether
    /// they are fully covered, found by walking down from the root rather
    /// than scanning the leaves.
    pub fn tiles_overlapping(&self, overlap: &dyn Fn(&[Range1D]) -> Overlap) -> Vec<(u64, bool)> {
        let mut out = Vec::new();
        let Some(leaf_count) = self.levels.last().map(|l| l.len() as u64) else {
            return out;
        };
        let h = self.levels.len();
        let fanout = self.fanout.max(2) as u64;
        // Leaves under one node of level l.
        let span = |l: usize| fanout.saturating_pow((h - 1 - l) as u32);
        let mut stack: Vec<(usize, u64)> = (0..self.levels[0].len() as u64)
            .rev()
            .map(|i| (0, i))
            .collect();
        while let Some((l, i)) = stack.pop() {
            let Some(mbr) = self.levels[l].get(i as usize) else {
                continue;
            };
            match overlap(mbr) {
                Overlap::None => {}
                Overlap::Full => {
                    let s = span(l);
                    let (a, b) = (
                        i.saturating_mul(s),
                        (i.saturating_add(1)).saturating_mul(s).min(leaf_count),
                    );
                    out.extend((a..b).map(|t| (t, true)));
                }
                Overlap::Partial if l + 1 == h => out.push((i, false)),
                Overlap::Partial => {
                    let next = self.levels[l + 1].len() as u64;
                    let (a, b) = (
                        i.saturating_mul(fanout),
                        (i.saturating_add(1)).saturating_mul(fanout).min(next),
                    );
                    stack.extend((a..b).rev().map(|c| (l + 1, c)));
                }
            }
        }
        out
    }
}

/// The MBR bounding `mbrs`: per dimension the least lower and the greatest
/// upper bound (numbers by value, strings bytewise).
fn union(mbrs: &[Vec<Range1D>], dims: &[Dimension]) -> Vec<Range1D> {
    let mut out = mbrs[0].clone();
    for mbr in &mbrs[1..] {
        for ((acc, r), d) in out.iter_mut().zip(mbr).zip(dims) {
            let less =
                |a: &[u8], b: &[u8]| Value::decode(d.datatype, a) < Value::decode(d.datatype, b);
            if less(&r.lo, &acc.lo) {
                acc.lo.clone_from(&r.lo);
            }
            if less(&acc.hi, &r.hi) {
                acc.hi.clone_from(&r.hi);
            }
        }
    }
    out
}

/// An R-tree payload of `version` as a nom parser: before split
/// coordinates (format 5) a dimension count, then the fanout, then before
/// format 5 the coordinates' datatype, then the number of levels and each
/// level's MBR count and MBRs, root first.
pub fn rtree<'a, 'd>(
    version: FormatVersion,
    dims: &'d [Dimension],
) -> impl Fn(&'a [u8]) -> PResult<'a, RTree> + 'd {
    move |i| {
        let legacy = !version.has(gates::SPLIT_COORDINATES);
        let (i, _) = cond(legacy, u32_le("dimension number"))(i)?;
        let at_fanout = i;
        let (i, fanout) = u32_le("fanout")(i)?;
        let (i, _) = cond(legacy, u8_le("datatype"))(i)?;
        let (mut i, n_levels) = u32_le("number of levels")(i)?;
        let min_mbr: u64 = dims
            .iter()
            .map(|d| if d.is_var() { 16 } else { 2 * d.coord_size() })
            .sum();
        let n_levels = fits(i, "number of levels", n_levels as u64, 8)?;
        let mut levels = Vec::with_capacity(n_levels);
        for _ in 0..n_levels {
            let (j, n) = u64_le("number of MBRs")(i)?;
            let n = fits(j, "number of MBRs", n, min_mbr.max(1))?;
            let (j, level) = count_exact(ndrange(dims), n)(j)?;
            levels.push(level);
            i = j;
        }
        if fanout < 2 && levels.len() > 1 {
            let why = format!("fanout {fanout} with {} levels", levels.len());
            return Err(FieldError::invalid(at_fanout, "fanout", why));
        }
        Ok((i, RTree { fanout, levels }))
    }
}
