//! A sparse read in batches decodes each data tile about once: pieces are
//! cut where tiles' MBRs end, not through the middle of tiles, so a read of
//! thousands of scattered rows (a single-cell axis query's) in many batches
//! fetches about the bytes the one-shot read fetches, and returns its cells.
//! A dense read is cut between space tiles, so each tile is read once.

mod common;

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::{ReadRequest, ReadResult, ReadSession, Value};
use tessera_storage::{
    DirEntry, ListableStorage, LocalFs, ReadableStorage, StorageHints, StorageResult,
};

/// Local files, counting the bytes read from fragments' data files.
#[derive(Default)]
struct Counting {
    data_bytes: AtomicU64,
}

impl Counting {
    fn take(&self) -> u64 {
        self.data_bytes.swap(0, Ordering::Relaxed)
    }
}

impl ReadableStorage for Counting {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        let data = !path.to_string_lossy().contains("__fragment_metadata");
        if data && path.extension().is_some_and(|e| e == "tdb") {
            self.data_bytes
                .fetch_add(range.end - range.start, Ordering::Relaxed);
        }
        LocalFs.read_range(path, range)
    }

    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        LocalFs.read_all(path)
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        LocalFs.size(path)
    }
}

impl ListableStorage for Counting {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        LocalFs.list(path)
    }

    fn exists(&self, path: &Path) -> bool {
        LocalFs.exists(path)
    }
}

impl StorageHints for Counting {}

fn sorted_cells(r: &ReadResult) -> Vec<Vec<Vec<u8>>> {
    let mut cells: Vec<Vec<Vec<u8>>> = (0..r.cell_count)
        .map(|i| r.columns.iter().map(|c| c.value(i).to_vec()).collect())
        .collect();
    cells.sort();
    cells
}

/// TileDB-Py 0.36.1's fixture `case`, opened whole, and a session
/// reading it through storage that counts the data bytes read.
fn counted(case: &str) -> (Arc<OpenArray>, Arc<Counting>, ReadSession) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1")
        .join(case)
        .join("array");
    let array = Arc::new(OpenArray::open(&LocalFs, &path, 0, u64::MAX, None).unwrap());
    let storage = Arc::new(Counting::default());
    let session = ReadSession::new(storage.clone(), array.clone());
    (array, storage, session)
}

#[test]
fn batches_of_scattered_rows_decode_each_tile_about_once() {
    // 3,000 cells in tiles of 16 (a deep R-tree), space tiles of 100 rows.
    let (array, storage, session) = counted("sparse_large");
    let (lo, hi) = common::first_dim_span(&array).unwrap();
    // Every seventh row: hundreds of ranges over every tile.
    let mut request = ReadRequest::new();
    for x in (lo..=hi).step_by(7) {
        request = request.range("x", Value::Int(x), Value::Int(x));
    }
    let whole = session.execute(&request).unwrap();
    let one_shot = storage.take();
    let mut got = ReadResult::default();
    let mut batches = 0;
    for b in session.batches(&request.clone().budget(8 << 10)).unwrap() {
        got.append(b.unwrap());
        batches += 1;
    }
    let batched = storage.take();
    assert!(
        batches >= 4,
        "{batches} batches: the budget must cut the read"
    );
    assert_eq!(sorted_cells(&got), sorted_cells(&whole));
    assert!(
        batched as f64 <= one_shot as f64 * 1.25,
        "{batches} batches fetched {batched} data bytes, the one-shot read {one_shot}"
    );
}

/// The coordinate of dimension `name` of every cell of a dense read that
/// returns its coordinates as columns.
fn coords(r: &ReadResult, name: &str) -> Vec<i32> {
    let c = r.column(name).unwrap();
    (0..r.cell_count)
        .map(|i| i32::from_le_bytes(c.value(i).try_into().unwrap()))
        .collect()
}

#[test]
fn unordered_dense_batches_are_whole_space_tiles() {
    // 256 x 256 FLOAT32 cells in 32 x 32 tiles, ZSTD.
    let (_, storage, session) = counted("dense_large");
    // A box that cuts tiles on every side.
    let request = ReadRequest::new()
        .range("r", Value::Int(30), Value::Int(200))
        .range("c", Value::Int(5), Value::Int(250))
        .dimensions(true);
    let whole = session.execute(&request).unwrap();
    let one_shot = storage.take();
    let unordered = request.clone().layout(tessera_tile::Layout::Unordered);
    let mut got = ReadResult::default();
    let mut batches = 0;
    // A space tile's cells, decoded and returned, take 8 KiB.
    for b in session.batches(&unordered.budget(8 << 10)).unwrap() {
        let b = b.unwrap();
        let (r, c) = (coords(&b, "r"), coords(&b, "c"));
        let tile = |v: &[i32]| (v.iter().min().unwrap() / 32, v.iter().max().unwrap() / 32);
        let ((r0, r1), (c0, c1)) = (tile(&r), tile(&c));
        assert_eq!((r0, c0), (r1, c1), "batch {batches} spans tiles");
        got.append(b);
        batches += 1;
    }
    let batched = storage.take();
    // Rows 30..=200 meet 7 tile rows, columns 5..=250 8 tile columns.
    assert_eq!(batches, 7 * 8);
    assert_eq!(sorted_cells(&got), sorted_cells(&whole));
    assert_eq!(batched, one_shot, "each tile is read once");
}

#[test]
fn dense_batches_within_the_budget_are_cut_between_tile_rows() {
    // 256 x 256 FLOAT32 cells in 32 x 32 tiles, ZSTD.
    let (_, storage, session) = counted("dense_large");
    // Rows cutting tiles at both ends; row-major, the result's order.
    let request = ReadRequest::new()
        .range("r", Value::Int(30), Value::Int(200))
        .dimensions(true);
    let whole = session.execute(&request).unwrap();
    let one_shot = storage.take();
    let mut got = ReadResult::default();
    let mut batches = 0;
    // The whole read fits the budget; batches are cut to a tile row's
    // result (32 KiB), never through a tile.
    let within = request.clone().budget(64 << 20).recycled_batches(32 << 10);
    for b in session.batches(&within).unwrap() {
        let b = b.unwrap();
        let r = coords(&b, "r");
        let (first, last) = (r.iter().min().unwrap() / 32, r.iter().max().unwrap() / 32);
        assert_eq!(first, last, "batch {batches} spans tile rows");
        got.append(b);
        batches += 1;
    }
    let batched = storage.take();
    // Rows 30..=200 meet 7 tile rows.
    assert_eq!(batches, 7);
    // In order: the concatenated batches are the one-shot result.
    for c in &whole.columns {
        let g = got.column(&c.name).unwrap();
        assert!(
            (0..whole.cell_count).all(|i| g.value(i) == c.value(i)),
            "{}",
            c.name
        );
    }
    assert_eq!(got.cell_count, whole.cell_count);
    assert_eq!(batched, one_shot, "each tile is read once");
    // A caller that joins its batches (it sets no size) gets the read
    // whole: joining would copy it.
    let joined = session.batches(&request.budget(64 << 20)).unwrap();
    assert_eq!(joined.count(), 1);
}
