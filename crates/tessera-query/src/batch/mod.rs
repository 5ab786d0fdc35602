//! Reads in batches within a memory budget (libtiledb's incomplete queries).
//!
//! The subarray is cut into pieces whose estimated footprint (the tiles a
//! piece decodes plus its result) fits the budget; each piece is read as its
//! own query, in an order that makes the concatenated batches exactly the
//! one-shot result in the requested layout:
//!
//! - row-major (col-major): pieces cut the slowest (fastest) dimension that
//!   still holds more than one coordinate, so each batch is a contiguous run;
//! - global order: pieces first cut whole space tiles along the tile order,
//!   then, inside one tile, cells along the cell order;
//! - unordered, sparse: at an edge of the tiles' MBRs where the fewest
//!   cells lie in tiles on both sides (each side's read decodes those),
//!   else any cut;
//! - unordered, dense: whole space tiles first, along the widest
//!   dimension, each piece's cells row-major.
//!
//! Dense pieces are cut between space tiles where they can be (no tile is
//! decoded by two batches); for a caller that recycles its batches (its
//! request sets [`ReadRequest::recycled_batches`]), within the budget too,
//! down to that size, as a smaller batch's memory is reused.
//!
//! A dense read with a prune condition ([`ReadRequest::prune`]) skips the
//! pieces whose space tiles metadata rules out, and cuts a piece between
//! the tiles it rules out and the others.
//!
//! Where a request costs a round trip (object stores), a dense read in
//! batches begins the tiles of the pieces after the one it reads, up to
//! the storage's [`batches_ahead`](tessera_storage::StorageHints::batches_ahead)
//! bytes, so that the network carries the next batches while one is
//! decoded (`ahead`).
//!
//! Estimates come from metadata only: the dense tile grid, R-tree leaves
//! (cells of every tile a piece overlaps) and var-sized tile sizes. A piece
//! that cannot be cut further (one coordinate, one string range, one Hilbert
//! curve) is read whole, even over budget.

use crate::context::ReadContext;
use crate::dense::{DensePrune, Verdict};
use crate::execute::{execute, tile_requests};
use crate::geometry::{dense_grid, MbrTest};
use crate::prefetch::fetch_metadata;
use crate::prune::Answered;
use crate::read::Read;
use crate::request::ReadRequest;
use crate::result::ReadResult;
use crate::QueryError;
use std::collections::VecDeque;
use std::sync::Arc;
use tessera_cells::order::major_order;
use tessera_fragment::OpenArray;
use tessera_schema::Range1D;
use tessera_schema::Value;
use tessera_storage::Storage;
use tessera_tile::{Datatype, Layout};

mod ahead;
mod cell_bytes;
mod cut;

use ahead::TilesAhead;
use cell_bytes::cell_bytes;

use cut::{cut, cut_at, first_cut, single, spans_tiles, tile_spanning, width, Piece, TileCut};

