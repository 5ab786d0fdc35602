//! Reads: the query builder and its settings. The readers (`dense/`,
//! `sparse/`) sit above it; [`Query::execute`] (in `execute.rs`, above
//! them) sends a read to one of them.

use crate::context::ReadContext;
use crate::geometry::dense_grid;
use crate::prune::Answered;
use crate::tuning::Tuning;
use std::sync::Arc;
use tessera_cells::Expr;
use tessera_filters::pipeline::FilterPipeline;
use tessera_fragment::OpenArray;
use tessera_schema::Value;
use tessera_tile::storage::Storage;

use tessera_tile::Layout;

/// A read of an opened array.
///
/// ```
/// use tessera_fragment::OpenArray;
/// use tessera_query::{Value, Query};
/// use tessera_tile::{storage::LocalFs, Layout};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/random_sparse/array");
/// let array = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
/// let result = Query::new(&LocalFs, &array)
///     .attributes(["a"])
///     .range("x", Value::Int(1), Value::Int(10))
///     .layout(Layout::RowMajor)
///     .execute()
///     .unwrap();
/// assert_eq!(result.columns.len(), 3); // x, y, a
/// println!("{} cells", result.cell_count);
/// ```
#[derive(Clone)]
pub struct Query<'a> {
    pub(crate) storage: &'a dyn Storage,
    pub(crate) array: &'a OpenArray,
    pub(crate) attributes: Option<Vec<String>>,
    pub(crate) ranges: Vec<Vec<(Value, Value)>>,
    pub(crate) layout: Option<Layout>,
    pub(crate) condition: Option<Expr>,
    pub(crate) with_dimensions: bool,
    /// How the read runs (not what it returns).
    pub(crate) tuning: Tuning,
    /// Dimensions a range named that the array does not have.
    pub(crate) unknown_dimensions: Vec<String>,
    pub(crate) enumeration_values: bool,
    pub(crate) coordinate_grid: bool,
    /// Every version of each cell, with its timestamp (sparse arrays).
    pub(crate) versions: bool,
    /// Deleted versions kept, with when and by which commit (sparse arrays).
    pub(crate) delete_metadata: bool,
    /// Per fragment, what aggregates answered from metadata (left unread).
    pub(crate) answered: Arc<Vec<Answered>>,
    /// The buffers this query reuses.
    pub(crate) context: Arc<ReadContext>,
    /// Whether the caller gave `context` (a read in batches otherwise
    /// makes one capped by its budget).
    pub(crate) context_given: bool,
}

impl<'a> Query<'a> {
    /// A read of every attribute over the whole domain.
    pub fn new(storage: &'a dyn Storage, array: &'a OpenArray) -> Self {
        let n = array.schema.dimensions.len();
        Query {
            storage,
            array,
            attributes: None,
            ranges: vec![Vec::new(); n],
            layout: None,
            condition: None,
            with_dimensions: true,
            tuning: Tuning::default(),
            unknown_dimensions: Vec::new(),
            enumeration_values: false,
            coordinate_grid: false,
            versions: false,
            delete_metadata: false,
            answered: Arc::default(),
            context: Arc::new(ReadContext::new()),
            context_given: false,
        }
    }

    /// Reuses the buffers of `context`, which queries given the same
    /// context share: results handed back with [`ReadResult::recycle`] go
    /// there. By default a query has a context of its own
    /// ([`Query::batches`] one capped by its budget); nothing is shared
    /// between queries the caller did not give one context.
    pub fn context(mut self, context: Arc<ReadContext>) -> Self {
        self.context = context;
        self.context_given = true;
        self
    }

    /// Selects attributes, in output order.
    pub fn attributes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.attributes = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Adds an inclusive range on a dimension (several ranges per dimension may be given).
    pub fn range(mut self, dim: &str, lo: Value, hi: Value) -> Self {
        if let Some(i) = self
            .array
            .schema
            .dimensions
            .iter()
            .position(|d| d.name == dim)
        {
            self.ranges[i].push((lo, hi));
        } else {
            // Reported when the read runs.
            self.unknown_dimensions.push(dim.to_owned());
        }
        self
    }

    /// Sets the result layout.
    pub fn layout(mut self, l: Layout) -> Self {
        self.layout = Some(l);
        self
    }

