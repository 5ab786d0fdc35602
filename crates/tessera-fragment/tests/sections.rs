//! Corrupting any lazily loaded section of a real fragment's metadata file
//! gives an error naming the fragment, the section and the byte offset.

use std::ops::Range;
use std::path::{Path, PathBuf};
use tessera_fragment::{Field, FileKind, FragmentMetadata, OpenArray};
use tessera_storage::{
    ListableStorage, Memory, ReadableStorage, Storage, StorageError, StorageErrorKind,
    StorageHints, StorageResult,
};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/sparse_2d/array")
}

/// Loads one section through the public API; the name is what errors must say.
fn load(f: &FragmentMetadata, s: &dyn Storage, section: &str) -> Result<(), String> {
    let a = Field::Attribute(0);
    let i = f.field_index(a).unwrap();
    let r = match section {
        "R-tree" => f.rtree(s).map(|_| ()),
        "tile offsets" => f.tile_offsets(s, i, FileKind::Fixed).map(|_| ()),
        "tile mins" => f.tile_mins(s, a).map(|_| ()),
        "tile maxes" => f.tile_maxes(s, a).map(|_| ()),
        "tile sums" => f.tile_sums(s, a).map(|_| ()),
        "tile null counts" => f.tile_null_counts(s, a).map(|_| ()),
        "fragment min max sum null count" => f.fragment_summary(s).map(|_| ()),
        "processed conditions" => f.processed_conditions(s).map(|_| ()),
        _ => unreachable!(),
    };
    r.map_err(|e| e.to_string())
}

#[test]
fn corrupt_sections_are_named_with_their_offset() {
    let clean = Memory::load_dir(&fixture()).unwrap();
    let a = OpenArray::open(&clean, &fixture(), 0, u64::MAX, None).unwrap();
    let frag = &a.fragments[0];
    let ft = &frag.footer;
    let i = frag.field_index(Field::Attribute(0)).unwrap();
    let sections = [
        ("R-tree", ft.rtree_offset),
        ("tile offsets", ft.tile_offsets[i]),
        ("tile mins", ft.tile_min_offsets[i]),
        ("tile maxes", ft.tile_max_offsets[i]),
        ("tile sums", ft.tile_sum_offsets[i]),
        ("tile null counts", ft.tile_null_count_offsets[i]),
        (
            "fragment min max sum null count",
            ft.fragment_summary_offset.unwrap(),
        ),
        (
            "processed conditions",
            ft.processed_conditions_offset.unwrap(),
        ),
    ];
    let meta = frag.path.join("__fragment_metadata.tdb");
    let original: Vec<u8> = clean
        .files()
        .find(|(p, _)| *p == meta)
        .map(|(_, b)| b.to_vec())
        .unwrap();
    for (section, offset) in sections {
        // Every section loads from the clean copy.
        load(frag, &clean, section).unwrap_or_else(|e| panic!("{section}: {e}"));
        // Two corruptions of the section's generic tile header: its
        // persisted size and its filter pipeline size, both far past the file.
        for how in ["persisted size", "filter pipeline size"] {
            let mut bytes = original.clone();
            let o = offset as usize;
            match how {
                "persisted size" => bytes[o + 4..o + 12].copy_from_slice(&u64::MAX.to_le_bytes()),
                // version 4, persisted 8, tile size 8, datatype 1, cell size 8, encryption 1
                _ => bytes[o + 30..o + 34].copy_from_slice(&u32::MAX.to_le_bytes()),
            }
            let mut bad = Memory::load_dir(&fixture()).unwrap();
            bad.insert(meta.clone(), bytes);
            // The footer is intact, so the array opens; the section fails.
            let reopened = OpenArray::open(&bad, &fixture(), 0, u64::MAX, None).unwrap();
            let e = load(&reopened.fragments[0], &bad, section).expect_err(section);
            assert!(e.contains(&frag.name), "{how} of {section}: {e}");
            assert!(e.contains(section), "{how} of {section}: {e}");
            assert!(e.contains(&offset.to_string()), "{how} of {section}: {e}");
        }
    }
}

/// A storage over files in memory that calls `hook` before each read.
struct Hooked<'m, F> {
    inner: &'m Memory,
    hook: F,
}

