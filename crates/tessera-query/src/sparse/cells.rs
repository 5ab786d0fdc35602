//! The cells of a sparse read's decoded tiles: their fields as conditions
//! read them, and their order (coordinates, global order, duplicates).

use super::packed::{CoordinateBounds, KeyOrder, Packing};
use super::tiles::TileCells;
use rayon::prelude::*;
use std::cmp::Ordering;
use tessera_cells::order::major_order;
use tessera_cells::order::GlobalOrder;
use tessera_cells::{Compiled, Expr, FieldCells};
use tessera_fragment::FragmentMetadata;
use tessera_schema::ArraySchema;
use tessera_tile::{Datatype, Layout};

/// A cell of a sparse read: its tile (an index into the read's tiles), its
/// cell in the tile, and its timestamp.
pub(crate) type CellRef = (u32, u32, u64);

/// The cells a deduplicating read gathered.
pub(crate) enum Gathered {
    /// Every selected cell of every tile, tiles oldest write first, each
    /// tile's cells stamped with its time (one a tile).
    InWriteOrder(Vec<u64>),
    /// These cells, in any order.
    Cells(Vec<CellRef>),
}

/// How conditions read a cell's fields: by position, the dimensions, then
/// the read's fields; a field a fragment lacks reads as its fill value.
pub(crate) struct CellFields<'s> {
    schema: &'s ArraySchema,
    fields: &'s [String],
    fills: Vec<(&'s [u8], bool)>,
    /// Per fragment, whether it lacks a field the query condition names:
    /// libtiledb fails every cell of such a fragment (schema evolution),
    /// whatever the rest of the condition says (2.17 to 2.30 alike).
    blind: Vec<bool>,
}