/// The batches of a read, in order; see
/// [`ReadSession::batches`](crate::ReadSession::batches). It owns what it
/// reads (the storage, the array and the request), so it can be moved to
/// another thread and outlive the session.
pub struct Batches {
    storage: Arc<dyn Storage>,
    array: Arc<OpenArray>,
    request: ReadRequest,
    context: Arc<ReadContext>,
    /// Per fragment, what aggregates answered from metadata (left unread).
    answered: Arc<Vec<Answered>>,
    /// `None`: the read is one batch, its ranges as given.
    budget: Option<u64>,
    /// Result bytes a batch is cut to where cuts cost nothing.
    free_cut_bytes: u64,
    /// Whether dense pieces are cut between space tiles down to
    /// `free_cut_bytes` within the budget: a caller that recycles its
    /// batches asks for it (one that joins them would copy).
    reuse_cuts: bool,
    pieces: VecDeque<Piece>,
    /// Pieces taken from `pieces`, pruned and cut to fit, not yet read:
    /// numbered, with whether their tiles were begun ahead; a piece that
    /// failed to settle keeps its error for its turn.
    settled: VecDeque<Settled>,
    /// The number the next piece settled gets.
    numbered: u64,
    /// Where requests cost a round trip: the tiles of the pieces after
    /// the one read, begun while it is read (`storage` serves from them).
    ahead: Option<Arc<TilesAhead>>,
    /// The bytes of tiles begun ahead, at most.
    ahead_bytes: u64,
    /// The piece the last call of `next` read or failed on, for `again`.
    last: Option<Piece>,
    /// Result bytes per cell of every field read, var-sized ones averaged.
    cell_bytes: f64,
    /// Of those, the bytes per cell of tiles decoded (fields read straight
    /// into the result decode no tile).
    tile_cell_bytes: f64,
    /// Whether a sparse read holds the tiles it cuts decoded to the end
    /// (the general path); else it picks their cells a tile at a time and
    /// holds only the tiles it returns whole.
    holds_cut_tiles: bool,
    /// The request's prune condition, where metadata can judge it.
    prune: Option<DensePrune>,
    layout: Layout,
    failed: bool,
    /// What the batches given so far held.
    given: Given,
}

/// What a read's batches held so far: a read whose every piece is ruled
/// out gives one batch of no cells, as a read of cells gives its cells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Given {
    Nothing,
    Cells,
    NoCells,
}

impl Batches {
    /// Reads the last batch again at the next call of `next`, whether it
    /// was returned or failed: a push decoder's attempt that lacked bytes
    /// is void, and runs again once they are given.
    pub(crate) fn again(&mut self) {
        // Pruned and cut again, as are those settled since: the attempt
        // that settled them may have lacked the metadata they were
        // judged by (a storage that notes its needs answers none).
        while let Some(settled) = self.settled.pop_back() {
            if let Some(ahead) = &self.ahead {
                ahead.retire(settled.number);
            }
            let (Ok(piece) | Err((piece, _))) = settled.piece;
            self.pieces.push_front(piece);
        }
        if let Some(piece) = self.last.take() {
            self.pieces.push_front(piece);
        }
        if self.given == Given::NoCells {
            self.given = Given::Nothing;
        }
        self.failed = false;
    }

    /// The batches of `request` of `array`, reusing the buffers of
    /// `context`. With a budget, the pieces a batch may cover are planned
    /// from metadata: the ranges asked for, or what a read without them
    /// covers, cut while a piece's footprint is over the budget.
    pub(crate) fn start(
        storage: Arc<dyn Storage>,
        array: Arc<OpenArray>,
        request: ReadRequest,
        context: Arc<ReadContext>,
        answered: Arc<Vec<Answered>>,
    ) -> Result<Batches, QueryError> {
        let read = Read::resolve(&*storage, &array, &request, context.clone());
        let layout = read.resolved_layout();
        let attrs = read.returned_attributes();
        let holds_cut_tiles = !read.array.schema.is_dense()
            && !crate::sparse::SparseReader::plan(&read, attrs.clone()).picks_cut_tiles();
        let (first, cell_bytes, tile_cell_bytes) = match request.budget {
            None => (read.ranges.clone(), 0.0, 0.0),
            Some(_) => {
                // Planning the batches reads R-trees and tile sizes: on an
                // object store, every metadata section the read needs comes
                // first, as one batch (each batch's read then finds them
                // loaded).
                fetch_metadata(&read, &attrs);
                let (cell_bytes, tile_cell_bytes) = cell_bytes(&read)?;
                (first_piece(&read)?, cell_bytes, tile_cell_bytes)
            }
        };
        let budget = request.budget.map(|b| b.max(1));
        let half_budget = budget.map_or(u64::MAX, |b| (b / 2).max(1));
        let recycled = request.recycled_batch_bytes;
        let prune = (request.prune.as_ref()).and_then(|c| DensePrune::new(&array, c));
        // Tiles are begun ahead for dense reads in batches (the pieces'
        // tiles are known from metadata); a read in one batch fetches
        // its own ahead.
        let ahead_bytes = storage.batches_ahead();
        let ahead = (ahead_bytes > 0 && budget.is_some() && array.schema.is_dense())
            .then(|| Arc::new(TilesAhead::new(storage.clone(), context.clone())));
        let storage = match &ahead {
            Some(ahead) => ahead.clone(),
            None => storage,
        };
        Ok(Batches {
            storage,
            array,
            request,
            context,
            answered,
            budget,
            free_cut_bytes: recycled.map_or(half_budget, |b| b.clamp(1, half_budget)),
            reuse_cuts: recycled.is_some(),
            pieces: VecDeque::from([first]),
            settled: VecDeque::new(),
            numbered: 0,
            ahead,
            ahead_bytes,
            last: None,
            cell_bytes,
            tile_cell_bytes,
            holds_cut_tiles,
            prune,
            layout,
            failed: false,
            given: Given::Nothing,
        })
    }

