//! Reads: the query builder and the dense and sparse readers.

use crate::condition::Expr;
use crate::context::ReadContext;
use crate::geometry::{
    compare_values, dense_grid, major_order, mbr_overlap, tile_coord, DimRanges,
};
use crate::key::Key;
use crate::prune::Answered;
use crate::result::{Column, ColumnBuilder, ReadResult};
use crate::tiles::{
    cells_past_tile, decode_field_tile, decode_field_tile_span, decode_in_runs,
    decode_picked_fixed, decode_tile_into, decode_tile_runs, decode_var_tile_into, fixed_tile_len,
    pick_fixed, pick_var_tile, picked_cells, scratch_to, var_tile_size, CellFilter, Fetched,
    FieldSpec, FieldTile, Runs,
};
use crate::unfiltered::UnfilteredTile;
use crate::QueryError;
use rayon::prelude::*;
use std::sync::Arc;
use tessera_filters::pipeline::FilterPipeline;
use tessera_fragment::{Field, FragmentMetadata, OpenArray};
use tessera_schema::{ArraySchema, CellValNum, Range1D};
use tessera_tile::storage::{keep_files_open, Storage};
use tessera_tile::{Datatype, Layout};

/// A read of an opened array.
///
/// ```no_run
/// use tessera_fragment::OpenArray;
/// use tessera_query::{Key, Query};
/// use tessera_tile::{storage::LocalFs, Layout};
/// let array = OpenArray::open(&LocalFs, "my_array".as_ref(), 0, u64::MAX, None).unwrap();
/// let result = Query::new(&LocalFs, &array)
///     .attributes(["a"])
///     .range("x", Key::Int(1), Key::Int(10))
///     .layout(Layout::RowMajor)
///     .execute()
///     .unwrap();
/// println!("{} cells", result.cell_count);
/// ```
#[derive(Clone)]
pub struct Query<'a> {
    pub(crate) storage: &'a dyn Storage,
    pub(crate) array: &'a OpenArray,
    pub(crate) attributes: Option<Vec<String>>,
    pub(crate) ranges: Vec<Vec<(Key, Key)>>,
    layout: Option<Layout>,
    pub(crate) condition: Option<Expr>,
    pub(crate) with_dimensions: bool,
    prune: bool,
    direct: bool,
    band_bytes: u64,
    direct_tile_bytes: u64,
    enumeration_values: bool,
    coordinate_grid: bool,
    skip_overwritten: bool,
    /// Per fragment, what aggregates answered from metadata (left unread).
    pub(crate) answered: Arc<Vec<Answered>>,
    /// The buffers this query reuses.
    pub(crate) context: Arc<ReadContext>,
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
            prune: true,
            direct: true,
            band_bytes: DENSE_BAND_BYTES,
            direct_tile_bytes: DIRECT_TILE_BYTES,
            enumeration_values: false,
            coordinate_grid: false,
            skip_overwritten: true,
            answered: Arc::default(),
            context: ReadContext::shared(),
        }
    }

    /// Reuses the buffers of `context` (by default, the context shared by
    /// queries given none; [`Query::batches`] gives itself one capped by its
    /// budget): results handed back with [`ReadResult::recycle`] go there.
    pub fn context(mut self, context: Arc<ReadContext>) -> Self {
        self.context = context;
        self
    }

    /// Selects attributes, in output order.
    pub fn attributes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.attributes = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Adds an inclusive range on a dimension (several ranges per dimension may be given).
    pub fn range(mut self, dim: &str, lo: Key, hi: Key) -> Self {
        if let Some(i) = self
            .array
            .schema
            .dimensions
            .iter()
            .position(|d| d.name == dim)
        {
            self.ranges[i].push((lo, hi));
        } else {
            self.ranges.push(vec![(
                Key::Bytes(dim.as_bytes().to_vec()),
                Key::Bytes(Vec::new()),
            )]);
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
    /// ```no_run
    /// use tessera_fragment::OpenArray;
    /// use tessera_query::Query;
    /// use tessera_tile::storage::LocalFs;
    /// let array = OpenArray::open(&LocalFs, "my_dense_array".as_ref(), 0, u64::MAX, None).unwrap();
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

    /// Whether sparse reads that return every cell of the tiles they touch,
    /// in stored order (unordered or global-order reads of one fragment, or
    /// of fragments that allow duplicates, with no condition, delete or
    /// timestamp to apply), decode tiles straight into the result and leave
    /// out coordinates nobody asked for; such reads with a subarray that
    /// cuts tiles or a condition decode tiles chunk by chunk into buffers
    /// each thread reuses and keep just the cells inside and passing; and
    /// dense reads read unfiltered
    /// tiles straight into the result ([`Query::direct_tile_bytes`]) and
    /// decode the tiles of other fixed-sized fields without validity chunk
    /// by chunk to their places, with no buffer per tile (default: yes).
    /// The result is the same either way; turning it off serves
    /// comparisons and benchmarks.
    pub fn direct(mut self, yes: bool) -> Self {
        self.direct = yes;
        self
    }

    /// Dense reads place bands of tiles (those sharing a coordinate on
    /// the result's slowest dimension) in parallel, each into its own
    /// region of the result, a band's rows in parallel slabs; a band of
    /// fewer than `bytes` decoded joins the next, so that a small read
    /// stays one band and one request per run of tiles (default: 8 MiB).
    /// The result is the same whatever the size; 0 (every band apart) and
    /// `u64::MAX` (one band, placed on one thread: the reference) serve
    /// tests and benchmarks.
    pub fn dense_band_bytes(mut self, bytes: u64) -> Self {
        self.band_bytes = bytes;
        self
    }

    /// Dense reads read the tiles of fixed-sized fields stored unfiltered
    /// (no filter, no encryption, not nullable) of at least `bytes`
    /// (default: 64 KiB) from their files straight into the result, one
    /// scatter read per tile and slab of rows, instead of fetching,
    /// unfiltering and then copying them: one copy of each byte instead of
    /// three. Smaller tiles are fetched with their neighbours, one request
    /// per run of tiles. Only with [`Query::direct`] on. The result is the
    /// same whatever the size; 0 (every such tile read directly) and
    /// `u64::MAX` (none) serve tests and benchmarks.
    pub fn direct_tile_bytes(mut self, bytes: u64) -> Self {
        self.direct_tile_bytes = bytes;
        self
    }

    /// Whether dense reads skip the tiles of a fragment whose cells in the
    /// subarray a later dense fragment (holding every selected attribute)
    /// writes again (default: yes). Dense writes fill their whole non-empty
    /// domain, so an overwritten region needs only its newest fragment.
    /// The result is the same either way; turning it off serves
    /// comparisons and benchmarks.
    pub fn skip_overwritten(mut self, yes: bool) -> Self {
        self.skip_overwritten = yes;
        self
    }

    /// Whether sparse reads with a condition skip fragments and tiles whose
    /// metadata (fragment summary, tile mins, maxes and null counts) shows
    /// no cell can satisfy it (default: yes). The result is the same either
    /// way; turning it off serves comparisons and benchmarks.
    pub fn prune(mut self, yes: bool) -> Self {
        self.prune = yes;
        self
    }

    /// Whether enumerated attributes read as the values their keys name
    /// (default: no, the keys as stored, as libtiledb returns them).
    ///
    /// ```no_run
    /// use tessera_fragment::OpenArray;
    /// use tessera_query::Query;
    /// use tessera_tile::storage::LocalFs;
    /// let array = OpenArray::open(&LocalFs, "my_array".as_ref(), 0, u64::MAX, None).unwrap();
    /// let r = Query::new(&LocalFs, &array).enumeration_values(true).execute().unwrap();
    /// // An attribute `color` with the enumeration ["red", "green"] now holds strings.
    /// println!("{:?}", std::str::from_utf8(r.column("color").unwrap().value(0)));
    /// ```
    pub fn enumeration_values(mut self, yes: bool) -> Self {
        self.enumeration_values = yes;
        self
    }

    /// Runs the read.
    pub fn execute(self) -> Result<ReadResult, QueryError> {
        let schema = self.array.schema.clone();
        if self.ranges.len() != schema.dimensions.len() {
            return Err(QueryError::Invalid(
                "a range names a dimension the array does not have".into(),
            ));
        }
        let attrs: Vec<String> = match &self.attributes {
            Some(a) => a.clone(),
            None => schema.attributes.iter().map(|a| a.name.clone()).collect(),
        };
        for a in &attrs {
            if schema.attribute(a).is_none() {
                return Err(QueryError::Invalid(format!(
                    "the array has no attribute `{a}`"
                )));
            }
        }
        let layout = self.resolved_layout();
        let mut r = if schema.is_dense() {
            self.dense(&schema, &attrs, layout)?
        } else {
            self.sparse(&schema, &attrs, layout)?
        };
        r.context = Some(self.context.clone());
        if self.enumeration_values {
            crate::enumeration::apply(self.storage, self.array, &self.context, r)
        } else {
            Ok(r)
        }
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
    /// from its files ([`Query::direct_tile_bytes`]): fixed-sized, no
    /// validity, no filter, no encryption, tiles large enough, and reads in
    /// place on. Rows of cells must also be runs in tile and result alike,
    /// which the caller knows.
    fn reads_in_place(
        &self,
        filters: &FilterPipeline,
        nullable: bool,
        var: bool,
        tile_bytes: u64,
    ) -> bool {
        self.direct
            && self.array.key.is_none()
            && filters.filters.is_empty()
            && !nullable
            && !var
            && tile_bytes >= self.direct_tile_bytes
    }

    /// Which attributes (by index in the array schema) a dense read of this
    /// query places straight from their files, as the array schema stores
    /// them ([`Query::direct_tile_bytes`]); fragments written with other
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

    // ------------------------------------------------------------------ dense

    fn dense(
        &self,
        schema: &Arc<ArraySchema>,
        attrs: &[String],
        layout: Layout,
    ) -> Result<ReadResult, QueryError> {
        let dims = &schema.dimensions;
        let nd = dims.len();
        // Domain, tile extents and the subarray, as integers.
        let mut dom = Vec::with_capacity(nd);
        let mut sub: Vec<Vec<(i128, i128)>> = Vec::with_capacity(nd);
        for j in 0..nd {
            let g = dense_grid(schema, j)?;
            dom.push((g.lo, g.hi, g.ext));
            let r: Vec<(i128, i128)> = if self.ranges[j].is_empty() {
                vec![(g.start, g.end)]
            } else {
                self.ranges[j]
                    .iter()
                    .map(|(a, b)| (a.as_int().unwrap_or(0), b.as_int().unwrap_or(0)))
                    .collect()
            };
            for (a, b) in &r {
                if a > b || *a < dom[j].0 || *b > dom[j].1 {
                    return Err(QueryError::Invalid(format!(
                        "range [{a}, {b}] on `{}` is outside the domain [{}, {}]",
                        dims[j].name, dom[j].0, dom[j].1
                    )));
                }
            }
            sub.push(r);
        }
        let counts: Vec<u64> = sub
            .iter()
            .map(|r| r.iter().map(|(a, b)| (b - a + 1) as u64).sum())
            .collect();
        let total = counts
            .iter()
            .try_fold(1u64, |acc, &c| acc.checked_mul(c))
            .filter(|t| *t <= (1u64 << 40))
            .ok_or_else(|| QueryError::Invalid("the subarray has too many cells".into()))?;
        let n = total as usize;
        // Strides of the result layout.
        let mut strides = vec![0u64; nd];
        let mut s = 1u64;
        for j in major_order(layout, nd).into_iter().rev() {
            strides[j] = s;
            s *= counts[j];
        }
        // Dimensions from slowest to fastest in the schema's tile and cell orders.
        let tile_order = major_order(schema.tile_order, nd);
        let cell_order = major_order(schema.cell_order, nd);
        // Position of coordinate c of dimension j in the subarray.
        let pos_of = |j: usize, c: i128| -> Option<u64> {
            let mut base = 0u64;
            for (a, b) in &sub[j] {
                if c >= *a && c <= *b {
                    return Some(base + (c - a) as u64);
                }
                base += (b - a + 1) as u64;
            }
            None
        };
        // Outputs start as fill values, unless dense fragments with every
        // selected attribute cover the subarray: then each cell is written
        // anyway, and the output starts as whatever its memory held (zeros
        // from the kernel, or a recycled result's old cells): no pass.
        // Each fragment's non-empty domain, as integers (dense dimensions
        // are integers: `dense_grid` checked).
        let neds: Vec<Option<Vec<(i128, i128)>>> = self
            .array
            .fragments
            .iter()
            .map(|f| {
                let ned = f.footer.non_empty_domain.as_ref()?;
                Some(
                    ned.iter()
                        .zip(dims)
                        .map(|(r, d)| {
                            (
                                Key::decode(d.datatype, &r.lo).as_int().unwrap_or(0),
                                Key::decode(d.datatype, &r.hi).as_int().unwrap_or(0),
                            )
                        })
                        .collect(),
                )
            })
            .collect();
        // Per fragment: dense, holding every selected attribute. Such a
        // fragment writes every cell of its non-empty domain.
        let writes_all: Vec<bool> = self
            .array
            .fragments
            .iter()
            .map(|f| f.footer.dense && attrs.iter().all(|a| FieldSpec::named(f, a).is_some()))
            .collect();
        // Covered: along some dimension `d`, the fragments writing all
        // that span the subarray on every other dimension leave no gap in
        // it (one fragment, or row bands).
        let covered = (0..nd).any(|d| {
            let mut spans: Vec<(i128, i128)> = neds
                .iter()
                .zip(&writes_all)
                .filter(|(_, &all)| all)
                .filter_map(|(ned, _)| {
                    let ned = ned.as_ref()?;
                    ned.iter()
                        .zip(&sub)
                        .enumerate()
                        .all(|(j, ((lo, hi), ranges))| {
                            j == d || ranges.iter().all(|(a, b)| lo <= a && b <= hi)
                        })
                        .then_some(ned[d])
                })
                .collect();
            spans.sort_unstable();
            sub[d].iter().all(|&(a, b)| {
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
        });
        let mut bufs: Vec<Arc<Vec<u8>>> = Vec::new();
        let mut outs: Vec<DenseOut> = Vec::new();
        for a in attrs {
            let at = schema.attribute(a).expect("checked");
            bufs.push(Arc::new(at.fill_value.clone()));
            let fill_id = (bufs.len() - 1) as u32;
            let cell = at.cell_size() as usize;
            let mut fill = at.fill_value.clone();
            fill.resize(if at.is_var() { fill.len() } else { cell }, 0);
            outs.push(DenseOut {
                fixed: (!at.is_var()).then(|| {
                    if covered {
                        self.context.result_overwritten(n * cell)
                    } else {
                        let mut b = self.context.result_buffer(n * cell);
                        if n > 0 {
                            b.extend_from_slice(&fill);
                        }
                        // Doubling copies of the fill value.
                        while b.len() < n * cell {
                            b.extend_from_within(..b.len().min(n * cell - b.len()));
                        }
                        b
                    }
                }),
                var: at
                    .is_var()
                    .then(|| vec![(fill_id, 0, at.fill_value.len() as u64); n]),
                validity: at
                    .nullable
                    .then(|| self.context.result_filled(n, at.fill_validity as u8)),
                cell,
            });
        }
        // Fragments in write order: later ones overwrite. Sparse fragments
        // (possible before TileDB 2.5) come after every dense one: libtiledb
        // (2.13 to 2.30) lets their cells win over later dense writes.
        let mut order: Vec<usize> = (0..self.array.fragments.len()).collect();
        order.sort_by_key(|&i| !self.array.fragments[i].footer.dense);
        // Per dimension, the smallest range holding the subarray.
        let hull: Vec<(i128, i128)> = sub
            .iter()
            .map(|r| {
                let lo = r.iter().map(|x| x.0).min().unwrap_or(0);
                (lo, r.iter().map(|x| x.1).max().unwrap_or(lo))
            })
            .collect();
        for (k, &fi) in order.iter().enumerate() {
            let frag = &self.array.fragments[fi];
            let specs: Vec<Option<FieldSpec>> =
                attrs.iter().map(|a| FieldSpec::named(frag, a)).collect();
            let Some(ned) = &neds[fi] else {
                continue;
            };
            // The non-empty domains of the fragments applied after this one
            // that write all: cells inside one of them are written again.
            // Only those meeting this fragment's domain inside the subarray
            // can cover one of its tiles: each tile is checked against
            // those alone, not against every later fragment.
            let later: Vec<&Vec<(i128, i128)>> = if self.skip_overwritten {
                order[k + 1..]
                    .iter()
                    .filter(|&&g| writes_all[g])
                    .filter_map(|&g| neds[g].as_ref())
                    .filter(|g| {
                        g.iter()
                            .zip(ned)
                            .zip(&hull)
                            .all(|((g, f), h)| g.0 <= f.1.min(h.1) && f.0.max(h.0) <= g.1)
                    })
                    .collect()
            } else {
                Vec::new()
            };
            if !frag.footer.dense {
                // A sparse fragment (TileDB before 2.5 accepted unordered
                // writes to dense arrays): its cells overwrite theirs.
                let mut whole = band_outs(&mut outs, &[(0, n)]);
                let outs = &mut whole[0];
                for mut tc in self.sparse_tiles(fi, frag, attrs, None)? {
                    let ids = var_ids(&mut tc.fields, outs, &mut bufs);
                    for &c in &tc.cells {
                        let mut ri = 0u64;
                        let mut inside = true;
                        for (j, d) in dims.iter().enumerate() {
                            let x = Key::decode(d.datatype, tc.dims[j].value(c as usize));
                            match x.as_int().and_then(|x| pos_of(j, x)) {
                                Some(p) => ri += p * strides[j],
                                None => inside = false,
                            }
                        }
                        if !inside {
                            continue;
                        }
                        for (k, o) in outs.iter_mut().enumerate() {
                            let at = schema.attribute(&attrs[k]).expect("checked");
                            let tile = tc.fields[k].as_ref();
                            put_cell(o, tile, c as usize, ri as usize, at, ids[k], &frag.name)?;
                        }
                    }
                }
                continue;
            }
            // The fragment's tile grid.
            let t_lo: Vec<i128> = (0..nd).map(|j| (ned[j].0 - dom[j].0) / dom[j].2).collect();
            let t_n: Vec<i128> = (0..nd)
                .map(|j| (ned[j].1 - dom[j].0) / dom[j].2 - t_lo[j] + 1)
                .collect();
            // Tiles meeting the subarray: per dimension, the tile coordinates any range touches.
            let mut per_dim: Vec<Vec<i128>> = Vec::with_capacity(nd);
            for j in 0..nd {
                let mut v = Vec::new();
                for (a, b) in &sub[j] {
                    let (a, b) = ((*a).max(ned[j].0), (*b).min(ned[j].1));
                    if a > b {
                        continue;
                    }
                    for t in (a - dom[j].0) / dom[j].2..=(b - dom[j].0) / dom[j].2 {
                        v.push(t);
                    }
                }
                v.sort_unstable();
                v.dedup();
                per_dim.push(v);
            }
            if per_dim.iter().any(Vec::is_empty) {
                continue;
            }
            let mut tiles: Vec<Vec<i128>> = vec![Vec::new()];
            for v in &per_dim {
                tiles = tiles
                    .into_iter()
                    .flat_map(|p| v.iter().map(move |t| [p.clone(), vec![*t]].concat()))
                    .collect();
            }
            // Box of a tile, clipped to the non-empty domain.
            let tile_box = |tc: &[i128]| -> (Vec<i128>, Vec<i128>) {
                (0..nd)
                    .map(|j| {
                        let t = dom[j].0 + tc[j] * dom[j].2;
                        (t.max(ned[j].0), (t + dom[j].2 - 1).min(ned[j].1))
                    })
                    .unzip()
            };
            // Tiles whose cells in the subarray a later fragment writes
            // again are neither read nor placed.
            tiles.retain(|tc| {
                let (lo, hi) = tile_box(tc);
                !later.iter().any(|g| {
                    (0..nd)
                        .all(|j| g[j].0 <= lo[j].max(hull[j].0) && hi[j].min(hull[j].1) <= g[j].1)
                })
            });
            if tiles.is_empty() {
                continue;
            }
            let tile_index = |tc: &[i128]| -> u64 {
                let mut idx = 0i128;
                for &j in &tile_order {
                    idx = idx * t_n[j] + (tc[j] - t_lo[j]);
                }
                idx as u64
            };
            let key = self.array.key;
            let numbers: Vec<u64> = tiles.iter().map(|tc| tile_index(tc)).collect();
            // Cell strides within a tile (cell order).
            let mut cs = vec![0i128; nd];
            let mut acc = 1i128;
            for &j in cell_order.iter().rev() {
                cs[j] = acc;
                acc *= dom[j].2;
            }
            // Per tile, the cells from the first to the last the subarray
            // needs (in cell order): chunks outside are not decoded.
            let spans: std::collections::HashMap<u64, std::ops::Range<u64>> = tiles
                .iter()
                .zip(&numbers)
                .filter_map(|(tc, &t)| {
                    let (mut first, mut last) = (0i128, 0i128);
                    let (lo, hi) = tile_box(tc);
                    for j in 0..nd {
                        let tile_lo = dom[j].0 + tc[j] * dom[j].2;
                        let inside = sub[j]
                            .iter()
                            .map(|(a, z)| ((*a).max(lo[j]), (*z).min(hi[j])));
                        let (a, z) = inside
                            .filter(|(a, z)| a <= z)
                            .reduce(|(x, y), (a, z)| (x.min(a), y.max(z)))?;
                        first += (a - tile_lo) * cs[j];
                        last += (z - tile_lo) * cs[j];
                    }
                    Some((t, first as u64..last as u64 + 1))
                })
                .collect();
            // Whether a row of a box (cells along the innermost result
            // dimension) is one run in both the tile and the result, for
            // every field: then rows are copied whole.
            let inner = if layout == Layout::ColMajor {
                0
            } else {
                nd - 1
            };
            let runs = cs[inner] == 1
                && strides[inner] == 1
                && outs.iter().all(|o| o.var.is_none())
                && specs
                    .iter()
                    .all(|s| s.as_ref().is_some_and(|s| !s.cell_val_num.is_var()));
            // Fields stored unfiltered, in tiles large enough, are read from
            // their files straight to their places when rows are runs: not
            // fetched ahead.
            let cells_per_tile: u64 = dom.iter().map(|d| d.2 as u64).product();
            let unfiltered: Vec<bool> = specs
                .iter()
                .map(|s| {
                    runs && s.as_ref().is_some_and(|s| {
                        self.reads_in_place(
                            &s.filters,
                            s.nullable,
                            s.cell_val_num.is_var(),
                            cells_per_tile.saturating_mul(s.cell_size()),
                        )
                    })
                })
                .collect();
            // The other fixed-sized fields without validity are decoded
            // chunk by chunk straight to the rows' places
            // (`decode_tile_runs`), with no buffer for the tile, where no
            // two rows share a place (ranges that overlap).
            let apart = sub.iter().all(|r| {
                let mut r = r.clone();
                r.sort_unstable();
                r.windows(2).all(|w| w[0].1 < w[1].0)
            });
            let streamed: Vec<bool> = specs
                .iter()
                .zip(&unfiltered)
                .zip(&outs)
                .map(|((s, &u), o)| {
                    runs && apart
                        && self.direct
                        && !u
                        && o.validity.is_none()
                        && s.as_ref().is_some_and(|s| !s.nullable)
                })
                .collect();
            let present: Vec<&FieldSpec> = specs
                .iter()
                .zip(&unfiltered)
                .filter(|(_, &u)| !u)
                .filter_map(|(s, _)| s.as_ref())
                .collect();
            // Bands: the tiles that share a coordinate on the result's
            // slowest dimension fill one contiguous region of the result.
            // Bands are placed in parallel, each into its own region; a
            // band's tiles go in groups of at most DENSE_GROUP_BYTES (shared
            // among the threads) decoded: a group is decoded, placed, and
            // its buffers recycled for the next, so a large read faults
            // fresh memory in for a few tiles only.
            let slow = major_order(layout, nd)[0];
            let found = dense_bands(&tiles, slow, &dom[slow], ned[slow], &sub[slow]);
            // Where bands are found, positions on the slowest dimension
            // grow with coordinates: a band's rows can be cut into slabs.
            let banded = found.is_some();
            let bands = found
                .map(|regions| {
                    regions
                        .into_iter()
                        .map(|(p, q, members)| {
                            let s = strides[slow] as usize;
                            ((p as usize * s, (q as usize + 1) * s), members)
                        })
                        .collect::<Vec<_>>()
                })
                .unwrap_or_else(|| vec![((0, n), (0..tiles.len()).collect())]);
            let per_tile: u64 = present
                .iter()
                .map(|s| (s.cell_size() + s.nullable as u64) * cells_per_tile)
                .sum();
            // A band of less than `band_bytes` decoded joins the next
            // (regions between them hold no tile of this fragment): a
            // small read stays one band, read with as few requests as one
            // run of tiles needs.
            let mut merged: Vec<((usize, usize), Vec<usize>)> = Vec::with_capacity(bands.len());
            for (region, members) in bands {
                match merged.last_mut() {
                    Some((r, m)) if (m.len() as u64).saturating_mul(per_tile) < self.band_bytes => {
                        r.1 = region.1;
                        m.extend(members);
                    }
                    _ => merged.push((region, members)),
                }
            }
            let bands = merged;
            let threads = rayon::current_num_threads().min(bands.len()).max(1) as u64;
            let group = (DENSE_GROUP_BYTES / threads / per_tile.max(1)).max(1) as usize;
            let regions: Vec<(usize, usize)> = bands.iter().map(|b| b.0).collect();
            let views = band_outs(&mut outs, &regions);
            let shared = std::sync::Mutex::new(std::mem::take(&mut bufs));
            let s_slow = strides[slow] as usize;
            // The boxes of tile `tc`'s cells in the subarray, those whose
            // positions on the slowest dimension are in `rows` (all, without).
            let boxes_of = |tc: &[i128], rows: Option<(u64, u64)>| -> Vec<Vec<(i128, i128)>> {
                let (lo, hi) = tile_box(tc);
                let mut boxes: Vec<Vec<(i128, i128)>> = vec![Vec::new()];
                for j in 0..nd {
                    let mut nb = Vec::new();
                    for b in &boxes {
                        for (a, z) in &sub[j] {
                            let (a, z) = ((*a).max(lo[j]), (*z).min(hi[j]));
                            if a <= z {
                                let mut x = b.clone();
                                x.push((a, z));
                                nb.push(x);
                            }
                        }
                    }
                    boxes = nb;
                }
                if let Some((p0, p1)) = rows {
                    // A box lies in one range, where positions run with
                    // coordinates: keep the coordinates at positions p0..p1.
                    boxes.retain_mut(|b| {
                        let (a, z) = b[slow];
                        let pa = pos_of(slow, a).unwrap_or(0) as i128;
                        let pz = pa + (z - a);
                        b[slow] = (
                            a + (p0 as i128 - pa).max(0),
                            z - (pz - (p1 as i128 - 1)).max(0),
                        );
                        b[slow].0 <= b[slow].1
                    });
                }
                boxes
            };
            // A coordinate's position in tile `tc` (cell order) and in the
            // region of the result from cell `first`.
            let locate = |tc: &[i128], first: usize, c: &[i128]| -> (usize, usize) {
                let (mut cell, mut ri) = (0i128, 0u64);
                for j in 0..nd {
                    cell += (c[j] - dom[j].0 - tc[j] * dom[j].2) * cs[j];
                    ri += pos_of(j, c[j]).unwrap_or(0) * strides[j];
                }
                (cell as usize, ri as usize - first)
            };
            // Where rows are runs: the rows of `boxes` of tile `tc`, each as
            // (first cell in the tile, first position in the region from
            // cell `first`, cells).
            let row_runs = |tc: &[i128], boxes: Vec<Vec<(i128, i128)>>, first: usize| {
                let mut wanted: Vec<(usize, usize, usize)> = Vec::new();
                for bx in boxes {
                    let len = (bx[inner].1 - bx[inner].0 + 1) as usize;
                    let mut c: Vec<i128> = bx.iter().map(|r| r.0).collect();
                    loop {
                        let (cell, ri) = locate(tc, first, &c);
                        wanted.push((cell, ri, len));
                        // Next row: advance the other dimensions.
                        let mut j = nd;
                        let mut done = true;
                        while j > 0 {
                            j -= 1;
                            if j == inner {
                                continue;
                            }
                            if c[j] < bx[j].1 {
                                c[j] += 1;
                                done = false;
                                break;
                            }
                            c[j] = bx[j].0;
                        }
                        if done {
                            break;
                        }
                    }
                }
                wanted
            };
            // Places the cells of tile `tc` whose positions on the slowest
            // dimension are in `rows` (all, without) into `outs`, the region
            // of the result from cell `first`. Streamed fields are placed
            // where their tiles are decoded.
            let place = |tc: &[i128],
                         t: u64,
                         (fields, direct): (&[Option<FieldTile>], &[Option<UnfilteredTile>]),
                         ids: &[u32],
                         outs: &mut [BandOut<'_>],
                         first: usize,
                         rows: Option<(u64, u64)>|
             -> Result<(), QueryError> {
                let mut boxes = boxes_of(tc, rows);
                // Fast path: when the innermost result dimension is also the
                // innermost cell dimension, a box row is one contiguous run in
                // both the tile and the result: copy it whole.
                if runs {
                    let wanted = row_runs(tc, std::mem::take(&mut boxes), first);
                    for (k, o) in outs.iter_mut().enumerate() {
                        if streamed[k] {
                            continue;
                        }
                        let Some(u) = &direct[k] else {
                            let tile = fields[k].as_ref().expect("runs: every field has a tile");
                            copy_runs(tile, o, &wanted, &frag.name)?;
                            continue;
                        };
                        if let Some(val) = &mut o.validity {
                            wanted
                                .iter()
                                .for_each(|&(_, ri, n)| val[ri..ri + n].fill(1));
                        }
                        if let Some(fx) = o.fixed.as_deref_mut() {
                            if let Some(dsts) = carve_runs(fx, o.cell, &wanted)? {
                                if u.read_runs(self.storage, &frag.name, t, dsts)? {
                                    continue;
                                }
                            }
                        }
                        // Runs that overlap, or a tile not laid out as
                        // predicted: read it the ordinary way.
                        let spec = specs[k].as_ref().expect("unfiltered fields have specs");
                        let tile = decode_field_tile(
                            &Fetched::nothing(self.storage, &self.context),
                            frag,
                            spec,
                            t,
                            key,
                        )?;
                        copy_runs(&tile, o, &wanted, &frag.name)?;
                        tile.recycle(&self.context);
                    }
                }
                for bx in boxes {
                    let mut c: Vec<i128> = bx.iter().map(|r| r.0).collect();
                    'cells: loop {
                        let (cell, ri) = locate(tc, first, &c);
                        for (k, o) in outs.iter_mut().enumerate() {
                            let at = schema.attribute(&attrs[k]).expect("checked");
                            put_cell(o, fields[k].as_ref(), cell, ri, at, ids[k], &frag.name)?;
                        }
                        // Next cell: advance the fastest dimension first.
                        for j in (0..nd).rev() {
                            if c[j] < bx[j].1 {
                                c[j] += 1;
                                continue 'cells;
                            }
                            c[j] = bx[j].0;
                        }
                        break;
                    }
                }
                Ok(())
            };
            bands.into_par_iter().zip(views).try_for_each(
                |(((first, end), members), mut outs)| {
                    for grp in members.chunks(group) {
                        let nums: Vec<u64> = grp.iter().map(|&i| numbers[i]).collect();
                        // The destinations of the streamed fields' runs, per
                        // tile: every tile's rows carved from the band's region.
                        let mut streams: std::collections::HashMap<u64, StreamRuns<'_>> =
                            nums.iter().map(|&t| (t, Default::default())).collect();
                        if streamed.contains(&true) {
                            let wanted: Vec<Vec<(usize, usize, usize)>> = grp
                                .iter()
                                .map(|&i| row_runs(&tiles[i], boxes_of(&tiles[i], None), first))
                                .collect();
                            let all = wanted.concat();
                            for (k, o) in outs.iter_mut().enumerate() {
                                let Some(fx) = o.fixed.as_deref_mut().filter(|_| streamed[k])
                                else {
                                    continue;
                                };
                                let mut carved = carve_runs(fx, o.cell, &all)?
                                    .ok_or_else(|| {
                                        QueryError::Invalid("rows of the result overlap".into())
                                    })?
                                    .into_iter();
                                for (t, w) in nums.iter().zip(&wanted) {
                                    let runs = carved.by_ref().take(w.len()).collect();
                                    streams
                                        .get_mut(t)
                                        .expect("every tile")
                                        .get_mut()
                                        .unwrap_or_else(|e| e.into_inner())
                                        .push((k, runs));
                                }
                            }
                        }
                        let decoded: Vec<TileFields> = decode_in_runs(
                            self.storage,
                            &self.context,
                            frag,
                            &present,
                            &nums,
                            |src, t| {
                                let span = spans.get(&t).cloned();
                                let mut fields = Vec::with_capacity(specs.len());
                                let mut direct = Vec::with_capacity(specs.len());
                                let mut mine = streams.get(&t).map(|m| {
                                    std::mem::take(
                                        &mut *m.lock().unwrap_or_else(|e| e.into_inner()),
                                    )
                                });
                                for (k, (s, &u)) in specs.iter().zip(&unfiltered).enumerate() {
                                    let Some(s) = s else {
                                        fields.push(None);
                                        direct.push(None);
                                        continue;
                                    };
                                    if streamed[k] {
                                        let runs = mine
                                            .as_mut()
                                            .and_then(|m| m.iter_mut().find(|r| r.0 == k))
                                            .map(|r| std::mem::take(&mut r.1))
                                            .unwrap_or_default();
                                        decode_tile_runs(src, frag, s, t, key, runs)?;
                                        fields.push(None);
                                        direct.push(None);
                                        continue;
                                    }
                                    let layout = match u {
                                        true => UnfilteredTile::of(self.storage, frag, s, t)?,
                                        false => None,
                                    };
                                    fields.push(match layout {
                                        Some(_) => None,
                                        None => Some(decode_field_tile_span(
                                            src,
                                            frag,
                                            s,
                                            t,
                                            key,
                                            span.clone(),
                                        )?),
                                    });
                                    direct.push(layout);
                                }
                                Ok((fields, direct))
                            },
                        )?;
                        drop(streams);
                        // Var-sized values keep their tile's buffer (moved,
                        // not copied), named by its id in the shared list.
                        let decoded: Vec<(usize, TileFields, Vec<u32>)> = grp
                            .iter()
                            .zip(decoded)
                            .map(|(&i, (mut fields, direct))| {
                                let mut b = shared.lock().unwrap_or_else(|e| e.into_inner());
                                let ids = var_ids(&mut fields, &outs, &mut b);
                                (i, (fields, direct), ids)
                            })
                            .collect();
                        let rows = ((end - first) / s_slow.max(1)) as u64;
                        // Places every decoded tile's cells in `rows` (all, without) in a region.
                        let place_all = |v: &mut [BandOut<'_>],
                                         first: usize,
                                         rows: Option<(u64, u64)>|
                         -> Result<(), QueryError> {
                            for (i, (fields, direct), ids) in &decoded {
                                let tile = (fields.as_slice(), direct.as_slice());
                                place(&tiles[*i], numbers[*i], tile, ids, v, first, rows)?;
                            }
                            Ok(())
                        };
                        if streamed.iter().all(|&s| s) {
                            // Every field is in its place already.
                        } else if banded && rows > 1 && self.band_bytes != u64::MAX {
                            // Slabs of the band's rows, placed in parallel:
                            // each copies its rows of every tile.
                            let p_first = (first / s_slow) as u64;
                            let count = (rayon::current_num_threads() as u64 * 2).min(rows);
                            let slabs: Vec<(u64, u64)> = (0..count)
                                .map(|k| {
                                    (p_first + rows * k / count, p_first + rows * (k + 1) / count)
                                })
                                .collect();
                            let regions: Vec<(usize, usize)> = slabs
                                .iter()
                                .map(|&(p, q)| {
                                    (p as usize * s_slow - first, q as usize * s_slow - first)
                                })
                                .collect();
                            let views: Vec<BandOut<'_>> =
                                outs.iter_mut().map(BandOut::reborrow).collect();
                            split_views(views, &regions)
                                .into_par_iter()
                                .zip(slabs)
                                .try_for_each(|(mut v, (p, q))| {
                                    // Its rows of every tile, from one open file.
                                    keep_files_open(|| {
                                        place_all(&mut v, p as usize * s_slow, Some((p, q)))
                                    })
                                })?;
                        } else {
                            keep_files_open(|| place_all(&mut outs, first, None))?;
                        }
                        for (_, (fields, _), _) in decoded {
                            fields
                                .into_iter()
                                .flatten()
                                .for_each(|t| t.recycle(&self.context));
                        }
                    }
                    Ok::<(), QueryError>(())
                },
            )?;
            bufs = shared.into_inner().unwrap_or_else(|e| e.into_inner());
        }
        // Assemble columns: dimensions from positions, attributes from outputs.
        let mut result = ReadResult {
            cell_count: n,
            ..ReadResult::default()
        };
        if self.with_dimensions {
            // The coordinates in the order positions were given (global
            // order permutes them below, conditions read them as columns).
            let grid = crate::result::CoordinateGrid {
                dimensions: dims
                    .iter()
                    .zip(&sub)
                    .map(|(d, r)| crate::result::GridDimension {
                        name: d.name.clone(),
                        datatype: d.datatype,
                        ranges: r.clone(),
                    })
                    .collect(),
                order: major_order(layout, nd),
            };
            if self.describes_coordinates() {
                result.grid = Some(grid);
            } else {
                result.columns = grid.columns_in(&self.context);
            }
        }
        for (k, a) in attrs.iter().enumerate() {
            let at = schema.attribute(a).expect("checked");
            let o = &mut outs[k];
            let (data, offsets) = match (&mut o.fixed, &o.var) {
                (Some(f), _) => (std::mem::take(f), None),
                (None, Some(v)) => {
                    let mut data = Vec::new();
                    let mut offs = Vec::with_capacity(n + 1);
                    offs.push(0);
                    for (id, start, len) in v {
                        let b = &bufs[*id as usize];
                        data.extend_from_slice(&b[*start as usize..(*start + *len) as usize]);
                        offs.push(data.len() as u64);
                    }
                    (data, Some(offs))
                }
                _ => unreachable!(),
            };
            result.columns.push(crate::result::Column {
                name: a.clone(),
                is_dimension: false,
                datatype: at.datatype,
                cell_val_num: at.cell_val_num,
                data,
                offsets,
                validity: o.validity.take(),
            });
        }
        if let Some(c) = &self.condition {
            // Dense reads keep every cell; cells failing the condition read
            // as fill values, as in libtiledb.
            result = fill_unmatched(&self.context, result, c, schema);
        }
        if layout == Layout::GlobalOrder {
            // Global order: space tiles in tile order, cells in cell order.
            let coords: Vec<Vec<i128>> = sub
                .iter()
                .map(|r| r.iter().flat_map(|(a, b)| *a..=*b).collect())
                .collect();
            // One number per cell: its space tile's rank in tile order (over
            // the domain's tile grid), then its rank inside the tile in cell order.
            let tiles_per_dim: Vec<u128> = (0..nd)
                .map(|j| ((dom[j].1 - dom[j].0) / dom[j].2 + 1) as u128)
                .collect();
            let cells_per_tile: u128 = (0..nd).map(|j| dom[j].2 as u128).product();
            let key = |i: usize| -> u128 {
                let (mut t, mut c) = (0u128, 0u128);
                for &j in &tile_order {
                    let x = coords[j][((i as u64 / strides[j]) % counts[j]) as usize];
                    t = t * tiles_per_dim[j] + ((x - dom[j].0) / dom[j].2) as u128;
                }
                for &j in &cell_order {
                    let x = coords[j][((i as u64 / strides[j]) % counts[j]) as usize];
                    c = c * dom[j].2 as u128 + ((x - dom[j].0) % dom[j].2) as u128;
                }
                t * cells_per_tile + c
            };
            let keys: Vec<u128> = (0..n).map(key).collect();
            if keys.windows(2).all(|w| w[0] <= w[1]) {
                // Already in global order (one tile read in its cell order).
                return Ok(result);
            }
            let mut perm: Vec<usize> = (0..n).collect();
            perm.sort_by_key(|&i| keys[i]);
            result = permute(&self.context, result, &perm);
        }
        let _ = bufs;
        Ok(result)
    }

    // ----------------------------------------------------------------- sparse

    /// Reads the tiles of sparse fragment `frag` (number `fi`) that meet
    /// the subarray: coordinates, the cells inside the ranges, and `fields`
    /// (plus per-cell and delete timestamps when the fragment has them) of
    /// the tiles with any such cell. With `prune_by`, fragments and tiles
    /// whose metadata shows no cell can satisfy its condition are left
    /// unread, where no cell of theirs can shadow another.
    fn sparse_tiles(
        &self,
        fi: usize,
        frag: &FragmentMetadata,
        fields: &[String],
        prune_by: Option<(&Expr, &crate::prune::Shadows)>,
    ) -> Result<Vec<TileCells>, QueryError> {
        let hits = self.pruned_hits(fi, frag, prune_by.map(|(c, s)| (c, Some(s))))?;
        if hits.is_empty() {
            return Ok(Vec::new());
        }
        let dims = &frag.schema.dimensions;
        let nd = dims.len();
        let key = self.array.key;
        let legacy_coords = !frag
            .version()
            .has(tessera_fragment::gates::SPLIT_COORDINATES);
        let dim_ranges: Vec<DimRanges<'_>> = (0..nd)
            .map(|j| DimRanges::new(&self.ranges[j], dims[j].datatype))
            .collect();
        let dim_specs: Vec<FieldSpec> = (0..nd)
            .map(|j| FieldSpec::of(frag, Field::Dimension(j)))
            .collect();
        let specs: Vec<Option<FieldSpec>> =
            fields.iter().map(|a| FieldSpec::named(frag, a)).collect();
        let ts_spec = frag
            .footer
            .has_timestamps
            .then(|| FieldSpec::of(frag, Field::Timestamps));
        let dt_spec = frag
            .footer
            .has_delete_meta
            .then(|| FieldSpec::of(frag, Field::DeleteTimestamps));
        // Coordinates first, in runs of neighbouring tiles; then the other
        // fields of just the tiles with cells inside the subarray.
        let coords_spec = FieldSpec::of(frag, Field::Coords);
        let coord_specs: Vec<&FieldSpec> = if legacy_coords {
            vec![&coords_spec]
        } else {
            dim_specs.iter().collect()
        };
        let numbers: Vec<u64> = hits.iter().map(|h| h.0).collect();
        let located = decode_in_runs(
            self.storage,
            &self.context,
            frag,
            &coord_specs,
            &numbers,
            |src, t| {
                let dt: Vec<FieldTile> = if legacy_coords {
                    // Before format 5 all coordinates share one tile.
                    let c = decode_field_tile(src, frag, &coords_spec, t, key)?;
                    crate::tiles::split_coords(
                        &c,
                        nd,
                        dims[0].coord_size() as usize,
                        frag.coords_zipped(),
                    )
                } else {
                    dim_specs
                        .iter()
                        .map(|s| decode_field_tile(src, frag, s, t, key))
                        .collect::<Result<_, _>>()?
                };
                Ok(dt)
            },
        )?;
        let mut tiles: Vec<TileCells> = hits
            .par_iter()
            .zip(located)
            .map(|(&(_, full), dt)| {
                let n = dt.first().map_or(0, |d| d.cells) as usize;
                let cells: Vec<u32> = if full {
                    (0..n as u32).collect()
                } else {
                    (0..n)
                        .filter(|&i| (0..nd).all(|j| dim_ranges[j].contains(dt[j].value(i))))
                        .map(|i| i as u32)
                        .collect()
                };
                TileCells {
                    frag: fi,
                    dims: dt,
                    fields: specs.iter().map(|_| None).collect(),
                    times: None,
                    delete_times: None,
                    cells,
                }
            })
            .collect();
        let wanted: Vec<usize> = (0..tiles.len())
            .filter(|&i| !tiles[i].cells.is_empty())
            .collect();
        let numbers: Vec<u64> = wanted.iter().map(|&i| hits[i].0).collect();
        let field_specs: Vec<&FieldSpec> = specs
            .iter()
            .flatten()
            .chain(ts_spec.as_ref())
            .chain(dt_spec.as_ref())
            .collect();
        let read = |src: &Fetched<'_>, s: &FieldSpec, t| decode_field_tile(src, frag, s, t, key);
        let decoded = decode_in_runs(
            self.storage,
            &self.context,
            frag,
            &field_specs,
            &numbers,
            |src, t| {
                let fields = specs
                    .iter()
                    .map(|s| s.as_ref().map(|s| read(src, s, t)).transpose())
                    .collect::<Result<Vec<_>, _>>()?;
                let times = ts_spec.as_ref().map(|s| read(src, s, t)).transpose()?;
                let delete_times = dt_spec.as_ref().map(|s| read(src, s, t)).transpose()?;
                Ok((fields, times, delete_times))
            },
        )?;
        for (i, (fields, times, delete_times)) in wanted.into_iter().zip(decoded) {
            let tc = &mut tiles[i];
            tc.fields = fields;
            tc.times = times;
            tc.delete_times = delete_times;
        }
        Ok(tiles)
    }

    /// The tiles of fragment `fi` a sparse read touches
    /// ([`Query::sparse_hits`]); with `prune` (a condition, and what may
    /// shadow cells: `None` when nothing is deduplicated, so nothing can),
    /// less those whose metadata shows no cell can satisfy the condition,
    /// where no cell of theirs can shadow another.
    fn pruned_hits(
        &self,
        fi: usize,
        frag: &FragmentMetadata,
        prune: Option<(&Expr, Option<&crate::prune::Shadows>)>,
    ) -> Result<Vec<(u64, bool)>, QueryError> {
        let Some((c, shadows)) = prune else {
            return self.sparse_hits(fi, frag);
        };
        // Whether no cell of the whole fragment can hide another: then
        // neither can any of its tiles'.
        let alone = shadows.is_none_or(|s| s.none_in(fi, frag, None));
        if alone && !crate::prune::fragment_may_match(self.storage, frag, c)? {
            return Ok(Vec::new());
        }
        let mut hits = self.sparse_hits(fi, frag)?;
        let pruner = crate::prune::FragmentPruner::new(self.storage, frag, c)?;
        match shadows {
            Some(shadows) if !alone => {
                let leaves = frag.rtree(self.storage)?.leaves();
                hits.retain(|&(t, _)| {
                    let tile = leaves.get(t as usize).map(Vec::as_slice);
                    !shadows.none_in(fi, frag, tile) || pruner.tile_may_match(c, t)
                });
            }
            _ => hits.retain(|&(t, _)| pruner.tile_may_match(c, t)),
        }
        Ok(hits)
    }

    /// The tiles of fragment `fi` the subarray touches, each with whether it
    /// lies wholly inside, less those an earlier batch answered.
    fn sparse_hits(
        &self,
        fi: usize,
        frag: &FragmentMetadata,
    ) -> Result<Vec<(u64, bool)>, QueryError> {
        let answered = self.answered.get(fi).unwrap_or(&Answered::Nothing);
        if *answered == Answered::Fragment {
            return Ok(Vec::new());
        }
        let dims = &frag.schema.dimensions;
        let ranges = &self.ranges;
        let mut hits = frag
            .rtree(self.storage)?
            .tiles_overlapping(&|mbr: &[Range1D]| mbr_overlap(mbr, ranges, dims));
        if let Answered::Tiles(done) = answered {
            hits.retain(|(t, _)| done.binary_search(t).is_err());
        }
        Ok(hits)
    }

    /// The sparse fast path. When every cell of every tile the read touches
    /// is returned, in stored order, with nothing to deduplicate or sort,
    /// each tile decodes straight into its place in the result: no buffer
    /// per tile, no copy, and no coordinates unless asked for. Where the
    /// subarray cuts tiles or a condition filters cells, the cells are
    /// picked ([`Query::sparse_picked`]): the condition is a test of each
    /// cell alone here, as nothing is deduplicated. `None` when the read
    /// needs the general path.
    fn sparse_direct(
        &self,
        schema: &ArraySchema,
        attrs: &[String],
        layout: Layout,
    ) -> Result<Option<ReadResult>, QueryError> {
        let frags = &self.array.fragments;
        let in_stored_order = match layout {
            Layout::Unordered => frags.len() <= 1 || schema.allows_dups,
            Layout::GlobalOrder => frags.len() <= 1 && schema.cell_order != Layout::Hilbert,
            _ => false,
        };
        let plain = |f: &FragmentMetadata| {
            !f.footer.dense
                && !f.footer.has_timestamps
                && !f.footer.has_delete_meta
                && (!self.with_dimensions
                    || f.version().has(tessera_fragment::gates::SPLIT_COORDINATES))
        };
        // A condition is a filter on each cell alone here (nothing to
        // deduplicate), tested while cells are picked, provided every
        // fragment has every field it names (else fill values stand in:
        // the general path).
        let cond_fields: Vec<String> = match &self.condition {
            Some(c) => {
                let mut names = Vec::new();
                c.fields(&mut names);
                names.retain(|n| schema.dimensions.iter().all(|d| &d.name != n));
                names
            }
            None => Vec::new(),
        };
        let has_cond_fields =
            |f: &FragmentMetadata| cond_fields.iter().all(|n| f.schema.attribute(n).is_some());
        if !self.direct
            || !in_stored_order
            || !self.array.delete_conditions.is_empty()
            || !frags.iter().all(|f| plain(f) && has_cond_fields(f))
            || cond_fields.iter().any(|n| schema.attribute(n).is_none())
        {
            return Ok(None);
        }
        // The result's fields, in column order.
        let mut wanted: Vec<Field> = Vec::new();
        if self.with_dimensions {
            wanted.extend((0..schema.dimensions.len()).map(Field::Dimension));
        }
        for a in attrs {
            let i = schema
                .attributes
                .iter()
                .position(|x| &x.name == a)
                .expect("checked");
            wanted.push(Field::Attribute(i));
        }
        // Each fragment's own fields for those (its files are numbered by
        // the schema it was written with); a fragment lacking one reads
        // fill values there: the general path.
        let Some(own) = frags
            .iter()
            .map(|f| wanted.iter().map(|&w| f.own_field(schema, w)).collect())
            .collect::<Option<Vec<Vec<Field>>>>()
        else {
            return Ok(None);
        };
        let mut hits: Vec<(usize, u64, bool)> = Vec::new();
        for (fi, frag) in frags.iter().enumerate() {
            // No cell shadows another here.
            let prune = self.condition.as_ref().filter(|_| self.prune);
            let mine = self.pruned_hits(fi, frag, prune.map(|c| (c, None)))?;
            // With a condition, every tile's cells are picked.
            let cond = self.condition.is_some();
            hits.extend(mine.into_iter().map(|(t, full)| (fi, t, full && !cond)));
        }
        if !hits.iter().all(|h| h.2) {
            // Picking cells needs the coordinates as separate tiles.
            let split =
                |f: &FragmentMetadata| f.version().has(tessera_fragment::gates::SPLIT_COORDINATES);
            return match frags.iter().all(split) {
                true => self
                    .sparse_picked(schema, &hits, &wanted, &own, &cond_fields)
                    .map(Some),
                false => Ok(None),
            };
        }
        // (fragment, tile, first cell in the result)
        let mut tiles: Vec<(usize, u64, u64)> = Vec::with_capacity(hits.len());
        let mut n = 0u64;
        for (fi, t, _) in hits {
            tiles.push((fi, t, n));
            // An absurd count fails the allocation below, as an error.
            n = n.saturating_add(frags[fi].cell_num(t));
        }
        let fixed_bytes = |cell_val_num: CellValNum, t: Datatype| match cell_val_num {
            CellValNum::Fixed(k) => Some(k as u64 * t.size()),
            CellValNum::Var => None,
        };
        // Var-sized fields decode into their place too where the fragment
        // metadata gives each tile's var size (and offsets have their own
        // tiles): per column, each tile's var size, else None (such
        // values are decoded apart and copied after).
        let mut var_sizes: Vec<Option<Vec<u64>>> = Vec::with_capacity(wanted.len());
        for (k, &field) in wanted.iter().enumerate() {
            let c = field_column(schema, field);
            let direct_var = c.cell_val_num.is_var()
                && frags.iter().zip(&own).all(|(f, own)| {
                    !FieldSpec::of(f, own[k])
                        .filters
                        .offsets_in_data(c.datatype, f.schema.version)
                });
            if !direct_var {
                var_sizes.push(None);
                continue;
            }
            let sizes = tiles
                .iter()
                .map(|&(fi, t, _)| var_tile_size(self.storage, &frags[fi], own[fi][k], t))
                .collect::<Result<_, _>>()?;
            var_sizes.push(Some(sizes));
        }
        // Fixed-sized fields and validity decode into their place; var-sized
        // values without known sizes are copied after.
        let mut columns: Vec<Column> = wanted
            .iter()
            .zip(&var_sizes)
            .map(|(&field, sizes)| {
                let mut c = field_column(schema, field);
                let name = &c.name;
                let size = match sizes {
                    Some(s) => s.iter().try_fold(0u64, |a, &b| a.checked_add(b)),
                    None => fixed_bytes(c.cell_val_num, c.datatype)
                        .map_or(Some(0), |w| w.checked_mul(n)),
                };
                let zeroed = |bytes: Option<u64>| -> Result<Vec<u8>, QueryError> {
                    // The cell counts come off disk: a fallible reservation
                    // first, so an absurd count is an error, not an abort.
                    // Then a zeroed allocation, which the kernel backs lazily.
                    let bytes = bytes.and_then(|b| usize::try_from(b).ok());
                    let mut probe: Vec<u8> = Vec::new();
                    match bytes.map(|b| (b, probe.try_reserve_exact(b))) {
                        Some((b, Ok(()))) => {
                            drop(probe);
                            Ok(vec![0; b])
                        }
                        _ => Err(QueryError::Invalid(format!(
                            "the fragments claim {n} cells: `{name}` cannot be allocated"
                        ))),
                    }
                };
                c.data = zeroed(size)?;
                if c.validity.is_some() {
                    c.validity = Some(zeroed(Some(n))?);
                }
                if let Some(total) = size.filter(|_| sizes.is_some()) {
                    // n + 1 offsets: n comes off disk, so the reservation
                    // is fallible here too.
                    let mut offs: Vec<u64> = Vec::new();
                    let count = usize::try_from(n).ok().and_then(|n| n.checked_add(1));
                    if count.is_none_or(|k| offs.try_reserve_exact(k).is_err()) {
                        return Err(QueryError::Invalid(format!(
                            "the fragments claim {n} cells: `{name}` cannot be allocated"
                        )));
                    }
                    offs.resize(n as usize, 0);
                    offs.push(total);
                    c.offsets = Some(offs);
                }
                Ok(c)
            })
            .collect::<Result<_, QueryError>>()?;
        // One slot per (field, tile): the tile's part of the field's
        // buffers (values, validity, and for var-sized fields the offsets
        // with the position of the tile's values among the column's).
        struct Slot<'b> {
            data: Option<&'b mut [u8]>,
            validity: Option<&'b mut [u8]>,
            offsets: Option<(&'b mut [u64], u64)>,
        }
        let mut slots: Vec<Vec<std::sync::Mutex<Slot<'_>>>> = Vec::with_capacity(columns.len());
        for (c, sizes) in columns.iter_mut().zip(&var_sizes) {
            // Var-sized columns without sizes are filled after decoding: no slots.
            let w = fixed_bytes(c.cell_val_num, c.datatype);
            let placed = w.is_some() || sizes.is_some();
            let mut data = placed.then_some(c.data.as_mut_slice());
            let mut validity = c.validity.as_deref_mut().filter(|_| placed);
            let mut offsets = c.offsets.as_deref_mut().filter(|_| sizes.is_some());
            let mut field_slots = Vec::with_capacity(tiles.len());
            let mut base = 0u64;
            for (k, &(fi, t, _)) in tiles.iter().enumerate() {
                let cells = frags[fi].cell_num(t) as usize;
                let bytes = match (w, sizes) {
                    (Some(w), _) => cells * w as usize,
                    (None, Some(s)) => s[k] as usize,
                    (None, None) => 0,
                };
                field_slots.push(std::sync::Mutex::new(Slot {
                    data: cut(&mut data, 0, bytes),
                    validity: cut(&mut validity, 0, cells),
                    offsets: cut(&mut offsets, 0, cells).map(|o| (o, base)),
                }));
                base += bytes as u64;
            }
            slots.push(field_slots);
        }
        let key = self.array.key;
        // Per tile in result order, the decoded var-sized fields in column order.
        let mut var_tiles: Vec<Vec<FieldTile>> = Vec::with_capacity(tiles.len());
        let mut first = 0;
        for (fi, frag) in frags.iter().enumerate() {
            let count = tiles[first..].iter().take_while(|x| x.0 == fi).count();
            let mine = &tiles[first..first + count];
            let numbers: Vec<u64> = mine.iter().map(|x| x.1).collect();
            let specs: Vec<FieldSpec> = own[fi].iter().map(|&f| FieldSpec::of(frag, f)).collect();
            let spec_refs: Vec<&FieldSpec> = specs.iter().collect();
            let decoded = decode_in_runs(
                self.storage,
                &self.context,
                frag,
                &spec_refs,
                &numbers,
                |src, t| {
                    let at = first + numbers.binary_search(&t).expect("one of ours");
                    let mut var = Vec::new();
                    for (k, spec) in specs.iter().enumerate() {
                        if spec.cell_val_num.is_var() && var_sizes[k].is_none() {
                            var.push(decode_field_tile(src, frag, spec, t, key)?);
                            continue;
                        }
                        let mut slot = slots[k][at].lock().expect("no panics while held");
                        let Slot {
                            data,
                            validity,
                            offsets,
                        } = &mut *slot;
                        let validity = validity.as_deref_mut();
                        match (data.as_deref_mut(), offsets) {
                            (Some(d), Some((o, base))) => decode_var_tile_into(
                                src,
                                frag,
                                spec,
                                t,
                                key,
                                d,
                                (o, *base),
                                validity,
                            )?,
                            (d, _) => {
                                decode_tile_into(src, frag, spec, t, key, (d, validity), None)?
                            }
                        }
                    }
                    Ok(var)
                },
            )?;
            var_tiles.extend(decoded);
            first += count;
        }
        drop(slots);
        // Var-sized columns: values and validity copied, offsets rebased.
        let mut var_columns: Vec<&mut Column> = columns
            .iter_mut()
            .zip(&var_sizes)
            .filter(|(c, sizes)| c.cell_val_num.is_var() && sizes.is_none())
            .map(|(c, _)| c)
            .collect();
        var_columns
            .par_iter_mut()
            .enumerate()
            .for_each(|(k, c)| c.fill_from(&self.context, var_tiles.iter().map(|v| &v[k])));
        Ok(Some(ReadResult {
            cell_count: n as usize,
            columns,
            grid: None,
            context: None,
        }))
    }

    /// [`Query::sparse_direct`] when some tiles are only partly inside the
    /// subarray. Such a tile's coordinates decode into a per-thread scratch
    /// buffer, the cells inside are picked, and of each field only those
    /// cells are kept (fixed-sized fields decode into scratch too): no
    /// decoded tile is held to the end, and no fresh memory is faulted in
    /// for it. Tiles wholly inside are kept whole.
    fn sparse_picked(
        &self,
        schema: &ArraySchema,
        tiles: &[(usize, u64, bool)],
        wanted: &[Field],
        own: &[Vec<Field>],
        cond_fields: &[String],
    ) -> Result<ReadResult, QueryError> {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let frags = &self.array.fragments;
        let dims = &schema.dimensions;
        let nd = dims.len();
        let key = self.array.key;
        // The condition reads a cell's dimensions by number and the other
        // fields it names after them, in `cond_fields` order.
        let condition = self.condition.as_ref().map(|c| {
            c.compile(&|name: &str| {
                if let Some(j) = dims.iter().position(|d| d.name == name) {
                    return Some((j, dims[j].datatype));
                }
                let k = cond_fields.iter().position(|f| f == name)?;
                Some((nd + k, schema.attribute(name)?.datatype))
            })
        });
        // Per tile in result order: its cells kept, and those of each
        // wanted column.
        type Picked = (u64, Vec<FieldTile>);
        let mut kept: Vec<Picked> = Vec::with_capacity(tiles.len());
        let mut first = 0;
        for (fi, frag) in frags.iter().enumerate() {
            let count = tiles[first..].iter().take_while(|x| x.0 == fi).count();
            let mine = &tiles[first..first + count];
            first += count;
            let dim_specs: Vec<FieldSpec> = (0..nd)
                .map(|j| FieldSpec::of(frag, Field::Dimension(j)))
                .collect();
            let specs: Vec<FieldSpec> = own[fi].iter().map(|&f| FieldSpec::of(frag, f)).collect();
            let cond_specs: Vec<FieldSpec> = cond_fields
                .iter()
                .map(|n| FieldSpec::named(frag, n).expect("checked by sparse_direct"))
                .collect();
            // Cell sizes for the condition, looked up once, not per cell.
            let dim_w: Vec<usize> = dim_specs.iter().map(|s| s.cell_size() as usize).collect();
            let cond_w: Vec<usize> = cond_specs.iter().map(|s| s.cell_size() as usize).collect();
            let whole = |src: &Fetched<'_>, t| -> Result<Picked, QueryError> {
                let fields = specs
                    .iter()
                    .map(|s| decode_field_tile(src, frag, s, t, key))
                    .collect::<Result<_, QueryError>>()?;
                Ok((frag.cell_num(t), fields))
            };
            let dim_ranges: Vec<DimRanges<'_>> = (0..nd)
                .map(|j| DimRanges::new(&self.ranges[j], dims[j].datatype))
                .collect();
            let partial = |src: &Fetched<'_>, t| -> Result<Picked, QueryError> {
                SCRATCH.with(|cell| {
                    // The thread's buffers, unless a job of this read holds
                    // them already on this thread: waiting for the chunks it
                    // decodes in parallel, a rayon thread runs other jobs,
                    // another tile's among them. That one gets its own.
                    let mut own = Vec::new();
                    let mut held = cell.try_borrow_mut().ok();
                    let scratch: &mut Vec<Vec<u8>> = held.as_deref_mut().unwrap_or(&mut own);
                    scratch.resize_with(nd + 2 + 2 * cond_specs.len(), Vec::new);
                    let cells = frag.cell_num(t) as usize;
                    let (coords, rest) = scratch.split_at_mut(nd);
                    let (rest, cond_bufs) = rest.split_at_mut(2);
                    // Fixed-sized coordinates decode into scratch; var-sized
                    // ones (strings) into a tile of their own. Dimension by
                    // dimension, the cells still inside narrow, and the next
                    // dimension decodes only the chunks that hold them.
                    let mut var_coords: Vec<Option<FieldTile>> = Vec::with_capacity(nd);
                    let mut picked: Option<Vec<u32>> = None;
                    for (j, s) in dim_specs.iter().enumerate() {
                        let w = s.cell_size() as usize;
                        let tile = if s.cell_val_num.is_var() {
                            Some(decode_field_tile(src, frag, s, t, key)?)
                        } else {
                            // Stale bytes are fine: only decoded cells are read.
                            let buf = &mut coords[j];
                            scratch_to(buf, fixed_tile_len(frag, s, t)?);
                            let among = picked.as_deref().map(picked_cells);
                            let only = among.as_ref().map(|f| f as &CellFilter<'_>);
                            decode_tile_into(src, frag, s, t, key, (Some(buf), None), only)?;
                            None
                        };
                        picked = Some(match &tile {
                            Some(tile) => {
                                let inside =
                                    |&i: &u32| dim_ranges[j].contains(tile.value(i as usize));
                                match picked.take() {
                                    None => (0..cells as u32).filter(inside).collect(),
                                    Some(p) => p.into_iter().filter(inside).collect(),
                                }
                            }
                            None => dim_ranges[j].pick(&coords[j], w, picked.take()),
                        });
                        var_coords.push(tile);
                    }
                    let mut picked = picked.unwrap_or_else(|| (0..cells as u32).collect());
                    if let Some(cond) = &condition {
                        // The fields the condition names, at the cells
                        // still in: fixed-sized ones into scratch, var-sized
                        // ones as tiles.
                        let mut var_vals: Vec<Option<FieldTile>> =
                            Vec::with_capacity(cond_specs.len());
                        for (s, bufs) in cond_specs.iter().zip(cond_bufs.chunks_mut(2)) {
                            if s.cell_val_num.is_var() {
                                var_vals.push(Some(decode_field_tile(src, frag, s, t, key)?));
                                continue;
                            }
                            let (data, validity) = bufs.split_at_mut(1);
                            let scratch = (&mut data[0], &mut validity[0]);
                            decode_picked_fixed(src, frag, s, t, key, &picked, scratch)?;
                            var_vals.push(None);
                        }
                        let value = |c: usize, at: usize| -> (&[u8], bool) {
                            if at < nd {
                                return match &var_coords[at] {
                                    Some(tile) => (tile.value(c), true),
                                    None => (&coords[at][c * dim_w[at]..(c + 1) * dim_w[at]], true),
                                };
                            }
                            let k = at - nd;
                            match &var_vals[k] {
                                Some(tile) => (tile.value(c), tile.valid(c)),
                                None => {
                                    let w = cond_w[k];
                                    let valid = cond_bufs[2 * k + 1].get(c).is_none_or(|&v| v != 0);
                                    (&cond_bufs[2 * k][c * w..(c + 1) * w], valid)
                                }
                            }
                        };
                        picked.retain(|&c| cond.eval(&|at| value(c as usize, at)));
                    }
                    let fields = specs
                        .iter()
                        .map(|s| {
                            let w = s.cell_size() as usize;
                            if let Field::Dimension(j) = s.field {
                                return Ok(match &var_coords[j] {
                                    Some(tile) => tile.pick(&picked),
                                    None => pick_fixed(&coords[j], None, w, &picked),
                                });
                            }
                            let (data, validity) = rest.split_at_mut(1);
                            if s.cell_val_num.is_var() {
                                // Just the chunks holding the picked values.
                                let scratch = (&mut data[0], &mut validity[0]);
                                return match pick_var_tile(src, frag, s, t, key, &picked, scratch)?
                                {
                                    Some(tile) => Ok(tile),
                                    None => {
                                        Ok(decode_field_tile(src, frag, s, t, key)?.pick(&picked))
                                    }
                                };
                            }
                            let (data, validity) = (&mut data[0], &mut validity[0]);
                            decode_picked_fixed(src, frag, s, t, key, &picked, (data, validity))?;
                            let v = s.nullable.then_some(validity.as_slice());
                            Ok(pick_fixed(data, v, w, &picked))
                        })
                        .collect::<Result<_, QueryError>>()?;
                    Ok((picked.len() as u64, fields))
                })
            };
            // Whole tiles need no coordinates unless they are asked for.
            let numbers = |whole: bool| -> Vec<u64> {
                mine.iter().filter(|x| x.2 == whole).map(|x| x.1).collect()
            };
            let (full, part) = (numbers(true), numbers(false));
            let spec_refs: Vec<&FieldSpec> = specs.iter().collect();
            // Coordinates once, whether or not they are also wanted; and
            // the condition's other fields.
            let mut with_coords: Vec<&FieldSpec> = dim_specs
                .iter()
                .chain(
                    specs
                        .iter()
                        .filter(|s| !matches!(s.field, Field::Dimension(_))),
                )
                .collect();
            for c in &cond_specs {
                if with_coords.iter().all(|s| s.field != c.field) {
                    with_coords.push(c);
                }
            }
            let mut full =
                decode_in_runs(self.storage, &self.context, frag, &spec_refs, &full, whole)?
                    .into_iter();
            let mut part = decode_in_runs(
                self.storage,
                &self.context,
                frag,
                &with_coords,
                &part,
                partial,
            )?
            .into_iter();
            for x in mine {
                let next = if x.2 { full.next() } else { part.next() };
                kept.push(next.expect("one result per tile"));
            }
        }
        let n: u64 = kept.iter().map(|k| k.0).sum();
        let mut columns: Vec<Column> = wanted.iter().map(|&f| field_column(schema, f)).collect();
        columns
            .par_iter_mut()
            .enumerate()
            .for_each(|(k, c)| c.fill_from(&self.context, kept.iter().map(|v| &v.1[k])));
        Ok(ReadResult {
            cell_count: n as usize,
            columns,
            grid: None,
            context: None,
        })
    }

    fn sparse(
        &self,
        schema: &Arc<ArraySchema>,
        attrs: &[String],
        layout: Layout,
    ) -> Result<ReadResult, QueryError> {
        if let Some(r) = self.sparse_direct(schema, attrs, layout)? {
            return Ok(r);
        }
        let dims = &schema.dimensions;
        let nd = dims.len();
        let dim_names: Vec<String> = dims.iter().map(|d| d.name.clone()).collect();
        // Fields to decode: dimensions, selected attributes, and any the conditions read.
        let deletes: Vec<(u64, String, Expr)> = self
            .array
            .delete_conditions
            .iter()
            .map(|d| (d.timestamp, d.name.clone(), Expr::from_stored(&d.condition)))
            .collect();
        let mut extra = Vec::new();
        if let Some(c) = &self.condition {
            c.fields(&mut extra);
        }
        for (_, _, e) in &deletes {
            e.fields(&mut extra);
        }
        let mut fields: Vec<String> = attrs.to_vec();
        for f in extra {
            if !fields.contains(&f) && !dim_names.contains(&f) {
                if schema.attribute(&f).is_none() {
                    return Err(QueryError::Invalid(format!(
                        "a condition names `{f}`, which the array does not have"
                    )));
                }
                fields.push(f);
            }
        }
        let pruning = self
            .condition
            .as_ref()
            .filter(|_| self.prune)
            .map(|c| (c, crate::prune::Shadows::new(self.array)));
        let prune_by = pruning.as_ref().map(|(c, s)| (*c, s));
        let mut tiles: Vec<TileCells> = Vec::new();
        for (fi, frag) in self.array.fragments.iter().enumerate() {
            if frag.footer.dense {
                return Err(QueryError::Invalid(format!(
                    "fragment {} is dense in a sparse array",
                    frag.name
                )));
            }
            tiles.extend(self.sparse_tiles(fi, frag, &fields, prune_by)?);
        }
        // Each fragment is stored in global order: a single fragment needs
        // neither deduplication nor re-sorting, unless it holds per-cell
        // timestamps (consolidated with them, it keeps every version of a
        // cell) where duplicates are not allowed.
        let versions = self.array.fragments.iter().any(|f| f.footer.has_timestamps);
        let single = self.array.fragments.len() <= 1 && (schema.allows_dups || !versions);
        // Conditions read a cell's fields by position: the dimensions, then
        // `fields`; a field a fragment lacks reads as its fill value.
        let position = |name: &str| -> Option<(usize, Datatype)> {
            if let Some(j) = dims.iter().position(|d| d.name == name) {
                return Some((j, dims[j].datatype));
            }
            let k = fields.iter().position(|f| f == name)?;
            Some((nd + k, schema.attribute(name)?.datatype))
        };
        let fills: Vec<(&[u8], bool)> = fields
            .iter()
            .map(|f| match schema.attribute(f) {
                Some(a) => (a.fill_value.as_slice(), a.fill_validity),
                None => (&[][..], false),
            })
            .collect();
        fn field_of<'t>(
            tc: &'t TileCells,
            c: usize,
            at: usize,
            fills: &[(&'t [u8], bool)],
        ) -> (&'t [u8], bool) {
            let nd = tc.dims.len();
            if at < nd {
                return (tc.dims[at].value(c), true);
            }
            match &tc.fields[at - nd] {
                Some(t) => (t.value(c), t.valid(c)),
                None => fills[at - nd],
            }
        }
        let condition = self.condition.as_ref().map(|c| c.compile(&position));
        // libtiledb fails every cell of a fragment that lacks a field the
        // query condition names (schema evolution), whatever the rest of
        // the condition says (2.17 to 2.30 alike).
        let blind: Vec<bool> = match &self.condition {
            Some(c) => {
                let mut names = Vec::new();
                c.fields(&mut names);
                names.retain(|n| !dim_names.contains(n));
                let frags = &self.array.fragments;
                frags
                    .iter()
                    .map(|f| names.iter().any(|n| f.schema.attribute(n).is_none()))
                    .collect()
            }
            None => Vec::new(),
        };
        let passes = |cond: &crate::condition::Compiled, tc: &TileCells, c: u32| {
            cond.eval(&|at| field_of(tc, c as usize, at, &fills))
        };
        let meets = |cond: &crate::condition::Compiled, tc: &TileCells, c: u32| {
            !blind.get(tc.frag).copied().unwrap_or(false) && passes(cond, tc, c)
        };
        // Without deduplication the condition is a filter on each cell
        // alone: apply it per tile, before any cell reference is made.
        let dedup = !schema.allows_dups && !single;
        if let (Some(cond), false) = (&condition, dedup) {
            tiles.par_iter_mut().for_each(|tc| {
                let mut cells = std::mem::take(&mut tc.cells);
                cells.retain(|&c| meets(cond, tc, c));
                tc.cells = cells;
            });
        }
        // Cell references with their timestamps.
        let (start, end) = (self.array.timestamp_start, self.array.timestamp_end);
        let mut refs: Vec<(u32, u32, u64)> = Vec::new();
        for (ti, tc) in tiles.iter().enumerate() {
            let frag = &self.array.fragments[tc.frag];
            let (ft, _) = frag.timestamp_range();
            for &c in &tc.cells {
                let ts = match &tc.times {
                    Some(t) => u64::from_le_bytes(t.value(c as usize).try_into().unwrap_or([0; 8])),
                    None => ft,
                };
                if tc.times.is_some() && (ts < start || ts > end) {
                    continue;
                }
                refs.push((ti as u32, c, ts));
            }
        }
        // Consolidated deletes: a cell deleted at or before the open time
        // is gone, after deduplication (below) as in libtiledb: deleting
        // the newest version of a cell does not bring back an older one.
        let deleted = |&(ti, c, _): &(u32, u32, u64)| {
            tiles[ti as usize].delete_times.as_ref().is_some_and(|d| {
                let dt = u64::from_le_bytes(d.value(c as usize).try_into().unwrap_or([0xff; 8]));
                !(dt > end || (end == u64::MAX && dt == u64::MAX))
            })
        };
        // Coordinates compare in place, without building keys.
        let cval = |r: &(u32, u32, u64), j: usize| tiles[r.0 as usize].dims[j].value(r.1 as usize);
        let cmp_dims =
            |x: &(u32, u32, u64), y: &(u32, u32, u64), order: &[usize]| -> std::cmp::Ordering {
                for &j in order {
                    let o = compare_values(dims[j].datatype, cval(x, j), cval(y, j));
                    if o.is_ne() {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            };
        let row = major_order(Layout::RowMajor, nd);
        let col = major_order(Layout::ColMajor, nd);
        let (tile_order, cell_order) = (
            major_order(schema.tile_order, nd),
            major_order(schema.cell_order, nd),
        );
        // Each dimension's (domain start, tile extent), decoded once for the sort.
        let tiling: Vec<Option<(Key, Key)>> = dims
            .iter()
            .map(|d| match (d.domain.as_ref(), d.tile_extent.as_ref()) {
                (Some((lo, _)), Some(ext)) => {
                    Some((Key::decode(d.datatype, lo), Key::decode(d.datatype, ext)))
                }
                _ => None,
            })
            .collect();
        let tile_of = |r: &(u32, u32, u64), j: usize| {
            tile_coord(
                tiling[j].as_ref(),
                Key::decode(dims[j].datatype, cval(r, j)),
            )
        };
        let global = |x: &(u32, u32, u64), y: &(u32, u32, u64)| -> std::cmp::Ordering {
            for &j in &tile_order {
                let o = tile_of(x, j).cmp(&tile_of(y, j));
                if o.is_ne() {
                    return o;
                }
            }
            cmp_dims(x, y, &cell_order)
        };
        // Duplicates: unless allowed, the newest write of a coordinate wins.
        if dedup {
            let frag_of = |r: &(u32, u32, u64)| tiles[r.0 as usize].frag;
            let mut idx: Vec<usize> = (0..refs.len()).collect();
            idx.sort_by(|&a, &b| {
                cmp_dims(&refs[a], &refs[b], &row).then((refs[a].2, frag_of(&refs[a]), a).cmp(&(
                    refs[b].2,
                    frag_of(&refs[b]),
                    b,
                )))
            });
            let mut keep = Vec::with_capacity(refs.len());
            for (p, &i) in idx.iter().enumerate() {
                if idx
                    .get(p + 1)
                    .is_none_or(|&nx| cmp_dims(&refs[nx], &refs[i], &row).is_ne())
                {
                    keep.push(refs[i]);
                }
            }
            refs = keep;
        }
        refs.retain(|r| !deleted(r));
        // Delete conditions, after deduplication as in libtiledb: deleting
        // the newest write of a cell does not bring back an older one (the
        // deletes_overwritten fixture). libtiledb stores the negation of the
        // delete condition (the cells to keep); a cell written before the
        // delete that does not satisfy it is gone. Commits a fragment lists
        // as processed were applied when it was consolidated: they are not
        // applied to it again.
        if !deletes.is_empty() {
            let processed: Vec<Vec<bool>> = self
                .array
                .fragments
                .iter()
                .map(|f| {
                    let done = f.processed_conditions(self.storage)?;
                    Ok(deletes
                        .iter()
                        .map(|(_, name, _)| done.iter().any(|d| d == name))
                        .collect())
                })
                .collect::<Result<_, QueryError>>()?;
            let kept: Vec<_> = deletes
                .iter()
                .map(|(_, _, e)| e.compile(&position))
                .collect();
            refs.retain(|&(ti, c, ts)| {
                let tc = &tiles[ti as usize];
                !deletes
                    .iter()
                    .zip(&kept)
                    .enumerate()
                    .any(|(k, ((dts, _, _), e))| {
                        !processed[tc.frag][k] && ts < *dts && !passes(e, tc, c)
                    })
            });
        }
        // The condition, after deduplication as in libtiledb: a newer
        // write failing it still hides older ones that pass.
        if let (Some(cond), true) = (&condition, dedup) {
            refs.retain(|&(ti, c, _)| meets(cond, &tiles[ti as usize], c));
        }
        // Order.
        match layout {
            Layout::RowMajor => refs.sort_by(|x, y| cmp_dims(x, y, &row)),
            Layout::ColMajor => refs.sort_by(|x, y| cmp_dims(x, y, &col)),
            Layout::GlobalOrder | Layout::Unordered
                if schema.cell_order == Layout::Hilbert
                    && (!single || layout == Layout::GlobalOrder) =>
            {
                // Hilbert value of the coordinates, ties broken row-major.
                let h = crate::hilbert::Mapping::new(dims);
                let mut keyed: Vec<(u64, (u32, u32, u64))> = refs
                    .iter()
                    .map(|r| (h.value(dims, |j| cval(r, j)), *r))
                    .collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| cmp_dims(&a.1, &b.1, &row)));
                refs = keyed.into_iter().map(|k| k.1).collect();
            }
            Layout::GlobalOrder | Layout::Unordered
                if !single && (!schema.allows_dups || layout == Layout::GlobalOrder) =>
            {
                refs.sort_by(global)
            }
            _ => {}
        }
        // Assemble: cells that follow each other in one tile are copied as
        // one run, and the columns are built in parallel.
        let n = refs.len();
        let mut runs: Vec<(usize, usize, usize)> = Vec::new(); // (tile, from, to)
        for r in &refs {
            let (ti, c) = (r.0 as usize, r.1 as usize);
            match runs.last_mut() {
                Some(run) if run.0 == ti && run.2 == c => run.2 += 1,
                _ => runs.push((ti, c, c + 1)),
            }
        }
        let mut wanted: Vec<Option<usize>> = Vec::new(); // None: dimension j; Some(k): field k
        if self.with_dimensions {
            wanted.extend((0..nd).map(|_| None));
        }
        wanted.extend(
            attrs
                .iter()
                .map(|a| Some(fields.iter().position(|f| f == a).expect("selected"))),
        );
        let columns: Vec<crate::result::Column> = wanted
            .par_iter()
            .enumerate()
            .map(|(w, field)| match *field {
                None => {
                    let d = &dims[w];
                    let mut b = ColumnBuilder::new(
                        &self.context,
                        &d.name,
                        true,
                        d.datatype,
                        d.cell_val_num,
                        false,
                        n,
                    );
                    for &(ti, from, to) in &runs {
                        b.push_run(&tiles[ti].dims[w], from, to);
                    }
                    b.col
                }
                Some(k) => {
                    let a = &fields[k];
                    let at = schema.attribute(a).expect("checked");
                    let mut b = ColumnBuilder::new(
                        &self.context,
                        a,
                        false,
                        at.datatype,
                        at.cell_val_num,
                        at.nullable,
                        n,
                    );
                    for &(ti, from, to) in &runs {
                        match &tiles[ti].fields[k] {
                            Some(t) => b.push_run(t, from, to),
                            None => {
                                (from..to).for_each(|_| b.push(&at.fill_value, at.fill_validity))
                            }
                        }
                    }
                    b.col
                }
            })
            .collect();
        let result = ReadResult {
            cell_count: n,
            columns,
            grid: None,
            context: None,
        };
        Ok(result)
    }
}

/// An empty result column for a dimension or an attribute of `schema`.
fn field_column(schema: &ArraySchema, field: Field) -> Column {
    let (name, is_dimension, datatype, cvn, nullable) = match field {
        Field::Dimension(j) => {
            let d = &schema.dimensions[j];
            (&d.name, true, d.datatype, d.cell_val_num, false)
        }
        Field::Attribute(i) => {
            let a = &schema.attributes[i];
            (&a.name, false, a.datatype, a.cell_val_num, a.nullable)
        }
        _ => unreachable!("results hold only dimensions and attributes"),
    };
    // Built empty, to be replaced: no buffer is taken from any pool.
    ColumnBuilder::new(
        &ReadContext::new(),
        name,
        is_dimension,
        datatype,
        cvn,
        nullable,
        0,
    )
    .col
}

/// A tile's fields as a dense read places them: decoded, or for those read
/// straight from unfiltered tiles, where their cells lie.
type TileFields = (Vec<Option<FieldTile>>, Vec<Option<UnfilteredTile>>);

/// A tile's streamed fields (by index) and the destinations of their runs,
/// taken by whichever thread decodes the tile.
type StreamRuns<'d> = std::sync::Mutex<Vec<(usize, Runs<'d>)>>;

/// Bytes from which unfiltered tiles are read straight into a dense
/// result ([`Query::direct_tile_bytes`]): a chunk's worth.
const DIRECT_TILE_BYTES: u64 = 64 << 10;

/// Decoded bytes per group of tiles a dense read places at once.
const DENSE_GROUP_BYTES: u64 = 32 << 20;

/// Decoded bytes under which a band of a dense read joins its neighbour
/// ([`Query::dense_band_bytes`]).
const DENSE_BAND_BYTES: u64 = 8 << 20;

/// One attribute's output of a dense read, filled in place.
struct DenseOut {
    fixed: Option<Vec<u8>>,
    /// Var-sized cells as (buffer id, start, length).
    var: Option<Vec<(u32, u64, u64)>>,
    validity: Option<Vec<u8>>,
    cell: usize,
}

/// One attribute's share of a dense result: the cells of one region of
/// result positions, borrowed from its [`DenseOut`], so that regions are
/// filled in parallel.
struct BandOut<'o> {
    fixed: Option<&'o mut [u8]>,
    var: Option<&'o mut [(u32, u64, u64)]>,
    validity: Option<&'o mut [u8]>,
    cell: usize,
}

impl BandOut<'_> {
    /// The same cells, borrowed again (for a shorter while).
    fn reborrow(&mut self) -> BandOut<'_> {
        BandOut {
            fixed: self.fixed.as_deref_mut(),
            var: self.var.as_deref_mut(),
            validity: self.validity.as_deref_mut(),
            cell: self.cell,
        }
    }
}

/// Cuts every output into the regions `[start, end)` of result positions
/// (sorted, disjoint, inside the result): per region, one view per output.
fn band_outs<'o>(outs: &'o mut [DenseOut], regions: &[(usize, usize)]) -> Vec<Vec<BandOut<'o>>> {
    let whole = outs
        .iter_mut()
        .map(|o| BandOut {
            fixed: o.fixed.as_deref_mut(),
            var: o.var.as_deref_mut(),
            validity: o.validity.as_deref_mut(),
            cell: o.cell,
        })
        .collect();
    split_views(whole, regions)
}

