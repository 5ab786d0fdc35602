//! The writing half of storage: whole files put at once, large files
//! streamed in parts, removal, and the URI libtiledb names a file by.
//!
//! Every writer (fragments, commits, metadata, schemas, groups,
//! consolidation, vacuum) goes through [`WritableStorage`], so one code
//! path writes a local folder and an object store. What a backend can
//! promise is stated per method: a put appears whole or not at all (a
//! local rename, a single object PUT), and a streamed file appears only
//! when finished (a local rename, a completed multipart upload).

use super::{DirEntry, LocalFs, Recording, Storage};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Storage that can be written as well as read.
pub trait WritableStorage: Storage {
    /// Writes `bytes` as the whole file at `path`, replacing any file
    /// there: a reader sees the old file (or none) or all of the new one,
    /// never part of it.
    fn put(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;

    /// Writes `bytes` as the whole file at `path` only if no file is
    /// there: the store decides, so of two writers of one name exactly
    /// one succeeds and the other gets [`io::ErrorKind::AlreadyExists`]
    /// (a conditional put: a local hard link, `If-None-Match: *` on S3 and
    /// Azure, `ifGenerationMatch=0` on GCS). A put whose answer was lost
    /// and is sent again finds its own bytes there, and succeeds.
    ///
    /// The default, for storage that cannot put conditionally, looks
    /// first and then puts: another writer may come between the two.
    fn put_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        put_after_looking(self, path, bytes)
    }

    /// Starts the file at `path`, written in parts (a fragment's data file,
    /// tile after tile). Nothing is at `path` until [`FileWriter::finish`];
    /// a writer dropped unfinished leaves nothing behind.
    fn writer(&self, path: &Path) -> io::Result<Box<dyn FileWriter>>;

    /// Removes the file at `path`; false if there was none (as far as
    /// the store tells: an S3 `DELETE` answers alike either way).
    fn delete(&self, path: &Path) -> io::Result<bool>;

    /// Removes the folder at `path` with everything below it; how many
    /// files it held (0 if there was no such folder).
    fn delete_folder(&self, path: &Path) -> io::Result<usize>;

    /// Makes the folder at `path` and its parents, where folders exist;
    /// object stores have none (a key's prefix is its folder), so there it
    /// does nothing.
    fn create_folder(&self, path: &Path) -> io::Result<()>;

    /// Whether [`WritableStorage::rename_folder`] moves a folder in one
    /// step (a local rename). Object stores cannot: there a new array or
    /// group is written in place, in an order that keeps it invisible
    /// until whole.
    fn renames_folders(&self) -> bool {
        false
    }

    /// Moves the folder `from` to `to` in one step, where
    /// [`WritableStorage::renames_folders`].
    fn rename_folder(&self, from: &Path, to: &Path) -> io::Result<()> {
        let _ = to;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{}: folders cannot be renamed here", from.display()),
        ))
    }

    /// The URI libtiledb names `path` by (in vacuum lists before format
    /// 19, in group members): `file:///absolute/path` for local files,
    /// the object's URI on an object store. `path` must exist locally.
    fn uri(&self, path: &Path) -> io::Result<String>;
}

/// A file being written in parts (see [`WritableStorage::writer`]).
pub trait FileWriter: Send + Sync {
    /// Appends `bytes`.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()>;

    /// Completes the file, which then appears whole; returns its size.
    fn finish(self: Box<Self>) -> io::Result<u64>;
}

/// A put only if nothing is at `path` when looked at, for storage that
/// cannot put conditionally: another writer may come between the look and
/// the put.
pub fn put_after_looking<S: WritableStorage + ?Sized>(
    storage: &S,
    path: &Path,
    bytes: &[u8],
) -> io::Result<()> {
    if storage.exists(path) {
        return Err(already_there(path));
    }
    storage.put(path, bytes)
}

/// The error of a conditional put that found a file at `path`.
pub fn already_there(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{}: another writer wrote this file first (it is kept, not overwritten)",
            path.display()
        ),
    )
}

/// A name beside `path` no reader takes for a file of the format (a
/// leading dot, a `.tmp` ending), unique among this process's writers.
fn partial_name(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy());
    path.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()))
}

