//! Decoding a fixed-sized tile's cells straight to runs of destinations,
//! chunk by chunk, with no buffer for the tile.

use super::fetch::*;
use super::spec::*;
use super::tile_bytes::*;
use crate::QueryError;
use std::ops::Range;
use tessera_filters::{ChunkTarget, TileContext, TileDecoder};
use tessera_fragment::{FileKind, FragmentMetadata};

/// Runs of a tile's cells: the byte offset of a run's first cell in the
/// (unfiltered) tile, and its destination, as long as the run.
pub(crate) type Runs<'d> = Vec<(u64, &'d mut [u8])>;

/// Decodes the cells of tile `t` of a fixed-sized field (validity aside)
/// that `runs` ask for straight to their destinations, with no buffer for
/// the tile: each chunk holding a wanted cell is decoded into a small buffer
/// the read reuses and its parts copied out (or, when one destination is
/// the whole chunk, decoded into it). Chunks no run needs are not decoded.
/// Runs may share tile cells; a run past the tile is an error.
pub(crate) fn decode_tile_runs(
    src: &Fetched<'_>,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    t: u64,
    key: Option<tessera_filters::EncryptionKey>,
    runs: Runs<'_>,
) -> Result<(), QueryError> {
    let w = spec.cell_size().max(1);
    let total = fixed_tile_len(frag, spec, t)? as u64;
    if let Some((at, d)) = runs.iter().find(|(at, d)| at + d.len() as u64 > total) {
        return Err(cells_past_tile(
            &frag.name,
            at / w..(at + d.len() as u64) / w,
        ));
    }
    let (bytes, file) = tile_bytes(src, frag, spec, t, FileKind::Fixed)?;
    let ctx = TileContext::new(frag.version(), w)
        .expect_size(total)
        .reusing(src.ctx.codecs.clone());
    let mut parts = ChunkParts::new(runs);
    let targets = |chunk: Range<u64>| parts.of(chunk);
    let place = |parts: Vec<(usize, &mut [u8])>, chunk: &[u8]| {
        for (at, dst) in parts {
            dst.copy_from_slice(&chunk[at..at + dst.len()]);
        }
    };
    TileDecoder::new(&keyed(&spec.filters, key), &bytes, &ctx)
        .and_then(|d| d.decode_chunks(targets, place))
        .map_err(|e| tile_error(frag, t, &file, e))
}

/// Cuts runs of a tile's cells at its chunks' bounds: for each chunk in
/// turn, the parts of the runs inside it.
pub(super) struct ChunkParts<'d> {
    /// Runs not yet reached, by first byte.
    pending: std::iter::Peekable<std::vec::IntoIter<(u64, &'d mut [u8])>>,
    /// Runs begun in an earlier chunk (their rest), or reached.
    open: Runs<'d>,
}