    /// Estimated footprint of a piece: the cells of every tile it
    /// overlaps (decoded) plus the cells it returns, at `cell_bytes` each;
    /// and the number of tiles it overlaps.
    fn estimate(&self, piece: &Piece) -> Result<(f64, u64), QueryError> {
        let array = &*self.array;
        let schema = &array.schema;
        // (decoded tile cells, result cells, tiles)
        let (tile_cells, result_cells, tile_count) = if schema.is_dense() {
            let mut cells = 1u64;
            let mut tiles = 1u64;
            let mut per_tile = 1u64;
            for (j, r) in piece.iter().enumerate() {
                let g = dense_grid(schema, j)?;
                let mut n = 0u64;
                let mut t = 0u64;
                for (a, b) in r {
                    let (a, b) = (a.as_int().unwrap_or(0), b.as_int().unwrap_or(0));
                    n = n.saturating_add((b - a + 1).max(0) as u64);
                    t = t.saturating_add(((b - g.lo) / g.ext - (a - g.lo) / g.ext + 1) as u64);
                }
                cells = cells.saturating_mul(n);
                tiles = tiles.saturating_mul(t);
                per_tile = per_tile.saturating_mul(g.ext as u64);
            }
            // Fragments are applied one after another: at most one
            // fragment's tiles are held at a time.
            (tiles.saturating_mul(per_tile), cells, tiles)
        } else {
            // Every cell of an overlapping tile may be returned; a tile
            // the piece cuts is held decoded only on the general path.
            let tiles = self.sparse_tiles(piece)?;
            let (mut cells, mut held) = (0u64, 0u64);
            for (_, c, whole) in &tiles {
                cells = cells.saturating_add(*c);
                if *whole || self.holds_cut_tiles {
                    held = held.saturating_add(*c);
                }
            }
            (held, cells, tiles.len() as u64)
        };
        Ok((
            tile_cells as f64 * self.tile_cell_bytes + result_cells as f64 * self.cell_bytes,
            tile_count,
        ))
    }