impl WritableStorage for LocalFs {
    fn put(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let partial = partial_name(path);
        std::fs::write(&partial, bytes)?;
        std::fs::rename(&partial, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&partial);
        })
    }

    /// A hard link is made only where no file is: the conditional step.
    /// Where the file system has no hard links, the file is looked for
    /// and then renamed into place.
    fn put_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let partial = partial_name(path);
        std::fs::write(&partial, bytes)?;
        let linked = match std::fs::hard_link(&partial, path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(already_there(path)),
            Err(_) if !path.exists() => std::fs::rename(&partial, path),
            other => other,
        };
        let _ = std::fs::remove_file(&partial);
        linked
    }

    fn writer(&self, path: &Path) -> io::Result<Box<dyn FileWriter>> {
        let partial = partial_name(path);
        let file = std::fs::File::create(&partial)?;
        Ok(Box::new(LocalWriter {
            out: Some(io::BufWriter::with_capacity(1 << 20, file)),
            partial,
            path: path.to_path_buf(),
            len: 0,
        }))
    }

    fn delete(&self, path: &Path) -> io::Result<bool> {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn delete_folder(&self, path: &Path) -> io::Result<usize> {
        let mut files = 0;
        let mut stack = vec![path.to_path_buf()];
        while let Some(dir) = stack.pop() {
            match std::fs::read_dir(&dir) {
                Ok(rd) => {
                    for e in rd.flatten() {
                        match e.file_type()?.is_dir() {
                            true => stack.push(e.path()),
                            false => files += 1,
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        match std::fs::remove_dir_all(path) {
            Ok(()) => Ok(files),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(e),
        }
    }

    fn create_folder(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path)
    }

    fn renames_folders(&self) -> bool {
        true
    }

    fn rename_folder(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn uri(&self, path: &Path) -> io::Result<String> {
        Ok(format!("file://{}", std::fs::canonicalize(path)?.display()))
    }
}

/// A local file written under a partial name and renamed when finished.
struct LocalWriter {
    out: Option<io::BufWriter<std::fs::File>>,
    partial: PathBuf,
    path: PathBuf,
    len: u64,
}

impl FileWriter for LocalWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| io::Error::other("finished"))?;
        out.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> io::Result<u64> {
        let out = self
            .out
            .take()
            .ok_or_else(|| io::Error::other("finished"))?;
        out.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&self.partial, &self.path)?;
        Ok(self.len)
    }
}

impl Drop for LocalWriter {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

impl<S: WritableStorage> WritableStorage for Recording<S> {
    fn put(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.push(format!("put {} ({} bytes)", self.rel(path), bytes.len()));
        self.inner.put(path, bytes)
    }

    fn put_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.push(format!("put {} ({} bytes)", self.rel(path), bytes.len()));
        self.inner.put_new(path, bytes)
    }

    fn writer(&self, path: &Path) -> io::Result<Box<dyn FileWriter>> {
        let inner = self.inner.writer(path)?;
        Ok(Box::new(RecordedWriter {
            inner,
            line: self.rel(path),
            log: self.log.clone(),
            len: 0,
        }))
    }

    fn delete(&self, path: &Path) -> io::Result<bool> {
        self.push(format!("delete {}", self.rel(path)));
        self.inner.delete(path)
    }

    fn delete_folder(&self, path: &Path) -> io::Result<usize> {
        self.push(format!("delete folder {}", self.rel(path)));
        self.inner.delete_folder(path)
    }

    fn create_folder(&self, path: &Path) -> io::Result<()> {
        self.inner.create_folder(path)
    }

    fn renames_folders(&self) -> bool {
        self.inner.renames_folders()
    }

    fn rename_folder(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.push(format!("rename {} to {}", self.rel(from), self.rel(to)));
        self.inner.rename_folder(from, to)
    }

    fn uri(&self, path: &Path) -> io::Result<String> {
        self.inner.uri(path)
    }
}

/// A streamed file of a [`Recording`]: logged once, when finished.
struct RecordedWriter {
    inner: Box<dyn FileWriter>,
    line: String,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    len: u64,
}

impl FileWriter for RecordedWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.len += bytes.len() as u64;
        self.inner.write(bytes)
    }

    fn finish(self: Box<Self>) -> io::Result<u64> {
        let line = format!("write {} ({} bytes)", self.line, self.len);
        self.log.lock().expect("log lock").push(line);
        self.inner.finish()
    }
}

/// The names of the entries of the folder `dir`, sorted; none if there is
/// no such folder.
pub fn entry_names(storage: &dyn Storage, dir: &Path) -> io::Result<Vec<String>> {
    let mut names: Vec<String> = storage
        .list(dir)?
        .into_iter()
        .map(|e: DirEntry| e.name)
        .collect();
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A put and a finished writer leave the file and nothing beside it;
    /// a writer dropped unfinished leaves nothing; folders go whole.
    #[test]
    fn local_writes_appear_whole_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("tessera-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        LocalFs.create_folder(&dir.join("a/b")).expect("folders");
        LocalFs.put(&dir.join("a/one"), b"12345").expect("put");
        let mut w = LocalFs.writer(&dir.join("a/b/two")).expect("writer");
        w.write(b"ab").expect("write");
        w.write(b"cde").expect("write");
        assert!(!dir.join("a/b/two").exists(), "not there until finished");
        assert_eq!(w.finish().expect("finish"), 5);
        let mut dropped = LocalFs.writer(&dir.join("a/b/three")).expect("writer");
        dropped.write(b"x").expect("write");
        drop(dropped);
        assert_eq!(
            entry_names(&LocalFs, &dir.join("a/b")).expect("list"),
            ["two"]
        );
        assert_eq!(std::fs::read(dir.join("a/b/two")).expect("read"), b"abcde");
        let e = LocalFs.put_new(&dir.join("a/one"), b"other").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert_eq!(std::fs::read(dir.join("a/one")).expect("kept"), b"12345");
        LocalFs.put_new(&dir.join("a/new"), b"n").expect("put_new");
        assert_eq!(std::fs::read(dir.join("a/new")).expect("read"), b"n");
        assert!(LocalFs.delete(&dir.join("a/new")).expect("delete"));
        assert!(LocalFs.delete(&dir.join("a/one")).expect("delete"));
        assert!(!LocalFs.delete(&dir.join("a/one")).expect("delete again"));
        assert_eq!(LocalFs.delete_folder(&dir.join("a")).expect("folder"), 1);
        assert_eq!(LocalFs.delete_folder(&dir.join("a")).expect("again"), 0);
        assert!(LocalFs.uri(&dir).expect("uri").starts_with("file:///"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
