//! A field's data files: its tiles filtered through their pipelines
//! (in parallel with rayon) and written back to back, with where each tile
//! starts: the fixed-sized values (or a var-sized field's offsets), the
//! var-sized values, the validity bytes. Tiles go to their files as they
//! come, not gathered into one buffer first.

use super::buffer::{FieldBuffer, FieldInfo};
use crate::WriteError;
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use tessera_filters::gates::LibtiledbRelease;
use tessera_filters::{EncryptionKey, FilterPipeline, TileContext, TileEncoder};
use tessera_schema::ArraySchema;

/// One field's files (their sizes) and their tiles.
#[derive(Debug, Default)]
pub(crate) struct FieldFiles {
    pub fixed: u64,
    pub var: u64,
    pub validity: u64,
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
/// `tiles`, and writes its files as `stem` (`a0`: `a0.tdb`, `a0_var.tdb`,
/// `a0_validity.tdb`) into `dir`; `key` encrypts, `release` is the
/// libtiledb release whose filter output to write.
pub(crate) fn field_files(
    (dir, stem): (&Path, &str),
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
            // Offsets folded into the values leave an offsets tile of no
            // chunks (its chunk count, 0), as libtiledb writes it.
            let fixed = match folded {
                true => 0u64.to_le_bytes().to_vec(),
                false => {
                    let octx = TileContext::new(v, 8).writer(release);
                    TileEncoder::new(&offsets_pipeline, &octx).encode(&rel_bytes)?
                }
            };
            Ok(FilteredTile {
                fixed,
                var: Some((var, values.len() as u64)),
                validity,
            })
        })
        .collect::<Result<_, _>>()?;
    let mut out = FieldFiles::default();
    let mut fixed = TileFile::create(dir, stem, "")?;
    let mut var = f
        .cell_val_num
        .is_var()
        .then(|| TileFile::create(dir, stem, "_var"))
        .transpose()?;
    let mut validity = f
        .nullable
        .then(|| TileFile::create(dir, stem, "_validity"))
        .transpose()?;
    for t in filtered {
        out.tile_offsets.push(fixed.append(&t.fixed)?);
        if let (Some((bytes, size)), Some(file)) = (t.var, &mut var) {
            out.var_offsets.push(file.append(&bytes)?);
            out.var_sizes.push(size);
        }
        if let (Some(bytes), Some(file)) = (t.validity, &mut validity) {
            out.validity_offsets.push(file.append(&bytes)?);
        }
    }
    out.fixed = fixed.finish()?;
    out.var = var.map(TileFile::finish).transpose()?.unwrap_or(0);
    out.validity = validity.map(TileFile::finish).transpose()?.unwrap_or(0);
    Ok(out)
}

/// A data file being written, tile after tile.
struct TileFile {
    path: PathBuf,
    out: BufWriter<File>,
    len: u64,
}

impl TileFile {
    fn create(dir: &Path, stem: &str, suffix: &str) -> Result<TileFile, WriteError> {
        let path = dir.join(format!("{stem}{suffix}.tdb"));
        let file = File::create(&path).map_err(WriteError::io(&path))?;
        Ok(TileFile {
            out: BufWriter::new(file),
            path,
            len: 0,
        })
    }

    /// Appends a tile; returns where it starts.
    fn append(&mut self, tile: &[u8]) -> Result<u64, WriteError> {
        self.out
            .write_all(tile)
            .map_err(WriteError::io(&self.path))?;
        let at = self.len;
        self.len += tile.len() as u64;
        Ok(at)
    }

    /// Flushes the file; returns its size.
    fn finish(self) -> Result<u64, WriteError> {
        let TileFile { path, out, len } = self;
        out.into_inner()
            .map_err(|e| WriteError::io(&path)(e.into_error()))?;
        Ok(len)
    }
}
