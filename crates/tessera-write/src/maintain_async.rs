//! Consolidation of commits, fragment metadata and array metadata, and
//! the vacuums, over an asynchronous storage: the same functions as the
//! synchronous ones, awaited on the caller's runtime, never blocking a
//! thread. Each step is planned without I/O over the listings and files
//! it reads, fetched as it asks ([`planned`]); its writes and removals
//! are then carried out in the order the synchronous function makes them
//! (a conditional put or a removal after everything before it has
//! landed). Where the synchronous function reads what it wrote (a
//! check for fragments a vacuum elsewhere removed, made after the
//! consolidated commits file is written), that read is a second step,
//! planned once the first is carried out.
//!
//! A step that fails while planned carries out nothing. A consolidation
//! of fragments, which reads their cells, is
//! [`consolidate::consolidate_fragments`](crate::consolidate::consolidate_fragments)'s,
//! which waits for its requests; its vacuum is here.
//!
//! ```
//! # fn copy(a: &std::path::Path, b: &std::path::Path) { std::fs::create_dir_all(b).unwrap();
//! #   for e in std::fs::read_dir(a).unwrap().flatten() { let p = e.path();
//! #     if p.is_dir() { copy(&p, &b.join(e.file_name())) } else { std::fs::copy(&p, b.join(e.file_name())).unwrap(); } } }
//! use std::sync::Arc;
//! use tessera_storage::{answer, AnswersFuture, AsyncLocation, AsyncStorage, LocalFs, Need};
//! use tessera_write::maintain_async::{consolidate_commits, vacuum_commits};
//! let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiledb-0.36.1/deletes/array");
//! let dir = std::env::temp_dir().join(format!("tessera-doc-commits-async-{}", std::process::id()));
//! # let _ = std::fs::remove_dir_all(&dir);
//! copy(&src, &dir);
//! let at = AsyncLocation::read_and_written(Arc::new(Local), Arc::new(LocalFs), &dir);
//! let (con, removed) = block_on(async {
//!     let con = consolidate_commits(&at, None).await?;
//!     Ok::<_, tessera_write::WriteError>((con, vacuum_commits(&at, None).await?))
//! })
//! .unwrap();
//! assert_eq!(removed, 3); // two writes and a delete
//! let left: Vec<_> = std::fs::read_dir(dir.join("__commits")).unwrap().flatten()
//!     .map(|e| e.file_name().into_string().unwrap()).collect();
//! assert_eq!(left, [con.unwrap()]);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! // Local files answered as an asynchronous storage would (an object
//! // store's `tessera_object_store::ObjectStorage` is one).
//! struct Local;
//! impl AsyncStorage for Local {
//!     fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
//!         Box::pin(std::future::ready(answer(&LocalFs, needs)))
//!     }
//! }
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! #     let mut f = std::pin::pin!(f);
//! #     loop {
//! #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
//! #             return v;
//! #         }
//! #         std::thread::yield_now();
//! #     }
//! # }
//! ```

use crate::carry::{Carried, Carrier};
use crate::consolidate::VacuumLists;
use crate::WriteError;
use tessera_filters::EncryptionKey;
use tessera_storage::{planned, AsyncLocation, Location};

/// Plans `run` over `at`, then carries out its writes; what `run`
/// returned and what the writes removed.
async fn step<T>(
    at: &AsyncLocation,
    run: impl Fn(&Location) -> Result<T, WriteError>,
) -> Result<(T, Carried), WriteError> {
    let (got, ops) = planned(at.reader(), at.path(), run).await?;
    let got = got?;
    let carried = Carrier::new(at.writer()).carry_or_give_up(ops).await?;
    Ok((got, carried))
}

/// [`commits::consolidate_commits`](crate::commits::consolidate_commits),
/// awaited.
pub async fn consolidate_commits(
    at: &AsyncLocation,
    key: Option<EncryptionKey>,
) -> Result<Option<String>, WriteError> {
    let (written, _) = step(at, |a| crate::commits::write_consolidated_commits(a, key)).await?;
    let Some((name, fragments)) = written else {
        return Ok(None);
    };
    step(at, |a| crate::commits::ignore_gone_fragments(a, &fragments)).await?;
    Ok(Some(name))
}

/// [`commits::vacuum_commits`](crate::commits::vacuum_commits), awaited.
pub async fn vacuum_commits(
    at: &AsyncLocation,
    key: Option<EncryptionKey>,
) -> Result<usize, WriteError> {
    let (_, carried) = step(at, |a| crate::commits::vacuum_commits(a.clone(), key)).await?;
    Ok(carried.files_removed)
}

/// [`fragment_meta::consolidate_fragment_meta`](crate::fragment_meta::consolidate_fragment_meta),
/// awaited.
pub async fn consolidate_fragment_meta(
    at: &AsyncLocation,
    key: Option<EncryptionKey>,
) -> Result<Option<String>, WriteError> {
    let run = |a: &Location| crate::fragment_meta::consolidate_fragment_meta(a.clone(), key);
    Ok(step(at, run).await?.0)
}

/// [`fragment_meta::vacuum_fragment_meta`](crate::fragment_meta::vacuum_fragment_meta),
/// awaited.
pub async fn vacuum_fragment_meta(
    at: &AsyncLocation,
    key: Option<EncryptionKey>,
) -> Result<usize, WriteError> {
    let run = |a: &Location| crate::fragment_meta::vacuum_fragment_meta(a.clone(), key);
    Ok(step(at, run).await?.1.files_removed)
}

/// [`metadata::consolidate_metadata`](crate::metadata::consolidate_metadata),
/// awaited.
pub async fn consolidate_metadata(
    at: &AsyncLocation,
    key: Option<EncryptionKey>,
) -> Result<Option<String>, WriteError> {
    let run = |a: &Location| crate::metadata::consolidate_metadata(a.clone(), key);
    Ok(step(at, run).await?.0)
}

/// [`metadata::vacuum_metadata`](crate::metadata::vacuum_metadata),
/// awaited.
pub async fn vacuum_metadata(
    at: &AsyncLocation,
    key: Option<EncryptionKey>,
) -> Result<usize, WriteError> {
    let run = |a: &Location| crate::metadata::vacuum_metadata(a.clone(), key);
    Ok(step(at, run).await?.1.files_removed)
}

/// [`consolidate::vacuum_fragments_within`](crate::consolidate::vacuum_fragments_within),
/// awaited: removes the fragments consolidation replaced within `window`
/// (`None`: all), then the vacuum files; returns how many fragments it
/// removed.
pub async fn vacuum_fragments(
    at: &AsyncLocation,
    key: Option<EncryptionKey>,
    window: Option<(u64, u64)>,
) -> Result<usize, WriteError> {
    let first = |a: &Location| -> Result<Option<VacuumLists>, WriteError> {
        crate::open::check_key(a, key)?;
        let Some(vacuum) = crate::consolidate::vacuum_lists(a, window)? else {
            return Ok(None);
        };
        crate::consolidate::remove_fragment_folders(a, &vacuum.fragments, &mut |_| {})?;
        Ok(Some(vacuum))
    };
    let (vacuum, carried) = step(at, first).await?;
    let Some(vacuum) = vacuum else {
        return Ok(0);
    };
    // Reads what the first step left: the commits a consolidation
    // elsewhere named meanwhile, then the vacuum files go.
    step(at, |a| {
        crate::commits::ignore_gone_fragments(a, &vacuum.fragments)?;
        crate::consolidate::remove_vacuum_lists(a, &vacuum.lists, &mut |_| {})
    })
    .await?;
    Ok(carried.folders_removed)
}
