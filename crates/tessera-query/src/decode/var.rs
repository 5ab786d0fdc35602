//! Var-sized tiles: picking cells chunk by chunk, and decoding offsets
//! and values straight into the caller's buffers.

use super::fetch::*;
use super::spec::*;
use super::tile::*;
use super::tile_bytes::*;
use crate::QueryError;
use std::ops::Range;
use tessera_filters::{TileContext, TileDecoder};
use tessera_fragment::{FileKind, FragmentMetadata};

/// The cells `picked` (ascending) of var-sized tile `t`, decoding only the
/// chunks that hold them: the offsets chunks holding their offsets (and
/// the next cell's, where each value ends), then the values chunks holding
/// their bytes. `offsets` and `values` are scratch the caller reuses.
/// `None` for fields whose offsets live in the values tile (decode the tile
/// whole with [`decode_field_tile`]).
#[allow(clippy::too_many_arguments)]
pub fn pick_var_tile(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    picked: &[u32],
    (offsets, values): (&mut Vec<u8>, &mut Vec<u8>),
) -> Result<Option<FieldTile>, QueryError> {
    if spec
        .filters
        .offsets_in_data(spec.datatype, frag.schema.version)
    {
        return Ok(None);
    }
    let mut out = FieldTile {
        cells: picked.len() as u64,
        cell_size: spec.cell_size() as usize,
        offsets: Some(vec![0]),
        ..Default::default()
    };
    if picked.is_empty() {
        out.validity = spec.nullable.then(Vec::new);
        return Ok(Some(out));
    }
    let cells = frag.cell_num(t);
    if picked.last().is_some_and(|&c| c as u64 >= cells) {
        return Err(cells_past_tile(&frag.name, cells..cells + 1));
    }
    // Sizes off disk, bounded before anything is allocated.
    scratch_to(offsets, tile_len(frag, t, 8)?);
    let var_size = var_tile_size(src.storage, frag, spec.field, t)?;
    bounded_tile_bytes(frag, t, var_size, || {
        format!("a var tile of {var_size} bytes is")
    })?;
    let v = frag.version();
    // Offsets: a chunk is wanted when it holds a picked cell's or the next
    // cell's (the picked value's end).
    let (obytes, ofile) = tile_bytes(src, frag, spec, t, FileKind::Fixed)?;
    let octx = TileContext::new(v, 8)
        .expect_size(cells * 8)
        .reusing(src.ctx.codecs.clone());
    let among = picked_cells(picked);
    let wanted_offsets = |r: Range<u64>| among((r.start / 8).saturating_sub(1)..r.end.div_ceil(8));
    TileDecoder::new(&keyed(&frag.schema.offsets_filters, key), &obytes, &octx)
        .and_then(|d| d.decode_where(offsets, &wanted_offsets))
        .map_err(|e| tile_error(frag, t, &ofile, e))?;
    let offset = |c: u64| -> u64 {
        match c < cells {
            true => u64::from_le_bytes(
                offsets[c as usize * 8..c as usize * 8 + 8]
                    .try_into()
                    .expect("8 bytes"),
            ),
            false => var_size,
        }
    };
    // Each run of picked cells is one span of values.
    let mut spans: Vec<(Range<u64>, Range<u64>)> = Vec::new();
    let mut bad = None;
    let mut last_end = 0;
    for_runs(picked, |a, b| {
        let (a, b) = (a as u64, b as u64);
        let bytes = offset(a)..offset(b);
        // Every offset the run holds, and its end, in order and inside,
        // and the runs in order too.
        let monotone = (a..b).all(|c| offset(c) <= offset(c + 1));
        if bytes.end > var_size || bytes.start < last_end || !monotone {
            bad.get_or_insert(a);
        }
        last_end = bytes.end;
        spans.push((a..b, bytes));
    });
    if let Some(c) = bad {
        return Err(QueryError::Corrupt {
            fragment: frag.name.clone(),
            file: ofile,
            tile: t,
            message: format!(
                "cell offsets from cell {c} are not monotone or pass the values ({var_size} bytes)"
            ),
        });
    }
    // Values: only the chunks overlapping a span.
    scratch_to(values, var_size as usize);
    let (vbytes, vfile) = tile_bytes(src, frag, spec, t, FileKind::Var)?;
    let vctx = TileContext::new(v, spec.datatype.size())
        .expect_size(var_size)
        .reusing(src.ctx.codecs.clone());
    let needed: Vec<&Range<u64>> = spans
        .iter()
        .map(|s| &s.1)
        .filter(|b| !b.is_empty())
        .collect();
    let wanted_values = |r: Range<u64>| {
        let i = needed.partition_point(|b| b.end <= r.start);
        needed.get(i).is_some_and(|b| b.start < r.end)
    };
    TileDecoder::new(&keyed(&spec.filters, key), &vbytes, &vctx)
        .and_then(|d| d.decode_where(values, &wanted_values))
        .map_err(|e| tile_error(frag, t, &vfile, e))?;
    let total: u64 = spans.iter().map(|s| s.1.end - s.1.start).sum();
    out.data.reserve_exact(total as usize);
    let out_offsets = out.offsets.as_mut().expect("set above");
    out_offsets.reserve_exact(picked.len());
    for (cells, bytes) in &spans {
        let at = out.data.len() as u64;
        out_offsets.extend((cells.start + 1..=cells.end).map(|c| offset(c) - bytes.start + at));
        out.data
            .extend_from_slice(&values[bytes.start as usize..bytes.end as usize]);
    }
    if spec.nullable {
        let mut validity = src.ctx.tile_buffer(cells as usize);
        decode_tile_into(
            src,
            frag,
            spec,
            t,
            key,
            (None, Some(&mut validity)),
            Some(&among),
        )?;
        out.validity = Some(picked.iter().map(|&c| validity[c as usize]).collect());
        src.ctx.tiles.give(validity);
    }
    Ok(Some(out))
}

/// Decodes var-sized tile `t` straight into the caller's buffers: values
/// into `data` (exactly the tile's var size, as the fragment metadata
/// gives it), offsets into `offsets` (one per cell, each plus `base`, the
/// position of `data` in the caller's values), validity into `validity`.
/// For fields whose offsets live in the values tile, use
/// [`decode_field_tile`].
#[allow(clippy::too_many_arguments)]
pub fn decode_var_tile_into(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    data: &mut [u8],
    (offsets, base): (&mut [u64], u64),
    validity: Option<&mut [u8]>,
) -> Result<(), QueryError> {
    let (vbytes, vfile) = tile_bytes(src, frag, spec, t, FileKind::Var)?;
    let ctx = TileContext::new(frag.version(), spec.datatype.size())
        .expect_size(data.len() as u64)
        .reusing(src.ctx.codecs.clone());
    TileDecoder::new(&keyed(&spec.filters, key), &vbytes, &ctx)
        .and_then(|d| d.decode_into(data))
        .map_err(|e| tile_error(frag, t, &vfile, e))?;
    offsets_into(src, frag, spec, t, key, offsets, base, data.len() as u64)?;
    decode_tile_into(src, frag, spec, t, key, (None, validity), None)
}
