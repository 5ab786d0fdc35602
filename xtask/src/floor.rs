//! `xtask floor`, the physical limit of a read: data files read and each
//! chunk decoded by its raw codec into a buffer its thread reuses (with a
//! reused codec context), nothing else. Pipelines of more than one
//! filter (byteshuffle then LZ4) go through tessera's own pipeline instead,
//! as the raw codec alone cannot undo them. Files are mapped where a read
//! maps them, read where it reads them.

use crate::common::Error;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tessera::filters::{FilterKind, FilterPipeline, TileContext, TileDecoder};
use tessera::fragment::{Field, FileKind, FragmentMetadata, OpenArray};
use tessera::schema::{Range1D, Value};
use tessera::storage::{LocalFs, MappedFile, ReadableStorage};
use tessera::tile::{tile::ChunkList, Layout};

/// Inclusive integer ranges, one per dimension.
type Subarray = Vec<(i128, i128)>;

/// `LO:HI,LO:HI,...` as ranges.
fn subarray(text: &str) -> Result<Subarray, Error> {
    text.split(',')
        .map(|r| {
            let (lo, hi) = r.split_once(':').ok_or("a range is LO:HI")?;
            Ok((lo.trim().parse()?, hi.trim().parse()?))
        })
        .collect()
}

/// `xtask floor ARRAY [ATTRS] [SUBARRAY]`: reads every tile of every
/// attribute (and, for sparse arrays, dimension) and decodes each chunk
/// with the raw codec of its pipeline's compressor. With `ATTRS`
/// (comma-separated; `-` for all), only those attributes and no
/// dimension: the floor of a read that asks for no coordinates. With
/// `SUBARRAY` (`LO:HI` per dimension, comma-separated, integers), only the
/// tiles it meets: a sparse fragment's whose MBRs meet it, a dense one's
/// space tiles inside it.
pub fn floor(args: &[String]) -> Result<(), Error> {
    let usage = "usage: xtask floor ARRAY [ATTRS] [SUBARRAY]";
    let path = args.first().ok_or(usage)?;
    let only: Option<Vec<&str>> = args
        .get(1)
        .filter(|a| *a != "-")
        .map(|a| a.split(',').collect());
    let subarray = args.get(2).map(|s| subarray(s)).transpose()?;
    let a = OpenArray::open(&LocalFs, Path::new(path), 0, u64::MAX, None)?;
    let mut jobs = Vec::new();
    for f in &a.fragments {
        let s = &f.schema;
        let mut fields: Vec<(Field, &FilterPipeline, bool, u64)> = s
            .attributes
            .iter()
            .enumerate()
            .filter(|(_, at)| only.as_ref().is_none_or(|o| o.contains(&at.name.as_str())))
            .map(|(i, at)| {
                (
                    Field::Attribute(i),
                    &at.filters,
                    at.is_var(),
                    at.cell_size(),
                )
            })
            .collect();
        if !f.footer.dense && only.is_none() {
            fields.extend(
                s.dimensions
                    .iter()
                    .enumerate()
                    .map(|(j, d)| (Field::Dimension(j), &d.filters, d.is_var(), d.coord_size())),
            );
        }
        let tiles = tiles_meeting(f, subarray.as_deref())?;
        for (field, pipe, var, size) in fields {
            let Some(idx) = f.field_index(field) else {
                continue;
            };
            let kinds: &[FileKind] = if var {
                &[FileKind::Fixed, FileKind::Var]
            } else {
                &[FileKind::Fixed]
            };
            for &kind in kinds {
                let file = f.data_file(field, kind);
                for &t in &tiles {
                    let cell = if kind == FileKind::Var {
                        1
                    } else if var {
                        8
                    } else {
                        size
                    };
                    jobs.push((
                        file.clone(),
                        f.tile_range(&LocalFs, idx, kind, t)?,
                        pipe,
                        TileContext::new(f.version(), cell),
                    ));
                }
            }
        }
    }
    // Files mapped where a read maps them (`Storage::map`: a read of a
    // megabyte or more), so the floor copies no tile a read does not.
    let total: u64 = jobs.iter().map(|(_, r, _, _)| r.end - r.start).sum();
    let mut mapped: HashMap<PathBuf, MappedFile> = HashMap::new();
    for (file, _, _, _) in &jobs {
        if !mapped.contains_key(file) {
            if let Some(m) = LocalFs.map(file, total) {
                mapped.insert(file.clone(), m?);
            }
        }
    }
    let bytes: u64 = jobs
        .par_iter()
        .map_init(Scratch::new, |scratch, (file, range, pipe, ctx)| {
            let read;
            let tile: &[u8] = match mapped.get(file) {
                Some(m) => m.range(range.clone()).map_err(|e| e.to_string())?,
                None => {
                    read = LocalFs
                        .read_range(file, range.clone())
                        .map_err(|e| e.to_string())?;
                    &read
                }
            };
            scratch.decode(tile, pipe, ctx)
        })
        .sum::<Result<u64, String>>()?;
    println!("{bytes} bytes decoded from {} tiles", jobs.len());
    Ok(())
}

