//! Deleting cells, as libtiledb deletes them: a delete commit
//! `__commits/__t_t_<uuid>_<version>.del` holding, in a generic tile, the
//! negation of the condition given (the stored tree selects the cells to
//! keep). Readers drop the cells of fragments up to the delete's timestamp
//! that the condition matches; consolidation with purging removes them.

use crate::atomic::write_whole;
use crate::create::generic_tile_pipeline;
use crate::name::{now_ms, uuid};
use crate::WriteError;
use tessera_cells::Expr;
use tessera_filters::{write_generic_tile, EncryptionKey};
use tessera_storage::Location;

/// The payload of a delete commit for `condition`: its negation, nested
/// groups of one operator merged as libtiledb merges them, serialized as
/// libtiledb serializes it.
pub fn delete_commit_payload(condition: &Expr) -> Vec<u8> {
    condition.to_stored().negated().flattened().encode()
}

/// Deletes the cells of the array at `array` that `condition` matches, as
/// of `timestamp` (milliseconds; default now); returns the commit's name.
///
/// ```
/// use tessera_cells::Expr;
/// use tessera_fragment::OpenArray;
/// use tessera_storage::LocalFs;
/// let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let dir = std::env::temp_dir().join(format!("tessera-doc-delete-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&dir);
/// # fn copy(a: &std::path::Path, b: &std::path::Path) { std::fs::create_dir_all(b).unwrap();
/// #   for e in std::fs::read_dir(a).unwrap().flatten() { let p = e.path();
/// #     if p.is_dir() { copy(&p, &b.join(e.file_name())) } else { std::fs::copy(&p, b.join(e.file_name())).unwrap(); } } }
/// copy(&src, &dir);
/// let array = OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
/// let cond = Expr::parse("i < 0", &array.schema).unwrap();
/// let commit = tessera_write::delete::delete_cells(&dir, &cond, None, None).unwrap();
/// assert!(commit.ends_with(".del"));
/// // Readers apply the stored condition to every cell written before it.
/// let array = OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
/// assert_eq!(array.delete_conditions.len(), 1);
/// assert_eq!(array.delete_conditions[0].name, commit);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn delete_cells(
    array: impl Into<Location>,
    condition: &Expr,
    key: Option<EncryptionKey>,
    timestamp: Option<u64>,
) -> Result<String, WriteError> {
    let array = &array.into();
    let opened = crate::open::open_array(array, key)?;
    if opened.schema.array_type != tessera_tile::ArrayType::Sparse {
        // As libtiledb: "Only supported for sparse arrays".
        return Err(WriteError::Refused {
            path: array.path().into(),
            message: "deletes are supported for sparse arrays only, as in libtiledb".into(),
        });
    }
    let version = opened.schema.version;
    let tile = write_generic_tile(
        &delete_commit_payload(condition),
        &generic_tile_pipeline(),
        version,
        key,
    )?;
    let t = timestamp.unwrap_or_else(now_ms);
    let name = format!("__{t}_{t}_{}_{}.del", uuid()?, version.number());
    let commits = array.join("__commits");
    crate::folder::create(&commits)?;
    write_whole(&commits, &name, &tile)?;
    Ok(name)
}

/// Deletes the fragments of the array at `array` written within
/// `[t1, t2]` (both timestamps of a fragment's name inside it), as
/// libtiledb's `delete_fragments`: each fragment's commit is removed
/// before its folder, so a reader never sees a fragment half gone.
/// Returns the names deleted, in name order. `key`, when given, must open
/// the array.
///
/// ```
/// # fn copy(a: &std::path::Path, b: &std::path::Path) { std::fs::create_dir_all(b).unwrap();
/// #   for e in std::fs::read_dir(a).unwrap().flatten() { let p = e.path();
/// #     if p.is_dir() { copy(&p, &b.join(e.file_name())) } else { std::fs::copy(&p, b.join(e.file_name())).unwrap(); } } }
/// use tessera_fragment::OpenArray;
/// use tessera_storage::LocalFs;
/// let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/sparse_2d/array");
/// let dir = std::env::temp_dir().join(format!("tessera-doc-delete-fragments-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&dir);
/// copy(&src, &dir);
/// let deleted = tessera_write::delete::delete_fragments(&dir, 0, u64::MAX, None).unwrap();
/// assert!(!deleted.is_empty());
/// let array = OpenArray::open(&LocalFs, &dir, 0, u64::MAX, None).unwrap();
/// assert!(array.fragments.is_empty());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn delete_fragments(
    array: impl Into<Location>,
    t1: u64,
    t2: u64,
    key: Option<EncryptionKey>,
) -> Result<Vec<String>, WriteError> {
    let array = &array.into();
    crate::open::check_key(array, key)?;
    let mut names: Vec<String> = crate::folder::entry_names(&array.join("__fragments"))?
        .into_iter()
        .filter(|n| {
            tessera_fragment::TimestampedName::parse(n).is_some_and(|t| t1 <= t.t1 && t.t2 <= t2)
        })
        .collect();
    names.sort();
    crate::consolidate::remove_fragments(array, &names, &mut |_| {})?;
    Ok(names)
}