impl<'s> CellFields<'s> {
    /// The fields `fields` of `schema`, for `condition` over `fragments`.
    pub(crate) fn new(
        schema: &'s ArraySchema,
        fields: &'s [String],
        condition: Option<&Expr>,
        fragments: &[FragmentMetadata],
    ) -> CellFields<'s> {
        let fills = fields
            .iter()
            .map(|f| match schema.attribute(f) {
                Some(a) => (a.fill_value.as_slice(), a.fill_validity),
                None => (&[][..], false),
            })
            .collect();
        let blind = match condition {
            Some(c) => {
                let mut names = Vec::new();
                c.fields(&mut names);
                names.retain(|n| !schema.dimensions.iter().any(|d| &d.name == n));
                fragments
                    .iter()
                    .map(|f| names.iter().any(|n| f.schema.attribute(n).is_none()))
                    .collect()
            }
            None => Vec::new(),
        };
        CellFields {
            schema,
            fields,
            fills,
            blind,
        }
    }

    /// The position and datatype of field `name`, as conditions compile it.
    pub(crate) fn position(&self, name: &str) -> Option<(usize, Datatype)> {
        let dims = &self.schema.dimensions;
        if let Some(j) = dims.iter().position(|d| d.name == name) {
            return Some((j, dims[j].datatype));
        }
        let k = self.fields.iter().position(|f| f == name)?;
        Some((dims.len() + k, self.schema.attribute(name)?.datatype))
    }

    /// Compiles `e` against these positions.
    pub(crate) fn compile(&self, e: &Expr) -> Compiled {
        e.compile(&|name: &str| self.position(name))
    }

    /// The value and validity of field `at` (a position) of cell `c`.
    fn field_of<'t>(&'t self, tc: &'t TileCells, c: usize, at: usize) -> (&'t [u8], bool) {
        let nd = tc.dims.len();
        if at < nd {
            return (tc.dims[at].value(c), true);
        }
        match &tc.fields[at - nd] {
            Some(t) => (t.value(c), t.valid(c)),
            None => self.fills[at - nd],
        }
    }

    /// The cells of field `at` (a position) of `tc`.
    pub(crate) fn field_cells<'t>(&'t self, tc: &'t TileCells, at: usize) -> FieldCells<'t> {
        let nd = tc.dims.len();
        if at < nd {
            return tc.dims[at].field_cells();
        }
        match &tc.fields[at - nd] {
            Some(t) => t.field_cells(),
            None => {
                let (value, valid) = self.fills[at - nd];
                FieldCells::Constant { value, valid }
            }
        }
    }

    /// Whether cell `c` of `tc` satisfies `cond`.
    pub(crate) fn passes(&self, cond: &Compiled, tc: &TileCells, c: u32) -> bool {
        cond.eval(&|at| self.field_of(tc, c as usize, at))
    }

    /// Whether fragment `frag`'s cells fail every query condition.
    fn is_blind(&self, frag: usize) -> bool {
        self.blind.get(frag).copied().unwrap_or(false)
    }

    /// Keeps of `refs` (cells of `tiles`) those meeting `cond`: each
    /// tile's cells among `refs` tested together by the condition's
    /// vectorised select, tiles in parallel; `refs` keep their order.
    pub(crate) fn retain_meeting(
        &self,
        cond: &Compiled,
        tiles: &[TileCells],
        refs: &mut Vec<CellRef>,
    ) {
        let failing: Vec<Vec<usize>> = refs_by_tile(tiles.len(), refs)
            .into_par_iter()
            .zip(tiles.par_iter())
            .map(|(at, tc)| {
                if self.is_blind(tc.frag) {
                    return at;
                }
                let cells: Vec<u32> = at.iter().map(|&i| refs[i].1).collect();
                let mut pass = vec![false; cells.len()];
                cond.select(&|f| self.field_cells(tc, f), &cells, &mut pass);
                at.into_iter()
                    .zip(pass)
                    .filter(|&(_, p)| !p)
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect();
        drop_at(refs, failing.into_iter().flatten());
    }

    /// Keeps in each tile the cells meeting `cond`: the condition as a
    /// filter on each cell alone, where nothing is deduplicated.
    pub(crate) fn filter_tiles(&self, cond: &Compiled, tiles: &mut [TileCells]) {
        tiles.par_iter_mut().for_each(|tc| {
            if self.is_blind(tc.frag) {
                return tc.cells.clear();
            }
            let mut cells = std::mem::take(&mut tc.cells);
            cond.retain(&|at| self.field_cells(tc, at), &mut cells);
            tc.cells = cells;
        });
    }
}

/// The positions in `refs` of each tile's cells (tiles `0..n_tiles`),
/// in `refs`' order: a read's cells grouped for tests a tile at a time.
pub(crate) fn refs_by_tile(n_tiles: usize, refs: &[CellRef]) -> Vec<Vec<usize>> {
    let mut by_tile = vec![Vec::new(); n_tiles];
    for (i, r) in refs.iter().enumerate() {
        by_tile[r.0 as usize].push(i);
    }
    by_tile
}

/// Drops from `refs` the cells at positions `gone`; the rest keep their
/// order.
pub(crate) fn drop_at(refs: &mut Vec<CellRef>, gone: impl IntoIterator<Item = usize>) {
    let mut dropped = vec![false; refs.len()];
    for i in gone {
        dropped[i] = true;
    }
    let mut at = dropped.iter();
    refs.retain(|_| !at.next().copied().unwrap_or(false));
}

/// The order of a sparse read's cells: coordinates compared in place,
/// without building keys.
pub(crate) struct CellOrder<'t> {
    schema: &'t ArraySchema,
    tiles: &'t [TileCells],
    order: GlobalOrder<'t>,
    row: Vec<usize>,
    col: Vec<usize>,
}

