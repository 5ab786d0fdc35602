//! The I/O tessera's readers are driven by.
//!
//! Decoders never touch files; the layers that open arrays ask a
//! [`Storage`] for byte ranges ([`ReadableStorage`]) and folder listings
//! ([`ListableStorage`]), planning with its [`StorageHints`], and the layers that
//! write them a [`WritableStorage`] for puts, streamed files and removal.
//! [`LocalFs`] serves a local filesystem; object stores plug in as
//! separate adapter crates. A [`Location`] is a path with its storage.

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

mod kept;
mod location;
mod mapped;
mod need;
mod side_by_side;
mod vanished;
mod write;

pub use kept::KeptFile;
pub use location::Location;
pub use mapped::MappedFile;
pub use need::{answer, Answer, AnswersFuture, AsyncStorage, Data, Grouped, Need};
pub use side_by_side::{side_by_side, side_by_side_on};
pub use vanished::{is_missing_file, listing_again, pause_before_reopen, reopen_pause, REOPENS};
pub use write::{already_there, entry_names, put_after_looking, FileWriter, WritableStorage};

/// One entry of a folder listing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    /// File or folder name (no path).
    pub name: String,
    /// True for folders.
    pub is_dir: bool,
    /// Size in bytes, where the listing gives it without another request
    /// (object-store listings and [`Memory`] do; local folders do not, and
    /// [`ReadableStorage::size`] asks); `None` for folders.
    pub size: Option<u64>,
}

/// Reading byte ranges of files: what decoders are fed from.
///
/// Readers call it from rayon jobs, and a thread may wait for another's
/// read (of a fragment metadata section both want): an implementation
/// should not run jobs on the caller's rayon pool while it reads (a pool
/// of its own, or threads of its own, are fine).
pub trait ReadableStorage: Send + Sync {
    /// Reads `range` of the file at `path`. Fails if the file is shorter.
    fn read_range(&self, path: &Path, range: Range<u64>) -> io::Result<Vec<u8>>;

    /// Appends the bytes of `range` of `path` to `buf`. Readers that fetch
    /// many ranges gather them in one buffer they reuse, so memory already
    /// touched is filled again instead of fresh pages being faulted in. The
    /// default copies from [`ReadableStorage::read_range`].
    fn read_range_into(&self, path: &Path, range: Range<u64>, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.extend_from_slice(&self.read_range(path, range)?);
        Ok(())
    }

    /// Reads the bytes of `path` from `start` on into `bufs`, filling each
    /// in turn (a scatter read of `start..start + total length`). Readers
    /// that place unfiltered cells straight into their result use it: the
    /// bytes are copied once, from storage to their place. Storage that
    /// opens files keeps the file open in `kept`, the reader's, for its
    /// next scatter read. The default reads the range and copies it out.
    fn read_scattered(
        &self,
        path: &Path,
        start: u64,
        bufs: &mut [&mut [u8]],
        kept: &mut KeptFile,
    ) -> io::Result<()> {
        let _ = kept;
        let total: u64 = bufs.iter().map(|b| b.len() as u64).sum();
        let bytes = self.read_range(path, start..start.saturating_add(total))?;
        let mut at = 0;
        for b in bufs.iter_mut() {
            b.copy_from_slice(&bytes[at..at + b.len()]);
            at += b.len();
        }
        Ok(())
    }

    /// The file at `path` mapped into memory, for a reader about to read
    /// `run_bytes` of it: where the storage maps files (local ones) and a
    /// run that large pays for a mapping, readers decode it from the
    /// mapping, with no copy. `None` (the default) where it does not;
    /// readers then read ranges.
    fn map(&self, path: &Path, run_bytes: u64) -> Option<io::Result<MappedFile>> {
        let _ = (path, run_bytes);
        None
    }

    /// Reads several ranges of one file. Implementations may coalesce them.
    fn read_ranges(&self, path: &Path, ranges: &[Range<u64>]) -> io::Result<Vec<Vec<u8>>> {
        ranges
            .iter()
            .map(|r| self.read_range(path, r.clone()))
            .collect()
    }

