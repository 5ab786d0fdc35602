//! Sparse fragments read side by side where a request costs a round trip.

use crate::read::Query;
use crate::QueryError;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use tessera_fragment::FragmentMetadata;

impl Query<'_> {
    /// `read` of every fragment, in fragment order. On storage that
    /// prefers batches, up to [`Tuning::fragments_in_flight`] fragments
    /// at once, each on a thread of this call's own (they wait on the
    /// network, not the CPU; decoding stays on rayon); elsewhere one after
    /// another. The first error stops the fragments not yet started.
    ///
    /// [`Tuning::fragments_in_flight`]: crate::tuning::Tuning
    pub(crate) fn per_fragment<T: Send>(
        &self,
        read: impl Fn(usize, &FragmentMetadata) -> Result<T, QueryError> + Sync,
    ) -> Result<Vec<T>, QueryError> {
        let fragments = &self.array.fragments;
        let threads = match self.storage.prefers_batches() {
            true => self
                .tuning
                .fragments_in_flight
                .clamp(1, fragments.len().max(1)),
            false => 1,
        };
        if threads == 1 {
            return (fragments.iter().enumerate())
                .map(|(fi, f)| read(fi, f))
                .collect();
        }
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let done: Vec<Mutex<Option<Result<T, QueryError>>>> =
            fragments.iter().map(|_| Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let fi = next.fetch_add(1, Ordering::Relaxed);
                    if fi >= fragments.len() || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let got = read(fi, &fragments[fi]);
                    failed.fetch_or(got.is_err(), Ordering::Relaxed);
                    *done[fi].lock().unwrap_or_else(|e| e.into_inner()) = Some(got);
                });
            }
        });
        // Fragments start in order, so one left unstarted follows a failure.
        let mut out = Vec::with_capacity(done.len());
        for slot in done {
            match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(got) => out.push(got?),
                None => break,
            }
        }
        Ok(out)
    }
}