/// Cuts views into the regions `[start, end)` of their cells (sorted,
/// disjoint, inside the views): per region, one view per output.
fn split_views<'o>(views: Vec<BandOut<'o>>, regions: &[(usize, usize)]) -> Vec<Vec<BandOut<'o>>> {
    let mut out: Vec<Vec<BandOut<'o>>> = regions.iter().map(|_| Vec::new()).collect();
    for v in views {
        let w = v.cell;
        let (mut fixed, mut var, mut validity) = (v.fixed, v.var, v.validity);
        let mut at = 0;
        for (o, &(start, end)) in out.iter_mut().zip(regions) {
            o.push(BandOut {
                fixed: cut(&mut fixed, (start - at) * w, (end - start) * w),
                var: cut(&mut var, start - at, end - start),
                validity: cut(&mut validity, start - at, end - start),
                cell: w,
            });
            at = end;
        }
    }
    out
}

/// The `take` items of `rest` after its first `skip`; `rest` keeps what
/// follows them. Buffers are handed out in parts this way, safely.
fn cut<'o, T>(rest: &mut Option<&'o mut [T]>, skip: usize, take: usize) -> Option<&'o mut [T]> {
    let (_, after) = rest.take()?.split_at_mut(skip);
    let (part, after) = after.split_at_mut(take);
    *rest = Some(after);
    Some(part)
}

