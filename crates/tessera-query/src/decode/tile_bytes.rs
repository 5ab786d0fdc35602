//! One tile in one of a field's files: its size as the fragment metadata
//! claims it (bounded before anything is allocated), its bytes, its filter
//! pipeline with the array's key, its offsets tile, and errors naming the
//! fragment, file and tile.

use super::fetch::*;
use super::spec::*;
use crate::QueryError;
use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;
use tessera_filters::{FilterPipeline, TileContext, TileDecoder};
use tessera_fragment::{Field, FileKind, FragmentMetadata};
use tessera_storage::Storage;

/// Sizes scratch `buf` to `len` bytes, keeping what it holds. Growing past
/// its capacity takes fresh zeroed memory (`vec!`: the allocator's zeroed
/// pages, faulted in only where decoding writes) instead of copying the old
/// bytes and clearing the rest, which touched every page of a buffer of
/// which a picking read may decode a fifth.
pub fn scratch_to(buf: &mut Vec<u8>, len: usize) {
    if len > buf.capacity() {
        *buf = vec![0; len];
    } else {
        buf.resize(len, 0);
    }
}

/// The unfiltered bytes of tile `t` of a fixed-sized field. The cell count
/// comes off disk: it is bounded here, before anything is allocated.
pub fn fixed_tile_len(
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
) -> Result<usize, QueryError> {
    tile_len(frag, t, spec.cell_size())
}

/// The bytes of tile `t`'s cells at `cell_size` bytes each, bounded by the
/// largest tile a pipeline may hold.
pub(super) fn tile_len(
    frag: &FragmentMetadata,
    t: u64,
    cell_size: u64,
) -> Result<usize, QueryError> {
    let cells = frag.cell_num(t);
    let bytes = cells.saturating_mul(cell_size);
    bounded_tile_bytes(frag, t, bytes, || {
        format!("{cells} cells of {cell_size} bytes are")
    })
}

/// `bytes` of unfiltered tile `t`, as the fragment metadata claims them,
/// if no more than the largest tile a pipeline may hold; `what` states
/// the claim (subject and verb) in the error.
pub(super) fn bounded_tile_bytes(
    frag: &FragmentMetadata,
    t: u64,
    bytes: u64,
    what: impl FnOnce() -> String,
) -> Result<usize, QueryError> {
    if bytes > tessera_filters::pipeline::DEFAULT_MAX_TILE_SIZE {
        return Err(QueryError::Corrupt {
            fragment: frag.name.clone(),
            file: "fragment metadata".into(),
            tile: t,
            message: format!("{} more than a tile may hold", what()),
        });
    }
    Ok(bytes as usize)
}

/// The unfiltered size of var-sized tile `t` of `field`, as the fragment
/// metadata records it.
pub fn var_tile_size(
    storage: &dyn Storage,
    frag: &FragmentMetadata,
    field: Field,
    t: u64,
) -> Result<u64, QueryError> {
    let corrupt = |message: String| QueryError::Corrupt {
        fragment: frag.name.clone(),
        file: "fragment metadata".into(),
        tile: t,
        message,
    };
    let idx = frag
        .field_index(field)
        .ok_or_else(|| corrupt(format!("no {field:?} in the fragment")))?;
    frag.tile_var_sizes(storage, idx)?
        .get(t as usize)
        .copied()
        .ok_or_else(|| corrupt(format!("no var tile size for tile {t}")))
}

/// The bytes of tile `t` in one of a field's files, and the file's name.
pub(super) fn tile_bytes<'f>(
    src: &'f Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    kind: FileKind,
) -> Result<(Cow<'f, [u8]>, String), QueryError> {
    let path = frag.data_file(spec.field, kind);
    let bytes = src.bytes(&path, tile_range(src.storage, frag, spec, kind, t)?)?;
    Ok((bytes, file_name(&path)))
}

/// The name of a data file, as errors give it.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A pipeline with the array's encryption appended, when it has a key.
pub(super) fn keyed(
    p: &FilterPipeline,
    key: Option<tessera_filters::EncryptionKey>,
) -> Cow<'_, FilterPipeline> {
    match key {
        Some(_) => Cow::Owned(p.with_encryption(key)),
        None => Cow::Borrowed(p),
    }
}

/// A filter error in tile `t` of `file`, naming the fragment.
pub(super) fn tile_error(
    frag: &FragmentMetadata,
    t: u64,
    file: &str,
    e: tessera_filters::FilterError,
) -> QueryError {
    QueryError::Tile {
        fragment: frag.name.clone(),
        file: file.to_owned(),
        tile: t,
        source: Box::new(e),
    }
}

/// Unfilters the offsets tile of var-sized tile `t` (values `len` bytes)
/// into `dst`, one per cell, each plus `base`: the start of each cell's
/// value in the caller's buffer. Offsets that decrease or pass the values
/// are an error.
#[allow(clippy::too_many_arguments)]
pub(super) fn offsets_into(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    dst: &mut [u64],
    base: u64,
    len: u64,
) -> Result<(), QueryError> {
    let cells = dst.len() as u64;
    let (obytes, ofile) = tile_bytes(src, frag, spec, t, FileKind::Fixed)?;
    let octx = TileContext::new(frag.version(), 8)
        .expect_size(cells * 8)
        .reusing(src.ctx.codecs.clone());
    // Scratch from the tile pool: offsets are rebased on the way out.
    let mut raw = src.ctx.tile_buffer(dst.len() * 8);
    TileDecoder::new(&keyed(&frag.schema.offsets_filters, key), &obytes, &octx)
        .and_then(|d| d.decode_into(&mut raw))
        .map_err(|e| tile_error(frag, t, &ofile, e))?;
    let mut last = 0;
    let checked = dst
        .iter_mut()
        .zip(raw.chunks_exact(8))
        .try_for_each(|(o, c)| {
            let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            if x < last || x > len {
                return Err(QueryError::Corrupt {
                    fragment: frag.name.clone(),
                    file: ofile.clone(),
                    tile: t,
                    message: format!("cell offset {x} after {last}, in values of {len} bytes"),
                });
            }
            last = x;
            *o = base + x;
            Ok(())
        });
    src.ctx.tiles.give(raw);
    checked
}

/// The error for cells a read would take from past the end of a tile.
pub(crate) fn cells_past_tile(fragment: &str, cells: Range<u64>) -> QueryError {
    QueryError::Invalid(format!(
        "fragment {fragment}: cells {}..{} are past its tile",
        cells.start, cells.end
    ))
}