    /// At most how many cells the batches left return, from metadata
    /// alone: for a sparse array, the cells of every tile the pieces left
    /// to read meet, in every fragment (cells outside the ranges, written
    /// over or deleted count too); for a dense array, the cells of those
    /// pieces. A caller sizes its output once with it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tessera_query::{ReadRequest, ReadSession};
    /// use tessera_storage::LocalFs;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
    /// let session = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let request = ReadRequest::new();
    /// let bound = session.batches(&request).unwrap().cell_bound().unwrap();
    /// let cells = session.execute(&request).unwrap().cell_count;
    /// assert!(bound >= cells as u64 && cells > 0);
    /// // A dense read returns every cell of its ranges.
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/dense_2d_types/array");
    /// let dense = ReadSession::open(Arc::new(LocalFs), path.as_ref(), None).unwrap();
    /// let cells = dense.execute(&request).unwrap().cell_count as u64;
    /// assert_eq!(dense.batches(&request).unwrap().cell_bound().unwrap(), cells);
    /// ```
    pub fn cell_bound(&self) -> Result<u64, QueryError> {
        // A dense read's dimension without ranges covers its extent.
        let covered = match self.array.schema.is_dense() {
            true => Some(extent(&self.array)?),
            false => None,
        };
        let mut cells = 0u64;
        let settled = self.settled.iter().map(|s| match &s.piece {
            Ok(piece) | Err((piece, _)) => piece,
        });
        for piece in settled.chain(&self.pieces) {
            let n = if let Some(covered) = &covered {
                (covered.iter().enumerate())
                    .map(|(j, whole)| match piece.get(j).filter(|r| !r.is_empty()) {
                        Some(r) => width(r),
                        None => whole.as_ref().map_or(0, |w| width(std::slice::from_ref(w))),
                    })
                    .map(|w| u64::try_from(w.max(0)).unwrap_or(u64::MAX))
                    .fold(1u64, u64::saturating_mul)
            } else {
                (self.sparse_tiles(piece)?.iter())
                    .map(|t| t.1)
                    .fold(0u64, u64::saturating_add)
            };
            cells = cells.saturating_add(n);
        }
        Ok(cells)
    }

    /// The data tiles of a sparse array a piece overlaps: each tile's MBR,
    /// cell count, and whether the piece covers it whole.
    #[allow(clippy::type_complexity)]
    fn sparse_tiles(&self, piece: &Piece) -> Result<Vec<(&[Range1D], u64, bool)>, QueryError> {
        let test = MbrTest::new(piece, &self.array.schema.dimensions);
        let mut out = Vec::new();
        for frag in &self.array.fragments {
            let rt = frag.rtree(&*self.storage)?;
            for (t, whole) in rt.tiles_overlapping(&|mbr: &[Range1D]| test.overlap(mbr)) {
                if let Some(mbr) = rt.leaves().get(t as usize) {
                    out.push((mbr.as_slice(), frag.cell_num(t), whole));
                }
            }
        }
        Ok(out)
    }

    /// Cuts a sparse piece where the fewest of its tiles' cells lie on both
    /// sides (each side's read would decode those tiles): at an edge of a
    /// tile's MBR on an integer dimension, preferring cuts that leave
    /// between a quarter and three quarters of the cells on each side.
    /// `None` where no cut leaves each side fewer tiles.
    fn tile_cut(&self, piece: &Piece) -> Result<Option<(Piece, Piece)>, QueryError> {
        let dims = &self.array.schema.dimensions;
        let tiles = self.sparse_tiles(piece)?;
        if tiles.len() < 2 {
            return Ok(None);
        }
        let mut best: Option<(TileCut, usize)> = None;
        for (j, d) in dims.iter().enumerate() {
            let Some((a, b)) = piece[j]
                .first()
                .zip(piece[j].last())
                .and_then(|(f, l)| Some((f.0.as_int()?, l.1.as_int()?)))
            else {
                continue;
            };
            let spans: Option<Vec<(i128, i128, u64)>> = tiles
                .iter()
                .map(|(mbr, cells, _)| {
                    let r = mbr.get(j)?;
                    let lo = Value::decode(d.datatype, &r.lo).as_int()?;
                    let hi = Value::decode(d.datatype, &r.hi).as_int()?;
                    Some((lo.max(a), hi.min(b), *cells))
                })
                .collect();
            if let Some(c) = spans.and_then(|s| TileCut::best(s, a, b)) {
                if best.as_ref().is_none_or(|(o, _)| c.score() < o.score()) {
                    best = Some((c, j));
                }
            }
        }
        Ok(best.and_then(|(c, j)| {
            let (left, right) = cut_at(&piece[j], c.at)?;
            let (mut l, mut r) = (piece.clone(), piece.clone());
            l[j] = left;
            r[j] = right;
            Some((l, r))
        }))
    }