/// The bands of a dense fragment's `tiles` along result dimension `j`
/// (grid `dom`, non-empty domain `ned`, subarray ranges `sub`): per band,
/// its first and last position on `j` and its members (indexes into
/// `tiles`), sorted by position. `None` where a band's positions are not
/// one interval (ranges that overlap, or out of order): then the whole
/// result is one region.
#[allow(clippy::type_complexity)]
fn dense_bands(
    tiles: &[Vec<i128>],
    j: usize,
    dom: &(i128, i128, i128),
    ned: (i128, i128),
    sub: &[(i128, i128)],
) -> Option<Vec<(u64, u64, Vec<usize>)>> {
    let mut sorted = sub.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[1].0 <= w[0].1) {
        return None;
    }
    let mut by_coord: std::collections::BTreeMap<i128, Vec<usize>> = Default::default();
    for (i, tc) in tiles.iter().enumerate() {
        by_coord.entry(tc[j]).or_default().push(i);
    }
    let mut bands = Vec::with_capacity(by_coord.len());
    for (t, members) in by_coord {
        let (lo, hi) = (
            (dom.0 + t * dom.2).max(ned.0),
            (dom.0 + (t + 1) * dom.2 - 1).min(ned.1),
        );
        // Positions of the band's coordinates: an interval per range.
        let (mut first, mut last, mut count, mut base) = (u64::MAX, 0u64, 0u64, 0u64);
        for (a, b) in sub {
            let (x, y) = ((*a).max(lo), (*b).min(hi));
            if x <= y {
                let p = base + (x - a) as u64;
                let q = base + (y - a) as u64;
                first = first.min(p);
                last = last.max(q);
                count += q - p + 1;
            }
            base += (b - a + 1) as u64;
        }
        if count == 0 || last - first + 1 != count {
            return None;
        }
        bands.push((first, last, members));
    }
    bands.sort_unstable_by_key(|b| b.0);
    Some(bands)
}