impl<'t> CellOrder<'t> {
    /// The order of the cells of `tiles` in `schema`.
    pub(crate) fn new(schema: &'t ArraySchema, tiles: &'t [TileCells]) -> CellOrder<'t> {
        let nd = schema.dimensions.len();
        CellOrder {
            schema,
            tiles,
            order: GlobalOrder::new(schema),
            row: major_order(Layout::RowMajor, nd),
            col: major_order(Layout::ColMajor, nd),
        }
    }

    /// The coordinate of dimension `j` of cell `r`.
    fn cval(&self, r: &CellRef, j: usize) -> &'t [u8] {
        self.tiles[r.0 as usize].dims[j].value(r.1 as usize)
    }

    /// Compares cells by their coordinates, dimensions in `order`.
    fn cmp_dims(&self, x: &CellRef, y: &CellRef, order: &[usize]) -> Ordering {
        self.order
            .compare_in(order, &|j| self.cval(x, j), &|j| self.cval(y, j))
    }

    /// Compares cells in global order: space tiles in tile order, then
    /// coordinates in cell order.
    fn global(&self, x: &CellRef, y: &CellRef) -> Ordering {
        self.order
            .compare_tiled(&|j| self.cval(x, j), &|j| self.cval(y, j))
    }

    /// Keeps one cell per coordinate of `gathered`: the newest write
    /// (latest timestamp, then latest fragment, then last seen). Also
    /// whether the cells kept are sorted in `layout` already (they are
    /// where coordinates pack into keys of its order).
    pub(crate) fn dedup(&self, gathered: Gathered, layout: Layout) -> (Vec<CellRef>, bool) {
        let packed = self.packing(layout);
        let refs = match gathered {
            Gathered::InWriteOrder(stamps) => {
                let n: usize = self.tiles.iter().map(|tc| tc.cells.len()).sum();
                let fits = |(p, _): &&(Packing, bool)| p.bits() + bits_of(n) <= 64;
                if let Some((p, sorted)) = packed.as_ref().filter(fits) {
                    return (self.dedup_in_write_order(p, &stamps), *sorted);
                }
                let stamped = self.tiles.iter().zip(&stamps).enumerate();
                stamped
                    .flat_map(|(ti, (tc, &ts))| tc.cells.iter().map(move |&c| (ti as u32, c, ts)))
                    .collect()
            }
            Gathered::Cells(refs) => refs,
        };
        if let Some((p, sorted)) = packed.filter(|_| refs.len() < u32::MAX as usize) {
            return (self.dedup_packed(&p, refs), sorted);
        }
        let frag_of = |r: &CellRef| self.tiles[r.0 as usize].frag;
        let row = &self.row;
        let mut idx: Vec<usize> = (0..refs.len()).collect();
        idx.par_sort_by(|&a, &b| {
            self.cmp_dims(&refs[a], &refs[b], row)
                .then((refs[a].2, frag_of(&refs[a]), a).cmp(&(refs[b].2, frag_of(&refs[b]), b)))
        });
        let mut keep = Vec::with_capacity(refs.len());
        for (p, &i) in idx.iter().enumerate() {
            if idx
                .get(p + 1)
                .is_none_or(|&nx| self.cmp_dims(&refs[nx], &refs[i], row).is_ne())
            {
                keep.push(refs[i]);
            }
        }
        (keep, layout == Layout::RowMajor)
    }

    /// How the coordinates of the tiles' cells pack into keys: in
    /// `layout`'s order, and `true`; else, where that order has no packing
    /// (a Hilbert cell order, cells outside the domain), row-major and
    /// `false`. `None` where coordinates do not pack at all.
    fn packing(&self, layout: Layout) -> Option<(Packing, bool)> {
        let dims = Packing::dimensions(self.schema)?;
        let fixed = |tc: &TileCells| {
            let mut widths = tc.dims.iter().zip(&dims);
            widths.all(|(d, &(w, _))| d.offsets.is_none() && d.cell_size == w)
        };
        if !self.tiles.iter().all(fixed) {
            return None;
        }
        let bounds = self
            .tiles
            .par_iter()
            .map(|tc| Packing::bounds_of_tile(&dims, &tc.coordinates(), &tc.cells))
            .reduce(|| CoordinateBounds::empty(dims.len()), |a, b| a.merge(&b));
        let pack = |order| Packing::of(self.schema, &dims, order, &bounds);
        let order = match layout {
            Layout::RowMajor | Layout::ColMajor => KeyOrder::Coordinates(layout),
            _ => KeyOrder::Global,
        };
        let row = KeyOrder::Coordinates(Layout::RowMajor);
        match pack(order) {
            Some(p) => Some((p, true)),
            None if order != row => pack(row).map(|p| (p, false)),
            None => None,
        }
    }

    /// [`CellOrder::dedup`] of every cell of the tiles, gathered oldest
    /// write first with `stamps` a tile, by packed coordinates: the key
    /// and the cell's position share one `u64`, so ties (the later
    /// position is the newer write) need no look-up and the sort is a
    /// plain integer sort; no reference to a cell is made but for the
    /// cells kept.
    fn dedup_in_write_order(&self, p: &Packing, stamps: &[u64]) -> Vec<CellRef> {
        let mut starts = Vec::with_capacity(self.tiles.len());
        let mut n = 0usize;
        for tc in self.tiles {
            starts.push(n);
            n += tc.cells.len();
        }
        let index_bits = bits_of(n);
        // Each tile's keys into its own slice of one vector, in parallel.
        let mut keyed = vec![0u64; n];
        split_lengths(&mut keyed, self.tiles.iter().map(|tc| tc.cells.len()))
            .into_par_iter()
            .zip(self.tiles.par_iter().zip(&starts))
            .for_each(|(out, (tc, &start))| {
                p.keys_of_tile(&tc.coordinates(), &tc.cells, out);
                for (i, k) in out.iter_mut().enumerate() {
                    *k = (*k << index_bits) | (start + i) as u64;
                }
            });
        keyed.par_sort_unstable();
        last_of_each_key(&keyed, index_bits, |at| {
            // The last tile starting at or before `at` holds it.
            let ti = starts.partition_point(|&s| s <= at) - 1;
            (ti as u32, self.tiles[ti].cells[at - starts[ti]], stamps[ti])
        })
    }

    /// [`CellOrder::dedup`] of `refs` by packed coordinates: one integer a
    /// cell sorted where the cells were gathered oldest write first, else
    /// a (key, position) pair with ties broken as there.
    fn dedup_packed(&self, p: &Packing, refs: Vec<CellRef>) -> Vec<CellRef> {
        let frag_of = |r: &CellRef| self.tiles[r.0 as usize].frag;
        let index_bits = bits_of(refs.len());
        let oldest_first = refs
            .par_windows(2)
            .all(|w| (w[0].2, frag_of(&w[0])) <= (w[1].2, frag_of(&w[1])));
        if oldest_first && p.bits() + index_bits <= 64 {
            let mut keyed: Vec<u64> = refs
                .par_iter()
                .enumerate()
                .map(|(i, r)| (p.key(&|j| self.cval(r, j)) << index_bits) | i as u64)
                .collect();
            keyed.par_sort_unstable();
            return last_of_each_key(&keyed, index_bits, |at| refs[at]);
        }
        let mut keyed: Vec<(u64, u32)> = refs
            .par_iter()
            .enumerate()
            .map(|(i, r)| (p.key(&|j| self.cval(r, j)), i as u32))
            .collect();
        keyed.par_sort_unstable_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| {
                let (x, y) = (&refs[a.1 as usize], &refs[b.1 as usize]);
                (x.2, frag_of(x), a.1).cmp(&(y.2, frag_of(y), b.1))
            })
        });
        keyed
            .iter()
            .enumerate()
            .filter(|&(at, k)| keyed.get(at + 1).is_none_or(|next| next.0 != k.0))
            .map(|(_, k)| refs[k.1 as usize])
            .collect()
    }

    /// Sorts the cells into `layout` of `schema`. `single`: the cells come
    /// from one fragment in its global order, needing no sort to be in it.
    pub(crate) fn sort(
        &self,
        refs: Vec<CellRef>,
        schema: &ArraySchema,
        layout: Layout,
        single: bool,
    ) -> Vec<CellRef> {
        let mut refs = refs;
        match layout {
            Layout::RowMajor => refs.par_sort_by(|x, y| self.cmp_dims(x, y, &self.row)),
            Layout::ColMajor => refs.par_sort_by(|x, y| self.cmp_dims(x, y, &self.col)),
            Layout::GlobalOrder | Layout::Unordered
                if schema.cell_order == Layout::Hilbert
                    && (!single || layout == Layout::GlobalOrder) =>
            {
                // Hilbert value of the coordinates, ties broken row-major.
                let mut keyed: Vec<(u64, CellRef)> = refs
                    .iter()
                    .map(|r| {
                        let h = self.order.hilbert_value(&|j| self.cval(r, j));
                        (h.unwrap_or(0), *r)
                    })
                    .collect();
                keyed.par_sort_by(|a, b| {
                    a.0.cmp(&b.0)
                        .then_with(|| self.cmp_dims(&a.1, &b.1, &self.row))
                });
                refs = keyed.into_iter().map(|k| k.1).collect();
            }
            Layout::GlobalOrder | Layout::Unordered
                if !single && (!schema.allows_dups || layout == Layout::GlobalOrder) =>
            {
                refs = self.global_sorted(refs)
            }
            _ => {}
        }
        refs
    }

    /// The cells sorted into global order, in parallel: by their space
    /// tile's number where the schema numbers tiles, else by comparing
    /// coordinates.
    fn global_sorted(&self, mut refs: Vec<CellRef>) -> Vec<CellRef> {
        let ranks: Option<Vec<u128>> = refs
            .par_iter()
            .map(|r| self.order.tile_rank(&|j| self.cval(r, j)))
            .collect();
        let Some(ranks) = ranks else {
            refs.par_sort_by(|x, y| self.global(x, y));
            return refs;
        };
        let mut keyed: Vec<(u128, CellRef)> = ranks.into_iter().zip(refs).collect();
        keyed.par_sort_by(|(rx, x), (ry, y)| {
            rx.cmp(ry).then_with(|| {
                self.order
                    .compare_cells(&|j| self.cval(x, j), &|j| self.cval(y, j))
            })
        });
        keyed.into_iter().map(|(_, r)| r).collect()
    }
}