impl<'d> ChunkParts<'d> {
    fn new(mut runs: Runs<'d>) -> ChunkParts<'d> {
        runs.sort_unstable_by_key(|r| r.0);
        ChunkParts {
            pending: runs.into_iter().peekable(),
            open: Vec::new(),
        }
    }

    /// Where the bytes of the chunk holding tile bytes `chunk` go, chunks
    /// given in order: nowhere, whole into one run, or in parts (each at
    /// its offset in the chunk).
    fn of(&mut self, chunk: Range<u64>) -> ChunkTarget<'d, Vec<(usize, &'d mut [u8])>> {
        while let Some(r) = self.pending.next_if(|r| r.0 < chunk.end) {
            self.open.push(r);
        }
        let mut parts = Vec::new();
        for (at, dst) in std::mem::take(&mut self.open) {
            let end = at + dst.len() as u64;
            let (here, rest) = dst.split_at_mut((end.min(chunk.end) - at) as usize);
            parts.push(((at - chunk.start) as usize, here));
            if !rest.is_empty() {
                self.open.push((chunk.end, rest));
            }
        }
        match parts.as_slice() {
            [] => ChunkTarget::Skip,
            [(0, d)] if d.len() as u64 == chunk.end - chunk.start => {
                ChunkTarget::Into(parts.pop().expect("one part").1)
            }
            _ => ChunkTarget::Scratch(parts),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::plan::{cut_runs, MAX_RUN_BYTES};

    /// What the chunk of bytes `r` of a tile gets: None (skipped), the
    /// length of a whole-chunk destination as `(0, len)`, or its parts'
    /// (offset in the chunk, length).
    fn parts(p: &mut ChunkParts<'_>, r: Range<u64>) -> Option<Vec<(usize, usize)>> {
        match p.of(r) {
            ChunkTarget::Skip => None,
            ChunkTarget::Into(d) => Some(vec![(0, d.len())]),
            ChunkTarget::Scratch(v) => Some(v.iter().map(|(at, d)| (*at, d.len())).collect()),
        }
    }

    /// Runs given out of order, across chunk bounds, sharing tile bytes,
    /// and a chunk no run needs: each chunk gets the parts inside it, and
    /// every byte of every run is handed out once.
    #[test]
    fn runs_are_cut_at_chunk_bounds() {
        let (mut a, mut b, mut c, mut d) = ([0u8; 10], [0u8; 8], [0u8; 4], [0u8; 3]);
        // Tile bytes: a 6..16, b 0..8 (whole first chunk), c 10..14
        // (inside a), d 33..36; chunks of 8 bytes.
        let runs = vec![
            (6, &mut a[..]),
            (0, &mut b[..]),
            (10, &mut c[..]),
            (33, &mut d[..]),
        ];
        let mut p = ChunkParts::new(runs);
        assert_eq!(parts(&mut p, 0..8), Some(vec![(0, 8), (6, 2)]));
        assert_eq!(parts(&mut p, 8..16), Some(vec![(0, 8), (2, 4)]));
        assert_eq!(parts(&mut p, 16..24), None);
        assert_eq!(parts(&mut p, 24..32), None);
        assert_eq!(parts(&mut p, 32..40), Some(vec![(1, 3)]));
        assert_eq!(parts(&mut p, 40..44), None);
        // One run that is exactly a chunk is that chunk's destination.
        let mut e = [0u8; 8];
        let mut p = ChunkParts::new(vec![(8, &mut e[..])]);
        assert_eq!(parts(&mut p, 0..8), None);
        assert!(matches!(p.of(8..16), ChunkTarget::Into(d) if d.len() == 8));
    }

    /// Runs end at gaps and at the byte cap; a few large tiles are split
    /// one run per thread, small ones never below MIN_SPLIT_RUN_BYTES.
    #[test]
    fn runs_are_cut_at_gaps_caps_and_for_threads() {
        let kib = |n: u64| n << 10;
        // Two neighbours of 240 KiB: one run per thread when there are two.
        let two = [(7, kib(240)), (8, kib(240))];
        assert_eq!(cut_runs(&two, 2), vec![1, 1]);
        assert_eq!(cut_runs(&two, 1), vec![2]);
        // Forty neighbours of 10 KiB: split on 2 threads into runs of
        // 256 KiB at least, none on one.
        let small: Vec<(u64, u64)> = (0..40).map(|t| (t, kib(10))).collect();
        assert_eq!(cut_runs(&small, 2), vec![25, 15]);
        assert_eq!(cut_runs(&small, 8), vec![25, 15]);
        assert_eq!(cut_runs(&small, 1), vec![40]);
        // A gap ends a run; so does MAX_RUN_BYTES.
        assert_eq!(cut_runs(&[(1, 10), (2, 10), (4, 10)], 1), vec![2, 1]);
        let big: Vec<(u64, u64)> = (0..5).map(|t| (t, MAX_RUN_BYTES / 2)).collect();
        assert_eq!(cut_runs(&big, 1), vec![2, 2, 1]);
    }
}