/// Copies the runs `wanted` (first cell in the tile, first position in the
/// region, cells) of a fixed-sized tile (and its validity) into a region.
fn copy_runs(
    tile: &FieldTile,
    o: &mut BandOut<'_>,
    wanted: &[(usize, usize, usize)],
    fragment: &str,
) -> Result<(), QueryError> {
    let w = o.cell;
    for &(cell, ri, len) in wanted {
        if (cell + len) * w > tile.data.len() {
            return Err(cells_past_tile(fragment, cell as u64..(cell + len) as u64));
        }
        if let Some(fx) = &mut o.fixed {
            fx[ri * w..(ri + len) * w].copy_from_slice(&tile.data[cell * w..(cell + len) * w]);
        }
        if let Some(val) = &mut o.validity {
            match &tile.validity {
                Some(v) => val[ri..ri + len].copy_from_slice(&v[cell..cell + len]),
                None => val[ri..ri + len].fill(1),
            }
        }
    }
    Ok(())
}

/// The destinations of the runs `wanted` (as in [`copy_runs`]) in a region
/// of `w`-byte cells, cut apart, each with its first byte in the tile, in
/// the order of `wanted`; `None` where two runs share a position (ranges
/// that overlap).
fn carve_runs<'r>(
    mut region: &'r mut [u8],
    w: usize,
    wanted: &[(usize, usize, usize)],
) -> Result<Option<Runs<'r>>, QueryError> {
    let mut order: Vec<usize> = (0..wanted.len()).collect();
    order.sort_unstable_by_key(|&i| wanted[i].1);
    let mut out = Vec::with_capacity(order.len());
    let mut at = 0;
    for i in order {
        let (cell, ri, len) = wanted[i];
        let Some(skip) = (ri * w).checked_sub(at) else {
            return Ok(None);
        };
        if (ri + len) * w > region.len() + at {
            return Err(QueryError::Invalid(format!(
                "result positions {ri}..{} pass their region",
                ri + len
            )));
        }
        let (_, rest) = std::mem::take(&mut region).split_at_mut(skip);
        let (dst, rest) = rest.split_at_mut(len * w);
        out.push((i, (cell * w) as u64, dst));
        region = rest;
        at = (ri + len) * w;
    }
    // Back in the order asked.
    out.sort_unstable_by_key(|r| r.0);
    Ok(Some(out.into_iter().map(|(_, at, d)| (at, d)).collect()))
}

