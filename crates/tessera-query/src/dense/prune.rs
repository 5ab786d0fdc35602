//! Which space tiles of a dense read's piece may hold a cell satisfying a
//! prune condition ([`ReadRequest::prune`](crate::ReadRequest::prune)),
//! judged from tile metadata before any tile is read: a piece none of
//! whose tiles may is skipped, one where only some may is cut.
//!
//! A cell of the piece comes from the newest fragment writing it, or is
//! the fill value: a tile may hold a passing cell if a tile of a fragment
//! placing cells there may ([`FragmentPruner`]), or if the fragments
//! leave cells unwritten and the fill value may pass.

use super::fragments::DenseFragments;
use super::subarray::DenseSubarray;
use super::tile_grid::FragmentTiles;
use crate::prune::{is_string, FragmentPruner};
use crate::QueryError;
use std::collections::HashSet;
use tessera_cells::{Bounds, Expr};
use tessera_fragment::{Field, FragmentMetadata, OpenArray, SectionWants};
use tessera_schema::{Attribute, CellValNum, Value};
use tessera_storage::Storage;
use tessera_tile::{Datatype, Layout};

/// Pieces of more space tiles than this are not judged (their halves are,
/// once a budget cuts them).
const MOST_TILES_JUDGED: u64 = 1 << 16;

/// What tile metadata says of a piece's space tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No tile may hold a passing cell: the piece need not be read.
    NoTile,
    /// Some tiles may, others not: cut between them, the latter go unread.
    SomeTiles,
    /// Every tile may (or the piece was not judged): read it.
    EveryTile,
}

/// Of the space tiles a dense read's ranges meet, those whose metadata
/// shows they may hold a cell satisfying a prune condition
/// ([`dense_tiles_may_match`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileTally {
    /// Tiles that may hold a passing cell (and are read).
    pub may_match: u64,
    /// Tiles the ranges meet.
    pub total: u64,
}

impl TileTally {
    /// What the tally says of the piece.
    pub(crate) fn verdict(self) -> Verdict {
        match self.may_match {
            0 => Verdict::NoTile,
            n if n < self.total => Verdict::SomeTiles,
            _ => Verdict::EveryTile,
        }
    }
}

/// Of a dense read of `array` over `ranges` (dimension, first, last; none
/// on a dimension: its current domain), how many space tiles tile
/// metadata shows may hold a cell satisfying `prune`, as a read with
/// [`ReadRequest::prune`](crate::ReadRequest::prune) judges them; `None`
/// where it cannot judge (a sparse array, delete or update commits, a
/// condition on dimensions, more than 65536 tiles, ranges outside the
/// domain or of more than 2^40 cells). Planners use it to
/// share out the tiles a read will decode.
///
/// ```
/// use tessera_fragment::OpenArray;
/// use tessera_query::{dense_tiles_may_match, Expr, Value};
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
/// let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
/// let above = Expr::parse("f64 > 1000.0", &a.schema).unwrap();
/// let top = [("r".to_string(), Value::Int(0), Value::Int(2))];
/// let tally = dense_tiles_may_match(&LocalFs, &a, &top, &above).unwrap().unwrap();
/// assert_eq!((tally.may_match, tally.total), (0, 3));
/// let tally = dense_tiles_may_match(&LocalFs, &a, &[], &above).unwrap().unwrap();
/// assert_eq!((tally.may_match, tally.total), (1, 6));
/// ```
pub fn dense_tiles_may_match(
    storage: &dyn Storage,
    array: &OpenArray,
    ranges: &[(String, Value, Value)],
    prune: &Expr,
) -> Result<Option<TileTally>, QueryError> {
    let Some(p) = DensePrune::new(array, prune) else {
        return Ok(None);
    };
    let dims = &array.schema.dimensions;
    let mut piece = vec![Vec::new(); dims.len()];
    for (name, lo, hi) in ranges {
        let j = dims
            .iter()
            .position(|d| &d.name == name)
            .ok_or_else(|| QueryError::Invalid(format!("the array has no dimension `{name}`")))?;
        piece[j].push((lo.clone(), hi.clone()));
    }
    p.tally(storage, array, &piece)
}

/// A prune condition over a dense array.
#[derive(Debug)]
pub(crate) struct DensePrune {
    condition: Expr,
    /// The attributes the condition names.
    fields: Vec<String>,
    /// Whether the fill values may satisfy it.
    fill_may_match: bool,
}

