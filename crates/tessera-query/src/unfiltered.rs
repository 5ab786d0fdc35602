//! Unfiltered fixed-sized tiles, read straight into a result.
//!
//! A tile whose filter pipeline is empty holds its cells as written, in
//! chunks of the pipeline's maximum chunk size rounded down to whole cells
//! (the last chunk shorter), each after a 12-byte header (original length,
//! filtered length, metadata length: here the chunk's length twice, then
//! 0), the whole after the chunk count (`format_spec/tile.md`). Where a read
//! copies runs of a tile's cells to their places in its result, the runs'
//! bytes can go from the file to those places in one scatter read: one copy,
//! where reading the tile, unfiltering it and placing its cells make three.
//!
//! The chunking is predicted from the pipeline and the tile's size on disk,
//! and every chunk header on the way is read and checked against it. A tile
//! that does not match is read the ordinary way.

use crate::decode::{file_name, fixed_tile_len, tile_range, FieldSpec, Runs};
use crate::QueryError;
use std::path::PathBuf;
use tessera_fragment::{FileKind, FragmentMetadata};
use tessera_storage::{KeptFile, Storage};

/// Bytes of a chunk header: original, filtered and metadata lengths.
const CHUNK_HEADER: u64 = 12;
/// Bytes before the first chunk: the chunk count.
const CHUNK_COUNT: u64 = 8;
/// Unwanted bytes between two wanted ones that are read (and dropped)
/// rather than ending the scatter read: a gap costs a copy, a new read a
/// system call and an open.
const MAX_GAP: u64 = 32 << 10;

/// Where the cells of one unfiltered tile lie in its file.
#[derive(Debug, Clone)]
pub(crate) struct UnfilteredTile {
    path: PathBuf,
    /// The tile's first byte in the file.
    start: u64,
    /// Cell bytes in each chunk but the last.
    chunk: u64,
    /// Number of chunks.
    chunks: u64,
    /// Cell bytes in the tile.
    bytes: u64,
}

impl UnfilteredTile {
    /// The layout of tile `t` of a fixed-sized field stored unfiltered (no
    /// filter, no encryption, no validity), when its size on disk is that
    /// of the predicted chunking; `None` otherwise.
    pub(crate) fn of(
        storage: &dyn Storage,
        frag: &FragmentMetadata,
        spec: &FieldSpec,
        t: u64,
    ) -> Result<Option<UnfilteredTile>, QueryError> {
        let w = spec.cell_size();
        let bytes = fixed_tile_len(frag, spec, t)? as u64;
        if w == 0 || bytes == 0 {
            return Ok(None);
        }
        let chunk = (u64::from(spec.filters.max_chunk_size) / w * w).max(w);
        let chunks = bytes.div_ceil(chunk);
        let range = tile_range(storage, frag, spec, FileKind::Fixed, t)?;
        if range.end - range.start != CHUNK_COUNT + chunks * CHUNK_HEADER + bytes {
            return Ok(None);
        }
        Ok(Some(UnfilteredTile {
            path: frag.data_file(spec.field, FileKind::Fixed),
            start: range.start,
            chunk,
            chunks,
            bytes,
        }))
    }

    /// File offset of chunk `k`'s header; its cells follow it.
    fn header(&self, k: u64) -> u64 {
        self.start + CHUNK_COUNT + k * (CHUNK_HEADER + self.chunk)
    }

    /// Cell bytes in chunk `k`.
    fn chunk_len(&self, k: u64) -> u64 {
        self.chunk.min(self.bytes - k * self.chunk)
    }