/// Writes cell `cell` of `tile` (or, without a tile, the fill value of
/// attribute `at`: the fragment predates it) at position `ri` of a region.
/// Var-sized cells name their bytes by `id` ([`var_ids`]).
fn put_cell(
    o: &mut BandOut<'_>,
    tile: Option<&FieldTile>,
    cell: usize,
    ri: usize,
    at: &tessera_schema::Attribute,
    id: u32,
    fragment: &str,
) -> Result<(), QueryError> {
    match tile {
        Some(tile) => {
            if cell >= tile.cells as usize {
                return Err(QueryError::Invalid(format!(
                    "fragment {fragment}: cell {cell} is past its tile"
                )));
            }
            if let Some(fx) = &mut o.fixed {
                let v = tile.value(cell);
                if v.len() == o.cell {
                    fx[ri * o.cell..(ri + 1) * o.cell].copy_from_slice(v);
                }
            }
            if let Some(vv) = &mut o.var {
                let offs = tile.offsets.as_ref().expect("var tile");
                vv[ri] = (id, offs[cell], offs[cell + 1] - offs[cell]);
            }
            if let Some(val) = &mut o.validity {
                val[ri] = tile.valid(cell) as u8;
            }
        }
        None => {
            if let Some(fx) = &mut o.fixed {
                fx[ri * o.cell..(ri + 1) * o.cell]
                    .copy_from_slice(&at.fill_value[..o.cell.min(at.fill_value.len())]);
            }
            if let Some(vv) = &mut o.var {
                vv[ri] = (id, 0, at.fill_value.len() as u64);
            }
            if let Some(val) = &mut o.validity {
                val[ri] = at.fill_validity as u8;
            }
        }
    }
    Ok(())
}