/// What a thread decodes with: its codec's context and one buffer its
/// chunks are decoded into, both reused, as the cheapest reader would.
struct Scratch {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    out: Vec<u8>,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            zstd: zstd::bulk::Decompressor::new().ok(),
            out: Vec::new(),
        }
    }

    /// Decodes every chunk of `tile` into the buffer: the bytes decoded.
    fn decode(
        &mut self,
        tile: &[u8],
        pipe: &FilterPipeline,
        ctx: &TileContext,
    ) -> Result<u64, String> {
        if pipe.filters.len() > 1 {
            let cells = TileDecoder::new(pipe, tile, ctx)
                .and_then(|d| d.decode())
                .map_err(|e| e.to_string())?;
            return Ok(cells.len() as u64);
        }
        let chunks = ChunkList::parse(tile, 0).map_err(|e| e.to_string())?;
        let codec = pipe.filters.iter().find_map(|f| match f.kind {
            FilterKind::Zstd { .. } => Some(true),
            FilterKind::Lz4 { .. } => Some(false),
            _ => None,
        });
        let mut decoded = 0;
        for c in &chunks.chunks {
            let data = &tile[c.data.clone()];
            let n = c.original_len as usize;
            if self.out.len() < n {
                self.out.resize(n, 0);
            }
            let out = &mut self.out[..n];
            decoded += match codec {
                Some(true) => {
                    let z = self.zstd.as_mut().ok_or("no zstd context")?;
                    z.decompress_to_buffer(data, out)
                        .map_err(|e| e.to_string())?
                }
                Some(false) => lz4::block::decompress_to_buffer(data, Some(n as i32), out)
                    .map_err(|e| e.to_string())?,
                None => {
                    out.copy_from_slice(data.get(..n).ok_or("a chunk shorter than it says")?);
                    n
                }
            } as u64;
        }
        Ok(decoded)
    }
}

/// An integer coordinate of dimension `j` of `f`'s schema from its bytes.
fn int_of(f: &FragmentMetadata, j: usize, bytes: &[u8]) -> Result<i128, Error> {
    let d = &f.schema.dimensions[j];
    Value::decode(d.datatype, bytes)
        .as_int()
        .ok_or_else(|| format!("dimension {} is not an integer", d.name).into())
}

/// The tiles of fragment `f` a read of `subarray` meets (every tile
/// without one), in the fragment's order.
fn tiles_meeting(
    f: &FragmentMetadata,
    subarray: Option<&[(i128, i128)]>,
) -> Result<Vec<u64>, Error> {
    let Some(sub) = subarray else {
        return Ok((0..f.tile_count()).collect());
    };
    let meets = |mbr: &[Range1D]| -> Result<bool, Error> {
        for (j, (r, &(lo, hi))) in mbr.iter().zip(sub).enumerate() {
            if int_of(f, j, &r.hi)? < lo || int_of(f, j, &r.lo)? > hi {
                return Ok(false);
            }
        }
        Ok(true)
    };
    if !f.footer.dense {
        let mut tiles = Vec::new();
        for (t, mbr) in f.rtree(&LocalFs)?.leaves().iter().enumerate() {
            if meets(mbr)? {
                tiles.push(t as u64);
            }
        }
        return Ok(tiles);
    }
    // A dense fragment's tiles cover its non-empty domain, widened to
    // space tiles, numbered in the tile order.
    let ned = f
        .footer
        .non_empty_domain
        .as_ref()
        .ok_or("a dense fragment without a non-empty domain")?;
    let mut spans = Vec::new(); // per dimension: (tiles, first and last tile met)
    for (j, (r, &(lo, hi))) in ned.iter().zip(sub).enumerate() {
        let d = &f.schema.dimensions[j];
        let (start, _) = d
            .domain
            .as_ref()
            .ok_or("a dense dimension without a domain")?;
        let ext = d
            .tile_extent
            .as_ref()
            .ok_or("a dense dimension without a tile extent")?;
        let (start, ext) = (int_of(f, j, start)?, int_of(f, j, ext)?);
        let (a, b) = (int_of(f, j, &r.lo)?, int_of(f, j, &r.hi)?);
        let (from, to) = (lo.max(a), hi.min(b));
        if from > to {
            return Ok(Vec::new());
        }
        let tile = |c: i128| (c - start) / ext;
        let first = tile(a);
        spans.push((tile(b) - first + 1, tile(from) - first, tile(to) - first));
    }
    let mut order: Vec<usize> = (0..spans.len()).collect();
    if f.schema.tile_order == Layout::ColMajor {
        order.reverse();
    }
    // Every combination of the tiles met, slowest dimension first.
    let mut tiles = vec![0u64];
    for &j in &order {
        let (count, from, to) = spans[j];
        tiles = tiles
            .iter()
            .flat_map(|&t| (from..=to).map(move |k| t * count as u64 + k as u64))
            .collect();
    }
    Ok(tiles)
}
