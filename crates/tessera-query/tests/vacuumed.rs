//! Readers and a vacuum in another process: fragments an open listed and
//! a vacuum then removed are not an error; the array is listed anew and
//! read from the consolidated fragment holding the same cells. And a
//! metadata file another writer adds during a metadata consolidation.

use futures::StreamExt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tessera_fragment::OpenArray;
use tessera_query::push::{answer, PushDecoder};
use tessera_query::stream::{stream, stream_async};
use tessera_query::{QuerySource, ReadRequest, ReadSession};
use tessera_storage::{
    DirEntry, FileWriter, ListableStorage, LocalFs, Location, ReadableStorage, StorageHints,
    StorageResult, WritableStorage,
};
use tessera_write::consolidate::{consolidate_fragments, vacuum_fragments, ConsolidateOptions};

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A copy of a fixture of five fragments, under a name of the test's.
fn array(test: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/random_sparse/array");
    let dir = std::env::temp_dir().join(format!("tessera-vacuumed-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy(&src, &dir);
    dir
}

/// What another process does: consolidate every fragment, then vacuum.
fn consolidate_and_vacuum(dir: &Path) -> usize {
    consolidate_fragments(
        dir,
        &ConsolidateOptions::default(),
        &QuerySource,
        &mut |_| {},
    )
    .unwrap()
    .unwrap();
    vacuum_fragments(dir, None, &mut |_| {}).unwrap()
}

fn cells(session: &ReadSession) -> u64 {
    session.execute(&ReadRequest::new()).unwrap().cell_count as u64
}

/// When another process consolidates and vacuums the array.
#[derive(Clone, Copy, PartialEq)]
enum When {
    /// Right after the fragments folder is first listed: an open then
    /// loads fragments that are gone.
    Listed,
    /// Before a fragment's data is first read: a consolidation then reads
    /// cells that are gone.
    DataRead,
    /// Right after the metadata folder is first listed, another writer
    /// puts a metadata file (not a consolidation and vacuum).
    MetadataListed,
}

/// Local files, with another process's work (a consolidation and vacuum,
/// or a metadata write) at a chosen moment.
struct VacuumWhen {
    when: When,
    vacuumed: AtomicBool,
}

impl VacuumWhen {
    fn new(when: When) -> Self {
        VacuumWhen {
            when,
            vacuumed: AtomicBool::new(false),
        }
    }

    fn at(&self, when: When, array: &Path) {
        if when == self.when && !self.vacuumed.swap(true, Ordering::SeqCst) {
            match when {
                When::MetadataListed => put_key(array, "late"),
                _ => assert_eq!(consolidate_and_vacuum(array), 5),
            }
        }
    }
}

impl ReadableStorage for VacuumWhen {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        let data = path.extension().is_some_and(|e| e == "tdb")
            && !path.ends_with("__fragment_metadata.tdb")
            && path.components().any(|c| c.as_os_str() == "__fragments");
        if data {
            let array = path.ancestors().nth(3).expect("array folder");
            self.at(When::DataRead, array);
        }
        LocalFs.read_range(path, range)
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        LocalFs.size(path)
    }
}

impl ListableStorage for VacuumWhen {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
        let listed = LocalFs.list(path)?;
        let array = path.parent().expect("array folder");
        match path.file_name().and_then(|n| n.to_str()) {
            Some("__fragments") => self.at(When::Listed, array),
            Some("__meta") => self.at(When::MetadataListed, array),
            _ => {}
        }
        Ok(listed)
    }

    fn exists(&self, path: &Path) -> bool {
        LocalFs.exists(path)
    }
}

impl StorageHints for VacuumWhen {}

impl WritableStorage for VacuumWhen {
    fn put(&self, path: &Path, bytes: &[u8]) -> StorageResult<()> {
        LocalFs.put(path, bytes)
    }
    fn writer(&self, path: &Path) -> StorageResult<Box<dyn FileWriter>> {
        LocalFs.writer(path)
    }
    fn delete(&self, path: &Path) -> StorageResult<bool> {
        LocalFs.delete(path)
    }
    fn delete_folder(&self, path: &Path) -> StorageResult<usize> {
        LocalFs.delete_folder(path)
    }
    fn create_folder(&self, path: &Path) -> StorageResult<()> {
        LocalFs.create_folder(path)
    }
    fn uri(&self, path: &Path) -> StorageResult<String> {
        LocalFs.uri(path)
    }
}

