//! The fetches a read on the pool has in flight: the needs its steps asked
//! for and the ranges they began ahead, each need fetched once. A step
//! that asks for a range in flight (begun ahead and not landed) waits for
//! that fetch rather than asking again.

use futures::task::noop_waker_ref;
use futures::FutureExt;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use tessera_storage::{Answer, AnswersFuture, AsyncStorage, Need};

/// The storage that answers a read's needs, and its answers in flight.
pub(super) struct Fetches {
    storage: Arc<dyn AsyncStorage>,
    in_flight: Mutex<InFlight>,
}

#[derive(Default)]
struct InFlight {
    /// Every need of `fetches`.
    needs: HashSet<Need>,
    fetches: Vec<Fetch>,
}

/// Needs asked of the storage together, and their answers to come.
struct Fetch {
    needs: Vec<Need>,
    answers: AnswersFuture,
}

impl Fetches {
    pub(super) fn new(storage: Arc<dyn AsyncStorage>) -> Fetches {
        Fetches {
            storage,
            in_flight: Mutex::default(),
        }
    }

    fn in_flight(&self) -> MutexGuard<'_, InFlight> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Asks the storage for those of `needs` not in flight, together (a
    /// storage whose requests run as tasks starts them now).
    pub(super) fn begin(&self, needs: Vec<Need>) {
        let mut in_flight = self.in_flight();
        let new: Vec<Need> = (needs.into_iter())
            .filter(|n| in_flight.needs.insert(n.clone()))
            .collect();
        if !new.is_empty() {
            let answers = self.storage.answer(new.clone());
            in_flight.fetches.push(Fetch {
                needs: new,
                answers,
            });
        }
    }

    /// The answers to `needs` (begun: [`Fetches::begin`]), with every other
    /// answer in flight that has landed meanwhile; needs none of them
    /// await are left in flight.
    pub(super) async fn answers(&self, needs: &[Need]) -> Vec<Answer> {
        let wanted: HashSet<&Need> = needs.iter().collect();
        let (awaited, mut out) = {
            let mut in_flight = self.in_flight();
            let fetches = std::mem::take(&mut in_flight.fetches);
            let (awaited, rest): (Vec<Fetch>, Vec<Fetch>) =
                (fetches.into_iter()).partition(|f| f.needs.iter().any(|n| wanted.contains(n)));
            let mut landed = Vec::new();
            for mut f in rest {
                // Polled once, to take what has landed; no task is woken
                // by it, the fetch runs where the storage runs it.
                let mut cx = Context::from_waker(noop_waker_ref());
                match f.answers.poll_unpin(&mut cx) {
                    Poll::Ready(answers) => landed.extend(answers),
                    Poll::Pending => in_flight.fetches.push(f),
                }
            }
            for f in &awaited {
                for n in &f.needs {
                    in_flight.needs.remove(n);
                }
            }
            for (n, _) in &landed {
                in_flight.needs.remove(n);
            }
            (awaited, landed)
        };
        for f in awaited {
            out.extend(f.answers.await);
        }
        out
    }
}
