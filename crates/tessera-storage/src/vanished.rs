//! Telling a file that went away from other failures: a vacuum removes the
//! fragments a consolidation replaced, possibly between a reader's listing
//! of the array and its reading of them. A reader that meets such an
//! error opens the array again (its commit state has moved on) instead of
//! failing; [`REOPENS`] bounds how often, [`reopen_pause`] spaces the
//! tries (where the storage's reader waits at all:
//! [`StorageHints::pause_before_listing_again`](crate::StorageHints::pause_before_listing_again)),
//! and [`listing_again`] runs the loop.

use crate::error::StorageError;
use crate::hints::reopen_pause;
use crate::storage::Storage;
use std::io;
use std::time::Duration;

/// How many times a read opens the array again after a file it listed
/// was gone. Each new open sees the state a vacuum left, so more than one
/// is needed only when vacuums keep coming (a process vacuuming in a loop
/// removes the short-lived ignore files of the commits folder often).
pub const REOPENS: usize = 8;

/// Waits [`reopen_pause`] before try `attempt` of a reopen, on this
/// thread, where a thread can sleep (not inside WebAssembly in a
/// browser).
pub fn pause_before_reopen(attempt: usize) {
    wait(reopen_pause(attempt));
}

/// Sleeps `time` on this thread, where a thread can: not inside
/// WebAssembly in a browser (`wasm32-unknown-unknown`), where sleeping
/// would stop the page, and whose readers go on at once.
fn wait(time: Duration) {
    #[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
    if !time.is_zero() {
        std::thread::sleep(time);
    }
    #[cfg(all(target_family = "wasm", target_os = "unknown"))]
    let _ = time;
}

/// Runs `attempt` (given how many tries came before it) until it ends
/// other than with a missing file ([`is_missing_file`]), at most
/// [`REOPENS`] times more, pausing as the storage says
/// ([`StorageHints::pause_before_listing_again`](crate::StorageHints::pause_before_listing_again))
/// and having
/// `storage` list anew ([`ListableStorage::list_anew`](crate::ListableStorage::list_anew)) before each new try.
///
/// ```
/// use tessera_storage::{listing_again, LocalFs};
/// let mut tries = 0;
/// let r: Result<u32, std::io::Error> = listing_again(&LocalFs, |before| {
///     tries += 1;
///     match before {
///         0 => Err(std::io::Error::new(std::io::ErrorKind::NotFound, "vacuumed")),
///         _ => Ok(7),
///     }
/// });
/// assert_eq!((r.unwrap(), tries), (7, 2));
/// ```
pub fn listing_again<T, E>(
    storage: &dyn Storage,
    mut attempt: impl FnMut(usize) -> Result<T, E>,
) -> Result<T, E>
where
    E: std::error::Error + 'static,
{
    let mut before = 0;
    loop {
        match attempt(before) {
            Err(e) if before < REOPENS && is_missing_file(&e) => {
                before += 1;
                wait(storage.pause_before_listing_again(before));
                storage.list_anew();
            }
            done => return done,
        }
    }
}

/// Whether `error`, or an error it was caused by, is a storage (or I/O)
/// error saying a file is not there.
///
/// ```
/// use tessera_storage::{is_missing_file, StorageError, StorageErrorKind};
/// let gone = StorageError::new(StorageErrorKind::NotFound, "a/__fragments/f", "vacuumed");
/// assert!(is_missing_file(&gone));
/// assert!(is_missing_file(&std::io::Error::from(gone)));
/// assert!(!is_missing_file(&std::io::Error::other("disk on fire")));
/// ```
pub fn is_missing_file(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(error);
    while let Some(e) = at {
        if e.downcast_ref::<StorageError>()
            .is_some_and(StorageError::is_not_found)
            || e.downcast_ref::<io::Error>()
                .is_some_and(|io| io.kind() == io::ErrorKind::NotFound)
        {
            return true;
        }
        at = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrapped(io::Error);
    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "reading: {}", self.0)
        }
    }
    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_missing_file_is_found_below_its_context() {
        let gone = Wrapped(io::Error::new(io::ErrorKind::NotFound, "x"));
        assert!(is_missing_file(&gone));
        let other = Wrapped(io::Error::new(io::ErrorKind::PermissionDenied, "x"));
        assert!(!is_missing_file(&other));
    }
}
