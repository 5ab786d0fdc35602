//! Integer coordinates packed into one `u64` that orders as the cells do,
//! in row-major or column-major order or in the array's global order: a
//! deduplicating read sorts and compares one integer a cell instead of
//! decoding every coordinate at every comparison, and its cells come out
//! sorted in the layout the read asked for.

use tessera_cells::order::major_order;
use tessera_schema::{ArraySchema, Value};
use tessera_tile::datatype::Physical;
use tessera_tile::Layout;

/// The order keys sort cells in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum KeyOrder {
    /// By coordinates, dimensions in this layout's order (row- or
    /// column-major).
    Coordinates(Layout),
    /// The global order: space tiles in the tile order, then coordinates
    /// in the cell order (not for a Hilbert cell order).
    Global,
}

/// What one field of a key holds of a coordinate: all of it, its space
/// tile (given the tile extent), or its place in that tile.
#[derive(Clone, Copy)]
enum Part {
    Whole,
    Tile(u64),
    InTile(u64),
}

/// One field of a key: its dimension, the ordered bits the part is taken
/// from (the domain's start for tiles, else 0), the part, and the field's
/// lowest value and bits.
#[derive(Clone, Copy)]
struct KeyField {
    dim: usize,
    base: u64,
    part: Part,
    lo: u64,
    bits: u32,
}

impl KeyField {
    /// The field's value, before its lowest is taken off, for a
    /// coordinate's ordered bits at or above the base.
    #[inline(always)]
    fn part_of(&self, ordered: u64) -> u64 {
        let v = ordered.wrapping_sub(self.base);
        match self.part {
            Part::Whole => v,
            Part::Tile(ext) => v / ext,
            Part::InTile(ext) => v % ext,
        }
    }

    /// Shifts each of `keys` left by this field's bits and puts the
    /// field of its cell in the bits freed; `ordered(i)`: cell `i`'s
    /// coordinate as ordered bits.
    #[inline(always)]
    fn push_into(&self, keys: &mut [u64], ordered: impl Fn(usize) -> u64) {
        let (bits, lo) = (self.bits, self.lo);
        // A field of 64 bits is the only one with any: nothing to shift.
        let shift = |k: u64| if bits >= 64 { 0 } else { k << bits };
        match self.part {
            Part::Whole => {
                let base = self.base.wrapping_add(lo);
                for (i, k) in keys.iter_mut().enumerate() {
                    *k = shift(*k) | ordered(i).wrapping_sub(base);
                }
            }
            _ => {
                for (i, k) in keys.iter_mut().enumerate() {
                    *k = shift(*k) | self.part_of(ordered(i)).wrapping_sub(lo);
                }
            }
        }
    }
}

/// How a read's coordinates pack into a key: the dimensions' widths and
/// signs, and the key's fields, the first in the highest bits.
pub(crate) struct Packing {
    dims: Vec<(usize, bool)>,
    fields: Vec<KeyField>,
}

/// A coordinate's bytes as a `u64` that orders as the values do (signed
/// ones sign-extended with the sign bit flipped).
#[inline(always)]
fn ordered(bytes: &[u8], width: usize, signed: bool) -> u64 {
    let mut b = [0u8; 8];
    b[..width].copy_from_slice(&bytes[..width]);
    let v = u64::from_le_bytes(b);
    if !signed {
        return v;
    }
    let shift = 64 - 8 * width as u32;
    (((v << shift) as i64 >> shift) as u64) ^ (1 << 63)
}

/// Evaluates `$body` with `$read` a closure giving cell `i`'s ordered bits
/// from `$data` (fixed values `$width` bytes wide), the closure
/// monomorphised for the common widths so the loops in `$body` inline it.
macro_rules! with_reader {
    ($data:expr, $width:expr, $signed:expr, |$read:ident| $body:expr) => {{
        const FLIP: u64 = 1 << 63;
        let data: &[u8] = $data;
        let (width, signed): (usize, bool) = ($width, $signed);
        let at = |i: usize, w: usize| -> &[u8] { &data[i * w..i * w + w] };
        match (width, signed) {
            (8, true) => {
                let $read =
                    |i: usize| i64::from_le_bytes(at(i, 8).try_into().unwrap()) as u64 ^ FLIP;
                $body
            }
            (8, false) => {
                let $read = |i: usize| u64::from_le_bytes(at(i, 8).try_into().unwrap());
                $body
            }
            (4, true) => {
                let $read = |i: usize| {
                    i32::from_le_bytes(at(i, 4).try_into().unwrap()) as i64 as u64 ^ FLIP
                };
                $body
            }
            (4, false) => {
                let $read = |i: usize| u32::from_le_bytes(at(i, 4).try_into().unwrap()) as u64;
                $body
            }
            _ => {
                let $read = |i: usize| ordered(at(i, width), width, signed);
                $body
            }
        }
    }};
}