    /// Reads many ranges of one or several files, in the order asked: a
    /// read plan fetched as one batch. Storage where a request costs a
    /// round trip (object stores) issues them concurrently, merging
    /// neighbouring ranges of a file and reading overlapping ones once; the
    /// default reads them one after the other.
    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> io::Result<Vec<Vec<u8>>> {
        requests
            .iter()
            .map(|(p, r)| self.read_range(p, r.clone()))
            .collect()
    }

    /// Starts reading a batch ([`ReadableStorage::read_batch`]) and returns at
    /// once where the storage keeps requests in flight on its own (object
    /// stores), so that a reader decodes one batch while the next is
    /// fetched; [`PendingBatch::wait`] gives the bytes. The batch owns
    /// what it waits on, so a reader may hold it past the call (a read in
    /// batches begins the tiles of the batches after the one it reads).
    /// The default reads the batch before it returns.
    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'static> {
        PendingBatch::ready(self.read_batch(&requests))
    }

    /// [`ReadableStorage::read_tail`] of several files as one batch (fragment
    /// footers when an array opens), each file's result on its own.
    fn read_tails(&self, files: &[PathBuf], max: u64) -> Vec<io::Result<(u64, Vec<u8>)>> {
        files.iter().map(|f| self.read_tail(f, max)).collect()
    }

    /// Reads a whole file.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let size = self.size(path)?;
        self.read_range(path, 0..size)
    }

    /// The size of the file at `path` and its last `max` bytes (the whole
    /// file if shorter): readers of footers ask for both at once. The
    /// default asks [`ReadableStorage::size`], then [`ReadableStorage::read_range`].
    fn read_tail(&self, path: &Path, max: u64) -> io::Result<(u64, Vec<u8>)> {
        let size = self.size(path)?;
        let start = size.saturating_sub(max);
        Ok((size, self.read_range(path, start..size)?))
    }

    /// Size of a file in bytes.
    fn size(&self, path: &Path) -> io::Result<u64>;
}

/// Listing folders: how an array's files are found.
pub trait ListableStorage: Send + Sync {
    /// Lists a folder. A missing folder lists as empty: git, and some object
    /// stores, drop empty folders that libtiledb creates.
    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>>;

    /// True if a file or folder exists at `path`.
    fn exists(&self, path: &Path) -> bool;

    /// Forgets the folder listings kept (object stores keep them for a
    /// storage's life), so the next listing asks anew: an array is listed
    /// again when a file it listed was gone. Nothing, where none are kept.
    fn list_anew(&self) {}
}

/// What requests cost on a storage: hints readers plan their requests
/// with. They change how a read runs, never what it returns; the defaults
/// suit a local filesystem.
pub trait StorageHints {
    /// True where a request costs a round trip worth batching for: readers
    /// then gather what they need into [`ReadableStorage::read_batch`] and
    /// [`ReadableStorage::read_tails`] calls instead of reading from each thread.
    fn prefers_batches(&self) -> bool {
        false
    }

    /// Where readers batch ([`StorageHints::prefers_batches`]): the bytes a
    /// read keeps begun ahead of its decoding, in flight or landed, at
    /// most; enough to keep the storage's connections busy.
    fn read_ahead(&self) -> u64 {
        256 << 20
    }

    /// The bytes of later batches' tiles a read in batches begins fetching
    /// while it reads one, at most (0: none): the default is
    /// [`StorageHints::read_ahead`] where requests cost a round trip, else
    /// none. A storage whose caller fetches ahead itself says 0.
    fn batches_ahead(&self) -> u64 {
        match self.prefers_batches() {
            true => self.read_ahead(),
            false => 0,
        }
    }

    /// How long a reader waits before it lists again after a file it
    /// listed was found gone ([`listing_again`]; `attempt` counts from
    /// one): by default [`reopen_pause`], so that a vacuum under way can
    /// finish its step. Storage whose reader must not wait says zero: a
    /// push decoder's, whose driver answers when it can (a step never
    /// sleeps).
    fn pause_before_listing_again(&self, attempt: usize) -> std::time::Duration {
        reopen_pause(attempt)
    }
}

