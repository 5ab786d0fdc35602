//! Sparse fragments read side by side where a request costs a round trip.

use crate::read::Query;
use crate::QueryError;
use tessera_fragment::FragmentMetadata;
use tessera_tile::storage::side_by_side;

impl Query<'_> {
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
        let limit = match self.storage.prefers_batches() {
            true => self.tuning.fragments_in_flight,
            false => 1,
        };
        let fragments: Vec<(usize, &FragmentMetadata)> =
            self.array.fragments.iter().enumerate().collect();
        side_by_side(fragments, limit, |(fi, f)| read(fi, f))
            .into_iter()
            .collect()
    }
}