    /// Reads runs of the tile's cells into their places, from the file
    /// kept open in `kept` where it is this tile's. `Ok(false)` when a run
    /// overlaps another or a chunk header read is not the predicted one:
    /// then the destinations hold whatever was read, and the caller reads
    /// the tile the ordinary way.
    pub(crate) fn read_runs(
        &self,
        storage: &dyn Storage,
        kept: &mut KeptFile,
        fragment: &str,
        t: u64,
        mut runs: Runs<'_>,
    ) -> Result<bool, QueryError> {
        runs.sort_unstable_by_key(|r| r.0);
        // Scatter reads, in file order: each starts at a chunk header and
        // lists its parts, destinations and lengths of bytes to drop.
        struct Read<'d> {
            start: u64,
            end: u64,
            parts: Vec<Result<&'d mut [u8], u64>>,
        }
        let mut reads: Vec<Read<'_>> = Vec::new();
        let mut done = 0u64;
        for (at, dst) in runs {
            let end = at.saturating_add(dst.len() as u64);
            if at < done {
                return Ok(false);
            }
            if end > self.bytes {
                return Err(QueryError::Corrupt {
                    fragment: fragment.to_owned(),
                    file: file_name(&self.path),
                    tile: t,
                    message: format!("bytes {at}..{end} are past its {} bytes", self.bytes),
                });
            }
            done = end;
            // The run's parts in each chunk it crosses.
            let (mut at, mut dst) = (at, dst);
            while !dst.is_empty() {
                let k = at / self.chunk;
                let take = (self.chunk - at % self.chunk).min(dst.len() as u64);
                let (part, rest) = dst.split_at_mut(take as usize);
                dst = rest;
                let pos = self.header(k) + CHUNK_HEADER + at % self.chunk;
                at += take;
                match reads.last_mut() {
                    Some(r) if pos >= r.end && pos - r.end <= MAX_GAP => {
                        if pos > r.end {
                            r.parts.push(Err(pos - r.end));
                        }
                        r.end = pos + take;
                        r.parts.push(Ok(part));
                    }
                    _ => {
                        let h = self.header(k);
                        reads.push(Read {
                            start: h,
                            end: pos + take,
                            parts: vec![Err(pos - h), Ok(part)],
                        });
                    }
                }
            }
        }
        for r in reads {
            // The dropped bytes (headers among them) land in `skipped`.
            let gaps: u64 = r.parts.iter().filter_map(|p| p.as_ref().err()).sum();
            let mut skipped = vec![0u8; gaps as usize];
            let mut gap_at: Vec<(u64, usize, usize)> = Vec::new(); // file offset, in `skipped`, length
            let mut bufs: Vec<&mut [u8]> = Vec::with_capacity(r.parts.len());
            let mut rest = &mut skipped[..];
            let (mut pos, mut used) = (r.start, 0usize);
            for p in r.parts {
                match p {
                    Ok(d) => {
                        pos += d.len() as u64;
                        bufs.push(d);
                    }
                    Err(n) => {
                        let (g, tail) = std::mem::take(&mut rest).split_at_mut(n as usize);
                        rest = tail;
                        gap_at.push((pos, used, n as usize));
                        pos += n;
                        used += n as usize;
                        bufs.push(g);
                    }
                }
            }
            storage.read_scattered(&self.path, r.start, &mut bufs, kept)?;
            drop(bufs);
            // Every chunk the read crosses has its header in a gap.
            let first = (r.start - self.header(0)) / (CHUNK_HEADER + self.chunk);
            let mut k = first;
            for (at, from, len) in gap_at {
                while k < self.chunks && self.header(k) + CHUNK_HEADER <= at + len as u64 {
                    let h = self.header(k);
                    if h < at {
                        return Ok(false);
                    }
                    let o = from + (h - at) as usize;
                    let n = self.chunk_len(k) as u32;
                    let mut want = [0u8; CHUNK_HEADER as usize];
                    want[..4].copy_from_slice(&n.to_le_bytes());
                    want[4..8].copy_from_slice(&n.to_le_bytes());
                    if skipped[o..o + CHUNK_HEADER as usize] != want {
                        return Ok(false);
                    }
                    k += 1;
                }
            }
            // The last chunk read is one whose header was checked.
            if k == first || self.header(k) < r.end {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_storage::{Memory, ReadableStorage};

    /// A file with 5 bytes, then a tile of 4-byte cells in chunks of 8
    /// bytes: cells 0..7 (28 bytes, the last chunk 4), cell i holding
    /// bytes i*4..i*4+4 = [i, i, i, i].
    fn tile() -> (Memory, UnfilteredTile) {
        let mut f = vec![0xee; 5];
        f.extend_from_slice(&4u64.to_le_bytes());
        for k in 0..4u32 {
            let n = if k == 3 { 4u32 } else { 8 };
            for v in [n, n, 0] {
                f.extend_from_slice(&v.to_le_bytes());
            }
            for c in 0..n / 4 {
                f.extend_from_slice(&[(k * 2 + c) as u8; 4]);
            }
        }
        let mut m = Memory::default();
        m.insert("a0.tdb", f);
        let t = UnfilteredTile {
            path: "a0.tdb".into(),
            start: 5,
            chunk: 8,
            chunks: 4,
            bytes: 28,
        };
        (m, t)
    }

    #[test]
    fn runs_across_chunks_land_in_their_places() {
        let (m, t) = tile();
        let mut a = [0u8; 12]; // cells 1..4: crosses two chunk headers
        let mut b = [0u8; 4]; // cell 6, the short last chunk
        let mut c = [0u8; 4]; // cell 0, given out of order
        let runs = vec![(4, &mut a[..]), (24, &mut b[..]), (0, &mut c[..])];
        assert!(t
            .read_runs(&m, &mut KeptFile::new(), "f", 0, runs)
            .expect("read"));
        assert_eq!(a, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
        assert_eq!(b, [6; 4]);
        assert_eq!(c, [0; 4]);
    }

    #[test]
    fn unexpected_headers_and_overlapping_runs_are_not_trusted() {
        let (mut m, t) = tile();
        let mut a = [0u8; 8];
        let mut b = [0u8; 4];
        let overlapping = vec![(0, &mut a[..]), (4, &mut b[..])];
        assert!(!t
            .read_runs(&m, &mut KeptFile::new(), "f", 0, overlapping)
            .expect("no error"));
        // Chunk 2 claims 4 bytes of metadata: not the predicted layout.
        let mut f = m.read_all("a0.tdb".as_ref()).expect("file");
        let h2 = 5 + 8 + 2 * 20;
        f[h2 + 8] = 4;
        m.insert("a0.tdb", f);
        let mut a = [0u8; 4];
        assert!(t
            .read_runs(&m, &mut KeptFile::new(), "f", 0, vec![(0, &mut a[..])])
            .expect("chunk 0"));
        let mut a = [0u8; 4];
        assert!(!t
            .read_runs(&m, &mut KeptFile::new(), "f", 0, vec![(16, &mut a[..])])
            .expect("chunk 2"));
    }

    #[test]
    fn runs_past_the_tile_are_an_error() {
        let (m, t) = tile();
        let mut a = [0u8; 8];
        let err = t
            .read_runs(&m, &mut KeptFile::new(), "f", 3, vec![(24, &mut a[..])])
            .expect_err("past");
        assert!(err.to_string().contains("24..32"), "{err}");
    }
}
