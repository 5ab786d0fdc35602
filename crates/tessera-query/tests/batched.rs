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
//! twice.

mod common;

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tessera_query::{ReadRequest, ReadSession, Value};
use tessera_tile::storage::{
    DirEntry, ListableStorage, LocalFs, PendingBatch, ReadableStorage, StorageHints,
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
    fn read_range(&self, path: &Path, range: Range<u64>) -> io::Result<Vec<u8>> {
        self.log(path, &range);
        LocalFs.read_range(path, range)
    }

    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> io::Result<Vec<Vec<u8>>> {
        self.begin_batch(requests.to_vec()).wait()
    }

    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'_> {
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
                .collect::<io::Result<Vec<Vec<u8>>>>()
        });
        PendingBatch::in_flight(move || {
            fetch
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("fetch thread panicked")))
        })
    }

    fn size(&self, path: &Path) -> io::Result<u64> {
        LocalFs.size(path)
    }
}

impl ListableStorage for InFlight {
    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
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

#[test]
fn reads_with_batches_in_flight_equal_local_reads() {
    let storage = Arc::new(InFlight::default());
    let (mut compared, mut batched) = (0, 0);
    for (path, a) in common::fixture_arrays() {
        let mut setups: Vec<(String, Box<Setup>)> = vec![
            ("full".into(), Box::new(|q| q)),
            (
                "column-major".into(),
                Box::new(|q| q.layout(Layout::ColMajor)),
            ),
        ];
        if let Some((lo, hi)) = common::first_dim_span(&a) {
            let d0 = a.schema.dimensions[0].name.clone();
            setups.push((
                "cut".into(),
                Box::new(move |q| {
                    let (x, y) = (lo + (hi - lo) / 3, hi - (hi - lo) / 4);
                    q.range(&d0, Value::Int(x), Value::Int(y))
                }),
            ));
        }
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