/// The bits a position below `n` takes.
fn bits_of(n: usize) -> u32 {
    usize::BITS - n.leading_zeros()
}

/// Of sorted `keyed` (a key above `index_bits` bits of position), the
/// cell (`cell(position)`) of the last of each run of equal keys: the
/// newest write of each coordinate, in key order. Counted first, a chunk
/// of keys at a time in parallel, then written into their places: no
/// second copy of the cells kept.
fn last_of_each_key(
    keyed: &[u64],
    index_bits: u32,
    cell: impl Fn(usize) -> CellRef + Sync + Send,
) -> Vec<CellRef> {
    const CHUNK: usize = 1 << 16;
    let mask = (1u64 << index_bits) - 1;
    let last = |at: usize| {
        keyed
            .get(at + 1)
            .is_none_or(|next| next >> index_bits != keyed[at] >> index_bits)
    };
    let chunks = |c: usize| c * CHUNK..((c + 1) * CHUNK).min(keyed.len());
    let counts: Vec<usize> = (0..keyed.len().div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| chunks(c).filter(|&at| last(at)).count())
        .collect();
    let mut kept = vec![(0u32, 0u32, 0u64); counts.iter().sum()];
    split_lengths(&mut kept, counts.iter().copied())
        .into_par_iter()
        .enumerate()
        .for_each(|(c, out)| {
            let ends = chunks(c).filter(|&at| last(at));
            for (o, at) in out.iter_mut().zip(ends) {
                *o = cell((keyed[at] & mask) as usize);
            }
        });
    kept
}

/// `all` cut into consecutive slices of `lengths` (which sum to at most
/// its length), for filling in parallel.
fn split_lengths<T>(all: &mut [T], lengths: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut rest = all;
    lengths
        .map(|n| {
            let (mine, after) = std::mem::take(&mut rest).split_at_mut(n);
            rest = after;
            mine
        })
        .collect()
}