/// The buffer ids var-sized cells of these tiles name: each var-sized
/// tile's values move into `bufs` (they are not needed after placing)
/// under a new id; a field without a tile names its attribute's fill
/// value, buffer `k`.
fn var_ids(
    fields: &mut [Option<FieldTile>],
    outs: &[BandOut<'_>],
    bufs: &mut Vec<Arc<Vec<u8>>>,
) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..fields.len() as u32).collect();
    for ((f, o), id) in fields.iter_mut().zip(outs).zip(&mut ids) {
        if let (Some(tile), Some(_)) = (f, &o.var) {
            bufs.push(Arc::new(std::mem::take(&mut tile.data)));
            *id = (bufs.len() - 1) as u32;
        }
    }
    ids
}

/// The decoded tiles of one sparse tile and which of its cells the subarray selects.
struct TileCells {
    /// Index of the fragment.
    frag: usize,
    dims: Vec<FieldTile>,
    fields: Vec<Option<FieldTile>>,
    times: Option<FieldTile>,
    delete_times: Option<FieldTile>,
    /// Cells inside the subarray.
    cells: Vec<u32>,
}

/// Reorders the cells of a result: cell `k` of the output is cell `perm[k]`.
fn permute(ctx: &ReadContext, r: ReadResult, perm: &[usize]) -> ReadResult {
    let columns = r
        .columns
        .iter()
        .map(|col| {
            let mut b = ColumnBuilder::new(
                ctx,
                &col.name,
                col.is_dimension,
                col.datatype,
                col.cell_val_num,
                col.validity.is_some(),
                perm.len(),
            );
            for &i in perm {
                b.push(col.value(i), col.is_valid(i));
            }
            b.col
        })
        .collect();
    ReadResult {
        columns,
        cell_count: perm.len(),
        grid: r.grid,
        context: r.context,
    }
}

/// Replaces the attribute values of cells failing `c` with fill values (dense reads).
fn fill_unmatched(ctx: &ReadContext, r: ReadResult, c: &Expr, schema: &ArraySchema) -> ReadResult {
    let cols = &r.columns;
    let c = c.compile_columns(cols);
    let pass: Vec<bool> = (0..r.cell_count)
        .into_par_iter()
        .map(|i| c.eval(&|at| (cols[at].value(i), cols[at].is_valid(i))))
        .collect();
    let columns = r
        .columns
        .iter()
        .map(|col| {
            if col.is_dimension {
                return col.clone();
            }
            let at = schema.attribute(&col.name);
            let mut b = ColumnBuilder::new(
                ctx,
                &col.name,
                false,
                col.datatype,
                col.cell_val_num,
                col.validity.is_some(),
                r.cell_count,
            );
            for (i, ok) in pass.iter().enumerate() {
                match (ok, at) {
                    (false, Some(at)) => b.push(&at.fill_value, at.fill_validity),
                    _ => b.push(col.value(i), col.is_valid(i)),
                }
            }
            b.col
        })
        .collect();
    ReadResult {
        columns,
        cell_count: r.cell_count,
        grid: r.grid,
        context: r.context,
    }
}
