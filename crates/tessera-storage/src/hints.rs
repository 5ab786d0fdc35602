//! What requests cost on a storage.

use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

/// The wait before try `attempt` (from 1) of a reopen: 10 ms, doubling,
/// at most half a second (about 1.6 s over all [`REOPENS`](crate::REOPENS)), so that a
/// vacuum under way can finish its step.
pub fn reopen_pause(attempt: usize) -> Duration {
    let ms = 10u64 << attempt.saturating_sub(1).min(6);
    Duration::from_millis(ms.min(500))
}

/// What requests cost on a storage: hints readers plan their requests
/// with. They change how a read runs, never what it returns; the defaults
/// suit a local filesystem.
pub trait StorageHints {
    /// True where a request costs a round trip worth batching for: readers
    /// then gather what they need into [`crate::ReadableStorage::read_batch`] and
    /// [`crate::ReadableStorage::read_tails`] calls instead of reading from each thread.
    fn prefers_batches(&self) -> bool {
        false
    }

    /// Where readers batch ([`StorageHints::prefers_batches`]): the bytes a
    /// read keeps begun ahead of its decoding, in flight or landed, at
    /// most; enough to keep the storage's connections busy.
    fn read_ahead(&self) -> u64 {
        256 << 20
    }

    /// The bytes of later batches' tiles a read in batches begins fetching
    /// while it reads one, at most (0: none): the default is
    /// [`StorageHints::read_ahead`] where requests cost a round trip, else
    /// none. A storage whose caller fetches ahead itself says 0.
    fn batches_ahead(&self) -> u64 {
        match self.prefers_batches() {
            true => self.read_ahead(),
            false => 0,
        }
    }

    /// True for a storage that answers what it was given and notes what
    /// it lacks (a push decoder's): a reader then goes on past a part of
    /// a step that lacked something (a fragment, of many read side by
    /// side), so that one attempt notes all the step lacks, not only what
    /// came before its first gap.
    fn notes_needs(&self) -> bool {
        false
    }

    /// Whether every one of `ranges` can be read now. A storage that
    /// notes what it lacks ([`StorageHints::notes_needs`]) notes, all at
    /// once, those it was not given, and says no: a reader about to read
    /// them one part after another (a dense read's fragments) can stop
    /// there, its attempt void, instead of finding one gap an attempt.
    /// Others say yes: they read what is asked when it is asked.
    fn has_ranges(&self, ranges: &[(PathBuf, Range<u64>)]) -> bool {
        let _ = ranges;
        true
    }

    /// How long a reader waits before it lists again after a file it
    /// listed was found gone ([`listing_again`](crate::listing_again); `attempt` counts from
    /// one): by default [`reopen_pause`], so that a vacuum under way can
    /// finish its step. Storage whose reader must not wait says zero: a
    /// push decoder's, whose driver answers when it can (a step never
    /// sleeps).
    fn pause_before_listing_again(&self, attempt: usize) -> Duration {
        reopen_pause(attempt)
    }
}

/// Inside `impl StorageHints for Wrapper { ... }`: every hint answered by
/// the field `$inner` (a storage that wraps another changes none of its
/// costs). One list, so a hint added to the trait reaches every wrapper
/// instead of falling back to its default in one of them.
///
/// ```
/// use tessera_storage::{forward_storage_hints, LocalFs, StorageHints};
/// struct Counted {
///     inner: LocalFs,
/// }
/// impl StorageHints for Counted {
///     forward_storage_hints!(inner);
/// }
/// assert_eq!(Counted { inner: LocalFs }.read_ahead(), LocalFs.read_ahead());
/// ```
#[macro_export]
macro_rules! forward_storage_hints {
    ($inner:ident) => {
        fn prefers_batches(&self) -> bool {
            self.$inner.prefers_batches()
        }

        fn read_ahead(&self) -> u64 {
            self.$inner.read_ahead()
        }

        fn batches_ahead(&self) -> u64 {
            self.$inner.batches_ahead()
        }

        fn notes_needs(&self) -> bool {
            self.$inner.notes_needs()
        }

        fn has_ranges(&self, ranges: &[(::std::path::PathBuf, ::std::ops::Range<u64>)]) -> bool {
            self.$inner.has_ranges(ranges)
        }

        fn pause_before_listing_again(&self, attempt: usize) -> ::std::time::Duration {
            self.$inner.pause_before_listing_again(attempt)
        }
    };
}
