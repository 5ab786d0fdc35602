//! Tiles' bytes read ahead ([`Fetched`]: a run of neighbouring tiles in
//! one request per file, or large runs from their files mapped into
//! memory) or read when asked for.

use super::spec::*;
use crate::context::ReadContext;
use crate::QueryError;
use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tessera_fragment::{FileKind, FragmentMetadata};
use tessera_storage::{MappedFile, Storage, StorageError};

/// Tile bytes read ahead: for a run of tiles, the byte ranges of neighbouring
/// tiles in one file are merged into one request. A range not held is read
/// from storage directly.
pub struct Fetched<'s> {
    pub(super) storage: &'s dyn Storage,
    /// Where read buffers come from and go back to, and decoded tiles'.
    pub(super) ctx: &'s ReadContext,
    /// The spans read, one after the other.
    buf: Vec<u8>,
    /// Per span: file, first byte in the file, first byte in `buf`, length.
    spans: Vec<(PathBuf, u64, usize, usize)>,
    /// Spans a batch fetched, each in the buffer it came in (not copied).
    landed: Vec<(PathBuf, u64, Vec<u8>)>,
    /// Files mapped whole: any range inside is served from the mapping.
    mapped: Vec<(PathBuf, MappedFile)>,
}

impl<'s> Fetched<'s> {
    /// Nothing fetched: every range is read when asked for.
    pub fn nothing(storage: &'s dyn Storage, ctx: &'s ReadContext) -> Self {
        Fetched {
            storage,
            ctx,
            buf: Vec::new(),
            spans: Vec::new(),
            landed: Vec::new(),
            mapped: Vec::new(),
        }
    }

    /// Reads `spans` into one buffer, taken from the pool: a run's reads
    /// are then one allocation, large enough for huge pages, and reused.
    /// Files the storage maps are taken from `maps`, mapped there first
    /// where they are not yet.
    pub(super) fn read(
        storage: &'s dyn Storage,
        ctx: &'s ReadContext,
        maps: &FileMaps,
        spans: Vec<(PathBuf, Range<u64>)>,
    ) -> Result<Self, QueryError> {
        let total = spans.iter().map(|(_, r)| (r.end - r.start) as usize).sum();
        if let Some(fetched) = Fetched::mapped(storage, ctx, maps, &spans, total as u64)? {
            return Ok(fetched);
        }
        let mut fetched = Fetched {
            storage,
            ctx,
            buf: {
                let mut b = ctx.read.take(total);
                b.clear();
                b
            },
            spans: Vec::with_capacity(spans.len()),
            landed: Vec::new(),
            mapped: Vec::new(),
        };
        // One reservation for the whole run (lengths come from metadata).
        if fetched.buf.try_reserve_exact(total).is_err() {
            let first = spans
                .first()
                .map(|s| s.0.as_path())
                .unwrap_or(Path::new(""));
            return Err(StorageError::no_memory(first, total as u64).into());
        }
        for (path, r) in spans {
            let at = fetched.buf.len();
            storage.read_range_into(&path, r.clone(), &mut fetched.buf)?;
            fetched
                .spans
                .push((path, r.start, at, fetched.buf.len() - at));
        }
        Ok(fetched)
    }

    /// The files of `spans` (`total` bytes) mapped into memory, where the
    /// storage maps them for a run that large; `None` where it does not
    /// (or a file cannot be mapped: it is then read, and any error
    /// reported, as usual). A span reaching past its file's end is an
    /// error, as a read of it would be.
    fn mapped(
        storage: &'s dyn Storage,
        ctx: &'s ReadContext,
        maps: &FileMaps,
        spans: &[(PathBuf, Range<u64>)],
        total: u64,
    ) -> Result<Option<Self>, QueryError> {
        let mut mapped: Vec<(PathBuf, MappedFile)> = Vec::with_capacity(spans.len());
        for (path, r) in spans {
            let Some(file) = maps.get(storage, path, total) else {
                return Ok(None);
            };
            file.range(r.clone())?;
            mapped.push((path.clone(), file));
        }
        let mut fetched = Fetched::nothing(storage, ctx);
        fetched.mapped = mapped;
        Ok(Some(fetched))
    }

    /// Holds `spans` read already (by a batch), their bytes in `bytes`:
    /// kept in the buffers they came in.
    pub(super) fn from_batch(
        storage: &'s dyn Storage,
        ctx: &'s ReadContext,
        spans: Vec<(PathBuf, Range<u64>)>,
        bytes: Vec<Vec<u8>>,
    ) -> Self {
        let landed = (spans.into_iter().zip(bytes))
            .map(|((path, r), b)| (path, r.start, b))
            .collect();
        let mut fetched = Fetched::nothing(storage, ctx);
        fetched.landed = landed;
        fetched
    }

