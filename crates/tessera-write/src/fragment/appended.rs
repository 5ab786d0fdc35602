//! A fragment whose data files are written tile after tile, as its cells
//! come: what the two streamed writers share (`stream.rs`, sparse cells
//! in global order; `bands.rs`, a dense box band by band). Each call
//! filters some tiles of every field in parallel, appends them to the
//! field's files and keeps their tile metadata; the fragment metadata file
//! and the commit come at the end, as for a fragment written whole.

use super::buffer::{FieldBuffer, FieldCells, FieldInfo};
use super::commit::{commit, FragmentFolder};
use super::dense::DensePlan;
use super::files::{FieldEncoder, FieldFileSet, FieldFiles, FilteredTile};
use super::metadata::FragmentFacts;
use super::placement::{Run, FILL};
use super::stats::{tile_stats, TileStats};
use super::FragmentWriter;
use crate::WriteError;
use rayon::prelude::*;
use std::ops::Range;
use tessera_fragment::RTree;
use tessera_schema::Range1D;

/// One tile of each field, filtered, with its tile metadata (`None` for a
/// field without files).
type TileFields = Vec<Option<(FilteredTile, TileStats)>>;

/// The fragment's folder, its fields' files and the metadata of the
/// tiles written so far.
pub(super) struct AppendedFragment {
    folder: FragmentFolder,
    /// Each field's files; `None` for a field with none (a dense
    /// fragment's dimensions).
    files: Vec<Option<FieldFileSet>>,
    stats: Vec<Vec<TileStats>>,
    /// Cells of each tile written (a dense tile's padding left out).
    tile_cells: Vec<u64>,
}

impl AppendedFragment {
    /// The folder of `w`'s fragment and the files of the fields `stored`
    /// keeps, created now (invisible until committed).
    pub fn create(
        w: &FragmentWriter,
        stored: impl Fn(&FieldInfo) -> bool,
    ) -> Result<AppendedFragment, WriteError> {
        let folder = FragmentFolder::create(&w.array, w.range(), w.schema.version.number())?;
        let files = (0..w.fields.len())
            .map(|i| {
                let (_, stem) = w.filters_and_stem(i);
                let f = &w.fields[i];
                stored(f)
                    .then(|| FieldFileSet::create(&folder.dir, &stem, f))
                    .transpose()
            })
            .collect::<Result<_, _>>()?;
        Ok(AppendedFragment {
            folder,
            files,
            stats: vec![Vec::new(); w.fields.len()],
            tile_cells: Vec::new(),
        })
    }

    /// Filters the tiles `tiles` of each field's cells (`cells`, in the
    /// order of `w`'s fields) and appends them, a window of tiles at a
    /// time so that only its filtered bytes are held.
    pub fn append(
        &mut self,
        w: &FragmentWriter,
        cells: &[FieldBuffer],
        tiles: &[Range<usize>],
    ) -> Result<(), WriteError> {
        let encoders = self.encoders(w);
        let tile_bytes = |r: &Range<usize>| -> u64 {
            cells
                .iter()
                .zip(&w.fields)
                .map(|(b, f)| b.bytes_of(r.clone(), f.cell_size() as usize))
                .sum()
        };
        let widest = tiles.iter().map(tile_bytes).max().unwrap_or(0);
        self.in_windows(tiles, window_tiles(widest), |r| {
            let fields = encoders
                .par_iter()
                .enumerate()
                .map(|(i, e)| {
                    let Some(e) = e else { return Ok(None) };
                    let stats = tile_stats(&w.fields[i], &cells[i], r.clone(), None);
                    Ok(Some((e.encode(&cells[i], r.clone())?, stats)))
                })
                .collect::<Result<_, WriteError>>()?;
            Ok((fields, r.len() as u64))
        })
    }

