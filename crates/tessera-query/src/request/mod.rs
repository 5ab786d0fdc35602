//! What a read returns, as plain data: built anywhere (a CLI's
//! arguments, a Python call, a SQL plan), cloned, sent to the thread or
//! process where a [`ReadSession`](crate::ReadSession) runs it.

mod check;

use crate::tuning::Tuning;
use crate::QueryError;
use tessera_cells::Expr;
use tessera_schema::{ArraySchema, Value};
use tessera_tile::Layout;

/// A read of an array: its fields, ranges, condition, layout and memory,
/// independent of any opened array (names are checked when it runs).
///
/// ```
/// use tessera_query::{ReadRequest, ReadSession, Value};
/// use tessera_storage::LocalFs;
/// use tessera_tile::Layout;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/random_sparse/array");
/// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
/// let request = ReadRequest::new()
///     .attributes(["a"])
///     .range("x", Value::Int(1), Value::Int(10))
///     .layout(Layout::RowMajor);
/// let result = session.execute(&request).unwrap();
/// assert_eq!(result.columns.len(), 3); // x, y, a
/// println!("{} cells", result.cell_count);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReadRequest {
    pub(crate) attributes: Option<Vec<String>>,
    /// Inclusive ranges by dimension name (several on one: their union).
    pub(crate) ranges: Vec<(String, Value, Value)>,
    pub(crate) layout: Option<Layout>,
    pub(crate) condition: Option<Expr>,
    /// A condition that only lets the read leave tiles unread.
    pub(crate) prune: Option<Expr>,
    /// The dimensions returned, by name (`None`: all of them).
    pub(crate) dimensions: Option<Vec<String>>,
    pub(crate) coordinate_grid: bool,
    pub(crate) versions: bool,
    pub(crate) delete_metadata: bool,
    pub(crate) enumeration_values: bool,
    /// STRING_ASCII fields as Arrow Binary rather than Utf8.
    pub(crate) ascii_as_binary: bool,
    pub(crate) return_buffers: bool,
    /// Bytes a batch may take; `None`: the whole read in one.
    pub(crate) budget: Option<u64>,
    /// Result bytes batches are cut to where cuts cost nothing, for a
    /// caller that recycles its batches; `None`: half the budget.
    pub(crate) recycled_batch_bytes: Option<u64>,
    /// How the read runs (not what it returns).
    pub(crate) tuning: Tuning,
}

impl ReadRequest {
    /// A read of every attribute and dimension over the whole domain, in
    /// one batch.
    pub fn new() -> Self {
        ReadRequest::default()
    }

    /// Selects attributes, in output order.
    pub fn attributes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.attributes = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Adds an inclusive range on a dimension. Several ranges of a
    /// dimension select their union in a sparse array; a dense read
    /// places them one after another in the order given, as libtiledb
    /// does, so a coordinate in two ranges has two places in its result.
    pub fn range(mut self, dim: &str, lo: Value, hi: Value) -> Self {
        self.ranges.push((dim.to_owned(), lo, hi));
        self
    }

    /// Replaces every range with `ranges` (dimension name, first, last).
    pub fn with_ranges(mut self, ranges: Vec<(String, Value, Value)>) -> Self {
        self.ranges = ranges;
        self
    }

    /// Sets the result layout (default: row-major for dense arrays,
    /// unordered for sparse ones).
    pub fn layout(mut self, l: Layout) -> Self {
        self.layout = Some(l);
        self
    }

    /// Keeps only cells satisfying `c`.
    pub fn condition(mut self, c: Expr) -> Self {
        self.condition = Some(c);
        self
    }

    /// Lets a read of a dense array in batches (with a
    /// [`budget`](Self::budget)) leave unread the space tiles whose tile
    /// metadata shows no cell satisfies `c`: a batch's piece none of whose
    /// tiles may hold one is skipped, one where only some may is cut
    /// between them. Cells read are returned whole, passing or not (unlike
    /// [`condition`](Self::condition)): the caller filters them, and
    /// gets every cell that passes. Float tiles that may hold a NaN are
    /// read (their metadata cannot say), so a caller ordering NaN as SQL
    /// does (above every number) loses none. Without a budget only a read
    /// wholly ruled out is skipped; sparse reads, and dense arrays with
    /// delete or update commits, read as usual.
    ///
    /// ```
    /// use tessera_query::{Expr, ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// use tessera_tile::Layout;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
    /// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let above = Expr::parse("f64 > 1000.0", &session.array().schema).unwrap();
    /// let request = ReadRequest::new().attributes(["f64"]).budget(1 << 20).prune(above);
    /// let cells = |r: &ReadRequest| -> usize {
    ///     session.batches(r).unwrap().map(|b| b.unwrap().cell_count).sum()
    /// };
    /// // One space tile of six (3 × 2 cells) may hold such a value. In
    /// // row-major order the read keeps that tile's whole row of tiles;
    /// // in no order, the tile alone.
    /// assert_eq!(cells(&request), 18);
    /// assert_eq!(cells(&request.layout(Layout::Unordered)), 6);
    /// ```
    pub fn prune(mut self, c: Expr) -> Self {
        self.prune = Some(c);
        self
    }