#[test]
fn an_open_whose_fragments_were_vacuumed_lists_the_array_again() {
    let dir = array("open");
    let before = cells(&ReadSession::open(Arc::new(LocalFs), &dir, None).unwrap());
    let storage = VacuumWhen::new(When::Listed);
    let opened = OpenArray::open(&storage, &dir, 0, u64::MAX, None).unwrap();
    assert!(storage.vacuumed.load(Ordering::SeqCst), "the race happened");
    assert_eq!(opened.fragments.len(), 1, "the consolidated fragment");
    let session = ReadSession::new(Arc::new(LocalFs), Arc::new(opened));
    assert_eq!(cells(&session), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_read_of_an_array_vacuumed_since_it_opened_reads_it_anew() {
    let dir = array("read");
    let session = ReadSession::open(Arc::new(LocalFs), &dir, None).unwrap();
    let before = cells(&session);
    assert_eq!(session.array().fragments.len(), 5);
    assert_eq!(consolidate_and_vacuum(&dir), 5);
    // Both reads: in one batch, and streamed in small batches.
    assert_eq!(cells(&session), before);
    let streamed: usize = stream(session.clone(), ReadRequest::new().budget(4 << 10))
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum();
    assert_eq!(streamed as u64, before);
    // Awaited as a stream (decoded on rayon's pool, read inside its
    // steps).
    let awaited_stream = futures::executor::block_on(async {
        let batches = stream_async(session.clone(), ReadRequest::new().budget(4 << 10));
        let batches = batches.await.unwrap();
        batches
            .map(|b| b.unwrap().num_rows())
            .fold(0, |a, n| async move { a + n })
            .await
    });
    assert_eq!(awaited_stream as u64, before);
    // And pushed, from the array as it was opened: its needs answered
    // synchronously and awaited.
    let pushed =
        || PushDecoder::for_array(session.array().clone(), ReadRequest::new().budget(4 << 10));
    let read: usize = pushed()
        .read_from(&LocalFs)
        .map(|b| b.unwrap().cell_count)
        .sum();
    assert_eq!(read as u64, before);
    let awaited = pushed().into_stream(|needs| async move { answer(&LocalFs, needs) });
    let awaited: Vec<_> = futures::executor::block_on(awaited.collect());
    let awaited: usize = awaited.into_iter().map(|b| b.unwrap().cell_count).sum();
    assert_eq!(awaited as u64, before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_consolidation_whose_fragments_were_vacuumed_starts_again() {
    // Another consolidation and vacuum between this one's open and its
    // reading of the cells: it starts again, on the array as the other
    // left it (one fragment, so nothing to do).
    let dir = array("consolidate");
    let before = cells(&ReadSession::open(Arc::new(LocalFs), &dir, None).unwrap());
    let storage = Arc::new(VacuumWhen::new(When::DataRead));
    let at = Location::new(storage.clone(), dir.clone());
    let done = consolidate_fragments(
        at,
        &ConsolidateOptions::default(),
        &QuerySource,
        &mut |_| {},
    )
    .unwrap();
    assert!(storage.vacuumed.load(Ordering::SeqCst), "the race happened");
    assert!(done.is_none(), "{done:?}");
    let after = ReadSession::open(Arc::new(LocalFs), &dir, None).unwrap();
    assert_eq!(after.array().fragments.len(), 1);
    assert_eq!(cells(&after), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Another writer's metadata key, as a metadata file of its own.
fn put_key(array: &Path, key: &str) {
    let value = tessera_fragment::array_metadata::MetadataValue {
        datatype: tessera_tile::Datatype::Int64,
        count: 1,
        bytes: 1i64.to_le_bytes().to_vec(),
    };
    let entries = [(key.to_owned(), Some(value))].into_iter().collect();
    tessera_write::metadata::put_metadata(array, &entries, None, None).unwrap();
}

#[test]
fn a_metadata_file_written_during_its_consolidation_is_kept() {
    // The metadata consolidation lists the files once: a file another
    // writer adds after that listing is neither merged nor vacuumed.
    let dir = array("metadata");
    put_key(&dir, "a");
    put_key(&dir, "b");
    let storage = Arc::new(VacuumWhen::new(When::MetadataListed));
    let at = Location::new(storage.clone(), dir.clone());
    tessera_write::metadata::consolidate_metadata(at, None)
        .unwrap()
        .expect("consolidated");
    assert!(storage.vacuumed.load(Ordering::SeqCst), "the race happened");
    tessera_write::metadata::vacuum_metadata(&dir, None).unwrap();
    let opened = OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
    let keys: Vec<String> = opened.metadata(&LocalFs).unwrap().into_keys().collect();
    assert_eq!(keys, ["a", "b", "late"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