    /// Lays out, filters and appends the space tiles of `plan`, a dense
    /// fragment's box whose cells `cells` holds (one buffer per field of
    /// `w`; a dimension's is not read), a window of tiles at a time: each
    /// tile's cells are gathered as it is filtered, the padding outside
    /// the box zeros (libtiledb's tiles start zeroed; the fill value is the
    /// reader's, for cells no fragment covers) and left out of the tile
    /// metadata and the cell counts.
    pub fn append_dense(
        &mut self,
        w: &FragmentWriter,
        plan: &DensePlan,
        cells: &[FieldCells<'_>],
    ) -> Result<(), WriteError> {
        let encoders = self.encoders(w);
        let per_tile = plan.cells_per_tile as usize;
        // Per position: its place and its cell, then each field's bytes.
        let cell_bytes: u64 = w.fields.iter().map(|f| f.cell_size()).sum();
        let widest = per_tile as u64 * (16 + 2 * cell_bytes);
        let all: Vec<usize> = (0..plan.tile_num).collect();
        let scratch = Scratch::default();
        self.in_windows(&all, window_tiles(widest), |&t| {
            dense_tile(w, plan, cells, &encoders, (t, &scratch))
        })
    }

    /// Lays out and filters the tiles `items` name (`lay`: each tile's
    /// fields and written cells), `window` of them at a time in parallel,
    /// while another thread appends the previous ones to the files: the
    /// writes to disk overlap the filtering of the next tiles. At most
    /// `window` tiles wait between the two.
    fn in_windows<T: Sync>(
        &mut self,
        items: &[T],
        window: usize,
        lay: impl Fn(&T) -> Result<(TileFields, u64), WriteError> + Sync,
    ) -> Result<(), WriteError> {
        self.pipelined(window, |sink| {
            for window in items.chunks(window) {
                let laid: Vec<(TileFields, u64)> =
                    window.par_iter().map(&lay).collect::<Result<_, _>>()?;
                for (tile, placed) in laid {
                    sink(tile, placed)?;
                }
            }
            Ok(())
        })
    }

    /// Runs `produce`, which hands each tile (in order, with its cells
    /// written) to the sink it is given, while another thread appends
    /// them to the files.
    fn pipelined(
        &mut self,
        window: usize,
        produce: impl FnOnce(
            &mut dyn FnMut(TileFields, u64) -> Result<(), WriteError>,
        ) -> Result<(), WriteError>,
    ) -> Result<(), WriteError> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(TileFields, u64)>(window);
        std::thread::scope(|scope| {
            let appender = scope.spawn(move || -> Result<(), WriteError> {
                for (tile, placed) in rx {
                    self.push_tile(tile, placed)?;
                }
                Ok(())
            });
            // A send fails only when the appender stopped, on an error
            // its result carries.
            let stopped = || WriteError::Input("the tile appender stopped".into());
            let produced =
                produce(&mut |tile, placed| tx.send((tile, placed)).map_err(|_| stopped()));
            drop(tx);
            let appended = appender.join().unwrap_or_else(|_| Err(stopped()));
            appended.and(produced)
        })
    }