    /// Cuts a piece in two, keeping the layout's order; `None` if it cannot be cut.
    fn split(&self, piece: &Piece) -> Result<Option<(Piece, Piece)>, QueryError> {
        if !self.array.schema.is_dense()
            && !matches!(
                self.layout,
                Layout::GlobalOrder | Layout::RowMajor | Layout::ColMajor
            )
        {
            if let Some(cut) = self.tile_cut(piece)? {
                return Ok(Some(cut));
            }
        }
        Ok(self.geometric_split(piece))
    }

    /// Cuts a piece in two by its ranges alone, keeping the layout's order.
    fn geometric_split(&self, piece: &Piece) -> Option<(Piece, Piece)> {
        let schema = &self.array.schema;
        let nd = piece.len();
        let major = |l: Layout| major_order(l, nd);
        let types: Vec<Datatype> = schema.dimensions.iter().map(|d| d.datatype).collect();
        match self.layout {
            Layout::GlobalOrder => {
                if schema.cell_order == Layout::Hilbert {
                    return None;
                }
                // Whole tiles first, along the tile order.
                if let Some((j, grid)) = tile_spanning(schema, piece, &major(schema.tile_order))? {
                    return cut(piece, j, types[j], Some(grid));
                }
                // One tile: cells along the cell order.
                first_cut(piece, &major(schema.cell_order), &types)
            }
            Layout::ColMajor | Layout::RowMajor => {
                let order = major(self.layout);
                if schema.is_dense() {
                    // At a space-tile boundary of the slowest dimension
                    // holding more than one coordinate, where it spans
                    // several: no tile is decoded by both batches.
                    let slowest = order.iter().copied().find(|&j| !single(&piece[j]));
                    if let Some(j) = slowest {
                        let grid = dense_grid(schema, j).ok();
                        let spans = grid
                            .as_ref()
                            .and_then(|g| spans_tiles(&piece[j], g.lo, g.ext));
                        if let (Some(g), Some(true)) = (grid, spans) {
                            return cut(piece, j, types[j], Some((g.lo, g.ext)));
                        }
                    }
                }
                first_cut(piece, &order, &types)
            }
            _ => {
                // Unordered: cut the dimension with the widest integer
                // range first; a dense array's at space tiles while the
                // piece spans several (each tile decoded once, by one batch).
                let mut order: Vec<usize> = (0..nd).collect();
                order.sort_by_key(|&j| std::cmp::Reverse(width(&piece[j])));
                if schema.is_dense() {
                    if let Some((j, grid)) = tile_spanning(schema, piece, &order)? {
                        return cut(piece, j, types[j], Some(grid));
                    }
                }
                order
                    .into_iter()
                    .find_map(|j| cut(piece, j, types[j], None))
            }
        }
    }

    /// What the prune condition's metadata says of a piece's tiles
    /// (every tile may pass where there is none).
    fn pruned(&self, piece: &Piece) -> Result<Verdict, QueryError> {
        let Some(p) = &self.prune else {
            return Ok(Verdict::EveryTile);
        };
        let tally = p.tally(&*self.storage, &self.array, piece)?;
        Ok(tally.map_or(Verdict::EveryTile, |t| t.verdict()))
    }

    /// A piece cut in two between its space tiles, each half touching
    /// fewer; only in a read in batches (one without is one batch).
    fn tile_split(&self, piece: &Piece) -> Option<(Piece, Piece)> {
        self.budget?;
        let (a, b) = self.geometric_split(piece)?;
        let tiles = |p: &Piece| self.estimate(p).map(|e| e.1).ok();
        let whole = tiles(piece)?;
        (tiles(&a)? < whole && tiles(&b)? < whole).then_some((a, b))
    }

