//! The fragments of a dense read: the order they are applied in, each
//! one's non-empty domain as integers, and which later fragments write
//! again cells of an earlier one.

use super::subarray::DenseSubarray;
use crate::decode::FieldSpec;
use tessera_fragment::FragmentMetadata;
use tessera_schema::ArraySchema;
use tessera_schema::Value;

/// A non-empty domain as integers: per dimension, first and last coordinate.
pub(crate) type IntDomain = Vec<(i128, i128)>;

/// What a dense read knows of its fragments before reading any tile.
#[derive(Debug)]
pub(crate) struct DenseFragments {
    /// Per fragment, its non-empty domain (`None`: the fragment is empty).
    pub(crate) domains: Vec<Option<IntDomain>>,
    /// Per fragment, whether it is dense and holds every selected
    /// attribute: it writes every cell of its non-empty domain.
    pub(crate) writes_all: Vec<bool>,
    /// The fragments in the order they are applied: later ones overwrite.
    pub(crate) order: Vec<usize>,
}

impl DenseFragments {
    /// The fragments of a dense array read for `attrs`.
    pub(crate) fn new(
        fragments: &[FragmentMetadata],
        schema: &ArraySchema,
        attrs: &[String],
    ) -> DenseFragments {
        let dims = &schema.dimensions;
        let domains = fragments
            .iter()
            .map(|f| {
                let ned = f.footer.non_empty_domain.as_ref()?;
                Some(
                    ned.iter()
                        .zip(dims)
                        .map(|(r, d)| {
                            (
                                Value::decode(d.datatype, &r.lo).as_int().unwrap_or(0),
                                Value::decode(d.datatype, &r.hi).as_int().unwrap_or(0),
                            )
                        })
                        .collect(),
                )
            })
            .collect();
        let writes_all = fragments
            .iter()
            .map(|f| {
                f.footer.dense
                    && attrs
                        .iter()
                        .all(|a| FieldSpec::named(f, schema, a).is_some())
            })
            .collect();
        // Write order, but sparse fragments (possible before TileDB 2.5)
        // after every dense one: libtiledb (2.13 to 2.30) lets their cells
        // win over later dense writes.
        let mut order: Vec<usize> = (0..fragments.len()).collect();
        order.sort_by_key(|&i| !fragments[i].footer.dense);
        DenseFragments {
            domains,
            writes_all,
            order,
        }
    }

    /// Whether the fragments writing all cover the subarray: along some
    /// dimension `d`, those spanning the subarray on every other dimension
    /// leave no gap in it (one fragment, or row bands). Then every cell of
    /// the result is written by some fragment, and outputs need no fill.
    pub(crate) fn cover(&self, sub: &DenseSubarray) -> bool {
        (0..sub.dims()).any(|d| {
            let mut spans: Vec<(i128, i128)> = self
                .domains
                .iter()
                .zip(&self.writes_all)
                .filter(|(_, &all)| all)
                .filter_map(|(ned, _)| {
                    let ned = ned.as_ref()?;
                    ned.iter()
                        .zip(&sub.ranges)
                        .enumerate()
                        .all(|(j, ((lo, hi), ranges))| {
                            j == d || ranges.iter().all(|(a, b)| lo <= a && b <= hi)
                        })
                        .then_some(ned[d])
                })
                .collect();
            spans.sort_unstable();
            sub.ranges[d].iter().all(|&(a, b)| {
                // The first coordinate of [a, b] not yet covered.
                let mut next = a;
                for &(lo, hi) in &spans {
                    if lo > next {
                        break;
                    }
                    next = next.max(hi.saturating_add(1));
                }
                next > b
            })
        })
    }

    /// The non-empty domains of the fragments applied after the `k`-th
    /// (in [`order`](Self::order)) that write all and meet its domain
    /// `ned` inside the subarray: cells inside one of them are written
    /// again, and only these can cover one of its tiles.
    pub(crate) fn later_meeting(
        &self,
        k: usize,
        ned: &[(i128, i128)],
        sub: &DenseSubarray,
    ) -> Vec<&IntDomain> {
        self.order[k + 1..]
            .iter()
            .filter(|&&g| self.writes_all[g])
            .filter_map(|&g| self.domains[g].as_ref())
            .filter(|g| {
                g.iter()
                    .zip(ned)
                    .zip(&sub.hull)
                    .all(|((g, f), h)| g.0 <= f.1.min(h.1) && f.0.max(h.0) <= g.1)
            })
            .collect()
    }
}
