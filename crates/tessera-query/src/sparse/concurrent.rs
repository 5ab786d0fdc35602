//! Sparse fragments read side by side where a request costs a round trip.

use crate::read::Read;
use crate::QueryError;
use tessera_fragment::FragmentMetadata;
use tessera_tile::storage::side_by_side;

impl Read<'_> {
    /// `read` of every fragment, in fragment order. On storage that
    /// prefers batches, up to [`Tuning::fragments_in_flight`] fragments
    /// at once ([`side_by_side`]: they wait on the network, not the CPU);
    /// elsewhere one after another. The first error stops the fragments
    /// not yet started.
    ///
    /// [`Tuning::fragments_in_flight`]: crate::tuning::Tuning
    pub(crate) fn per_fragment<T: Send>(
        &self,
        read: impl Fn(usize, &FragmentMetadata) -> Result<T, QueryError> + Sync,
    ) -> Result<Vec<T>, QueryError> {
        let limit = self.fragments_at_once();
        let fragments: Vec<(usize, &FragmentMetadata)> =
            self.array.fragments.iter().enumerate().collect();
        side_by_side(fragments, limit, |(fi, f)| read(fi, f))
            .into_iter()
            .collect()
    }

    /// How many fragments [`Read::per_fragment`] reads at once.
    fn fragments_at_once(&self) -> usize {
        match self.storage.prefers_batches() {
            true => self.tuning.fragments_in_flight.max(1),
            false => 1,
        }
    }

    /// The bytes each fragment read by [`Read::per_fragment`] fetches
    /// ahead of its decoding, at most: the storage's read-ahead shared
    /// among the fragments read at once, so the read as a whole keeps
    /// within it.
    pub(crate) fn read_ahead_each(&self) -> u64 {
        let at_once = self
            .fragments_at_once()
            .min(self.array.fragments.len().max(1));
        self.storage.read_ahead() / at_once as u64
    }
}