    /// A piece cut in two where it is over budget; `None` when it fits,
    /// cannot be cut, or the read is one batch.
    fn try_split(&self, piece: &Piece) -> Result<Option<(Piece, Piece)>, QueryError> {
        let Some(budget) = self.budget else {
            return Ok(None);
        };
        // Where no tile is decoded, a cut costs nothing: pieces are cut to
        // `free_cut_bytes`, not to whole tiles. Nor does a cut of a dense
        // piece between space tiles (each side decodes its own): for a
        // caller that recycles its batches, within the budget such cuts
        // alone are taken, down to `free_cut_bytes` (a smaller result is
        // reused by the next batch; fresh memory costs more than batches).
        let free = self.tile_cell_bytes == 0.0;
        let dense = self.array.schema.is_dense() && self.reuse_cuts;
        let (bytes, tiles) = self.estimate(piece)?;
        let limit = match free || dense {
            true => self.free_cut_bytes,
            false => budget,
        };
        if bytes <= limit as f64 || (tiles <= 1 && !free) {
            return Ok(None);
        }
        let Some((a, b)) = self.split(piece)? else {
            return Ok(None);
        };
        let (tiles_a, tiles_b) = (self.estimate(&a)?.1, self.estimate(&b)?.1);
        if !free && bytes <= budget as f64 {
            return Ok((tiles_a + tiles_b == tiles).then_some((a, b)));
        }
        let fewer = tiles_a < tiles || tiles_b < tiles;
        Ok((fewer || free).then_some((a, b)))
    }

    /// The next piece to read, pruned and cut to fit the budget (pieces
    /// ruled out skipped, halves put back in order); `None` when none is
    /// left.
    fn settle(&mut self) -> Option<Settled> {
        let piece = loop {
            let piece = self.pieces.pop_front()?;
            match self.pruned(&piece) {
                Ok(Verdict::NoTile) => continue,
                Ok(Verdict::SomeTiles) => {
                    if let Some((a, b)) = self.tile_split(&piece) {
                        self.pieces.push_front(b);
                        self.pieces.push_front(a);
                        continue;
                    }
                }
                Ok(Verdict::EveryTile) => {}
                Err(e) => break Err((piece, e)),
            }
            // Cut while over budget, as long as a cut leaves a half
            // touching fewer tiles: a batch holds at least one tile.
            match self.try_split(&piece) {
                Ok(Some((a, b))) => {
                    self.pieces.push_front(b);
                    self.pieces.push_front(a);
                }
                Ok(None) => break Ok(piece),
                Err(e) => break Err((piece, e)),
            }
        };
        self.numbered += 1;
        Some(Settled {
            number: self.numbered - 1,
            piece,
            begun: false,
        })
    }

    /// The read of one piece.
    fn piece_read(&self, piece: Piece) -> Read<'_> {
        let mut read = self.read();
        read.ranges = piece;
        read
    }

    /// The read of the request, over its ranges.
    fn read(&self) -> Read<'_> {
        let mut read = Read::resolve(
            &*self.storage,
            &self.array,
            &self.request,
            self.context.clone(),
        );
        read.answered = self.answered.clone();
        read
    }

    /// Begins the tiles of the piece about to be read (the first settled)
    /// and of the pieces after it, in order, each whole, while those begun
    /// and not yet read stay within the bytes allowed ahead: the first
    /// piece that would go past them ends the look ahead (a piece larger
    /// than all of them is fetched by its own read, group by group). A
    /// piece that fails to settle or plan ends it too (its own turn
    /// reports the failure).
    fn look_ahead(&mut self) {
        let Some(ahead) = self.ahead.clone() else {
            return;
        };
        let mut next = 0;
        loop {
            if next == self.settled.len() {
                match self.settle() {
                    Some(s) => self.settled.push_back(s),
                    None => return,
                }
            }
            let settled = &self.settled[next];
            next += 1;
            if settled.begun {
                continue;
            }
            let Ok(piece) = &settled.piece else {
                return;
            };
            let number = settled.number;
            let read = self.piece_read(piece.clone());
            let Ok(Some(requests)) = tile_requests(&read) else {
                return;
            };
            if !ahead.begin(number, requests, self.ahead_bytes) {
                return;
            }
            self.settled[next - 1].begun = true;
        }
    }
}

