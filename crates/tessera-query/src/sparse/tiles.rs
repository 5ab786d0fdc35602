//! The tiles of a sparse fragment a read touches (from its R-tree, less
//! those an earlier batch answered or a condition rules out), decoded with
//! the cells inside the subarray.

use super::concurrent::read_ahead_each;
use crate::decode::{decode_field_tile, decode_in_runs, Fetched, FieldSpec, FieldTile};
use crate::geometry::{DimRanges, MbrTest};
use crate::prune::Answered;
use crate::read::Read;
use crate::QueryError;
use rayon::prelude::*;
use tessera_cells::Expr;
use tessera_fragment::{Field, FragmentMetadata};
use tessera_schema::Range1D;

/// The decoded tiles of one sparse tile and which of its cells the subarray selects.
pub(crate) struct TileCells {
    /// Index of the fragment.
    pub(crate) frag: usize,
    pub(crate) dims: Vec<FieldTile>,
    pub(crate) fields: Vec<Option<FieldTile>>,
    pub(crate) times: Option<FieldTile>,
    pub(crate) delete_times: Option<FieldTile>,
    /// The delete condition indexes (`dci`), read for
    /// [`ReadRequest::delete_metadata`](crate::ReadRequest::delete_metadata) only.
    pub(crate) delete_indexes: Option<FieldTile>,
    /// Cells inside the subarray.
    pub(crate) cells: Vec<u32>,
}

impl TileCells {
    /// Each dimension's decoded coordinates, as bytes.
    pub(crate) fn coordinates(&self) -> Vec<&[u8]> {
        self.dims.iter().map(|d| d.data.as_slice()).collect()
    }
}

/// Reads the tiles of sparse fragment `frag` (number `fi`) that meet
/// the subarray: coordinates, the cells inside the ranges, and `fields`
/// (plus per-cell and delete timestamps when the fragment has them) of
/// the tiles with any such cell. With `prune_by`, fragments and tiles
/// whose metadata shows no cell can satisfy its condition are left
/// unread, where no cell of theirs can shadow another.
pub(crate) fn sparse_tiles<'a>(
    read: &Read<'a>,
    fi: usize,
    frag: &FragmentMetadata,
    fields: &[String],
    prune_by: Option<(&Expr, &crate::prune::Shadows)>,
) -> Result<Vec<TileCells>, QueryError> {
    let hits = pruned_hits(read, fi, frag, prune_by.map(|(c, s)| (c, Some(s))))?;
    if hits.is_empty() {
        return Ok(Vec::new());
    }
    let dims = &frag.schema.dimensions;
    let nd = dims.len();
    let key = read.array.key;
    let fragments = read.array.fragments.len();
    let ahead = read_ahead_each(read.storage, &read.request.tuning, fragments);
    let legacy_coords = !frag.version().has(crate::gates::COORDINATES_PER_DIMENSION);
    let dim_ranges: Vec<DimRanges> = (0..nd)
        .map(|j| DimRanges::new(&read.ranges[j], dims[j].datatype))
        .collect();
    let dim_specs: Vec<FieldSpec> = (0..nd)
        .map(|j| FieldSpec::of(frag, Field::Dimension(j)))
        .collect();
    let specs: Vec<Option<FieldSpec>> = (fields.iter())
        .map(|a| FieldSpec::named(frag, &read.array.schema, a))
        .collect();
    let ts_spec = frag
        .footer
        .has_timestamps
        .then(|| FieldSpec::of(frag, Field::Timestamps));
    let dt_spec = frag
        .footer
        .has_delete_meta
        .then(|| FieldSpec::of(frag, Field::DeleteTimestamps));
    let dci_spec = (frag.footer.has_delete_meta && read.request.delete_metadata)
        .then(|| FieldSpec::of(frag, Field::DeleteConditionIndex));
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
        read.storage,
        &read.context,
        ahead,
        frag,
        &coord_specs,
        &numbers,
        |src, t| {
            let dt: Vec<FieldTile> = if legacy_coords {
                // Before format 5 all coordinates share one tile.
                let c = decode_field_tile(src, frag, &coords_spec, t, key)?;
                crate::decode::split_coords(
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
                delete_indexes: None,
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
        .chain(dci_spec.as_ref())
        .collect();
    let decode = |src: &Fetched<'_>, s: &FieldSpec, t| decode_field_tile(src, frag, s, t, key);
    let decoded = decode_in_runs(
        read.storage,
        &read.context,
        ahead,
        frag,
        &field_specs,
        &numbers,
        |src, t| {
            let fields = specs
                .iter()
                .map(|s| s.as_ref().map(|s| decode(src, s, t)).transpose())
                .collect::<Result<Vec<_>, _>>()?;
            let times = ts_spec.as_ref().map(|s| decode(src, s, t)).transpose()?;
            let delete_times = dt_spec.as_ref().map(|s| decode(src, s, t)).transpose()?;
            let delete_indexes = dci_spec.as_ref().map(|s| decode(src, s, t)).transpose()?;
            Ok((fields, times, [delete_times, delete_indexes]))
        },
    )?;
    for (i, (fields, times, [delete_times, delete_indexes])) in wanted.into_iter().zip(decoded) {
        let tc = &mut tiles[i];
        tc.fields = fields;
        tc.times = times;
        tc.delete_times = delete_times;
        tc.delete_indexes = delete_indexes;
    }
    Ok(tiles)
}

/// The tiles of fragment `fi` a sparse read touches
/// ([`sparse_hits`]); with `prune` (a condition, and what may
/// shadow cells: `None` when nothing is deduplicated, so nothing can),
/// less those whose metadata shows no cell can satisfy the condition,
/// where no cell of theirs can shadow another.
pub(crate) fn pruned_hits<'a>(
    read: &Read<'a>,
    fi: usize,
    frag: &FragmentMetadata,
    prune: Option<(&Expr, Option<&crate::prune::Shadows>)>,
) -> Result<Vec<(u64, bool)>, QueryError> {
    let Some((c, shadows)) = prune else {
        return sparse_hits(read, fi, frag);
    };
    // Whether no cell of the whole fragment can hide another: then
    // neither can any of its tiles'.
    let alone = shadows.is_none_or(|s| s.none_in(fi, frag, None));
    if alone && !crate::prune::fragment_may_match(read.storage, frag, &read.array.schema, c)? {
        return Ok(Vec::new());
    }
    let mut hits = sparse_hits(read, fi, frag)?;
    let pruner = crate::prune::FragmentPruner::new(read.storage, frag, &read.array.schema, c)?;
    match shadows {
        Some(shadows) if !alone => {
            let leaves = frag.rtree(read.storage)?.leaves();
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
pub(crate) fn sparse_hits<'a>(
    read: &Read<'a>,
    fi: usize,
    frag: &FragmentMetadata,
) -> Result<Vec<(u64, bool)>, QueryError> {
    let answered = read.answered.get(fi).unwrap_or(&Answered::Nothing);
    if *answered == Answered::Fragment {
        return Ok(Vec::new());
    }
    let dims = &frag.schema.dimensions;
    let ranges = &read.ranges;
    let test = MbrTest::new(ranges, dims);
    let mut hits = frag
        .rtree(read.storage)?
        .tiles_overlapping(&|mbr: &[Range1D]| test.overlap(mbr));
    if let Answered::Tiles(done) = answered {
        hits.retain(|(t, _)| done.binary_search(t).is_err());
    }
    Ok(hits)
}
