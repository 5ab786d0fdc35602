//! The cells of a sparse read's decoded tiles: their fields as conditions
//! read them, and their order (coordinates, global order, duplicates).

use super::packed::Packing;
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
    tiles: &'t [TileCells],
    /// The dimensions' datatypes.
    types: Vec<Datatype>,
    order: GlobalOrder<'t>,
    row: Vec<usize>,
    col: Vec<usize>,
}

impl<'t> CellOrder<'t> {
    /// The order of the cells of `tiles` in `schema`.
    pub(crate) fn new(schema: &'t ArraySchema, tiles: &'t [TileCells]) -> CellOrder<'t> {
        let nd = schema.dimensions.len();
        CellOrder {
            tiles,
            types: schema.dimensions.iter().map(|d| d.datatype).collect(),
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

    /// Keeps one cell per coordinate: the newest write (latest timestamp,
    /// then latest fragment, then last seen).
    pub(crate) fn dedup(&self, refs: Vec<CellRef>) -> Vec<CellRef> {
        if refs.len() < u32::MAX as usize {
            if let Some(p) = Packing::of(&self.types, refs.len(), &|i, j| self.cval(&refs[i], j)) {
                return self.dedup_packed(&p, refs);
            }
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
        keep
    }

    /// [`CellOrder::dedup`] by packed coordinates: one integer a cell
    /// sorted, ties broken as there.
    fn dedup_packed(&self, p: &Packing, refs: Vec<CellRef>) -> Vec<CellRef> {
        let frag_of = |r: &CellRef| self.tiles[r.0 as usize].frag;
        // Cells gathered oldest write first (the usual case: fragments in
        // order, a timestamp per fragment) break ties by position alone,
        // which then fits beside the key in one `u64`: half the memory of
        // a (key, position) pair, and a plain integer sort.
        let index_bits = usize::BITS - refs.len().leading_zeros();
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
            let position = |k: u64| (k & ((1u64 << index_bits) - 1)) as usize;
            return keyed
                .iter()
                .enumerate()
                .filter(|&(at, k)| {
                    keyed
                        .get(at + 1)
                        .is_none_or(|next| next >> index_bits != k >> index_bits)
                })
                .map(|(_, &k)| refs[position(k)])
                .collect();
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