    pub(super) fn bytes(
        &self,
        path: &Path,
        range: Range<u64>,
    ) -> Result<Cow<'_, [u8]>, QueryError> {
        let mut mapped = self.mapped.iter().filter(|(p, _)| p == path);
        if let Some(bytes) = mapped.find_map(|(_, file)| file.range(range.clone()).ok()) {
            return Ok(Cow::Borrowed(bytes));
        }
        for (p, start, b) in &self.landed {
            if p == path && range.start >= *start && range.end <= start + b.len() as u64 {
                let from = (range.start - start) as usize;
                return Ok(Cow::Borrowed(
                    &b[from..from + (range.end - range.start) as usize],
                ));
            }
        }
        for (p, start, at, len) in &self.spans {
            if p == path && range.start >= *start && range.end <= start + *len as u64 {
                let from = at + (range.start - start) as usize;
                return Ok(Cow::Borrowed(
                    &self.buf[from..from + (range.end - range.start) as usize],
                ));
            }
        }
        read_now(self.storage, path, range).map(Cow::Owned)
    }
}

impl Drop for Fetched<'_> {
    /// Its buffers go back to the read's pool (which keeps what it has room for).
    fn drop(&mut self) {
        self.ctx.read.give(std::mem::take(&mut self.buf));
        for (_, _, b) in self.landed.drain(..) {
            self.ctx.read.give(b);
        }
    }
}

/// The files mapped for the runs of one plan, each mapped once and shared
/// by the threads decoding its runs. A mapping costs an `mmap` and, at its
/// end, an `munmap` that interrupts every other CPU running the process to
/// drop the pages from its TLB (mapped once a run, a read of 20 fragments
/// on two threads made 34 mappings; once a plan, 25).
#[derive(Default)]
pub(super) struct FileMaps(Mutex<Vec<(PathBuf, MappedFile)>>);

impl FileMaps {
    /// The file at `path` mapped: as mapped already, else mapped now where
    /// the storage maps a run of `run_bytes`. `None` where it does not, or
    /// the mapping fails (the file is then read, and an error reported, as
    /// usual).
    fn get(&self, storage: &dyn Storage, path: &Path, run_bytes: u64) -> Option<MappedFile> {
        // Held while mapping, so two threads never map one file twice.
        let mut maps = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, m)) = maps.iter().find(|(p, _)| p == path) {
            return Some(m.clone());
        }
        let m = storage.map(path, run_bytes)?.ok()?;
        maps.push((path.to_path_buf(), m.clone()));
        Some(m)
    }
}

pub(super) fn read_now(
    storage: &dyn Storage,
    path: &Path,
    range: Range<u64>,
) -> Result<Vec<u8>, QueryError> {
    Ok(storage.read_range(path, range)?)
}

pub(crate) fn tile_range(
    storage: &dyn Storage,
    frag: &FragmentMetadata,
    spec: &FieldSpec,
    kind: FileKind,
    t: u64,
) -> Result<Range<u64>, QueryError> {
    let idx = frag.field_index(spec.field).ok_or_else(|| {
        QueryError::Invalid(format!("fragment {} has no {:?}", frag.name, spec.field))
    })?;
    Ok(frag.tile_range(storage, idx, kind, t)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tessera_storage::{
        DirEntry, ListableStorage, LocalFs, ReadableStorage, StorageHints, StorageResult,
    };

    /// Local files, every run mapped, counting the mappings made.
    #[derive(Default)]
    struct Counted(AtomicUsize);

    impl ReadableStorage for Counted {
        fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
            LocalFs.read_range(path, range)
        }

        fn size(&self, path: &Path) -> StorageResult<u64> {
            LocalFs.size(path)
        }

        fn map(&self, path: &Path, _run_bytes: u64) -> Option<StorageResult<MappedFile>> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Some(MappedFile::open(path))
        }
    }

    impl ListableStorage for Counted {
        fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
            LocalFs.list(path)
        }

        fn exists(&self, path: &Path) -> bool {
            LocalFs.exists(path)
        }
    }

    impl StorageHints for Counted {}

    /// Runs of one file decoded on several threads share one mapping; a
    /// file that cannot be mapped is read, each time asked.
    #[test]
    fn each_file_is_mapped_once_for_all_runs() {
        let dir = std::env::temp_dir().join(format!("tessera-maps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.tdb"), dir.join("b.tdb"));
        let bytes: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&a, &bytes).unwrap();
        std::fs::write(&b, &bytes).unwrap();
        let storage = Counted::default();
        let ctx = ReadContext::new();
        let maps = FileMaps::default();
        let runs: Vec<Vec<(PathBuf, Range<u64>)>> = (0..16u64)
            .map(|i| vec![(a.clone(), i * 256..(i + 1) * 256), (b.clone(), 0..10)])
            .collect();
        runs.into_par_iter().for_each(|spans| {
            let (path, range) = spans[0].clone();
            let fetched = Fetched::read(&storage, &ctx, &maps, spans).unwrap();
            let from = range.start as usize;
            let got = fetched.bytes(&path, range.clone()).unwrap();
            assert_eq!(&got[..], &bytes[from..from + 256]);
            assert!(matches!(got, Cow::Borrowed(_)));
        });
        assert_eq!(storage.0.load(Ordering::Relaxed), 2);

        let missing = dir.join("missing.tdb");
        let fetched = Fetched::read(&storage, &ctx, &maps, vec![(missing, 0..1)]);
        assert!(
            fetched.is_err(),
            "a file neither mapped nor read is an error"
        );
        assert_eq!(storage.0.load(Ordering::Relaxed), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
