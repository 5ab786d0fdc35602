//! Work that waits on storage (a round trip a file, where requests cost
//! one), run side by side on threads of the call's own: no pool shared
//! with other callers, and decoding stays on rayon.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// `f` of each item, up to `limit` at once; results in the items' order.
/// Once one fails, items not yet started are not started: the results end
/// before the first of them (so an error always comes first in order).
///
/// ```
/// use tessera_storage::side_by_side;
/// let sizes = side_by_side(vec!["a", "bb", "ccc"], 2, |s| Ok::<_, ()>(s.len()));
/// assert_eq!(sizes, vec![Ok(1), Ok(2), Ok(3)]);
/// ```
pub fn side_by_side<T: Send, R: Send, E: Send>(
    items: Vec<T>,
    limit: usize,
    f: impl Fn(T) -> Result<R, E> + Sync,
) -> Vec<Result<R, E>> {
    side_by_side_on(items, limit, f, |workers, work| {
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(work);
            }
        })
    })
}

/// [`side_by_side`] with its workers run by `run`, which runs `work` that
/// many times at once and returns when every one has: a thread pool's
/// scope, for a caller on one of the pool's threads whose items queue
/// work on the same pool (threads of their own would wait for it while
/// the caller holds a thread of the pool).
///
/// ```
/// use tessera_storage::side_by_side_on;
/// let run = |workers: usize, work: &(dyn Fn() + Sync)| {
///     std::thread::scope(|s| (0..workers).for_each(|_| drop(s.spawn(work))))
/// };
/// let sizes = side_by_side_on(vec!["a", "bb"], 2, |s| Ok::<_, ()>(s.len()), run);
/// assert_eq!(sizes, vec![Ok(1), Ok(2)]);
/// ```
pub fn side_by_side_on<T: Send, R: Send, E: Send>(
    items: Vec<T>,
    limit: usize,
    f: impl Fn(T) -> Result<R, E> + Sync,
    run: impl FnOnce(usize, &(dyn Fn() + Sync)),
) -> Vec<Result<R, E>> {
    let n = items.len();
    let workers = limit.clamp(1, n.max(1));
    if workers == 1 {
        let mut out = Vec::with_capacity(n);
        for item in items {
            let got = f(item);
            let failed = got.is_err();
            out.push(got);
            if failed {
                break;
            }
        }
        return out;
    }
    let queue = Mutex::new(items.into_iter().enumerate().collect::<VecDeque<_>>());
    let failed = AtomicBool::new(false);
    let done: Vec<Mutex<Option<Result<R, E>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let work = || loop {
        if failed.load(Ordering::Relaxed) {
            break;
        }
        // Taken in order: an item left unstarted follows a failure.
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
        let Some((i, item)) = next else { break };
        let got = f(item);
        failed.fetch_or(got.is_err(), Ordering::Relaxed);
        *done[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(got);
    };
    run(workers, &work);
    done.into_iter()
        .map_while(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::side_by_side;

    #[test]
    fn results_keep_the_items_order() {
        let got = side_by_side((0..100).collect(), 8, |i: u32| Ok::<_, ()>(i * 2));
        assert_eq!(got, (0..100).map(|i| Ok(i * 2)).collect::<Vec<_>>());
    }

    #[test]
    fn a_failure_comes_before_any_item_left_out() {
        for limit in [1, 4] {
            let got = side_by_side((0..50).collect(), limit, |i: u32| match i {
                10 => Err(i),
                _ => Ok(i),
            });
            let first_err = got.iter().position(Result::is_err);
            assert_eq!(first_err, Some(10), "limit {limit}");
            assert!(got[..10].iter().all(Result::is_ok));
        }
    }
}