/// The fields of keys in `order` of `schema`'s cells (dimensions of
/// `dims`), their lowest values and bits not yet known; `None` for the
/// global order under a Hilbert cell order.
fn key_fields(
    schema: &ArraySchema,
    dims: &[(usize, bool)],
    order: KeyOrder,
) -> Option<Vec<KeyField>> {
    let nd = dims.len();
    let field = |dim: usize, base: u64, part: Part| KeyField {
        dim,
        base,
        part,
        lo: 0,
        bits: 0,
    };
    let tile_order = match order {
        KeyOrder::Coordinates(layout) => {
            let whole = |j| field(j, 0, Part::Whole);
            return Some(major_order(layout, nd).into_iter().map(whole).collect());
        }
        KeyOrder::Global if schema.cell_order == Layout::Hilbert => return None,
        KeyOrder::Global => schema.tile_order,
    };
    // Per dimension, its domain's start (as ordered bits) and tile extent,
    // where it has both.
    let mut tiling = Vec::with_capacity(nd);
    for (d, &(width, signed)) in schema.dimensions.iter().zip(dims) {
        tiling.push(match (&d.domain, &d.tile_extent) {
            (Some((lo, _)), Some(ext)) => {
                let ext = Value::decode(d.datatype, ext).as_int()?;
                let ext = u64::try_from(ext).ok().filter(|&e| e > 0)?;
                Some((ordered(lo, width, signed), ext))
            }
            _ => None,
        });
    }
    let mut fields = Vec::with_capacity(2 * nd);
    for j in major_order(tile_order, nd) {
        if let Some((base, ext)) = tiling[j] {
            fields.push(field(j, base, Part::Tile(ext)));
        }
    }
    for j in major_order(schema.cell_order, nd) {
        fields.push(match tiling[j] {
            Some((base, ext)) => field(j, base, Part::InTile(ext)),
            None => field(j, 0, Part::Whole),
        });
    }
    Some(fields)
}

/// Per dimension, the lowest and highest coordinate (as ordered bits) of
/// some cells; empty ranges (lowest above highest) before any cell.
#[derive(Clone, Debug)]
pub(crate) struct CoordinateBounds(Vec<(u64, u64)>);

impl CoordinateBounds {
    /// No cell yet, over `nd` dimensions.
    pub(crate) fn empty(nd: usize) -> Self {
        CoordinateBounds(vec![(u64::MAX, 0); nd])
    }

    /// Both bounds together.
    pub(crate) fn merge(mut self, other: &CoordinateBounds) -> Self {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a = (a.0.min(b.0), a.1.max(b.1));
        }
        self
    }
}

impl Packing {
    /// The widths and signs of `schema`'s dimensions, where every one is an
    /// integer (else coordinates do not pack).
    pub(crate) fn dimensions(schema: &ArraySchema) -> Option<Vec<(usize, bool)>> {
        schema
            .dimensions
            .iter()
            .map(|d| match d.datatype.physical() {
                Physical::Int(w) => Some((w as usize, true)),
                Physical::UInt(w) => Some((w as usize, false)),
                _ => None,
            })
            .collect()
    }

    /// The bounds of one tile's `cells`, `coordinates[j]` holding the
    /// tile's coordinates in dimension `j` (of `dims`: widths and signs).
    pub(crate) fn bounds_of_tile(
        dims: &[(usize, bool)],
        coordinates: &[&[u8]],
        cells: &[u32],
    ) -> CoordinateBounds {
        let bounds = dims.iter().zip(coordinates).map(|(&(w, signed), data)| {
            with_reader!(data, w, signed, |read| {
                cells.iter().fold((u64::MAX, 0), |(lo, hi), &c| {
                    let v = read(c as usize);
                    (lo.min(v), hi.max(v))
                })
            })
        });
        CoordinateBounds(bounds.collect())
    }

