//! Reads on storage where a request costs a round trip (object stores)
//! fetch tiles in batches begun ahead: a dense read begins the batches of
//! a thread's next groups of tiles (of any fragment placed at once) before
//! it decodes the current one, and
//! a read's units of runs are in flight while the ones before decode, up
//! to the storage's read-ahead. Here a storage that prefers batches serves
//! each batch from a thread of its own, finishing in its own time; every
//! fixture and case, with every band apart (many groups) and a read-ahead
//! of a few KiB (many units), and as one band with the default read-ahead,
//! must equal the local read, and no byte of a data file may be fetched
//! twice. Reads in batches begin the next batches' tiles while one is read.

mod common;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tessera_fragment::OpenArray;
use tessera_query::{ReadRequest, ReadResult, ReadSession, Value};
use tessera_storage::{
    DirEntry, ListableStorage, LocalFs, PendingBatch, ReadableStorage, StorageError,
    StorageErrorKind, StorageHints, StorageResult,
};
use tessera_tile::Layout;

/// Local files served as an object store would: batches in flight on a
/// thread of their own (later batches may finish first), every range asked
/// of a data file logged.
#[derive(Default)]
struct InFlight {
    data_ranges: Mutex<Vec<(PathBuf, Range<u64>)>>,
    batches: Mutex<usize>,
    /// The read-ahead it asks for; 0: the default.
    ahead: AtomicU64,
}

impl InFlight {
    fn log(&self, path: &Path, range: &Range<u64>) {
        let data = !path.to_string_lossy().contains("__fragment_metadata");
        if data && path.extension().is_some_and(|e| e == "tdb") {
            let mut log = self.data_ranges.lock().unwrap();
            log.push((path.to_path_buf(), range.clone()));
        }
    }

    /// Data ranges asked for since the last `take_overlaps`.
    fn logged(&self) -> usize {
        self.data_ranges.lock().unwrap().len()
    }

    /// Data ranges fetched more than once since the last call (overlaps
    /// of two requests to one file), and the requests: then forgotten.
    fn take_overlaps(&self) -> (Vec<String>, usize) {
        let mut log = std::mem::take(&mut *self.data_ranges.lock().unwrap());
        let n = log.len();
        log.sort_by(|a, b| (&a.0, a.1.start).cmp(&(&b.0, b.1.start)));
        let overlaps = log
            .windows(2)
            .filter(|w| w[0].0 == w[1].0 && w[1].1.start < w[0].1.end)
            .map(|w| format!("{}: {:?} and {:?}", w[0].0.display(), w[0].1, w[1].1))
            .collect();
        (overlaps, n)
    }
}

impl ReadableStorage for InFlight {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        self.log(path, &range);
        LocalFs.read_range(path, range)
    }

    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> StorageResult<Vec<Vec<u8>>> {
        self.begin_batch(requests.to_vec()).wait()
    }

    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'static> {
        for (p, r) in &requests {
            self.log(p, r);
        }
        let nth = {
            let mut b = self.batches.lock().unwrap();
            *b += 1;
            *b
        };
        let fetch = std::thread::spawn(move || {
            // Batches begun earlier now and then finish later.
            std::thread::sleep(Duration::from_millis((nth % 3) as u64));
            (requests.iter())
                .map(|(p, r)| LocalFs.read_range(p, r.clone()))
                .collect::<StorageResult<Vec<Vec<u8>>>>()
        });
        PendingBatch::in_flight(move || {
            fetch.join().unwrap_or_else(|_| {
                Err(StorageError::new(
                    StorageErrorKind::Other,
                    "",
                    "fetch thread panicked",
                ))
            })
        })
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        LocalFs.size(path)
    }
}

impl ListableStorage for InFlight {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        LocalFs.list(path)
    }

    fn exists(&self, path: &Path) -> bool {
        LocalFs.exists(path)
    }
}

impl StorageHints for InFlight {
    fn prefers_batches(&self) -> bool {
        true
    }

    fn read_ahead(&self) -> u64 {
        match self.ahead.load(Ordering::Relaxed) {
            0 => 256 << 20,
            n => n,
        }
    }
}

/// What a case asks of a read.
type Setup = dyn Fn(ReadRequest) -> ReadRequest;

