//! Unfiltering one tile of a field: whole, a span of its cells, or into
//! the caller's buffers; the sizes the fragment metadata claims, bounded.

use super::fetch::*;
use super::spec::*;
use super::tile_bytes::*;
use crate::context::ReadContext;
use crate::QueryError;
use std::ops::Range;
use tessera_filters::{FilterPipeline, TileContext, TileDecoder};
use tessera_fragment::{FileKind, FragmentMetadata};
use tessera_storage::Storage;

/// Reads and unfilters tile `t` of a field, with one request per file.
pub fn read_field_tile(
    storage: &dyn Storage,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
) -> Result<FieldTile, QueryError> {
    // A one-off read: buffers of its own, nothing kept.
    let ctx = ReadContext::new();
    let fetched = Fetched::nothing(storage, &ctx);
    decode_field_tile(&fetched, frag, spec, t, key)
}

/// Unfilters tile `t` of a field from bytes fetched ahead (or read now).
pub fn decode_field_tile(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
) -> Result<FieldTile, QueryError> {
    decode_field_tile_span(src, frag, spec, t, key, None)
}

/// [`decode_field_tile`] for a reader that needs only the cells `span` of
/// the tile: of a fixed-sized field, only the chunks holding them are
/// decoded, and the other cells hold whatever the buffer held.
pub fn decode_field_tile_span(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    span: Option<Range<u64>>,
) -> Result<FieldTile, QueryError> {
    let storage = src.storage;
    let read = |kind: FileKind| tile_bytes(src, frag, spec, t, kind);
    let cells = frag.cell_num(t);
    let v = frag.version();
    let tile_err = |file: &str, e| tile_error(frag, t, file, e);
    let corrupt = |file: &str, m: String| QueryError::Corrupt {
        fragment: frag.name.clone(),
        file: file.to_owned(),
        tile: t,
        message: m,
    };
    let mut out = FieldTile {
        cells,
        cell_size: spec.cell_size() as usize,
        ..Default::default()
    };
    if spec.cell_val_num.is_var() {
        // One offset per cell: bounds the cell count (and so the validity
        // buffer below) before anything is allocated.
        tile_len(frag, t, 8)?;
        let (vbytes, vfile) = read(FileKind::Var)?;
        let pipeline = keyed(&spec.filters, key);
        let ctx = TileContext::new(v, spec.datatype.size()).reusing(src.ctx.codecs.clone());
        let (data, offsets) = if spec
            .filters
            .offsets_in_data(spec.datatype, frag.schema.version)
        {
            let (data, mut offsets) = TileDecoder::new(&pipeline, &vbytes, &ctx)
                .and_then(|d| d.decode_strings())
                .map_err(|e| tile_err(&vfile, e))?;
            if offsets.len() as u64 != cells {
                return Err(corrupt(
                    &vfile,
                    format!("{} offsets for {cells} cells", offsets.len()),
                ));
            }
            offsets.push(data.len() as u64);
            if offsets.windows(2).any(|w| w[0] > w[1]) {
                return Err(corrupt(
                    &vfile,
                    "cell offsets are not monotone or exceed the var tile".into(),
                ));
            }
            (data, offsets)
        } else {
            let var_size = var_tile_size(storage, frag, spec.field, t)?;
            let data = TileDecoder::new(&pipeline, &vbytes, &ctx.clone().expect_size(var_size))
                .and_then(|d| d.decode())
                .map_err(|e| tile_err(&vfile, e))?;
            // offsets_into checks them: monotone, inside the values.
            let mut offsets = vec![0u64; cells as usize + 1];
            let (cell_offsets, end) = offsets.split_at_mut(cells as usize);
            offsets_into(src, frag, spec, t, key, cell_offsets, 0, data.len() as u64)?;
            end[0] = data.len() as u64;
            (data, offsets)
        };
        out.data = data;
        out.offsets = Some(offsets);
    } else {
        out.data = src.ctx.tile_buffer(fixed_tile_len(frag, spec, t)?);
    }
    let mut validity = spec.nullable.then(|| src.ctx.tile_buffer(cells as usize));
    let data = (!spec.cell_val_num.is_var()).then_some(out.data.as_mut_slice());
    let in_span = span.map(|s| move |r: Range<u64>| r.start < s.end && s.start < r.end);
    let only = in_span.as_ref().map(|f| f as &CellFilter<'_>);
    decode_tile_into(
        src,
        frag,
        spec,
        t,
        key,
        (data, validity.as_deref_mut()),
        only,
    )?;
    out.validity = validity;
    Ok(out)
}

/// Decodes fixed-sized field `spec` of tile `t` into scratch `data` (and
/// `validity`, for a nullable field), only the chunks holding the cells
/// `picked` (ascending); other cells hold whatever the scratch held.
pub fn decode_picked_fixed(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    picked: &[u32],
    (data, validity): (&mut Vec<u8>, &mut Vec<u8>),
) -> Result<(), QueryError> {
    scratch_to(data, fixed_tile_len(frag, spec, t)?);
    // Bounded by fixed_tile_len above.
    let cells = frag.cell_num(t) as usize;
    scratch_to(validity, if spec.nullable { cells } else { 0 });
    let v = spec.nullable.then_some(validity.as_mut_slice());
    let among = picked_cells(picked);
    decode_tile_into(src, frag, spec, t, key, (Some(data), v), Some(&among))
}

/// A fixed-sized field's cells (`cells x cell size` bytes) and a nullable
/// field's validity (one byte per cell), to decode into; either may be
/// left out.
pub type TileBuffers<'b> = (Option<&'b mut [u8]>, Option<&'b mut [u8]>);

/// Whether a reader needs any of the cells in a range.
pub type CellFilter<'f> = dyn Fn(Range<u64>) -> bool + Sync + 'f;

/// A [`CellFilter`] for the cells `picked` (ascending).
pub fn picked_cells(picked: &[u32]) -> impl Fn(Range<u64>) -> bool + Sync + '_ {
    move |r: Range<u64>| {
        let i = picked.partition_point(|&c| (c as u64) < r.start);
        picked.get(i).is_some_and(|&c| (c as u64) < r.end)
    }
}