    /// Whether to return the dimensions (default: yes): all of them, or
    /// none.
    pub fn dimensions(mut self, yes: bool) -> Self {
        self.dimensions = (!yes).then(Vec::new);
        self
    }

    /// Returns only the dimensions named (as TileDB-Py's `dims=[...]`), in
    /// the schema's order, before the attributes. A read decodes only the
    /// coordinates it returns, unless it needs the others to cut tiles by
    /// its ranges, test its condition or deduplicate cells.
    ///
    /// ```
    /// use tessera_query::{ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let request = ReadRequest::new().dimension_names(["y"]).attributes(["f"]);
    /// let names: Vec<_> = session.execute(&request).unwrap().columns.iter().map(|c| c.name.clone()).collect();
    /// assert_eq!(names, ["y", "f"]);
    /// ```
    pub fn dimension_names<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.dimensions = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Reads in batches of about `bytes` each (decoded tiles plus result;
    /// [`ReadSession::batches`](crate::ReadSession::batches)); by default
    /// the whole read is one batch.
    pub fn budget(mut self, bytes: u64) -> Self {
        self.budget = Some(bytes);
        self
    }

    /// For a caller that recycles each batch before it takes the next
    /// ([`ReadResult::recycle`](crate::ReadResult::recycle)): where cutting
    /// costs nothing (no tile is decoded: every field is read straight
    /// from unfiltered tiles; or a dense piece cut between space tiles),
    /// batches are cut until their result is at most `bytes` (never more
    /// than half the budget, the default, so that a recycled result fits
    /// beside the next batch). Small batches stay in the processor's
    /// caches while they are written out and their buffers are reused; a
    /// caller that joins its batches leaves this unset, as smaller dense
    /// batches would cost it a copy.
    ///
    /// ```
    /// use tessera_query::{ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
    /// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let request = ReadRequest::new().budget(1 << 30).recycled_batches(8 << 20);
    /// for batch in session.batches(&request).unwrap() {
    ///     let batch = batch.unwrap();
    ///     println!("{} cells", batch.cell_count);
    ///     batch.recycle();
    /// }
    /// ```
    pub fn recycled_batches(mut self, bytes: u64) -> Self {
        self.recycled_batch_bytes = Some(bytes);
        self
    }

    /// Whether dense reads in row- or column-major order without a
    /// condition describe their coordinates in [`ReadResult::grid`](crate::ReadResult::grid)
    /// instead of building dimension columns (default: no). Dense
    /// coordinates are not stored: they follow from the subarray and the
    /// layout, and as columns they are often most of a result's bytes
    /// (16 per cell for two int64 dimensions). Other reads return columns
    /// either way; [`ReadResult::materialize_coordinates`](crate::ReadResult::materialize_coordinates)
    /// builds them.
    ///
    /// ```
    /// use tessera_query::{ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
    /// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let r = session.execute(&ReadRequest::new().coordinate_grid(true)).unwrap();
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
    /// cells are not deduplicated), with a last column
    /// [`VERSION_TIMESTAMPS`](crate::VERSION_TIMESTAMPS) (UINT64): when
    /// each was written, per cell where the fragment keeps timestamps,
    /// else its fragment's first timestamp. Deletes still apply to the
    /// versions written before them. This is what consolidation with
    /// timestamps keeps; a dense array's cells are read as without it.
    ///
    /// ```
    /// use tessera_query::{ReadRequest, ReadSession, VERSION_TIMESTAMPS};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_dups/array");
    /// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let r = session.execute(&ReadRequest::new().versions(true)).unwrap();
    /// assert_eq!(r.columns.last().unwrap().name, VERSION_TIMESTAMPS);
    /// ```
    pub fn versions(mut self, yes: bool) -> Self {
        self.versions = yes;
        self
    }

    /// With [`ReadRequest::versions`]: the versions delete commits remove
    /// are kept too, with two more columns,
    /// [`DELETE_TIMESTAMPS`](crate::DELETE_TIMESTAMPS) and
    /// [`DELETE_CONDITION_INDEX`](crate::DELETE_CONDITION_INDEX) (UINT64
    /// each): the first commit (in timestamp order) that deletes each
    /// version and its timestamp, or `u64::MAX` for both. A version
    /// consolidated with such marks keeps the earlier of its mark and a
    /// newer commit's. This is the delete metadata (`dt.tdb`, `dci.tdb`)
    /// libtiledb's fragment consolidation writes where delete commits fall
    /// among the fragments.
    ///
    /// ```
    /// use tessera_query::{ReadRequest, ReadSession, DELETE_TIMESTAMPS};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/deletes/array");
    /// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let versions = ReadRequest::new().versions(true);
    /// let all = session.execute(&versions.clone().delete_metadata(true)).unwrap();
    /// let kept = session.execute(&versions).unwrap();
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
    /// use tessera_query::{ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/enumerations/array");
    /// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let r = session.execute(&ReadRequest::new().enumeration_values(true)).unwrap();
    /// // Attribute `c` with the enumeration ["red", "green", "blue"] now holds strings.
    /// assert_eq!(r.column("c").unwrap().value(0), b"red");
    /// ```
    pub fn enumeration_values(mut self, yes: bool) -> Self {
        self.enumeration_values = yes;
        self
    }

    /// Whether STRING_ASCII dimensions and attributes become Arrow Binary
    /// columns, the bytes as stored (default: no, Utf8 strings). libtiledb
    /// stores any byte in a STRING_ASCII cell and gives it back as bytes,
    /// while Arrow's Utf8 must be valid UTF-8: with the default, a batch
    /// holding other bytes fails to convert, naming the column. Taken by
    /// record batches ([`crate::stream::stream`], [`output_schema`](crate::arrow::output_schema));
    /// the cells of a [`ReadResult`](crate::ReadResult) are bytes either way.
    ///
    /// ```
    /// use arrow_schema::DataType;
    /// use std::sync::Arc;
    /// use tessera_query::stream::stream;
    /// use tessera_query::{ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_strings/array");
    /// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let batches = stream(session, ReadRequest::new().ascii_as_binary(true)).unwrap();
    /// let schema = batches.schema();
    /// // `name` is STRING_ASCII, `u` STRING_UTF8.
    /// assert_eq!(schema.field_with_name("name").unwrap().data_type(), &DataType::Binary);
    /// assert_eq!(schema.field_with_name("u").unwrap().data_type(), &DataType::Utf8);
    /// let rows: usize = batches.map(|b| b.unwrap().num_rows()).sum();
    /// assert_eq!(rows, 12);
    /// ```
    pub fn ascii_as_binary(mut self, yes: bool) -> Self {
        self.ascii_as_binary = yes;
        self
    }

    /// Whether a streamed read ([`crate::stream::stream`]) makes batches
    /// whose buffers go back to the session's context when dropped
    /// ([`ReadResult::into_record_batch_returning`](crate::ReadResult::into_record_batch_returning)),
    /// for later batches to fill (default: no). For callers that drop each
    /// batch soon and read with a context of their own.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera_query::stream::stream;
    /// use tessera_query::{ReadContext, ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let context = Arc::new(ReadContext::with_budget(16 << 20));
    /// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap().context(context);
    /// let whole = session.execute(&ReadRequest::new()).unwrap().cell_count;
    /// let request = ReadRequest::new().budget(4 << 10).return_buffers(true);
    /// // Each batch dropped here gives its buffers to the batches after it.
    /// let cells: usize = stream(session, request).unwrap().map(|b| b.unwrap().num_rows()).sum();
    /// assert_eq!(cells, whole);
    /// ```
    pub fn return_buffers(mut self, yes: bool) -> Self {
        self.return_buffers = yes;
        self
    }

    /// Checks the request against `schema` before anything is read: every
    /// attribute it selects, dimension it ranges over, and field its
    /// condition or prune condition names is the array's; every range
    /// bound is of its dimension's kind (a number, or bytes for string
    /// dimensions); and every value a condition compares a fixed-sized
    /// number field with is as wide as its cells. Otherwise the error
    /// names the field ([`QueryError::UnknownField`],
    /// [`QueryError::IllTyped`]). Every read checks this as it is built
    /// ([`ReadSession::batches`](crate::ReadSession::batches),
    /// [`stream`](crate::stream::stream), aggregates), before a tile is read.
    ///
    /// ```
    /// use tessera_query::{Expr, QueryError, ReadRequest, ReadSession, Value};
    /// use tessera_query::CompareOp;
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let session = ReadSession::open(std::sync::Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let schema = &session.array().schema;
    /// let wrong = ReadRequest::new().range("z", Value::Int(1), Value::Int(2));
    /// assert!(matches!(wrong.check(schema), Err(QueryError::UnknownField { kind: "dimension", .. })));
    /// // The read fails as it is built, before a tile is read.
    /// assert!(session.batches(&wrong).is_err());
    /// // `i` holds 4-byte integers: an 8-byte value does not fit.
    /// let i_above = |v: Vec<u8>| Expr::Compare { field: "i".into(), op: CompareOp::Gt, values: vec![v] };
    /// let wide = ReadRequest::new().condition(i_above(5i64.to_le_bytes().to_vec()));
    /// let e = wide.check(schema).unwrap_err();
    /// assert!(matches!(&e, QueryError::IllTyped { what: "condition", field, .. } if field == "i"));
    /// assert!(ReadRequest::new().condition(i_above(5i32.to_le_bytes().to_vec())).check(schema).is_ok());
    /// // `x` is an integer dimension: a string bound does not fit.
    /// let text = ReadRequest::new().range("x", Value::Bytes(b"a".to_vec()), Value::Bytes(b"b".to_vec()));
    /// assert!(matches!(text.check(schema), Err(QueryError::IllTyped { what: "range", .. })));
    /// ```
    pub fn check(&self, schema: &ArraySchema) -> Result<(), QueryError> {
        check::attributes(self.attributes.as_deref().unwrap_or_default(), schema)?;
        check::dimensions(self.dimensions.as_deref().unwrap_or_default(), schema)?;
        check::ranges(&self.ranges, schema)?;
        for c in self.condition.iter().chain(&self.prune) {
            check::condition(c, schema)?;
        }
        Ok(())
    }

    /// The attributes selected (`None`: all).
    pub fn selected_attributes(&self) -> Option<&[String]> {
        self.attributes.as_deref()
    }

    /// The ranges given, by dimension name.
    pub fn ranges(&self) -> &[(String, Value, Value)] {
        &self.ranges
    }

    /// The batch budget (`None`: one batch).
    pub fn batch_budget(&self) -> Option<u64> {
        self.budget
    }

    /// Whether enumerated attributes read as their values.
    pub fn reads_enumeration_values(&self) -> bool {
        self.enumeration_values
    }

    /// Whether the dimension named `name` is returned.
    pub fn returns_dimension(&self, name: &str) -> bool {
        (self.dimensions.as_ref()).is_none_or(|names| names.iter().any(|n| n == name))
    }

    /// The numbers of the dimensions of `schema` returned, ascending.
    pub(crate) fn returned_dimensions(&self, schema: &ArraySchema) -> Vec<usize> {
        (schema.dimensions.iter().enumerate())
            .filter(|(_, d)| self.returns_dimension(&d.name))
            .map(|(j, _)| j)
            .collect()
    }

    /// The names of the fields (dimensions and attributes) the condition
    /// tests; none without one.
    pub(crate) fn tested_fields(&self) -> Vec<String> {
        let mut tested = Vec::new();
        if let Some(c) = &self.condition {
            c.fields(&mut tested);
        }
        tested
    }

    /// The numbers of the dimensions of `schema` returned or tested by the
    /// condition, ascending: the coordinate columns a dense read computes
    /// (it drops the tested-only ones once the condition has run).
    pub(crate) fn returned_or_tested_dimensions(&self, schema: &ArraySchema) -> Vec<usize> {
        let tested = self.tested_fields();
        (schema.dimensions.iter().enumerate())
            .filter(|(_, d)| self.returns_dimension(&d.name) || tested.contains(&d.name))
            .map(|(j, _)| j)
            .collect()
    }

    /// Whether every version of each cell is read ([`ReadRequest::versions`]).
    pub fn reads_versions(&self) -> bool {
        self.versions
    }

    /// Whether deleted versions are kept, with their delete metadata.
    pub fn reads_delete_metadata(&self) -> bool {
        self.delete_metadata
    }
}
