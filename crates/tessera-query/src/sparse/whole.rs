//! The sparse fast path where every cell of every touched tile is
//! returned in stored order: each tile decodes straight into its place in
//! the result, with no buffer per tile and no copy.

use super::plan::DirectPlan;
use crate::context::ReadContext;
use crate::decode::{
    decode_field_tile, decode_in_runs, decode_tile_into, decode_var_tile_into, var_tile_size,
    Fetched, FieldSpec, FieldTile,
};
use crate::result::{cut, field_column, Column, ColumnBuilder, ReadResult};
use crate::QueryError;
use rayon::prelude::*;
use std::sync::Mutex;
use tessera_filters::EncryptionKey;
use tessera_fragment::{FragmentMetadata, OpenArray};
use tessera_schema::{ArraySchema, CellValNum};
use tessera_storage::Storage;
use tessera_tile::Datatype;

/// A touched tile: its fragment, its number, and its first cell in the result.
type PlacedTile = (usize, u64, u64);

/// One tile's part of one column's buffers: values, validity, and for
/// var-sized fields the offsets with the position of the tile's values
/// among the column's.
struct Slot<'b> {
    data: Option<&'b mut [u8]>,
    validity: Option<&'b mut [u8]>,
    offsets: Option<(&'b mut [u64], u64)>,
}

/// Bytes of a fixed-sized cell; `None` for var-sized ones.
fn fixed_bytes(cell_val_num: CellValNum, t: Datatype) -> Option<u64> {
    match cell_val_num {
        CellValNum::Fixed(k) => Some(k as u64 * t.size()),
        CellValNum::Var => None,
    }
}

/// The error for a column the fragments' cell counts make too large.
fn too_many_cells(n: u64, name: &str) -> QueryError {
    QueryError::Invalid(format!(
        "the fragments claim {n} cells: `{name}` cannot be allocated"
    ))
}

/// `bytes` bytes for column `name` of `n` cells, each of which the
/// decoding writes: a recycled result buffer of `ctx` (old bytes left, no
/// page faulted in afresh), else zeroed memory. The cell counts come off
/// disk: a fallible reservation first, so an absurd count is an error, not
/// an abort; then a zeroed allocation, which the kernel backs lazily.
fn column_buffer(
    ctx: &ReadContext,
    bytes: Option<u64>,
    n: u64,
    name: &str,
) -> Result<Vec<u8>, QueryError> {
    let bytes = bytes.and_then(|b| usize::try_from(b).ok());
    if let Some(b) = bytes.and_then(|b| ctx.recycled_overwritten(b)) {
        return Ok(b);
    }
    let mut probe: Vec<u8> = Vec::new();
    match bytes.map(|b| (b, probe.try_reserve_exact(b))) {
        Some((b, Ok(()))) => {
            drop(probe);
            Ok(vec![0; b])
        }
        _ => Err(too_many_cells(n, name)),
    }
}

/// The empty column of `field` for `n` cells, its buffers allocated:
/// fixed-sized values and validity, and where each tile's var size is
/// known (`sizes`), var-sized values and offsets too (the last offset
/// set: the values' total).
fn allocate_column(
    ctx: &ReadContext,
    schema: &ArraySchema,
    field: tessera_fragment::Field,
    sizes: Option<&Vec<u64>>,
    n: u64,
) -> Result<Column, QueryError> {
    let mut c = field_column(ctx, schema, field);
    let size = match sizes {
        Some(s) => s.iter().try_fold(0u64, |a, &b| a.checked_add(b)),
        None => fixed_bytes(c.cell_val_num, c.datatype).map_or(Some(0), |w| w.checked_mul(n)),
    };
    c.data = column_buffer(ctx, size, n, &c.name)?;
    if c.validity.is_some() {
        c.validity = Some(column_buffer(ctx, Some(n), n, &c.name)?);
    }
    if let Some(total) = size.filter(|_| sizes.is_some()) {
        // n + 1 offsets: n comes off disk, so the reservation is fallible
        // here too.
        let mut offs: Vec<u64> = Vec::new();
        let count = usize::try_from(n).ok().and_then(|n| n.checked_add(1));
        if count.is_none_or(|k| offs.try_reserve_exact(k).is_err()) {
            return Err(too_many_cells(n, &c.name));
        }
        offs.resize(n as usize, 0);
        offs.push(total);
        c.offsets = Some(offs);
    }
    Ok(c)
}

/// Cuts a column's buffers into one slot per tile. Var-sized columns
/// without sizes are filled after decoding: their slots are empty.
fn column_slots<'b>(
    c: &'b mut Column,
    sizes: Option<&Vec<u64>>,
    tiles: &[PlacedTile],
    frags: &[FragmentMetadata],
) -> Vec<Mutex<Slot<'b>>> {
    let w = fixed_bytes(c.cell_val_num, c.datatype);
    let placed = w.is_some() || sizes.is_some();
    let mut data = placed.then_some(c.data.as_mut_slice());
    let mut validity = c.validity.as_deref_mut().filter(|_| placed);
    let mut offsets = c.offsets.as_deref_mut().filter(|_| sizes.is_some());
    let mut slots = Vec::with_capacity(tiles.len());
    let mut base = 0u64;
    for (k, &(fi, t, _)) in tiles.iter().enumerate() {
        let cells = frags[fi].cell_num(t) as usize;
        let bytes = match (w, sizes) {
            (Some(w), _) => cells * w as usize,
            (None, Some(s)) => s[k] as usize,
            (None, None) => 0,
        };
        slots.push(Mutex::new(Slot {
            data: cut(&mut data, 0, bytes),
            validity: cut(&mut validity, 0, cells),
            offsets: cut(&mut offsets, 0, cells).map(|o| (o, base)),
        }));
        base += bytes as u64;
    }
    slots
}