/// Decodes tile `t` of a field straight into the caller's buffers. With
/// `only`, just the chunks holding cells it asks for are decoded; the bytes
/// of other cells are left as they were.
pub fn decode_tile_into(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    (data, validity): TileBuffers<'_>,
    only: Option<&CellFilter<'_>>,
) -> Result<(), QueryError> {
    let cells = frag.cell_num(t);
    let v = frag.version();
    let unfilter = |kind: FileKind, pipeline: &FilterPipeline, cell_size: u64, dst: &mut [u8]| {
        let (bytes, file) = tile_bytes(src, frag, spec, t, kind)?;
        let ctx = TileContext::new(v, cell_size)
            .expect_size(cells * cell_size)
            .reusing(src.ctx.codecs.clone());
        let pipeline = keyed(pipeline, key);
        let decoded = match only {
            None => TileDecoder::new(&pipeline, &bytes, &ctx).and_then(|d| d.decode_into(dst)),
            Some(only) => {
                // A chunk is wanted when a wanted cell overlaps its bytes.
                let wanted = |r: Range<u64>| only(r.start / cell_size..r.end.div_ceil(cell_size));
                TileDecoder::new(&pipeline, &bytes, &ctx).and_then(|d| d.decode_where(dst, &wanted))
            }
        };
        decoded.map_err(|e| tile_error(frag, t, &file, e))
    };
    if let Some(dst) = data {
        unfilter(FileKind::Fixed, &spec.filters, spec.cell_size(), dst)?;
    }
    if let Some(dst) = validity {
        unfilter(FileKind::Validity, &frag.schema.validity_filters, 1, dst)?;
    }
    Ok(())
}

/// Splits a legacy coordinates tile into one tile per dimension. Zipped
/// tiles interleave the coordinates cell by cell; unzipped ones store each
/// dimension's coordinates together.
pub fn split_coords(
    tile: &FieldTile,
    dims: usize,
    coord_size: usize,
    zipped: bool,
) -> Vec<FieldTile> {
    let cells = tile.cells as usize;
    (0..dims)
        .map(|j| {
            let mut data = Vec::with_capacity(cells * coord_size);
            for i in 0..cells {
                let at = if zipped {
                    (i * dims + j) * coord_size
                } else {
                    (j * cells + i) * coord_size
                };
                data.extend_from_slice(&tile.data[at..at + coord_size]);
            }
            FieldTile {
                cells: tile.cells,
                data,
                offsets: None,
                validity: None,
                cell_size: coord_size,
            }
        })
        .collect()
}
