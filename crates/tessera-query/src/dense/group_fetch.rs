//! Fetching a dense fragment's groups of tiles ahead, where a request
//! costs a round trip (object stores): a thread taking a group to decode
//! begins the batch of the group after it, so that its next batch is in
//! flight while it decodes (threads need not wait for a fetch between
//! groups, and more than one request per thread is in flight).

use crate::decode::TileRuns;
use crate::QueryError;
use std::sync::Mutex;
use tessera_tile::storage::PendingBatch;

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
    /// batch of group `g + 1`: the next group a thread takes is most often
    /// the one after its last (a band's next group, or the next band).
    /// `begin` plans and begins a group's batch; a failure to plan the
    /// group ahead is left for its own turn to report.
    pub(super) fn take(
        &self,
        g: usize,
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
        if let Some(next @ Slot::Waiting) = slots.get_mut(g + 1) {
            if let Ok(b) = begin(g + 1) {
                *next = Slot::Begun(b);
            }
        }
        Ok(mine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use tessera_tile::storage::PendingBatch;

    fn runs() -> TileRuns {
        TileRuns::empty()
    }

    /// Taking a group begins it and the next; each group begins once;
    /// a group ahead that fails to plan is begun (and fails) on its turn.
    #[test]
    fn a_take_begins_the_next_group_once() {
        let fetch = GroupFetch::new(4);
        let begun = RefCell::new(Vec::new());
        let fail = RefCell::new(Some(2usize));
        let begin = |g: usize| {
            if *fail.borrow() == Some(g) {
                *fail.borrow_mut() = None;
                return Err(QueryError::Invalid(format!("plan {g}")));
            }
            begun.borrow_mut().push(g);
            Ok((runs(), PendingBatch::ready(Ok(vec![]))))
        };
        fetch.take(0, begin).unwrap();
        assert_eq!(*begun.borrow(), vec![0, 1]);
        fetch.take(1, begin).unwrap();
        // Group 2 failed to plan ahead: nothing new begun.
        assert_eq!(*begun.borrow(), vec![0, 1]);
        fetch.take(2, begin).unwrap();
        assert_eq!(*begun.borrow(), vec![0, 1, 2, 3]);
        fetch.take(3, begin).unwrap();
        assert_eq!(*begun.borrow(), vec![0, 1, 2, 3]);
        assert!(fetch.take(3, begin).is_err());
    }
}