/// All a reader needs: byte ranges ([`ReadableStorage`]), listings
/// ([`ListableStorage`]) and the hints it plans with ([`StorageHints`]).
/// Every type with the three is one; readers take `&dyn Storage`.
pub trait Storage: ReadableStorage + ListableStorage + StorageHints {
    /// Whole files: where requests cost a round trip
    /// ([`StorageHints::prefers_batches`]) all at once, as the tails (of at most
    /// 1 TiB) of one [`ReadableStorage::read_tails`] batch; else one after another.
    fn read_files(&self, files: &[PathBuf]) -> Vec<io::Result<Vec<u8>>> {
        if !self.prefers_batches() {
            return files.iter().map(|f| self.read_all(f)).collect();
        }
        self.read_tails(files, 1 << 40)
            .into_iter()
            .map(|r| r.map(|(_, bytes)| bytes))
            .collect()
    }
}

impl<T: ReadableStorage + ListableStorage + StorageHints + ?Sized> Storage for T {}

/// A batch of reads begun by [`ReadableStorage::begin_batch`]: its bytes, or
/// how to wait for them.
pub struct PendingBatch<'s>(Pending<'s>);

enum Pending<'s> {
    Ready(io::Result<Vec<Vec<u8>>>),
    InFlight(Box<dyn FnOnce() -> io::Result<Vec<Vec<u8>>> + Send + 's>),
}

impl<'s> PendingBatch<'s> {
    /// A batch read already.
    pub fn ready(read: io::Result<Vec<Vec<u8>>>) -> Self {
        PendingBatch(Pending::Ready(read))
    }

    /// A batch in flight: `wait` blocks until its bytes are in.
    pub fn in_flight(wait: impl FnOnce() -> io::Result<Vec<Vec<u8>>> + Send + 's) -> Self {
        PendingBatch(Pending::InFlight(Box::new(wait)))
    }

    /// The batch's ranges, in the order asked, once all are in.
    pub fn wait(self) -> io::Result<Vec<Vec<u8>>> {
        match self.0 {
            Pending::Ready(read) => read,
            Pending::InFlight(wait) => wait(),
        }
    }
}

impl std::fmt::Debug for PendingBatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Pending::Ready(_) => "PendingBatch(ready)",
            Pending::InFlight(_) => "PendingBatch(in flight)",
        })
    }
}

/// Runs of at least this many bytes [`LocalFs`] maps: below it a mapping
/// (its system calls and page faults) costs more than the copy it saves.
const MAPPED_RUN_BYTES: u64 = 1 << 20;

/// The local filesystem.
#[derive(Debug, Clone, Default)]
pub struct LocalFs;

impl ReadableStorage for LocalFs {
    fn read_range(&self, path: &Path, range: Range<u64>) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.read_range_into(path, range, &mut buf)?;
        Ok(buf)
    }

    fn read_range_into(&self, path: &Path, range: Range<u64>, buf: &mut Vec<u8>) -> io::Result<()> {
        let mut f = std::fs::File::open(path)?;
        let len = f.metadata()?.len();
        if range.start > range.end || range.end > len {
            return Err(outside_file(&range, len));
        }
        read_open_range(&mut f, range, buf)
    }

    fn read_scattered(
        &self,
        path: &Path,
        start: u64,
        bufs: &mut [&mut [u8]],
        kept: &mut KeptFile,
    ) -> io::Result<()> {
        scatter_from(kept.open(path)?, start, bufs)
    }

    fn read_tail(&self, path: &Path, max: u64) -> io::Result<(u64, Vec<u8>)> {
        // One open for both: the size from the open file, then one read.
        let mut f = std::fs::File::open(path)?;
        let size = f.metadata()?.len();
        let mut buf = Vec::new();
        read_open_range(&mut f, size.saturating_sub(max)..size, &mut buf)?;
        Ok((size, buf))
    }

    fn size(&self, path: &Path) -> io::Result<u64> {
        Ok(std::fs::metadata(path)?.len())
    }

    fn map(&self, path: &Path, run_bytes: u64) -> Option<io::Result<MappedFile>> {
        (run_bytes >= MAPPED_RUN_BYTES).then(|| MappedFile::open(path))
    }

    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }
}

