//! Making written fragments visible. libtiledb never lists `__fragments/`:
//! a fragment exists for readers only once its commit is in `__commits/`.
//! One fragment gets its own `<name>.wrt`; several fragments of one write
//! (a sparse write cut by its memory budget) get one consolidated commits
//! file `__t1_t2_<uuid>_<version>.con` naming each `.wrt`, as libtiledb's
//! global-order writer commits the fragments it cuts: written under a
//! temporary name and renamed, it appears whole, so the write's fragments
//! become visible together or not at all.

use crate::atomic::write_whole;
use crate::name::uuid;
use crate::WriteError;
use tessera_storage::Location;

/// A new fragment's folder: invisible to readers until its commit exists,
/// and removed if the write fails before that.
pub(crate) struct FragmentFolder {
    pub name: String,
    pub dir: Location,
    committed: bool,
}

impl FragmentFolder {
    pub fn create(
        array: &Location,
        (t1, t2): (u64, u64),
        version: u32,
    ) -> Result<FragmentFolder, WriteError> {
        let name = format!("__{t1}_{t2}_{}_{version}", uuid()?);
        let dir = array.join("__fragments").join(&name);
        crate::folder::create(&dir)?;
        Ok(FragmentFolder {
            name,
            dir,
            committed: false,
        })
    }

    /// Writes the fragment metadata file, the last file of the folder.
    pub fn write_metadata(&self, meta: &[u8]) -> Result<(), WriteError> {
        write_whole(&self.dir, "__fragment_metadata.tdb", meta)
    }
}

impl Drop for FragmentFolder {
    fn drop(&mut self) {
        if !self.committed {
            let _ = self.dir.storage().delete_folder(self.dir.path());
        }
    }
}

/// Commits `parts` (fragments written at `timestamp`, at format `version`)
/// into the array at `array`; returns their names.
pub(crate) fn commit(
    array: &Location,
    mut parts: Vec<FragmentFolder>,
    (timestamp, version): (u64, u32),
) -> Result<Vec<String>, WriteError> {
    if parts.is_empty() {
        return Ok(Vec::new());
    }
    let commits = array.join("__commits");
    crate::folder::create(&commits)?;
    if let [one] = &parts[..] {
        write_whole(&commits, &format!("{}.wrt", one.name), b"")?;
    } else {
        let listed: String = parts
            .iter()
            .map(|p| format!("__commits/{}.wrt\n", p.name))
            .collect();
        let name = format!("__{timestamp}_{timestamp}_{}_{version}.con", uuid()?);
        write_whole(&commits, &name, listed.as_bytes())?;
    }
    Ok(parts
        .iter_mut()
        .map(|p| {
            p.committed = true;
            std::mem::take(&mut p.name)
        })
        .collect())
}