/// The whole-tile fast path: `hits` (fragment, tile, wholly inside),
/// by fragment, every one wholly inside.
pub(crate) fn sparse_whole(
    storage: &dyn Storage,
    context: &ReadContext,
    array: &OpenArray,
    hits: &[(usize, u64, bool)],
    plan: &DirectPlan,
) -> Result<ReadResult, QueryError> {
    let (schema, frags) = (&*array.schema, &array.fragments);
    let mut tiles: Vec<PlacedTile> = Vec::with_capacity(hits.len());
    let mut n = 0u64;
    for &(fi, t, _) in hits {
        tiles.push((fi, t, n));
        // An absurd count fails the allocation below, as an error.
        n = n.saturating_add(frags[fi].cell_num(t));
    }
    let var_sizes = known_var_sizes(storage, context, array, &tiles, plan)?;
    // Fixed-sized fields and validity decode into their place; var-sized
    // values without known sizes are copied after.
    let mut columns: Vec<Column> = plan
        .wanted
        .iter()
        .zip(&var_sizes)
        .map(|(&field, sizes)| allocate_column(context, schema, field, sizes.as_ref(), n))
        .collect::<Result<_, QueryError>>()?;
    let slots: Vec<Vec<Mutex<Slot<'_>>>> = columns
        .iter_mut()
        .zip(&var_sizes)
        .map(|(c, sizes)| column_slots(c, sizes.as_ref(), &tiles, frags))
        .collect();
    let var_tiles = decode_whole(storage, context, array, &tiles, plan, &var_sizes, &slots)?;
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
        .for_each(|(k, c)| ColumnBuilder::refill(c, context, var_tiles.iter().map(|v| &v[k])));
    for tile in var_tiles.into_iter().flatten() {
        tile.recycle(context);
    }
    Ok(ReadResult {
        cell_count: n as usize,
        columns,
        grid: None,
        context: None,
    })
}

/// Per wanted column, each tile's var size where var-sized values
/// decode into their place too: the fragment metadata gives each
/// tile's var size, and offsets have their own tiles. `None` for other
/// columns (such values are decoded apart and copied after).
fn known_var_sizes(
    storage: &dyn Storage,
    context: &ReadContext,
    array: &OpenArray,
    tiles: &[PlacedTile],
    plan: &DirectPlan,
) -> Result<Vec<Option<Vec<u64>>>, QueryError> {
    let (schema, frags) = (&*array.schema, &array.fragments);
    let own = &plan.own;
    let mut var_sizes = Vec::with_capacity(plan.wanted.len());
    for (k, &field) in plan.wanted.iter().enumerate() {
        let c = field_column(context, schema, field);
        let direct_var = c.cell_val_num.is_var()
            && frags.iter().zip(own).all(|(f, own)| {
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
            .map(|&(fi, t, _)| var_tile_size(storage, &frags[fi], own[fi][k], t))
            .collect::<Result<_, _>>()?;
        var_sizes.push(Some(sizes));
    }
    Ok(var_sizes)
}

/// Decodes every tile into its slots, fragment by fragment; returns,
/// per tile in result order, its var-sized fields without known sizes,
/// decoded apart, in column order.
fn decode_whole(
    storage: &dyn Storage,
    context: &ReadContext,
    array: &OpenArray,
    tiles: &[PlacedTile],
    plan: &DirectPlan,
    var_sizes: &[Option<Vec<u64>>],
    slots: &[Vec<Mutex<Slot<'_>>>],
) -> Result<Vec<Vec<FieldTile>>, QueryError> {
    let mut var_tiles: Vec<Vec<FieldTile>> = Vec::with_capacity(tiles.len());
    let mut first = 0;
    for (fi, frag) in array.fragments.iter().enumerate() {
        let count = tiles[first..].iter().take_while(|x| x.0 == fi).count();
        let numbers: Vec<u64> = tiles[first..first + count].iter().map(|x| x.1).collect();
        let specs: Vec<FieldSpec> = plan.own[fi]
            .iter()
            .map(|&f| FieldSpec::of(frag, f))
            .collect();
        let spec_refs: Vec<&FieldSpec> = specs.iter().collect();
        let decoded = decode_in_runs(
            storage,
            context,
            storage.read_ahead(),
            frag,
            &spec_refs,
            &numbers,
            |src, t| {
                let at = first + numbers.binary_search(&t).expect("one of ours");
                decode_whole_tile(array.key, src, frag, t, &specs, var_sizes, slots, at)
            },
        )?;
        var_tiles.extend(decoded);
        first += count;
    }
    Ok(var_tiles)
}

/// Decodes tile `t` of `frag` (the `at`-th in result order, encrypted
/// with `key` if any) into its slots; returns its var-sized fields
/// without known sizes.
#[allow(clippy::too_many_arguments)]
fn decode_whole_tile(
    key: Option<EncryptionKey>,
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    t: u64,
    specs: &[FieldSpec],
    var_sizes: &[Option<Vec<u64>>],
    slots: &[Vec<Mutex<Slot<'_>>>],
    at: usize,
) -> Result<Vec<FieldTile>, QueryError> {
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
            (Some(d), Some((o, base))) => {
                decode_var_tile_into(src, frag, spec, t, key, d, (o, *base), validity)?
            }
            (d, _) => decode_tile_into(src, frag, spec, t, key, (d, validity), None)?,
        }
    }
    Ok(var)
}
