//! What an opened array reports about itself: its fragments as
//! TileDB-Py's `FragmentInfoList` describes them, and its non-empty domain
//! (the union of the visible fragments' non-empty domains), shared by the
//! CLI's `fragments --json` and the Python package.

use crate::OpenArray;
use serde_json::{json, Value as Json};
use tessera_schema::Value;

impl OpenArray {
    /// One JSON object per visible fragment, in write order: `name`,
    /// `timestamp_range`, `version`, `sparse`, `cell_num`,
    /// `nonempty_domain` (per dimension `[lo, hi]`), `schema_name`,
    /// `has_consolidated_metadata`.
    ///
    /// ```
    /// use tessera_fragment::OpenArray;
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
    /// let f = &a.fragment_info()[0];
    /// assert_eq!(f["timestamp_range"], serde_json::json!([1, 1]));
    /// assert_eq!(f["nonempty_domain"], serde_json::json!([[1, 99], [1, 98]]));
    /// ```
    pub fn fragment_info(&self) -> Vec<Json> {
        self.fragments
            .iter()
            .map(|f| {
                let ned: Vec<Json> = f.non_empty_domain().map_or(Vec::new(), |ned| {
                    ned.iter()
                        .map(|(lo, hi)| json!([lo.to_json(), hi.to_json()]))
                        .collect()
                });
                json!({
                    "name": f.name,
                    "timestamp_range": [f.timestamp_range().0, f.timestamp_range().1],
                    "version": f.version().number(),
                    "sparse": !f.footer.dense,
                    "cell_num": f.total_cell_num(),
                    "nonempty_domain": ned,
                    "schema_name": f.footer.schema_name.clone()
                        .unwrap_or_else(|| tessera_schema::LEGACY_SCHEMA_FILE.into()),
                    "has_consolidated_metadata": self.consolidated_metadata.contains(&f.name),
                })
            })
            .collect()
    }

    /// Per visible fragment (in write order), the MBR of each of its data
    /// tiles, the leaves of its R-tree: per dimension `[lo, hi]`, as
    /// [`fragment_info`](Self::fragment_info) gives a non-empty domain.
    /// Dense fragments have none (no R-tree leaves).
    ///
    /// ```
    /// use tessera_fragment::OpenArray;
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
    /// let mbrs = a.fragment_mbrs(&LocalFs).unwrap();
    /// assert_eq!(mbrs.len(), a.fragments.len());
    /// assert!(!mbrs[0].is_empty());
    /// ```
    pub fn fragment_mbrs(
        &self,
        storage: &dyn tessera_storage::Storage,
    ) -> Result<Vec<Vec<Json>>, crate::FragmentError> {
        self.fragments
            .iter()
            .map(|f| {
                let dims = &f.schema.dimensions;
                let leaves = f.rtree(storage)?.leaves();
                Ok(leaves
                    .iter()
                    .map(|mbr| {
                        let ranges: Vec<Json> = mbr
                            .iter()
                            .zip(dims)
                            .map(|(r, d)| {
                                let v = |b: &[u8]| Value::decode(d.datatype, b).to_json();
                                json!([v(&r.lo), v(&r.hi)])
                            })
                            .collect();
                        Json::from(ranges)
                    })
                    .collect())
            })
            .collect()
    }

    /// The array's non-empty domain: per dimension of the schema in force,
    /// the least lower and the greatest upper bound of the visible
    /// fragments' non-empty domains (strings ordered bytewise); `None` if
    /// no fragment is visible.
    ///
    /// ```
    /// use tessera_fragment::OpenArray;
    /// use tessera_schema::Value;
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
    /// let ned = a.non_empty_domain().unwrap();
    /// assert_eq!(ned[0], (Value::Int(0), Value::Int(99)));
    /// ```
    pub fn non_empty_domain(&self) -> Option<Vec<(Value, Value)>> {
        let mut out: Option<Vec<(Value, Value)>> = None;
        for f in &self.fragments {
            let Some(this) = f.non_empty_domain() else {
                continue;
            };
            out = Some(match out {
                None => this,
                Some(acc) => acc
                    .into_iter()
                    .zip(this)
                    .map(|((lo, hi), (l, h))| {
                        let lo = if l < lo { l } else { lo };
                        let hi = if h > hi { h } else { hi };
                        (lo, hi)
                    })
                    .collect(),
            });
        }
        out
    }
}