/// The one piece a read in batches starts from: per dimension, the
/// ranges asked for (a sparse array's sorted and merged), or what a read
/// without them covers.
fn first_piece(read: &Read<'_>) -> Result<Piece, QueryError> {
    let schema = &read.array.schema;
    let mut first = Piece::new();
    let dense = schema.is_dense();
    let mut covered: Option<Vec<Option<(Value, Value)>>> = None;
    for (j, d) in schema.dimensions.iter().enumerate() {
        if !read.ranges.get(j).is_none_or(Vec::is_empty) {
            let mut r = read.ranges[j].clone();
            if !dense {
                // Sparse membership is a union: sorted, merged ranges
                // select the same cells and cut in order.
                r.sort();
                let mut m: Vec<(Value, Value)> = Vec::with_capacity(r.len());
                for (a, b) in r {
                    match m.last_mut() {
                        Some(l) if a <= l.1 => l.1 = l.1.clone().max(b),
                        _ => m.push((a, b)),
                    }
                }
                r = m;
            }
            first.push(r);
        } else {
            // What a read with no range covers: the current domain of
            // a dense array, the fragments' non-empty domains of a
            // sparse one (none for var-sized dimensions).
            if covered.is_none() {
                covered = Some(extent(read.array)?);
            }
            match covered.as_ref().and_then(|c| c[j].clone()) {
                Some((a, b)) if dense || !d.is_var() => first.push(vec![(a, b)]),
                _ => first.push(Vec::new()),
            }
        }
    }
    Ok(first)
}

/// A piece taken from the pieces to read, pruned and cut to fit: its
/// number, the piece (or the piece it failed on, and the error), and
/// whether its tiles were begun ahead.
struct Settled {
    number: u64,
    piece: Result<Piece, (Piece, QueryError)>,
    begun: bool,
}

impl Iterator for Batches {
    type Item = Result<ReadResult, QueryError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.settled.is_empty() {
            let Some(settled) = self.settle() else {
                // Every piece ruled out: one batch of no cells.
                return (self.given == Given::Nothing).then(|| {
                    self.given = Given::NoCells;
                    Ok(self.read().no_cells())
                });
            };
            self.settled.push_back(settled);
        }
        // This piece's tiles first, then the next pieces'.
        self.look_ahead();
        let settled = self.settled.pop_front()?;
        let piece = match settled.piece {
            Ok(piece) => piece,
            Err((piece, e)) => {
                self.last = Some(piece);
                self.failed = true;
                return Some(Err(e));
            }
        };
        self.last = Some(piece.clone());
        self.given = Given::Cells;
        let r = execute(self.piece_read(piece));
        if let Some(ahead) = &self.ahead {
            ahead.retire(settled.number);
        }
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

/// What a read with no range on a dimension covers, per dimension: for
/// dense arrays the current domain where one is set, else the domain; for
/// sparse arrays the union of the visible fragments' non-empty domains
/// (`None` for a dimension of an array with nothing written).
///
/// ```
/// use tessera_fragment::OpenArray;
/// use tessera_query::{extent, Value};
/// use tessera_storage::LocalFs;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let a = OpenArray::open(&LocalFs, path.as_ref(), 0, u64::MAX, None).unwrap();
/// assert_eq!(extent(&a).unwrap()[0], Some((Value::Int(0), Value::Int(99))));
/// ```
pub fn extent(
    array: &tessera_fragment::OpenArray,
) -> Result<Vec<Option<(Value, Value)>>, QueryError> {
    let schema = &array.schema;
    if schema.is_dense() {
        return (0..schema.dimensions.len())
            .map(|j| {
                let g = crate::geometry::dense_grid(schema, j)?;
                Ok(Some((Value::Int(g.start), Value::Int(g.end))))
            })
            .collect();
    }
    Ok(match array.non_empty_domain() {
        Some(ned) => ned.into_iter().map(|(lo, hi)| Some((lo, hi))).collect(),
        None => vec![None; schema.dimensions.len()],
    })
}
