//! Tiles decoded from their files mapped into memory equal tiles read into
//! buffers: every fixture array read whole, and with a condition, through
//! storage that maps every run (local files map only large ones, which no
//! fixture has) and through storage that maps none.

mod common;

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tessera_query::{ReadRequest, ReadSession};
use tessera_storage::{
    DirEntry, ListableStorage, LocalFs, MappedFile, ReadableStorage, StorageHints, StorageResult,
};
use tessera_tile::Layout;

/// Local files, every run mapped (`maps`) or none.
struct Local {
    maps: bool,
}

/// Files mapped by every [`Local`].
static MAPPED: AtomicUsize = AtomicUsize::new(0);

impl ReadableStorage for Local {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        LocalFs.read_range(path, range)
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        LocalFs.size(path)
    }

    fn map(&self, path: &Path, _run_bytes: u64) -> Option<StorageResult<MappedFile>> {
        self.maps.then(|| {
            MAPPED.fetch_add(1, Ordering::Relaxed);
            MappedFile::open(path)
        })
    }
}

impl ListableStorage for Local {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        LocalFs.list(path)
    }

    fn exists(&self, path: &Path) -> bool {
        LocalFs.exists(path)
    }
}

impl StorageHints for Local {}

#[test]
fn mapped_runs_read_what_copied_runs_read() {
    let arrays = common::fixture_arrays();
    let mut compared = 0;
    for (path, array) in &arrays {
        let requests = [
            ReadRequest::new(),
            ReadRequest::new().layout(Layout::GlobalOrder).budget(4096),
        ];
        for request in requests {
            let read = |maps: bool| {
                ReadSession::new(Arc::new(Local { maps }), array.clone())
                    .execute(&request)
                    .map_err(|e| e.to_string())
            };
            let what = format!("{} {request:?}", path.display());
            common::assert_same_outcome(&what, &read(true), &read(false));
            compared += 1;
        }
    }
    assert!(compared > 200, "only {compared} reads compared");
    let mapped = MAPPED.load(Ordering::Relaxed);
    assert!(mapped > 1000, "only {mapped} files mapped");
}
