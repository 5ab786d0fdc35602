//! A field's data files: its tiles filtered through their pipelines
//! (`FieldEncoder`) and written back to back (`FieldFileSet`), with where
//! each tile starts: the fixed-sized values (or a var-sized field's
//! offsets), the var-sized values, the validity bytes. Tiles go to their
//! files as they come, not gathered into one buffer first.

use super::buffer::{FieldBuffer, FieldInfo};
use crate::WriteError;
use std::ops::Range;
use std::sync::Arc;
use tessera_filters::gates::LibtiledbRelease;
use tessera_filters::{EncryptionKey, FilterPipeline, Reuse, TileBytes, TileContext, TileEncoder};
use tessera_schema::ArraySchema;
use tessera_storage::{side_by_side, FileWriter, Location};

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
pub(crate) struct FilteredTile {
    fixed: TileBytes,
    var: Option<(TileBytes, u64)>,
    validity: Option<TileBytes>,
}

/// A pipeline with the encryption filter appended when the array has a key.
fn keyed(p: &FilterPipeline, key: Option<EncryptionKey>) -> FilterPipeline {
    match key {
        Some(k) => p.with_encryption(Some(k)),
        None => p.clone(),
    }
}

/// Filters tiles of one field (`f`, whose pipeline is `filters`); `key`
/// encrypts, `release` is the libtiledb release whose filter output to
/// write.
pub(crate) struct FieldEncoder<'a> {
    f: &'a FieldInfo,
    version: tessera_tile::FormatVersion,
    release: LibtiledbRelease,
    data: FilterPipeline,
    offsets: FilterPipeline,
    validity: FilterPipeline,
    /// Offsets folded into the values (string filters).
    folded: bool,
    /// Codec contexts the field's tiles reuse, dropped with the encoder.
    reuse: Arc<Reuse>,
}

impl<'a> FieldEncoder<'a> {
    pub fn new(
        schema: &ArraySchema,
        f: &'a FieldInfo,
        filters: &FilterPipeline,
        (key, release): (Option<EncryptionKey>, LibtiledbRelease),
    ) -> FieldEncoder<'a> {
        let version = schema.version;
        FieldEncoder {
            f,
            version,
            release,
            data: keyed(filters, key),
            offsets: keyed(&schema.offsets_filters, key),
            validity: keyed(&schema.validity_filters, key),
            folded: f.cell_val_num.is_var() && filters.offsets_in_data(f.datatype, version),
            reuse: Arc::default(),
        }
    }

    /// The context of a tile of cells of `cell_size` bytes.
    fn context(&self, cell_size: u64) -> TileContext {
        TileContext::new(self.version, cell_size)
            .writer(self.release)
            .reusing(self.reuse.clone())
    }

    /// The tile of the cells `r` of `buf`.
    pub fn encode(&self, buf: &FieldBuffer, r: Range<usize>) -> Result<FilteredTile, WriteError> {
        let f = self.f;
        let validity = match &buf.validity {
            Some(val) => {
                let ctx = self.context(1);
                Some(TileEncoder::new(&self.validity, &ctx).encode_parts(&val[r.clone()])?)
            }
            None => None,
        };
        let Some(offsets) = &buf.offsets else {
            let cs = f.cell_size();
            let ctx = self.context(cs);
            let cells = &buf.data[r.start * cs as usize..r.end * cs as usize];
            let fixed = TileEncoder::new(&self.data, &ctx).encode_parts(cells)?;
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
        let ctx = self.context(f.datatype.size());
        let encoder = TileEncoder::new(&self.data, &ctx);
        let var = match self.folded {
            true => encoder.encode_strings(values, &rel)?.into(),
            false => encoder.encode_var_parts(values, &rel)?,
        };
        // Offsets folded into the values leave an offsets tile of no
        // chunks (its chunk count, 0), as libtiledb writes it.
        let fixed = match self.folded {
            true => 0u64.to_le_bytes().to_vec().into(),
            false => {
                let octx = self.context(8);
                TileEncoder::new(&self.offsets, &octx).encode_parts(&rel_bytes)?
            }
        };
        Ok(FilteredTile {
            fixed,
            var: Some((var, values.len() as u64)),
            validity,
        })
    }
}