    /// Keeps only cells satisfying `c`.
    pub fn condition(mut self, c: Expr) -> Self {
        self.condition = Some(c);
        self
    }

    /// Whether to return the dimensions (default: yes).
    pub fn dimensions(mut self, yes: bool) -> Self {
        self.with_dimensions = yes;
        self
    }

    /// Whether dense reads in row- or column-major order without a
    /// condition describe their coordinates in [`ReadResult::grid`]
    /// instead of building dimension columns (default: no). Dense
    /// coordinates are not stored: they follow from the subarray and the
    /// layout, and as columns they are often most of a result's bytes
    /// (16 per cell for two int64 dimensions). Other reads return columns
    /// either way; [`ReadResult::materialize_coordinates`] builds them.
    ///
    /// ```
    /// use tessera_fragment::OpenArray;
    /// use tessera_query::Query;
    /// use tessera_tile::storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
    /// let array = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
    /// let r = Query::new(&LocalFs, &array).coordinate_grid(true).execute().unwrap();
    /// let grid = r.grid.as_ref().expect("a dense array");
    /// let mut cell = grid.cursor();
    /// for i in 0..r.cell_count {
    ///     println!("{:?}: {:?}", cell.coordinates(), r.columns[0].value(i));
    ///     cell.advance();
    /// }
    /// ```
    pub fn coordinate_grid(mut self, yes: bool) -> Self {
        self.coordinate_grid = yes;
        self
    }

    /// Changes how the read runs, never what it returns ([`Tuning`]): for
    /// tests and benchmarks.
    #[doc(hidden)]
    pub fn tune(mut self, f: impl FnOnce(&mut Tuning)) -> Self {
        f(&mut self.tuning);
        self
    }

    /// Every version of each cell instead of the newest (a sparse array's
    /// cells are not deduplicated), with a last column [`VERSION_TIMESTAMPS`]
    /// (UINT64): when each was written, per cell where the fragment keeps
    /// timestamps, else its fragment's first timestamp. Deletes still apply
    /// to the versions written before them. This is what consolidation
    /// with timestamps keeps; a dense array's cells are read as without it.
    ///
    /// ```
    /// use tessera_fragment::OpenArray;
    /// use tessera_query::{Query, VERSION_TIMESTAMPS};
    /// use tessera_tile::storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_dups/array");
    /// let array = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
    /// let r = Query::new(&LocalFs, &array).versions(true).execute().unwrap();
    /// assert_eq!(r.columns.last().unwrap().name, VERSION_TIMESTAMPS);
    /// ```
    pub fn versions(mut self, yes: bool) -> Self {
        self.versions = yes;
        self
    }

    /// With [`Query::versions`]: the versions delete commits remove are
    /// kept too, with two more columns, [`DELETE_TIMESTAMPS`](crate::DELETE_TIMESTAMPS) and
    /// [`DELETE_CONDITION_INDEX`](crate::DELETE_CONDITION_INDEX) (UINT64 each): the first commit (in
    /// timestamp order) that deletes each version and its timestamp, or
    /// `u64::MAX` for both. A version consolidated with such marks keeps
    /// the earlier of its mark and a newer commit's. This is the delete
    /// metadata (`dt.tdb`, `dci.tdb`) libtiledb's fragment consolidation
    /// writes where delete commits fall among the fragments.
    ///
    /// ```
    /// use tessera_fragment::OpenArray;
    /// use tessera_query::{Query, DELETE_TIMESTAMPS};
    /// use tessera_tile::storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/deletes/array");
    /// let array = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
    /// let all = Query::new(&LocalFs, &array).versions(true).delete_metadata(true).execute().unwrap();
    /// let kept = Query::new(&LocalFs, &array).versions(true).execute().unwrap();
    /// let marks = all.column(DELETE_TIMESTAMPS).unwrap();
    /// let deleted = (0..all.cell_count).filter(|&i| marks.value(i) != u64::MAX.to_le_bytes()).count();
    /// assert!(deleted > 0);
    /// assert_eq!(all.cell_count - deleted, kept.cell_count);
    /// ```
    pub fn delete_metadata(mut self, yes: bool) -> Self {
        self.delete_metadata = yes;
        self
    }

