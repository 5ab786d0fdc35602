//! Sparse fragments read side by side where a request costs a round trip.

use crate::tuning::Tuning;
use crate::QueryError;
use std::convert::Infallible;
use tessera_fragment::FragmentMetadata;
use tessera_storage::{side_by_side, side_by_side_on, Storage};

/// `each` of every one of `fragments`, in order, read from `storage`. On storage that
/// prefers batches, up to [`Tuning::fragments_in_flight`] fragments
/// at once ([`side_by_side`]: they wait on the network, not the CPU);
/// elsewhere one after another. The first error stops the fragments
/// not yet started. A read on a thread of rayon's pool (one decoded on the
/// pool, `push::decoded_on_pool`, or a consolidation's) reads them on
/// threads of their own too, and its thread runs the pool's jobs while it
/// waits ([`help_pool_until`]): the fragments' decoding, which they queue
/// on the pool, would otherwise wait behind the pool's threads waiting for
/// them. As jobs of the pool they would be as many at once as the pool
/// has threads, each holding one while it waits on the network.
///
/// [`Tuning::fragments_in_flight`]: crate::tuning::Tuning
pub(crate) fn per_fragment<T: Send>(
    storage: &dyn Storage,
    tuning: &Tuning,
    fragments: &[FragmentMetadata],
    each: impl Fn(usize, &FragmentMetadata) -> Result<T, QueryError> + Sync,
) -> Result<Vec<T>, QueryError> {
    let limit = fragments_at_once(storage, tuning);
    let fragments: Vec<(usize, &FragmentMetadata)> = fragments.iter().enumerate().collect();
    let each = |(fi, f)| each(fi, f);
    if storage.notes_needs() {
        // Every fragment tried, each failure its own: a push decoder's
        // step then notes what all of them lack in one attempt, instead
        // of what the few started before the first gap lack, a round each.
        let tried = here_side_by_side(fragments, limit, |x| Ok::<_, Infallible>(each(x)));
        return tried
            .into_iter()
            .map(|r| r.unwrap_or_else(|n| match n {}))
            .collect();
    }
    here_side_by_side(fragments, limit, each)
        .into_iter()
        .collect()
}

/// [`side_by_side`] from this thread: on threads of their own, the
/// waiting thread, if it is one of rayon's pool, running the pool's jobs.
fn here_side_by_side<I: Send, R: Send, E: Send>(
    items: Vec<I>,
    limit: usize,
    f: impl Fn(I) -> Result<R, E> + Sync,
) -> Vec<Result<R, E>> {
    match rayon::current_thread_index() {
        Some(_) => side_by_side_on(items, limit, f, |workers, work| {
            std::thread::scope(|s| {
                let spawn = |_| std::thread::Builder::new().spawn_scoped(s, work).ok();
                let threads: Vec<_> = (0..workers).filter_map(spawn).collect();
                match threads.is_empty() {
                    // No threads to be had (WebAssembly): this one reads
                    // them all.
                    true => work(),
                    false => help_pool_until(|| threads.iter().all(|t| t.is_finished())),
                }
            })
        }),
        None => side_by_side(items, limit, f),
    }
}

/// Runs jobs of rayon's pool on this thread (one of the pool's) until
/// `done`, napping briefly when none is queued.
fn help_pool_until(done: impl Fn() -> bool) {
    while !done() {
        if rayon::yield_now() != Some(rayon::Yield::Executed) {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
}

/// How many fragments [`per_fragment`] reads at once from `storage`.
fn fragments_at_once(storage: &dyn Storage, tuning: &Tuning) -> usize {
    match storage.prefers_batches() {
        true => tuning.fragments_in_flight.max(1),
        false => 1,
    }
}

/// The bytes each fragment read by [`per_fragment`] (of `fragments`)
/// fetches ahead of its decoding, at most: the storage's read-ahead
/// shared among the fragments read at once, so the read as a whole keeps
/// within it.
pub(crate) fn read_ahead_each(storage: &dyn Storage, tuning: &Tuning, fragments: usize) -> u64 {
    let at_once = fragments_at_once(storage, tuning).min(fragments.max(1));
    storage.read_ahead() / at_once as u64
}
