//! Files held in memory.

use crate::error::{inside, StorageError, StorageErrorKind, StorageResult};
use crate::hints::StorageHints;
use crate::listable::{DirEntry, ListableStorage};
use crate::readable::ReadableStorage;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Files held in memory: for tests, fuzzing, and arrays fetched whole.
///
/// Folders are implied by the paths of the files they hold.
///
/// ```
/// use std::path::Path;
/// use tessera_storage::{ListableStorage, Memory, ReadableStorage};
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
    pub fn load_dir(root: &Path) -> StorageResult<Memory> {
        let mut m = Memory::default();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let at = |e| StorageError::io(&dir, e);
            for e in std::fs::read_dir(&dir).map_err(at)? {
                let p = e.map_err(at)?.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let bytes = std::fs::read(&p).map_err(|e| StorageError::io(&p, e))?;
                    m.insert(p.clone(), bytes);
                }
            }
        }
        Ok(m)
    }

    /// The files held, in path order.
    pub fn files(&self) -> impl Iterator<Item = (&Path, &[u8])> {
        self.files.iter().map(|(p, b)| (p.as_path(), b.as_slice()))
    }

    fn get(&self, path: &Path) -> StorageResult<&[u8]> {
        self.files.get(path).map(Vec::as_slice).ok_or_else(|| {
            StorageError::new(
                StorageErrorKind::NotFound,
                path.to_string_lossy(),
                "no such file",
            )
        })
    }
}

impl ReadableStorage for Memory {
    fn read_range(&self, path: &Path, range: Range<u64>) -> StorageResult<Vec<u8>> {
        let b = self.get(path)?;
        inside(path, &range, b.len() as u64)?;
        Ok(b[range.start as usize..range.end as usize].to_vec())
    }

    fn size(&self, path: &Path) -> StorageResult<u64> {
        Ok(self.get(path)?.len() as u64)
    }

    fn read_all(&self, path: &Path) -> StorageResult<Vec<u8>> {
        self.get(path).map(<[u8]>::to_vec)
    }
}

impl ListableStorage for Memory {
    fn list(&self, path: &Path) -> StorageResult<Vec<DirEntry>> {
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