    /// One encoder per field with files (`None` for the others).
    fn encoders<'w>(&self, w: &'w FragmentWriter) -> Vec<Option<FieldEncoder<'w>>> {
        let keyed = (w.key, w.release);
        (0..w.fields.len())
            .map(|i| {
                self.files[i].as_ref().map(|_| {
                    let (filters, _) = w.filters_and_stem(i);
                    FieldEncoder::new(&w.schema, &w.fields[i], filters, keyed)
                })
            })
            .collect()
    }

    /// Appends one tile (each field's filtered bytes and metadata) of
    /// `placed` written cells.
    fn push_tile(&mut self, fields: TileFields, placed: u64) -> Result<(), WriteError> {
        for (i, field) in fields.into_iter().enumerate() {
            let (Some((tile, stats)), Some(files)) = (field, &mut self.files[i]) else {
                continue;
            };
            files.append(tile)?;
            self.stats[i].push(stats);
        }
        self.tile_cells.push(placed);
        Ok(())
    }

    /// Cells of the last tile written.
    pub fn last_tile_cells(&self) -> u64 {
        self.tile_cells.last().copied().unwrap_or(0)
    }

    /// Writes the fragment metadata (`facts` less the tile count, which
    /// the tiles written give), calls `written`, then commits the
    /// fragment; returns its name.
    pub fn finish(
        self,
        w: &FragmentWriter,
        rtree: &RTree,
        facts: Facts,
        written: &mut dyn FnMut(),
    ) -> Result<Vec<String>, WriteError> {
        let folder = self.close(w, rtree, facts)?;
        written();
        let version = w.schema.version.number();
        commit(&w.array, vec![folder], (w.timestamp, version))
    }

    /// Writes the fragment metadata (`facts` less the tile count, which
    /// the tiles written give); returns the folder, uncommitted.
    pub fn close(
        self,
        w: &FragmentWriter,
        rtree: &RTree,
        facts: Facts,
    ) -> Result<FragmentFolder, WriteError> {
        let finished = FieldFileSet::finish_all(self.files)?;
        let fields: Vec<(FieldFiles, Vec<TileStats>)> =
            finished.into_iter().zip(self.stats).collect();
        let facts = FragmentFacts {
            schema_name: w.schema.name.clone(),
            non_empty_domain: facts.non_empty_domain,
            dense: facts.dense,
            tile_num: self.tile_cells.len() as u64,
            last_tile_cell_num: facts.last_tile_cell_num,
            has_timestamps: w.has_timestamps(),
            processed_conditions: w.processed_conditions().map(<[String]>::to_vec),
        };
        let tile_cells = &self.tile_cells;
        let meta = w.metadata_file(&fields, rtree, facts, &|t| tile_cells[t])?;
        self.folder.write_metadata(&meta)?;
        Ok(self.folder)
    }
}

/// What the fragment metadata says of an appended fragment besides its
/// tiles.
pub(super) struct Facts {
    pub non_empty_domain: Vec<Range1D>,
    pub dense: bool,
    pub last_tile_cell_num: u64,
}

/// Tiles filtered at once, each of `tile_bytes` bytes laid out: at least
/// one per thread, else as many as about 128 MiB holds (up to 64 per
/// thread: small sparse tiles are many).
fn window_tiles(tile_bytes: u64) -> usize {
    let threads = rayon::current_num_threads().max(1);
    let fit = (128 << 20) / tile_bytes.max(1);
    (fit.min(1 << 20) as usize).clamp(threads, 64 * threads)
}

