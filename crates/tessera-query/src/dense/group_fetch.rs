//! Fetching a dense fragment's groups of tiles ahead, where a request
//! costs a round trip (object stores): a thread taking a group to decode
//! begins the batches of the groups after it, up to its share of the
//! read-ahead, so that they are in flight while it decodes (threads need
//! not wait for a fetch between groups, and the network is kept busy).

use crate::decode::TileRuns;
use crate::QueryError;
use std::sync::Mutex;
use tessera_storage::PendingBatch;

/// A group's batch: its read plan, and the reads begun.
pub(super) type Begun<'s> = (TileRuns, PendingBatch<'s>);

/// Each group's batch, begun at most once, taken by the thread that
/// decodes the group.
pub(super) struct GroupFetch<'s> {
    slots: Mutex<Vec<Slot<'s>>>,
}

enum Slot<'s> {
    Waiting,
    Begun(Begun<'s>),
    Taken,
}

impl<'s> GroupFetch<'s> {
    /// `groups` groups, numbered in the order a thread places them (a
    /// band's groups after one another, bands in order).
    pub(super) fn new(groups: usize) -> Self {
        GroupFetch {
            slots: Mutex::new((0..groups).map(|_| Slot::Waiting).collect()),
        }
    }

    /// The batch of group `g`, begun now if it was not, after beginning the
    /// batches of the groups after it, in order, while those begun ahead
    /// of it hold less than `ahead` bytes: the next groups a thread takes
    /// are most often those after its last (a band's next groups, or the
    /// next band's), and a group another thread took ends the look ahead.
    /// `begin` plans and begins a group's batch; a failure to plan a group
    /// ahead is left for its own turn to report.
    pub(super) fn take(
        &self,
        g: usize,
        ahead: u64,
        begin: impl Fn(usize) -> Result<Begun<'s>, QueryError>,
    ) -> Result<Begun<'s>, QueryError> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let mine = match std::mem::replace(&mut slots[g], Slot::Taken) {
            Slot::Begun(b) => b,
            Slot::Waiting => begin(g)?,
            Slot::Taken => {
                return Err(QueryError::Invalid(format!(
                    "group {g} of a dense read taken twice"
                )))
            }
        };
        let mut held = 0u64;
        for (j, slot) in slots.iter_mut().enumerate().skip(g + 1) {
            if held >= ahead {
                break;
            }
            match slot {
                Slot::Taken => break,
                Slot::Begun((runs, _)) => held = held.saturating_add(runs.bytes()),
                Slot::Waiting => match begin(j) {
                    Ok(b) => {
                        held = held.saturating_add(b.0.bytes());
                        *slot = Slot::Begun(b);
                    }
                    Err(_) => break,
                },
            }
        }
        Ok(mine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use tessera_storage::PendingBatch;

    fn runs() -> TileRuns {
        TileRuns::empty()
    }

    /// Taking a group begins it and those after it within the read-ahead;
    /// each group begins once; a group ahead that fails to plan ends the
    /// look ahead and is begun (and fails) on its turn; a taken group
    /// ends it too.
    #[test]
    fn a_take_begins_the_groups_ahead_once() {
        let fetch = GroupFetch::new(6);
        let begun = RefCell::new(Vec::new());
        let fail = RefCell::new(Some(3usize));
        let begin = |g: usize| {
            if *fail.borrow() == Some(g) {
                *fail.borrow_mut() = None;
                return Err(QueryError::Invalid(format!("plan {g}")));
            }
            begun.borrow_mut().push(g);
            Ok((runs(), PendingBatch::ready(Ok(vec![]))))
        };
        // No read-ahead: the group alone.
        fetch.take(0, 0, begin).unwrap();
        assert_eq!(*begun.borrow(), vec![0]);
        // Empty plans hold no bytes: every group ahead, up to the failure.
        fetch.take(1, u64::MAX, begin).unwrap();
        assert_eq!(*begun.borrow(), vec![0, 1, 2]);
        fetch.take(2, 0, begin).unwrap();
        assert_eq!(*begun.borrow(), vec![0, 1, 2]);
        // Group 5 taken by another thread: the look ahead stops before it;
        // group 3, which failed ahead, is begun on its turn.
        fetch.take(5, 0, begin).unwrap();
        fetch.take(3, u64::MAX, begin).unwrap();
        assert_eq!(*begun.borrow(), vec![0, 1, 2, 5, 3, 4]);
        fetch.take(4, u64::MAX, begin).unwrap();
        assert_eq!(*begun.borrow(), vec![0, 1, 2, 5, 3, 4]);
        assert!(fetch.take(4, 0, begin).is_err());
    }
}