    /// The packing of keys in `order` of `schema` (dimensions `dims`) for
    /// cells within `bounds`, if every cell lies at or above its domain's
    /// start where the order takes space tiles and the fields' spans fit
    /// 64 bits together.
    pub(crate) fn of(
        schema: &ArraySchema,
        dims: &[(usize, bool)],
        order: KeyOrder,
        bounds: &CoordinateBounds,
    ) -> Option<Packing> {
        let mut fields = key_fields(schema, dims, order)?;
        for f in &mut fields {
            let (lo, hi) = bounds.0[f.dim];
            if lo > hi {
                continue; // no cell: a field of no bits
            }
            if lo < f.base {
                return None;
            }
            let (a, b) = (f.part_of(lo), f.part_of(hi));
            let (a, b) = match f.part {
                // Cells across tiles take any place in a tile.
                Part::InTile(ext) if (lo - f.base) / ext != (hi - f.base) / ext => (0, ext - 1),
                _ => (a, b),
            };
            f.lo = a;
            f.bits = 64 - (b - a).leading_zeros();
        }
        let packing = Packing {
            dims: dims.to_vec(),
            fields,
        };
        (packing.bits() <= 64).then_some(packing)
    }

    /// The bits a key takes.
    pub(crate) fn bits(&self) -> u32 {
        self.fields.iter().map(|f| f.bits).sum()
    }

    /// The keys of one tile's `cells` into `keys` (one a cell),
    /// `coordinates[j]` holding the tile's coordinates in dimension `j`;
    /// cells within the bounds the packing was made for.
    pub(crate) fn keys_of_tile(&self, coordinates: &[&[u8]], cells: &[u32], keys: &mut [u64]) {
        keys.fill(0);
        for f in &self.fields {
            let (w, signed) = self.dims[f.dim];
            with_reader!(coordinates[f.dim], w, signed, |read| {
                f.push_into(keys, |i| read(cells[i] as usize))
            });
        }
    }

    /// A cell's key (`coordinate(j)`: its coordinate in dimension `j`),
    /// for a cell within the bounds the packing was made for.
    pub(crate) fn key<'a>(&self, coordinate: &dyn Fn(usize) -> &'a [u8]) -> u64 {
        let mut key = [0u64];
        for f in &self.fields {
            let (w, signed) = self.dims[f.dim];
            let v = ordered(coordinate(f.dim), w, signed);
            f.push_into(&mut key, |_| v);
        }
        key[0]
    }
}

#[cfg(test)]
mod tests {
    use super::{ordered, KeyOrder, Packing};
    use std::path::Path;
    use tessera_cells::order::{major_order, GlobalOrder};
    use tessera_schema::ArraySchema;
    use tessera_storage::LocalFs;
    use tessera_tile::Layout;

    /// A fixture's schema: two INT32 dimensions, x in [-20, 43] tiled by
    /// 8, y in [0, 63] tiled by 16.
    fn schema() -> ArraySchema {
        let array = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/tiledb-0.36.1/random_sparse/array");
        let files = tessera_schema::list_schemas(&LocalFs, &array).unwrap();
        tessera_schema::load_schema(&LocalFs, &array, &files[0], None).unwrap()
    }

