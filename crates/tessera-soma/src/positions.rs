//! Where a coordinate sits among the ids a query selected.

/// Where coordinates sit among ascending ids (a block's rows or columns):
/// the coordinate itself, an offset into a run, a table over the ids'
/// span where it is small, else a binary search.
pub enum Positions {
    /// Not reindexed: a coordinate is its own position.
    Identity,
    /// Consecutive ids from `start`, `len` of them.
    Run {
        /// The first id.
        start: i64,
        /// How many.
        len: u64,
    },
    /// Position by `coordinate - start` (`u64::MAX`: not an id).
    Table {
        /// The first id.
        start: i64,
        /// Each coordinate's position from `start` on.
        table: Vec<u64>,
    },
    /// Ascending ids, searched.
    Search(Vec<i64>),
}

impl Positions {
    /// The positions among `ids` (ascending), or the coordinates themselves.
    pub fn new(ids: Option<Vec<i64>>) -> Positions {
        let Some(ids) = ids else {
            return Positions::Identity;
        };
        let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
            return Positions::Search(ids);
        };
        let span = (last as i128 - first as i128 + 1) as u128;
        if span == ids.len() as u128 {
            return Positions::Run {
                start: first,
                len: span as u64,
            };
        }
        if span <= (8 * ids.len() as u128).max(1 << 20) {
            let mut table = vec![u64::MAX; span as usize];
            for (i, &id) in ids.iter().enumerate() {
                table[(id - first) as usize] = i as u64;
            }
            return Positions::Table {
                start: first,
                table,
            };
        }
        Positions::Search(ids)
    }

    /// The position of coordinate `v`, `None` if it is not among the ids.
    #[inline]
    pub fn at(&self, v: i64) -> Option<u64> {
        match self {
            Positions::Identity => u64::try_from(v).ok(),
            Positions::Run { start, len } => {
                let k = v.checked_sub(*start).and_then(|k| u64::try_from(k).ok())?;
                (k < *len).then_some(k)
            }
            Positions::Table { start, table } => {
                let k = usize::try_from(v.checked_sub(*start)?).ok()?;
                table.get(k).copied().filter(|&p| p != u64::MAX)
            }
            Positions::Search(ids) => ids.binary_search(&v).ok().map(|i| i as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Positions;

    /// Each kind answers as a search of the ids would.
    #[test]
    fn positions_are_the_ids_ranks() {
        let cases: Vec<Vec<i64>> = vec![
            vec![],
            vec![3, 4, 5, 6],
            vec![-2, 0, 7, 9, 40],
            vec![0, 5_000_000, 9_000_000_000],
        ];
        for ids in cases {
            let p = Positions::new(Some(ids.clone()));
            let probes = ids
                .iter()
                .flat_map(|&i| [i - 1, i, i + 1])
                .chain([i64::MIN, i64::MAX]);
            for v in probes {
                let want = ids.binary_search(&v).ok().map(|i| i as u64);
                assert_eq!(p.at(v), want, "{ids:?} at {v}");
            }
        }
        assert!(matches!(
            Positions::new(Some(vec![3, 4, 5])),
            Positions::Run { start: 3, len: 3 }
        ));
        assert!(matches!(
            Positions::new(Some(vec![1, 9])),
            Positions::Table { .. }
        ));
        assert!(matches!(
            Positions::new(Some(vec![0, 1 << 40])),
            Positions::Search(_)
        ));
        assert_eq!(Positions::Identity.at(7), Some(7));
        assert_eq!(Positions::Identity.at(-1), None);
    }
}