impl DensePrune {
    /// The pruning `condition` allows on `array`; `None` where metadata
    /// cannot judge it: a sparse array, a dense one holding sparse
    /// fragments or delete and update commits (whose cells metadata does
    /// not describe), a condition on dimensions.
    pub(crate) fn new(array: &OpenArray, condition: &Expr) -> Option<DensePrune> {
        let schema = &array.schema;
        let plain = schema.is_dense()
            && array.delete_conditions.is_empty()
            && array.fragments.iter().all(|f| f.footer.dense);
        let mut fields = Vec::new();
        condition.fields(&mut fields);
        if !plain || fields.iter().any(|f| schema.attribute(f).is_none()) {
            return None;
        }
        let fill_may_match = condition.may_match(&|name| fill_bounds(schema.attribute(name)?));
        Some(DensePrune {
            condition: condition.clone(),
            fields,
            fill_may_match,
        })
    }

    /// What metadata says of the space tiles of `piece` (ranges per
    /// dimension; none: the whole domain); `None` for a piece of too many
    /// tiles to judge.
    pub(crate) fn tally(
        &self,
        storage: &dyn Storage,
        array: &OpenArray,
        piece: &[Vec<(Value, Value)>],
    ) -> Result<Option<TileTally>, QueryError> {
        let schema = &array.schema;
        // A piece too large for one read (cut by the budget later) or out
        // of the domain (the read says so) is not judged.
        let Ok(sub) = DenseSubarray::new(schema, piece, Layout::RowMajor) else {
            return Ok(None);
        };
        let total = tile_count(&sub);
        if total > MOST_TILES_JUDGED {
            return Ok(None);
        }
        self.fetch_metadata(storage, array);
        let every = TileTally {
            may_match: total,
            total,
        };
        let fragments = DenseFragments::new(&array.fragments, schema, &self.fields);
        if self.fill_may_match && !fragments.cover(&sub) {
            return Ok(Some(every));
        }
        let mut may: HashSet<Vec<i128>> = HashSet::new();
        for (k, &fi) in fragments.order.iter().enumerate() {
            let Some(ned) = &fragments.domains[fi] else {
                continue;
            };
            // Tiles a later fragment writes again place nothing.
            let later = fragments.later_meeting(k, ned, &sub);
            let Some(tiles) = FragmentTiles::new(&sub, ned, &later) else {
                continue;
            };
            let pruner =
                FragmentPruner::new(storage, &array.fragments[fi], schema, &self.condition)?
                    .numbers_only();
            for (tc, &t) in tiles.coords.iter().zip(&tiles.numbers) {
                if !may.contains(tc) && pruner.tile_may_match(&self.condition, t) {
                    may.insert(tc.clone());
                }
            }
            if may.len() as u64 == total {
                return Ok(Some(every));
            }
        }
        Ok(Some(TileTally {
            may_match: may.len() as u64,
            total,
        }))
    }

    /// Fetches, as one batch where requests cost a round trip, the tile
    /// metadata of the condition's fields in every fragment (sections
    /// loaded already are not asked for again).
    fn fetch_metadata(&self, storage: &dyn Storage, array: &OpenArray) {
        if !storage.prefers_batches() {
            return;
        }
        let wants: Vec<(&FragmentMetadata, SectionWants)> = (array.fragments.iter())
            .map(|f| {
                let fields = (self.fields.iter())
                    .filter_map(|n| f.schema.attributes.iter().position(|a| &a.name == n))
                    .map(Field::Attribute)
                    .collect();
                let wants = SectionWants {
                    tile_metadata: fields,
                    ..SectionWants::default()
                };
                (f, wants)
            })
            .collect();
        FragmentMetadata::fetch_sections(storage, &wants);
    }
}

/// The space tiles a subarray meets (counted by merged runs of tile
/// numbers per dimension: nothing the size of the domain is listed).
fn tile_count(sub: &DenseSubarray) -> u64 {
    sub.axes
        .iter()
        .zip(&sub.ranges)
        .map(|(axis, ranges)| {
            let mut runs: Vec<(i128, i128)> = ranges
                .iter()
                .map(|&(a, b)| (axis.tile_of(a), axis.tile_of(b)))
                .collect();
            runs.sort_unstable();
            let (mut count, mut next) = (0u64, i128::MIN);
            for (a, b) in runs {
                let from = a.max(next);
                if from <= b {
                    count = count.saturating_add((b - from + 1) as u64);
                }
                next = next.max(b.saturating_add(1));
            }
            count
        })
        .try_fold(1u64, |acc, n| acc.checked_mul(n))
        .unwrap_or(u64::MAX)
}

/// The fill value of `a` as bounds of one cell: its value where tiles'
/// bounds are taken (single numbers; not NaN), and whether it is null.
fn fill_bounds(a: &Attribute) -> Option<(Datatype, Bounds)> {
    let ordered = a.cell_val_num == CellValNum::Fixed(1) && !is_string(a.datatype);
    let value = Value::decode(a.datatype, &a.fill_value);
    let min_max = (ordered && !value.is_nan()).then(|| (value.clone(), value));
    let null = a.nullable && !a.fill_validity;
    Some((
        a.datatype,
        Bounds {
            min_max,
            nulls: Some((u64::from(null), 1)),
        },
    ))
}