/// Lays out, filters and describes space tile `t` of `plan` (cells from
/// `cells`, one buffer per field; `encoders` `None` for a field without
/// files); returns each field's tile and the cells written in it.
fn dense_tile(
    w: &FragmentWriter,
    plan: &DensePlan,
    cells: &[FieldCells<'_>],
    encoders: &[Option<FieldEncoder<'_>>],
    (t, scratch): (usize, &Scratch),
) -> Result<(TileFields, u64), WriteError> {
    let layout = TileLayout::of(plan, t, cells, scratch);
    let per_tile = plan.cells_per_tile as usize;
    let fields = encoders
        .par_iter()
        .enumerate()
        .map(|(i, e)| {
            let Some(e) = e else { return Ok(None) };
            let f = &w.fields[i];
            let tile = layout.gather(&cells[i], f.cell_size() as usize, scratch.bytes.take());
            let stats = tile_stats(f, &tile, 0..per_tile, layout.padded());
            let filtered = e.encode(&tile, 0..per_tile)?;
            scratch.bytes.give(tile.data);
            Ok(Some((filtered, stats)))
        })
        .collect::<Result<_, WriteError>>();
    let placed = layout.placed;
    layout.give_back(scratch);
    Ok((fields?, placed))
}

/// Where a dense tile's cells come from: runs of consecutive cells (cells
/// given row-major, tiles' cells row-major: one run per tile row), or a
/// place per position (any other order, or where runs don't do: var-sized
/// or nullable fields, tiles with padding).
struct TileLayout {
    /// The runs of written cells, when there are such; else empty.
    runs: Vec<Run>,
    by_runs: bool,
    /// Each position's place in the box, or [`FILL`]; empty when the runs
    /// do for every field and the tile has no padding.
    places: Vec<usize>,
    /// Each position's cell in the cells given, or [`FILL`], where the
    /// cells did not come in place (else empty: the cell is the place).
    cell_at: Vec<usize>,
    /// Cells written in the tile, and positions in it.
    placed: u64,
    positions: usize,
}

impl TileLayout {
    fn of(plan: &DensePlan, t: usize, cells: &[FieldCells<'_>], scratch: &Scratch) -> TileLayout {
        let per_tile = plan.cells_per_tile as usize;
        let mut runs = scratch.runs.take();
        let by_runs = plan.tile_runs(t, &mut runs);
        let placed = runs.iter().map(|r| r.len).sum::<usize>();
        let plain = cells
            .iter()
            .all(|c| c.offsets.is_none() && c.validity.is_none());
        let mut layout = TileLayout {
            runs,
            by_runs,
            places: scratch.places.take(),
            cell_at: scratch.places.take(),
            placed: placed as u64,
            positions: per_tile,
        };
        layout.places.clear();
        layout.cell_at.clear();
        if !(by_runs && plain && placed == per_tile) {
            plan.tile_places(t, &mut layout.places);
            if !by_runs {
                layout.placed = layout.places.iter().filter(|&&k| k != FILL).count() as u64;
            }
            // Only the fields gathered position by position read them.
            if !(by_runs && plain) {
                plan.tile_cells_into(&layout.places, &mut layout.cell_at);
            }
        }
        layout
    }

    /// One field's tile (fixed-sized cells of `cell_size` bytes, or
    /// var-sized), padding zeros (libtiledb's tiles start zeroed; the fill
    /// value is the reader's, for cells no fragment covers); `data`'s
    /// memory reused.
    fn gather(&self, cells: &FieldCells<'_>, cell_size: usize, data: Vec<u8>) -> FieldBuffer {
        if self.by_runs && cells.offsets.is_none() && cells.validity.is_none() {
            return cells.runs_into(&self.runs, self.positions, cell_size, data);
        }
        debug_assert!(cells.pieces.is_empty(), "cells in pieces are taken by runs");
        // A var-sized cell outside: one zero value.
        let zeros = vec![0; cell_size];
        cells.permuted_into(self.cell_at(), cell_size, (&zeros, 0), data)
    }

    /// Each position's cell in the cells given, or [`FILL`]: its place,
    /// when the cells came in place.
    fn cell_at(&self) -> &[usize] {
        match self.cell_at.is_empty() {
            true => &self.places,
            false => &self.cell_at,
        }
    }

    /// The positions' places for the tile metadata, which leaves padding
    /// out; `None` when every position is written in the write's order.
    fn padded(&self) -> Option<&[usize]> {
        (!self.places.is_empty()).then_some(&self.places[..])
    }

    fn give_back(self, scratch: &Scratch) {
        scratch.runs.give(self.runs);
        scratch.places.give(self.places);
        scratch.places.give(self.cell_at);
    }
}

/// Buffers the tiles of one dense append lay their cells out in, handed
/// back after each tile and taken by the next: a tile's memory is reused
/// instead of allocated (and its pages faulted in) afresh.
#[derive(Default)]
struct Scratch {
    runs: Pool<Vec<Run>>,
    places: Pool<Vec<usize>>,
    bytes: Pool<Vec<u8>>,
}

/// Values handed back, taken again (a new one when none is there).
struct Pool<T>(std::sync::Mutex<Vec<T>>);

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool(std::sync::Mutex::new(Vec::new()))
    }
}

impl<T: Default> Pool<T> {
    fn take(&self) -> T {
        self.0
            .lock()
            .ok()
            .and_then(|mut v| v.pop())
            .unwrap_or_default()
    }

    fn give(&self, v: T) {
        if let Ok(mut pool) = self.0.lock() {
            pool.push(v);
        }
    }
}