/// A field's data files being written, tile after tile, with where each
/// tile starts.
pub(crate) struct FieldFileSet {
    fixed: TileFile,
    var: Option<TileFile>,
    validity: Option<TileFile>,
    out: FieldFiles,
}

impl FieldFileSet {
    pub fn create(dir: &Location, stem: &str, f: &FieldInfo) -> Result<FieldFileSet, WriteError> {
        let fixed = TileFile::create(dir, stem, "")?;
        let var = f
            .cell_val_num
            .is_var()
            .then(|| TileFile::create(dir, stem, "_var"))
            .transpose()?;
        let validity = f
            .nullable
            .then(|| TileFile::create(dir, stem, "_validity"))
            .transpose()?;
        Ok(FieldFileSet {
            fixed,
            var,
            validity,
            out: FieldFiles::default(),
        })
    }

    /// Appends the next tile.
    pub fn append(&mut self, t: FilteredTile) -> Result<(), WriteError> {
        let out = &mut self.out;
        out.tile_offsets.push(self.fixed.append(&t.fixed)?);
        if let (Some((bytes, size)), Some(file)) = (t.var, &mut self.var) {
            out.var_offsets.push(file.append(&bytes)?);
            out.var_sizes.push(size);
        }
        if let (Some(bytes), Some(file)) = (t.validity, &mut self.validity) {
            out.validity_offsets.push(file.append(&bytes)?);
        }
        Ok(())
    }

    /// Flushes the files of every field (`None`: a field without files)
    /// side by side: on an object store each finish is a round trip (a
    /// `PUT`, or a multipart upload's last parts and its completion).
    /// Returns each field's file sizes and tiles.
    pub fn finish_all(sets: Vec<Option<FieldFileSet>>) -> Result<Vec<FieldFiles>, WriteError> {
        let mut outs = Vec::with_capacity(sets.len());
        // (field, which size: fixed, var, validity, the file)
        let mut files: Vec<(usize, usize, TileFile)> = Vec::new();
        for (i, set) in sets.into_iter().enumerate() {
            let Some(set) = set else {
                outs.push(FieldFiles::default());
                continue;
            };
            outs.push(set.out);
            let kinds = [Some(set.fixed), set.var, set.validity];
            files.extend((kinds.into_iter().enumerate()).filter_map(|(k, f)| Some((i, k, f?))));
        }
        let (places, files): (Vec<(usize, usize)>, Vec<TileFile>) =
            files.into_iter().map(|(i, k, f)| ((i, k), f)).unzip();
        // A failure comes before any file left unfinished (dropped: aborted).
        let sizes = side_by_side(files, FILES_IN_FLIGHT, TileFile::finish);
        for ((i, kind), size) in places.into_iter().zip(sizes) {
            let out = &mut outs[i];
            *[&mut out.fixed, &mut out.var, &mut out.validity][kind] = size?;
        }
        Ok(outs)
    }
}

/// Files finished at once.
const FILES_IN_FLIGHT: usize = 16;

/// A data file being written, tile after tile: streamed to its storage
/// (on an object store, uploaded part by part as tiles come).
struct TileFile {
    out: Box<dyn FileWriter>,
    len: u64,
}

impl TileFile {
    fn create(dir: &Location, stem: &str, suffix: &str) -> Result<TileFile, WriteError> {
        let path = dir.path().join(format!("{stem}{suffix}.tdb"));
        let out = dir.storage().writer(&path).map_err(WriteError::from)?;
        Ok(TileFile { out, len: 0 })
    }

    /// Appends a tile; returns where it starts.
    fn append(&mut self, tile: &TileBytes) -> Result<u64, WriteError> {
        let parts: Vec<&[u8]> = tile.parts().iter().map(Vec::as_slice).collect();
        self.out.write_parts(&parts).map_err(WriteError::from)?;
        let at = self.len;
        self.len += tile.len() as u64;
        Ok(at)
    }

    /// Flushes the file; returns its size.
    fn finish(self) -> Result<u64, WriteError> {
        let TileFile { out, len } = self;
        out.finish().map_err(WriteError::from)?;
        Ok(len)
    }
}