    /// A tile of cells across the domain (x from `x_lo`), scrambled by an
    /// LCG: its coordinates per dimension, as bytes.
    fn tile(x_lo: i32) -> [Vec<u8>; 2] {
        let mut seed: u64 = 11;
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for _ in 0..3000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            xs.extend((((seed >> 33) % 40) as i32 + x_lo).to_le_bytes());
            ys.extend((((seed >> 13) % 64) as i32).to_le_bytes());
        }
        [xs, ys]
    }

    /// The packing of every cell of `tile` in `order`.
    fn packing(schema: &ArraySchema, tile: &[Vec<u8>; 2], order: KeyOrder) -> Option<Packing> {
        let dims = Packing::dimensions(schema).unwrap();
        let coords = [&tile[0][..], &tile[1][..]];
        let cells: Vec<u32> = (0..3000).collect();
        let bounds = Packing::bounds_of_tile(&dims, &coords, &cells);
        Packing::of(schema, &dims, order, &bounds)
    }

    /// Keys sort cells as the orders compare them, equal keys exactly
    /// where coordinates are equal, under every tile and cell order; a
    /// tile's keys are the cells' keys one at a time.
    #[test]
    fn keys_sort_as_the_orders_compare() {
        let mut schema = schema();
        // Across the domain's start (tiles from the domain's start, not
        // from the lowest cell), and a range of one x tile.
        for tile in [tile(-20), tile(-3)] {
            let coord = |i: usize, j: usize| &tile[j][4 * i..4 * i + 4];
            let cells: Vec<u32> = (0..3000).collect();
            let majors = [Layout::RowMajor, Layout::ColMajor];
            let orders = majors.iter().flat_map(|&t| majors.map(|c| (t, c)));
            for (tile_order, cell_order) in orders {
                schema.tile_order = tile_order;
                schema.cell_order = cell_order;
                let order = GlobalOrder::new(&schema);
                for key_order in [
                    KeyOrder::Global,
                    KeyOrder::Coordinates(Layout::RowMajor),
                    KeyOrder::Coordinates(Layout::ColMajor),
                ] {
                    let p = packing(&schema, &tile, key_order).unwrap();
                    let mut keys = vec![0; cells.len()];
                    p.keys_of_tile(&[&tile[0][..], &tile[1][..]], &cells, &mut keys);
                    let compare = |a: usize, b: usize| match key_order {
                        KeyOrder::Global => order.compare_tiled(&|j| coord(a, j), &|j| coord(b, j)),
                        KeyOrder::Coordinates(l) => {
                            order.compare_in(&major_order(l, 2), &|j| coord(a, j), &|j| coord(b, j))
                        }
                    };
                    let what = format!("{key_order:?}, {tile_order:?} tiles, {cell_order:?} cells");
                    for a in (0..cells.len()).step_by(7) {
                        assert_eq!(keys[a], p.key(&|j| coord(a, j)), "{what}");
                        for b in (0..cells.len()).step_by(5) {
                            assert_eq!(keys[a].cmp(&keys[b]), compare(a, b), "{what}");
                        }
                    }
                }
            }
        }
    }

    /// Space tiles count from the domain's start: a cell below it has no
    /// global key (its read sorts by comparing instead).
    #[test]
    fn cells_below_the_domain_have_no_global_key() {
        let schema = schema();
        let tile = tile(-21);
        assert!(packing(&schema, &tile, KeyOrder::Global).is_none());
        let row = KeyOrder::Coordinates(Layout::RowMajor);
        assert!(packing(&schema, &tile, row).is_some());
    }

    #[test]
    fn ordered_bits_keep_the_values_order() {
        let signed: Vec<i64> = vec![i64::MIN, -70000, -129, -1, 0, 1, 127, 65535, i64::MAX];
        for w in [1usize, 2, 4, 8] {
            let fit: Vec<i64> = signed
                .iter()
                .copied()
                .filter(|v| w == 8 || (*v >= -(1 << (8 * w - 1)) && *v < (1 << (8 * w - 1))))
                .collect();
            let keys: Vec<u64> = fit
                .iter()
                .map(|v| ordered(&v.to_le_bytes(), w, true))
                .collect();
            assert!(
                keys.windows(2).all(|k| k[0] < k[1]),
                "signed width {w}: {fit:?}"
            );
            let unsigned: Vec<u64> = vec![0, 1, 200, 60000, 1 << 40, u64::MAX];
            let fit: Vec<u64> = unsigned
                .into_iter()
                .filter(|v| w == 8 || *v < 1 << (8 * w))
                .collect();
            let keys: Vec<u64> = fit
                .iter()
                .map(|v| ordered(&v.to_le_bytes(), w, false))
                .collect();
            assert!(
                keys.windows(2).all(|k| k[0] < k[1]),
                "unsigned width {w}: {fit:?}"
            );
        }
    }
}
