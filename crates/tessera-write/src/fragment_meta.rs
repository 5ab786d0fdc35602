//! Fragment metadata consolidation and its vacuum, as libtiledb's
//! fragment metadata consolidator does them
//! (`fragment_meta_consolidator.cc`): the footers of every visible
//! fragment in one file `__fragment_meta/__t1_t2_<uuid>_<v>.meta`, so that
//! opening the array reads one file instead of one per fragment. Its
//! payload (a generic tile): the fragment count (u32), then each
//! fragment's name (u64 size and bytes, the folder name from format 9)
//! and the offset of its footer in the payload (u64), then the footers.
//! Vacuuming removes every `.meta` file but the newest.

use crate::atomic::write_whole;
use crate::create::generic_tile_pipeline;
use crate::name::uuid;
use crate::WriteError;
use tessera_filters::{write_generic_tile, EncryptionKey};
use tessera_fragment::TimestampedName;
use tessera_storage::Location;

const FRAGMENT_META: &str = "__fragment_meta";

/// Writes the footers of the array's visible fragments into one
/// consolidated fragment metadata file; returns its name, `None` when
/// fewer than two fragments are visible. Refused for fragments older than
/// format 16, whose footers tessera does not write.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("tessera-doc-fragment-meta-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&dir);
/// # std::process::Command::new("cp").arg("-r").arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1/random_sparse/array")).arg(&dir).status().unwrap();
/// let name = tessera_write::fragment_meta::consolidate_fragment_meta(&dir, None).unwrap().unwrap();
/// assert!(dir.join("__fragment_meta").join(&name).is_file());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn consolidate_fragment_meta(
    array: impl Into<Location>,
    key: Option<EncryptionKey>,
) -> Result<Option<String>, WriteError> {
    let at = &array.into();
    let opened = crate::open::open_array(at, key)?;
    let array = at.path();
    let frags = &opened.fragments;
    let (Some(first), Some(last)) = (frags.first(), frags.last()) else {
        return Ok(None);
    };
    if frags.len() < 2 {
        return Ok(None);
    }
    if let Some(old) = frags
        .iter()
        .find(|f| !f.version().has(crate::gates::WRITTEN_FRAGMENTS))
    {
        return Err(WriteError::refused(
            array,
            format!(
                "fragment {} is at format {}: tessera writes footers from format {}",
                old.name,
                old.version(),
                crate::gates::WRITTEN_FRAGMENTS.version()
            ),
        ));
    }
    let footers: Vec<Vec<u8>> = frags.iter().map(|f| f.footer.encode(&f.schema)).collect();
    // The payload's head: the count, then each name and footer offset.
    let head: u64 = 4 + frags.iter().map(|f| 16 + f.name.len() as u64).sum::<u64>();
    let mut payload = (frags.len() as u32).to_le_bytes().to_vec();
    let mut offset = head;
    for (f, footer) in frags.iter().zip(&footers) {
        payload.extend((f.name.len() as u64).to_le_bytes());
        payload.extend(f.name.as_bytes());
        payload.extend(offset.to_le_bytes());
        offset += footer.len() as u64;
    }
    for footer in &footers {
        payload.extend(footer);
    }
    let version = opened.schema.version;
    let tile = write_generic_tile(&payload, &generic_tile_pipeline(), version, key)?;
    let (t1, t2) = (first.timestamp_range().0, last.timestamp_range().1);
    let name = format!("__{t1}_{t2}_{}_{}.meta", uuid()?, version.number());
    let dir = at.join(FRAGMENT_META);
    crate::folder::create(&dir)?;
    write_whole(&dir, &name, &tile)?;
    Ok(Some(name))
}

/// Removes every consolidated fragment metadata file but the newest (those
/// ending at the latest timestamp, as libtiledb keeps them); returns how
/// many it removed. `key`, when given, must open the array.
pub fn vacuum_fragment_meta(
    array: impl Into<Location>,
    key: Option<EncryptionKey>,
) -> Result<usize, WriteError> {
    let array = &array.into();
    crate::open::check_key(array, key)?;
    let dir = array.join(FRAGMENT_META);
    let metas: Vec<(u64, String)> = crate::folder::entry_names(&dir)?
        .into_iter()
        .filter(|n| n.ends_with(".meta"))
        .filter_map(|n| {
            let t = TimestampedName::parse(n.trim_end_matches(".meta"))?;
            Some((t.t2, n))
        })
        .collect();
    let latest = metas.iter().map(|(t2, _)| *t2).max().unwrap_or(0);
    let mut removed = 0;
    for (_, name) in metas.iter().filter(|(t2, _)| *t2 != latest) {
        removed += usize::from(crate::folder::remove_if_present(&dir.join(name))?);
    }
    Ok(removed)
}