impl ListableStorage for LocalFs {
    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let rd = match std::fs::read_dir(path) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for e in rd {
            let e = e?;
            // The entry's type comes with the listing on most file
            // systems; a size would cost a system call per file.
            out.push(DirEntry {
                name: e.file_name().to_string_lossy().into_owned(),
                is_dir: e.file_type()?.is_dir(),
                size: None,
            });
        }
        out.sort();
        Ok(out)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}

impl StorageHints for LocalFs {}

/// The error of a byte range not inside a file of `len` bytes (callers
/// name the file; the error says what was wrong with it).
fn outside_file(range: &Range<u64>, len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!(
            "byte range {}..{} is outside the file ({len} bytes)",
            range.start, range.end
        ),
    )
}

/// Appends `range` of the open file `f` (inside the file: the caller
/// checked) to `buf`; a short read is an error.
fn read_open_range(f: &mut std::fs::File, range: Range<u64>, buf: &mut Vec<u8>) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    f.seek(SeekFrom::Start(range.start))?;
    let want = range.end - range.start;
    let had = buf.len();
    buf.try_reserve_exact(want as usize)
        .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()))?;
    // Into the reserved capacity: nothing is zeroed first.
    f.take(want).read_to_end(buf)?;
    let got = (buf.len() - had) as u64;
    if got != want {
        buf.truncate(had);
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("read {got} of {want} bytes at {}", range.start),
        ));
    }
    Ok(())
}

/// A scatter read of `start..` from the open file `f` (see
/// [`ReadableStorage::read_scattered`]).
fn scatter_from(mut f: &std::fs::File, start: u64, bufs: &mut [&mut [u8]]) -> io::Result<()> {
    use std::io::{IoSliceMut, Read, Seek, SeekFrom};
    let total: u64 = bufs.iter().map(|b| b.len() as u64).sum();
    // The end of the file shows as a short read below: no size asked.
    f.seek(SeekFrom::Start(start))?;
    let mut slices: Vec<IoSliceMut<'_>> = bufs.iter_mut().map(|b| IoSliceMut::new(b)).collect();
    let mut rest = &mut slices[..];
    let mut left = total;
    // One readv per IOV_MAX slices at most; short reads resume where
    // they stopped.
    while left > 0 {
        let n = f.read_vectored(rest)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the file ends {} bytes into the {total} bytes read from {start}",
                    total - left
                ),
            ));
        }
        left -= n as u64;
        IoSliceMut::advance_slices(&mut rest, n);
    }
    Ok(())
}

/// A [`Storage`] wrapper that records every request, for I/O plan tests.
#[derive(Debug)]
pub struct Recording<S> {
    inner: S,
    root: PathBuf,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl<S: Storage> Recording<S> {
    /// Records requests to `inner`; paths are logged relative to `root`.
    pub fn new(inner: S, root: impl Into<PathBuf>) -> Self {
        Recording {
            inner,
            root: root.into(),
            log: Default::default(),
        }
    }

    fn rel(&self, p: &Path) -> String {
        p.strip_prefix(&self.root)
            .unwrap_or(p)
            .display()
            .to_string()
    }

    /// The requests made so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.log.lock().expect("log lock").clone()
    }

    fn push(&self, s: String) {
        self.log.lock().expect("log lock").push(s);
    }

    /// A batch as one log line; served in any order, so listed sorted and
    /// plans compare.
    fn batch_line(&self, requests: &[(PathBuf, Range<u64>)]) -> String {
        let mut asked: Vec<String> = requests
            .iter()
            .map(|(p, r)| format!("{} {}..{}", self.rel(p), r.start, r.end))
            .collect();
        asked.sort();
        format!("batch [{}]", asked.join(", "))
    }
}

impl<S: Storage> ReadableStorage for Recording<S> {
    fn read_range(&self, path: &Path, range: Range<u64>) -> io::Result<Vec<u8>> {
        self.push(format!(
            "read {} {}..{}",
            self.rel(path),
            range.start,
            range.end
        ));
        self.inner.read_range(path, range)
    }

