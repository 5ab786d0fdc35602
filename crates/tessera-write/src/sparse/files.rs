//! A field's data files: its tiles filtered through their pipelines
//! (in parallel with rayon) and laid back to back, with where each tile
//! starts: the fixed-sized values (or a var-sized field's offsets), the
//! var-sized values, the validity bytes.

use super::buffer::{FieldBuffer, FieldInfo};
use crate::WriteError;
use rayon::prelude::*;
use std::ops::Range;
use tessera_filters::gates::LibtiledbRelease;
use tessera_filters::{EncryptionKey, FilterPipeline, TileContext, TileEncoder};
use tessera_schema::ArraySchema;

/// One field's files and their tiles.
#[derive(Debug, Default)]
pub(crate) struct FieldFiles {
    pub fixed: Vec<u8>,
    pub var: Vec<u8>,
    pub validity: Vec<u8>,
    /// Where each tile starts in `fixed`.
    pub tile_offsets: Vec<u64>,
    /// Where each tile starts in `var`.
    pub var_offsets: Vec<u64>,
    /// Each var tile's unfiltered size.
    pub var_sizes: Vec<u64>,
    /// Where each tile starts in `validity`.
    pub validity_offsets: Vec<u64>,
}

/// One tile of a field, filtered.
struct FilteredTile {
    fixed: Vec<u8>,
    var: Option<(Vec<u8>, u64)>,
    validity: Option<Vec<u8>>,
}

/// A pipeline with the encryption filter appended when the array has a key.
fn keyed(p: &FilterPipeline, key: Option<EncryptionKey>) -> FilterPipeline {
    match key {
        Some(k) => p.with_encryption(Some(k)),
        None => p.clone(),
    }
}

/// Filters the cells of `buf` (field `f`, whose pipeline is `filters`) in
/// `tiles`, and lays out its files; `key` encrypts, `release` is the
/// libtiledb release whose filter output to write.
pub(crate) fn field_files(
    schema: &ArraySchema,
    f: &FieldInfo,
    filters: &FilterPipeline,
    buf: &FieldBuffer,
    tiles: &[Range<usize>],
    (key, release): (Option<EncryptionKey>, LibtiledbRelease),
) -> Result<FieldFiles, WriteError> {
    let v = schema.version;
    let data_pipeline = keyed(filters, key);
    let offsets_pipeline = keyed(&schema.offsets_filters, key);
    let validity_pipeline = keyed(&schema.validity_filters, key);
    let folded = f.cell_val_num.is_var() && filters.offsets_in_data(f.datatype, v);
    let cs = f.cell_size();
    let filtered: Vec<FilteredTile> = tiles
        .par_iter()
        .map(|r| -> Result<FilteredTile, WriteError> {
            let validity = match &buf.validity {
                Some(val) => {
                    let ctx = TileContext::new(v, 1).writer(release);
                    Some(TileEncoder::new(&validity_pipeline, &ctx).encode(&val[r.clone()])?)
                }
                None => None,
            };
            let Some(offsets) = &buf.offsets else {
                let ctx = TileContext::new(v, cs).writer(release);
                let cells = &buf.data[r.start * cs as usize..r.end * cs as usize];
                let fixed = TileEncoder::new(&data_pipeline, &ctx).encode(cells)?;
                return Ok(FilteredTile {
                    fixed,
                    var: None,
                    validity,
                });
            };
            let start = offsets[r.start];
            let end = offsets.get(r.end).copied().unwrap_or(buf.data.len() as u64);
            let values = &buf.data[start as usize..end as usize];
            let rel: Vec<u64> = offsets[r.clone()].iter().map(|o| o - start).collect();
            let rel_bytes: Vec<u8> = rel.iter().flat_map(|o| o.to_le_bytes()).collect();
            let ctx = TileContext::new(v, f.datatype.size()).writer(release);
            let encoder = TileEncoder::new(&data_pipeline, &ctx);
            let var = match folded {
                true => encoder.encode_strings(values, &rel)?,
                false => encoder.encode_var(values, &rel)?,
            };
            let octx = TileContext::new(v, 8).writer(release);
            let fixed = TileEncoder::new(&offsets_pipeline, &octx).encode(&rel_bytes)?;
            Ok(FilteredTile {
                fixed,
                var: Some((var, values.len() as u64)),
                validity,
            })
        })
        .collect::<Result<_, _>>()?;
    let mut out = FieldFiles::default();
    for t in filtered {
        out.tile_offsets.push(out.fixed.len() as u64);
        out.fixed.extend_from_slice(&t.fixed);
        if let Some((var, size)) = t.var {
            out.var_offsets.push(out.var.len() as u64);
            out.var_sizes.push(size);
            out.var.extend_from_slice(&var);
        }
        if let Some(val) = t.validity {
            out.validity_offsets.push(out.validity.len() as u64);
            out.validity.extend_from_slice(&val);
        }
    }
    Ok(out)
}