impl<F> ReadableStorage for Hooked<'_, F>
where
    F: Fn(&dyn Storage, &Path, &Range<u64>) -> StorageResult<()> + Send + Sync,
{
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        (self.hook)(self, path, &range)?;
        self.inner.read_range(path, range)
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        self.inner.size(path)
    }
}

impl<F> ListableStorage for Hooked<'_, F>
where
    F: Fn(&dyn Storage, &Path, &Range<u64>) -> StorageResult<()> + Send + Sync,
{
    fn list(&self, path: &Path) -> StorageResult<Vec<tessera_storage::DirEntry>> {
        self.inner.list(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
}

impl<F> StorageHints for Hooked<'_, F> where
    F: Fn(&dyn Storage, &Path, &Range<u64>) -> StorageResult<()> + Send + Sync
{
}

/// Loads the R-tree through a storage that, while reading it, loads
/// `inner` on the same thread; fails on a deadlock instead of hanging.
fn load_rtree_loading(inner: &'static str) {
    let (done, finished) = std::sync::mpsc::channel();
    // On a thread of its own: a deadlock fails the test instead of hanging it.
    std::thread::spawn(move || {
        let clean = Memory::load_dir(&fixture()).unwrap();
        let a = OpenArray::open(&clean, &fixture(), 0, u64::MAX, None).unwrap();
        let frag = &a.fragments[0];
        // During its first read, the storage loads `inner` on the same
        // thread. A rayon thread does that when, waiting for the chunks of
        // a large section it decodes in parallel, it runs another job that
        // needs a section of the fragment.
        let armed = std::sync::atomic::AtomicBool::new(true);
        let s = Hooked {
            inner: &clean,
            hook: |s: &dyn Storage, _: &Path, _: &Range<u64>| {
                if armed.swap(false, std::sync::atomic::Ordering::SeqCst) {
                    load(frag, s, inner)
                        .map_err(|e| StorageError::new(StorageErrorKind::Other, "hook", e))?;
                }
                Ok(())
            },
        };
        let r = frag.rtree(&s).map(|t| t.leaves().len());
        let i = frag.field_index(Field::Attribute(0)).unwrap();
        let offsets = frag
            .tile_offsets(&clean, i, FileKind::Fixed)
            .map(|o| o.len());
        let _ = done.send((
            r.map_err(|e| e.to_string()),
            offsets.map_err(|e| e.to_string()),
        ));
    });
    let (rtree, offsets) = finished
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("loading a section inside another's load deadlocked");
    assert!(rtree.unwrap() > 0);
    assert!(offsets.unwrap() > 0);
}

#[test]
fn a_section_loads_while_another_of_the_fragment_loads_on_the_same_thread() {
    load_rtree_loading("tile offsets");
}

#[test]
fn a_section_loads_while_it_loads_on_the_same_thread() {
    load_rtree_loading("R-tree");
}

#[test]
fn threads_asking_for_a_section_at_once_read_it_once() {
    let clean = Memory::load_dir(&fixture()).unwrap();
    let a = OpenArray::open(&clean, &fixture(), 0, u64::MAX, None).unwrap();
    let frag = &a.fragments[0];
    // Every request recorded, and each slow enough that threads asking
    // for a section at once are all inside it together.
    let requests = std::sync::Mutex::new(Vec::new());
    let s = Hooked {
        inner: &clean,
        hook: |_: &dyn Storage, path: &Path, range: &Range<u64>| {
            let mut log = requests.lock().unwrap();
            log.push((path.to_path_buf(), range.clone()));
            drop(log);
            std::thread::sleep(std::time::Duration::from_millis(20));
            Ok(())
        },
    };
    let sections = ["R-tree", "tile offsets", "tile mins", "tile maxes"];
    std::thread::scope(|scope| {
        for t in 0..16 {
            let (s, section) = (&s, sections[t % sections.len()]);
            scope.spawn(move || load(frag, s, section).unwrap());
        }
    });
    let mut requests = requests.into_inner().unwrap();
    let asked = requests.len();
    requests.sort_by_key(|(p, r)| (p.clone(), r.start, r.end));
    requests.dedup();
    assert!(asked >= sections.len());
    assert_eq!(
        asked,
        requests.len(),
        "a range was read twice: {requests:?}"
    );
}