    fn read_scattered(
        &self,
        path: &Path,
        start: u64,
        bufs: &mut [&mut [u8]],
        kept: &mut KeptFile,
    ) -> io::Result<()> {
        let total: u64 = bufs.iter().map(|b| b.len() as u64).sum();
        self.push(format!(
            "read (scattered) {} {}..{}",
            self.rel(path),
            start,
            start + total
        ));
        self.inner.read_scattered(path, start, bufs, kept)
    }

    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.push(format!("read {} (whole file)", self.rel(path)));
        self.inner.read_all(path)
    }

    fn size(&self, path: &Path) -> io::Result<u64> {
        self.push(format!("size {}", self.rel(path)));
        self.inner.size(path)
    }

    fn read_batch(&self, requests: &[(PathBuf, Range<u64>)]) -> io::Result<Vec<Vec<u8>>> {
        self.push(self.batch_line(requests));
        self.inner.read_batch(requests)
    }

    fn begin_batch(&self, requests: Vec<(PathBuf, Range<u64>)>) -> PendingBatch<'static> {
        self.push(self.batch_line(&requests));
        self.inner.begin_batch(requests)
    }

    fn read_tails(&self, files: &[PathBuf], max: u64) -> Vec<io::Result<(u64, Vec<u8>)>> {
        let mut asked: Vec<String> = files.iter().map(|p| self.rel(p)).collect();
        asked.sort();
        self.push(format!("tails of {max} [{}]", asked.join(", ")));
        self.inner.read_tails(files, max)
    }

    fn read_tail(&self, path: &Path, max: u64) -> io::Result<(u64, Vec<u8>)> {
        self.push(format!("tail of {max} {}", self.rel(path)));
        self.inner.read_tail(path, max)
    }
}

impl<S: Storage> ListableStorage for Recording<S> {
    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.push(format!("list {}", self.rel(path)));
        self.inner.list(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }

    fn list_anew(&self) {
        self.inner.list_anew()
    }
}

impl<S: Storage> StorageHints for Recording<S> {
    fn prefers_batches(&self) -> bool {
        self.inner.prefers_batches()
    }

    fn read_ahead(&self) -> u64 {
        self.inner.read_ahead()
    }

    fn batches_ahead(&self) -> u64 {
        self.inner.batches_ahead()
    }

    fn pause_before_listing_again(&self, attempt: usize) -> std::time::Duration {
        self.inner.pause_before_listing_again(attempt)
    }
}

/// Files held in memory: for tests, fuzzing, and arrays fetched whole.
///
/// Folders are implied by the paths of the files they hold.
///
/// ```
/// use std::path::Path;
/// use tessera_tile::storage::{ListableStorage, Memory, ReadableStorage};
///
/// let mut m = Memory::default();
/// m.insert("a/__schema/s1", b"abc".to_vec());
/// assert_eq!(m.read_range(Path::new("a/__schema/s1"), 1..3).unwrap(), b"bc");
/// let names: Vec<_> = m.list(Path::new("a")).unwrap().into_iter().map(|e| e.name).collect();
/// assert_eq!(names, ["__schema"]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Memory {
    files: std::collections::BTreeMap<PathBuf, Vec<u8>>,
}

impl Memory {
    /// Adds or replaces the file at `path`.
    pub fn insert(&mut self, path: impl Into<PathBuf>, bytes: Vec<u8>) {
        self.files.insert(path.into(), bytes);
    }

    /// Copies every file under `root` on the local filesystem, keeping their paths.
    pub fn load_dir(root: &Path) -> io::Result<Memory> {
        let mut m = Memory::default();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir)? {
                let p = e?.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    m.insert(p.clone(), std::fs::read(&p)?);
                }
            }
        }
        Ok(m)
    }

    /// The files held, in path order.
    pub fn files(&self) -> impl Iterator<Item = (&Path, &[u8])> {
        self.files.iter().map(|(p, b)| (p.as_path(), b.as_slice()))
    }

    fn get(&self, path: &Path) -> io::Result<&[u8]> {
        self.files
            .get(path)
            .map(Vec::as_slice)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
    }
}