    /// Whether enumerated attributes read as the values their keys name
    /// (default: no, the keys as stored, as libtiledb returns them).
    ///
    /// ```
    /// use tessera_fragment::OpenArray;
    /// use tessera_query::Query;
    /// use tessera_tile::storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/enumerations/array");
    /// let array = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
    /// let r = Query::new(&LocalFs, &array).enumeration_values(true).execute().unwrap();
    /// // Attribute `c` with the enumeration ["red", "green", "blue"] now holds strings.
    /// assert_eq!(r.column("c").unwrap().value(0), b"red");
    /// ```
    pub fn enumeration_values(mut self, yes: bool) -> Self {
        self.enumeration_values = yes;
        self
    }

    /// The layout asked for, or the default: row-major for dense, unordered for sparse.
    pub(crate) fn resolved_layout(&self) -> Layout {
        self.layout.unwrap_or(if self.array.schema.is_dense() {
            Layout::RowMajor
        } else {
            Layout::Unordered
        })
    }

    /// Whether a dense read of this query describes its coordinates by a
    /// grid instead of building them ([`Query::coordinate_grid`]).
    pub(crate) fn describes_coordinates(&self) -> bool {
        self.coordinate_grid
            && self.condition.is_none()
            && matches!(self.resolved_layout(), Layout::RowMajor | Layout::ColMajor)
    }

    /// Whether a dense read places a field stored with `filters` (nullable,
    /// var-sized as said, in tiles of `tile_bytes` cells' bytes) straight
    /// from its files ([`Tuning::direct_tile_bytes`](crate::tuning::Tuning)): fixed-sized, no
    /// validity, no filter, no encryption, tiles large enough, reads in
    /// place on, and storage that does not batch (on an object store each
    /// scatter read would be a request of its own, one after another; there
    /// such tiles are fetched in batches with the rest). Rows of cells must
    /// also be runs in tile and result alike, which the caller knows.
    pub(crate) fn reads_in_place(
        &self,
        filters: &FilterPipeline,
        nullable: bool,
        var: bool,
        tile_bytes: u64,
    ) -> bool {
        self.tuning.direct
            && !self.storage.prefers_batches()
            && self.array.key.is_none()
            && filters.filters.is_empty()
            && !nullable
            && !var
            && tile_bytes >= self.tuning.direct_tile_bytes
    }

    /// Which attributes (by index in the array schema) a dense read of this
    /// query places straight from their files, as the array schema stores
    /// them ([`Tuning::direct_tile_bytes`](crate::tuning::Tuning)); fragments written with other
    /// schemas may differ, so this serves estimates.
    pub(crate) fn places_unfiltered(&self) -> impl Fn(usize) -> bool + '_ {
        let schema = &self.array.schema;
        let layout = self.resolved_layout();
        let nd = schema.dimensions.len();
        let cells_per_tile = (0..nd)
            .map(|j| dense_grid(schema, j).map_or(0, |g| g.ext as u64))
            .fold(1u64, u64::saturating_mul);
        let selected = |a: &&tessera_schema::Attribute| {
            self.attributes
                .as_ref()
                .is_none_or(|names| names.contains(&a.name))
        };
        // Rows of boxes are runs in tile and result alike (see `dense`).
        let runs = schema.is_dense()
            && matches!(layout, Layout::RowMajor | Layout::ColMajor)
            && (nd == 1 || layout == schema.cell_order)
            && !schema
                .attributes
                .iter()
                .filter(selected)
                .any(|a| a.is_var());
        move |i| {
            schema.attributes.get(i).is_some_and(|a| {
                runs && self.reads_in_place(
                    &a.filters,
                    a.nullable,
                    a.is_var(),
                    cells_per_tile.saturating_mul(a.cell_size()),
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_tile::storage::LocalFs;

    /// No context is process-wide: two queries given none share no buffers.
    #[test]
    fn queries_given_no_context_share_none() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/tiledb-0.36.1/dense_2d_types/array");
        let array = OpenArray::open(&LocalFs, &path, 0, u64::MAX, None).unwrap();
        let (a, b) = (Query::new(&LocalFs, &array), Query::new(&LocalFs, &array));
        assert!(!Arc::ptr_eq(&a.context, &b.context));
        let shared = Arc::new(ReadContext::new());
        let (a, b) = (a.context(shared.clone()), b.context(shared));
        assert!(Arc::ptr_eq(&a.context, &b.context));
    }
}
