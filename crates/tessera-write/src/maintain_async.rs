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
//! of fragments ([`consolidate_fragments`]) is planned the same way; the
//! cells it reads come from an [`AsyncCellSource`], and the fragment it
//! writes is uploaded as its files complete, as [`AsyncFragmentWriter`](crate::AsyncFragmentWriter)
//! uploads a write.
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

use crate::atomic::write_whole;
use crate::carry::{Carried, Carrier};
use crate::consolidate::{ConsolidateOptions, Consolidation, VacuumLists};
use crate::consolidate_plan::{cell_count, plan, ReadShare, Reading, COMMITS};
use crate::fragment::{on_pool, BoxWriter, OnStore, SortedFragmentWriter};
use crate::purge::{write_kept, Deleted, Sweep, Wanted};
use crate::WriteError;
use std::sync::Arc;
use tessera_cells::{AsyncCellBatches, AsyncCellSource, Column, SourceError};
use tessera_filters::EncryptionKey;
use tessera_fragment::OpenArray;
use tessera_storage::{planned, planned_for_reading, AsyncLocation, Location, Need, REOPENS};

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

/// [`consolidate::consolidate_fragments`](crate::consolidate::consolidate_fragments),
/// awaited: the consolidation is planned over the listings and metadata
/// fetched as it asks, the cells come from `source` (the query crate's
/// `tessera_query::QuerySource`, whose steps decode on rayon's pool), and
/// the new fragment is written on rayon's pool, its files uploaded as
/// they complete; its commit, then its vacuum file, are put once
/// everything before them has landed. In the memory
/// [`ConsolidateOptions::budget`] gives, as the synchronous one.
///
/// Fragments listed and then removed by another process's vacuum before
/// they were read have the consolidation start again with the array
/// listed anew, up to [`REOPENS`] times (what it had written stays
/// uncommitted, seen by no reader).
pub async fn consolidate_fragments(
    at: &AsyncLocation,
    options: &ConsolidateOptions,
    source: &dyn AsyncCellSource,
) -> Result<Option<Consolidation>, WriteError> {
    let mut before = 0;
    loop {
        match consolidate_planned(at, options, source).await {
            Err(e) if before < REOPENS && e.is_missing_file() => {
                before += 1;
                // The store forgets the listings it holds.
                let relist = Need::Relist(at.path().join("__fragments"));
                at.reader().answer(vec![relist]).await;
            }
            done => return done,
        }
    }
}

/// One attempt of [`consolidate_fragments`].
async fn consolidate_planned(
    at: &AsyncLocation,
    options: &ConsolidateOptions,
    source: &dyn AsyncCellSource,
) -> Result<Option<Consolidation>, WriteError> {
    // The array's whole tree listed once: a store that keeps listings
    // (an object store's) answers the planning's listings from it.
    at.reader().answer(vec![Need::List(at.path().into())]).await;
    // The read after the plan takes the metadata the plan fetched.
    let planning = planned_for_reading(at.shared_reader(), at.path(), |a| plan(a, options));
    let (plan, _, storage) = planning.await?;
    let Some(plan) = plan? else {
        return Ok(None);
    };
    let read_failed = WriteError::read(at.path());
    let global_order = |array: &Arc<OpenArray>, share| {
        source.global_order(storage.clone(), array.clone(), plan.sparse_cells(share))
    };
    let folder = at.path().to_path_buf();
    let sorted = || {
        OnStore::new(at.writer(), folder.clone(), |a| {
            SortedFragmentWriter::new(plan.writer(a)?)
        })
    };
    let mut cells = 0;
    let names = match &plan.reading {
        Reading::Dense { bounds, band_cells } => {
            let mut bands = Vec::new();
            let mut banded = OnStore::new(at.writer(), folder.clone(), |a| {
                let banded = BoxWriter::new(plan.writer(a)?, bounds, *band_cells)?;
                bands = banded.bands().to_vec();
                Ok(banded)
            })?;
            for band in bands {
                let read = source.dense_box(storage.clone(), plan.opened.clone(), band);
                let columns = read.await.map_err(read_failed)?;
                cells += cell_count(&columns);
                banded.step(move |b| b.write_band(columns)).await?;
            }
            banded.finish(BoxWriter::finish).await?
        }
        Reading::Purge { with_deletes } => {
            let (all, kept) = (
                global_order(&plan.opened, ReadShare::Swept),
                global_order(with_deletes, ReadShare::Swept),
            );
            let dims = plan.opened.schema.dimensions.len();
            let deleted = Arc::new(deleted_versions(all, kept, dims, read_failed).await?);
            let mut sorted = sorted()?;
            let mut batches = global_order(with_deletes, ReadShare::Written);
            while let Some(batch) = next(&mut batches).await {
                let batch = batch.map_err(read_failed)?;
                let (schema, deleted) = (plan.opened.schema.clone(), deleted.clone());
                let written = sorted.step(move |s| write_kept(s, &schema, &batch, &deleted));
                cells += written.await?;
            }
            sorted.finish(SortedFragmentWriter::finish).await?
        }
        Reading::Sparse => {
            let mut sorted = sorted()?;
            let mut batches = global_order(&plan.opened, ReadShare::Written);
            while let Some(batch) = next(&mut batches).await {
                let batch: Vec<Column> = batch.map_err(read_failed)?;
                cells += cell_count(&batch);
                sorted.step(move |s| s.write_owned(batch)).await?;
            }
            sorted.finish(SortedFragmentWriter::finish).await?
        }
    };
    let (vac, listed) = plan.vacuum_list(&names)?;
    step(at, |a| {
        write_whole(&a.join(COMMITS), &vac, listed.as_bytes())
    })
    .await?;
    Ok(Some(plan.done(names, cells)))
}

/// The deleted versions of a purge ([`Sweep`]), its two reads awaited and
/// the sweep run on rayon's pool.
async fn deleted_versions(
    mut all: AsyncCellBatches,
    mut kept: AsyncCellBatches,
    dims: usize,
    read_failed: impl Fn(SourceError) -> WriteError,
) -> Result<Deleted, WriteError> {
    let mut sweep = Sweep::new(dims);
    loop {
        let (swept, wanted) = on_pool(move || {
            let wanted = sweep.run();
            (sweep, wanted)
        })
        .await?;
        sweep = swept;
        match wanted {
            Wanted::All => sweep.all(next(&mut all).await.transpose().map_err(&read_failed)?),
            Wanted::Kept => sweep.kept(next(&mut kept).await.transpose().map_err(&read_failed)?),
            Wanted::Done => return Ok(sweep.deleted()),
        }
    }
}

/// The next batch of `batches`.
async fn next(batches: &mut AsyncCellBatches) -> Option<Result<Vec<Column>, SourceError>> {
    std::future::poll_fn(|cx| batches.as_mut().poll_next(cx)).await
}