impl ReadableStorage for Memory {
    fn read_range(&self, path: &Path, range: Range<u64>) -> io::Result<Vec<u8>> {
        let b = self.get(path)?;
        if range.start > range.end || range.end > b.len() as u64 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "byte range {}..{} is outside the file ({} bytes)",
                    range.start,
                    range.end,
                    b.len()
                ),
            ));
        }
        Ok(b[range.start as usize..range.end as usize].to_vec())
    }

    fn size(&self, path: &Path) -> io::Result<u64> {
        Ok(self.get(path)?.len() as u64)
    }

    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.get(path).map(<[u8]>::to_vec)
    }
}

impl ListableStorage for Memory {
    fn list(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let mut out: std::collections::BTreeMap<String, DirEntry> = Default::default();
        for (p, b) in self.files.range(path.to_path_buf()..) {
            let Ok(rest) = p.strip_prefix(path) else {
                break;
            };
            let mut parts = rest.components();
            let Some(first) = parts.next() else { continue };
            let name = first.as_os_str().to_string_lossy().into_owned();
            let is_dir = parts.next().is_some();
            out.entry(name.clone()).or_insert(DirEntry {
                name,
                is_dir,
                size: (!is_dir).then_some(b.len() as u64),
            });
        }
        Ok(out.into_values().collect())
    }

    fn exists(&self, path: &Path) -> bool {
        self.files.contains_key(path)
            || self
                .files
                .range(path.to_path_buf()..)
                .next()
                .is_some_and(|(p, _)| p != path && p.starts_with(path))
    }
}

impl StorageHints for Memory {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scatter reads fill every buffer in turn, past one readv's limit of
    /// slices (IOV_MAX, 1024 on Linux), the same on disk and in memory;
    /// a range past the end of the file is an error, not a short read.
    #[test]
    fn scattered_reads_fill_every_buffer_in_order() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let path = std::env::temp_dir().join(format!("tessera-scatter-{}", std::process::id()));
        std::fs::write(&path, &bytes).expect("temp file");
        let mut mem = Memory::default();
        mem.insert(path.clone(), bytes.clone());
        for storage in [&LocalFs as &dyn Storage, &mem] {
            // 3000 buffers of 1 to 5 bytes, from byte 100 on.
            let mut out = vec![0u8; 9000];
            let mut bufs: Vec<&mut [u8]> = Vec::new();
            let mut rest = &mut out[..];
            for i in 0..3000 {
                let (b, r) = rest.split_at_mut(1 + i % 5);
                bufs.push(b);
                rest = r;
            }
            let used = 9000 - rest.len();
            storage
                .read_scattered(&path, 100, &mut bufs, &mut KeptFile::new())
                .expect("read");
            assert_eq!(&out[..used], &bytes[100..100 + used]);
            let mut past = [0u8; 16];
            let err = storage
                .read_scattered(&path, 19_990, &mut [&mut past[..]], &mut KeptFile::new())
                .expect_err("past the end");
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        }
        std::fs::remove_file(&path).ok();
    }

    /// A file's tail comes with its size, on disk as in memory (the
    /// default): the last `max` bytes, or the whole file when shorter; a
    /// missing file is an error. Listings give sizes only where free.
    #[test]
    fn tails_come_with_the_file_size() {
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 253) as u8).collect();
        let dir = std::env::temp_dir().join(format!("tessera-tail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("f.tdb");
        std::fs::write(&path, &bytes).expect("temp file");
        let mut mem = Memory::default();
        mem.insert(path.clone(), bytes.clone());
        for storage in [&LocalFs as &dyn Storage, &mem] {
            let (size, tail) = storage.read_tail(&path, 300).expect("tail");
            assert_eq!((size, tail.as_slice()), (5000, &bytes[4700..]));
            let (size, all) = storage.read_tail(&path, 1 << 20).expect("whole");
            assert_eq!((size, all), (5000, bytes.clone()));
            assert!(storage.read_tail(&dir.join("missing"), 10).is_err());
        }
        let listed = LocalFs.list(&dir).expect("list");
        assert_eq!(listed.len(), 1);
        assert!(!listed[0].is_dir && listed[0].size.is_none());
        let listed = mem.list(&dir).expect("list");
        assert_eq!(listed[0].size, Some(5000));
        std::fs::remove_dir_all(&dir).ok();
    }
}