/// The whole array, and where its first dimension has integers, a range
/// of it cutting tiles at both ends.
fn full_and_cut(a: &OpenArray) -> Vec<(String, Box<Setup>)> {
    let mut setups: Vec<(String, Box<Setup>)> = vec![("full".into(), Box::new(|q| q))];
    if let Some((lo, hi)) = common::first_dim_span(a) {
        let d0 = a.schema.dimensions[0].name.clone();
        setups.push((
            "cut".into(),
            Box::new(move |q| {
                let (x, y) = (lo + (hi - lo) / 3, hi - (hi - lo) / 4);
                q.range(&d0, Value::Int(x), Value::Int(y))
            }),
        ));
    }
    setups
}

#[test]
fn reads_with_batches_in_flight_equal_local_reads() {
    let storage = Arc::new(InFlight::default());
    let (mut compared, mut batched) = (0, 0);
    for (path, a) in common::fixture_arrays() {
        let mut setups = full_and_cut(&a);
        setups.insert(
            1,
            (
                "column-major".into(),
                Box::new(|q| q.layout(Layout::ColMajor)),
            ),
        );
        for (name, setup) in &setups {
            let local = ReadSession::new(Arc::new(LocalFs), a.clone())
                .execute(&setup(ReadRequest::new()))
                .map_err(|e| e.to_string());
            for band_bytes in [0, u64::MAX] {
                let before = *storage.batches.lock().unwrap();
                let ahead = if band_bytes == 0 { 4 << 10 } else { 0 };
                storage.ahead.store(ahead, Ordering::Relaxed);
                let read = ReadSession::new(storage.clone(), a.clone())
                    .execute(&setup(
                        ReadRequest::new().tune(|t| t.dense_band_bytes = band_bytes),
                    ))
                    .map_err(|e| e.to_string());
                let what = format!("{}: {name}, bands of {band_bytes}", path.display());
                common::assert_same_outcome(&what, &local, &read);
                let (overlaps, _) = storage.take_overlaps();
                assert!(overlaps.is_empty(), "{what}: fetched twice: {overlaps:?}");
                batched += (*storage.batches.lock().unwrap() > before + 1) as usize;
                compared += 1;
            }
        }
    }
    assert!(compared > 1000, "only {compared} reads compared");
    // Reads of several batches (several groups or units) are many.
    assert!(batched > 500, "only {batched} reads made several batches");
}

/// A dense read in batches begins the tiles of the batches after the one
/// it reads, up to the storage's read-ahead: with room for all, every
/// data range is asked for before the first batch is returned; with a few
/// KiB, as it goes. Either way the batches, appended, equal the local
/// read, and no byte of a data file is fetched twice.
#[test]
fn dense_reads_in_batches_begin_the_next_batches_tiles() {
    let storage = Arc::new(InFlight::default());
    let (mut compared, mut all_ahead) = (0, 0);
    for (path, a) in common::fixture_arrays() {
        if !a.schema.is_dense() {
            continue;
        }
        for (name, setup) in &full_and_cut(&a) {
            let local = ReadSession::new(Arc::new(LocalFs), a.clone())
                .execute(&setup(ReadRequest::new()))
                .map_err(|e| e.to_string());
            for ahead in [4 << 10, 0] {
                storage.ahead.store(ahead, Ordering::Relaxed);
                let what = format!("{}: {name}, {ahead} bytes ahead", path.display());
                let session = ReadSession::new(storage.clone(), a.clone());
                let Ok(batches) = session.batches(&setup(ReadRequest::new()).budget(5000)) else {
                    continue;
                };
                let (mut appended, mut n, mut first) = (ReadResult::default(), 0, 0);
                let mut read = Ok(());
                for b in batches {
                    match b {
                        Ok(b) => appended.append(b),
                        Err(e) => read = Err(e.to_string()),
                    }
                    n += 1;
                    if n == 1 {
                        first = storage.logged();
                    }
                }
                let last = storage.logged();
                let read = read.map(|()| appended);
                common::assert_same_outcome(&what, &local, &read);
                let (overlaps, _) = storage.take_overlaps();
                assert!(overlaps.is_empty(), "{what}: fetched twice: {overlaps:?}");
                if ahead == 0 && n > 2 {
                    assert_eq!(first, last, "{what}: tiles asked for after the first batch");
                    all_ahead += 1;
                }
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "only {compared} reads compared");
    assert!(all_ahead > 20, "only {all_ahead} reads of several batches");
}
