//! The R-tree of a fragment (`format_spec/fragment.md#r-tree`): levels of
//! MBRs from the root to the leaves; leaf `i` bounds data tile `i`.

use crate::{gates, FragmentError};
use serde::Serialize;
use tessera_schema::schema::{encode_ndrange, read_ndrange};
use tessera_schema::{Dimension, Range1D, Value};
use tessera_tile::{FormatVersion, Reader};

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
    /// Parses an R-tree generic tile payload.
    pub fn parse(
        payload: &[u8],
        version: FormatVersion,
        dims: &[Dimension],
    ) -> Result<RTree, FragmentError> {
        let mut r = Reader::new(payload, "R-tree");
        if !version.has(gates::SPLIT_COORDINATES) {
            r.u32("dimension number")?;
        }
        let fanout = r.u32("fanout")?;
        if !version.has(gates::SPLIT_COORDINATES) {
            r.u8("datatype")?;
        }
        let n_levels = r.u32("number of levels")?;
        let min_mbr: u64 = dims
            .iter()
            .map(|d| if d.is_var() { 16 } else { 2 * d.coord_size() })
            .sum();
        let n_levels = r.check_count("number of levels", n_levels as u64, 8)?;
        let mut levels = Vec::with_capacity(n_levels);
        for _ in 0..n_levels {
            let n = r.u64("number of MBRs")?;
            let n = r.check_count("number of MBRs", n, min_mbr.max(1))?;
            let mut level = Vec::with_capacity(n);
            for _ in 0..n {
                level.push(read_ndrange(&mut r, dims)?);
            }
            levels.push(level);
        }
        if fanout < 2 && levels.len() > 1 {
            return Err(r
                .invalid(
                    "fanout",
                    format!("fanout {fanout} with {} levels", levels.len()),
                )
                .into());
        }
        Ok(RTree { fanout, levels })
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

    /// The R-tree generic tile's payload as [`RTree::parse`] reads it, for
    /// format 5 and later (`fanout`, levels from the root, each a count of
    /// MBRs and the MBRs).
    pub fn encode(&self, dims: &[Dimension]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.fanout.to_le_bytes());
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
            let less = |a: &[u8], b: &[u8]| {
                Value::decode(d.datatype, a)
                    .compare(&Value::decode(d.datatype, b))
                    .is_lt()
            };
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
