//! Turning a batch of wanted byte ranges into the requests that fetch them:
//! ranges of one file that overlap or lie within [`COALESCE_GAP`] of each
//! other become one request (up to [`MAX_REQUEST`] bytes), so no byte is
//! fetched twice and a request's round trip is spread over many ranges.

use std::ops::Range;

/// Neighbouring ranges closer than this are fetched as one request:
/// `object_store`'s own default for coalescing ranges (1 MiB). At tens of
/// milliseconds and a fraction of a cent per thousand requests, a MiB of
/// unwanted bytes (a few milliseconds at a few hundred MB/s) costs less
/// than another request; a read of a small part of a sparse array skips
/// gaps of a few tiles between the ones it needs.
pub const COALESCE_GAP: u64 = object_store::OBJECT_STORE_COALESCE_DEFAULT;

/// A merged request grows no larger than this (a single wanted range
/// larger than it is fetched whole): libtiledb's own cap on a batched read
/// (`vfs.max_batch_size`, 100 MiB). On a store where each request costs a
/// round trip and the server's work per request grows with the object
/// (moto's does, measured), fewer, larger requests win;
/// a read's waves still keep several requests in flight.
pub const MAX_REQUEST: u64 = 100 << 20;

/// One request of a plan: a file (by its index among the distinct files
/// asked for) and the bytes fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    /// Index into the plan's files.
    pub file: usize,
    /// The byte range fetched.
    pub range: Range<u64>,
}

/// The requests for a batch, and where each wanted range lies in them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan<K> {
    /// The distinct files, in first-asked order.
    pub files: Vec<K>,
    /// The requests to issue.
    pub fetches: Vec<Fetch>,
    /// Per wanted range, in the order asked: the fetch holding it and the
    /// offset of its first byte in that fetch.
    pub served_by: Vec<(usize, u64)>,
}

impl<K: Clone + Eq + std::hash::Hash> Plan<K> {
    /// Plans `wanted` (file, range) with the default gap and cap.
    pub fn new(wanted: &[(K, Range<u64>)]) -> Plan<K> {
        Self::with_limits(wanted, COALESCE_GAP, MAX_REQUEST)
    }

    /// Plans `wanted`, merging ranges of a file at most `gap` bytes apart
    /// while the request stays within `max` bytes.
    pub fn with_limits(wanted: &[(K, Range<u64>)], gap: u64, max: u64) -> Plan<K> {
        let mut files: Vec<K> = Vec::new();
        let mut index = std::collections::HashMap::new();
        let mut order: Vec<(usize, u64, u64, usize)> = wanted
            .iter()
            .enumerate()
            .map(|(i, (k, r))| {
                let f = *index.entry(k.clone()).or_insert_with(|| {
                    files.push(k.clone());
                    files.len() - 1
                });
                (f, r.start, r.end.max(r.start), i)
            })
            .collect();
        order.sort_unstable();
        let mut fetches: Vec<Fetch> = Vec::new();
        let mut served_by = vec![(0, 0); wanted.len()];
        for (file, start, end, i) in order {
            let joins = fetches.last().is_some_and(|f| {
                f.file == file
                    && start <= f.range.end.saturating_add(gap)
                    && end.max(f.range.end) - f.range.start <= max
            });
            if !joins {
                fetches.push(Fetch {
                    file,
                    range: start..end,
                });
            }
            let last = fetches.len() - 1;
            let f = &mut fetches[last];
            f.range.end = f.range.end.max(end);
            served_by[i] = (last, start - f.range.start);
        }
        Plan {
            files,
            fetches,
            served_by,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_merge_and_overlaps_are_fetched_once() {
        let wanted = [
            ("b", 100..200),
            ("a", 0..10),
            ("a", 5..20),          // overlaps the first: same request
            ("a", 1000..1010),     // within the gap
            ("a", 10_000..10_010), // too far
            ("b", 50..60),
        ];
        let p = Plan::with_limits(&wanted, 1000, 1 << 20);
        assert_eq!(p.files, ["b", "a"]);
        let got: Vec<(usize, Range<u64>)> = p
            .fetches
            .iter()
            .map(|f| (f.file, f.range.clone()))
            .collect();
        assert_eq!(got, [(0, 50..200), (1, 0..1010), (1, 10_000..10_010)]);
        assert_eq!(
            p.served_by,
            [(0, 50), (1, 0), (1, 5), (1, 1000), (2, 0), (0, 0)]
        );
    }

    #[test]
    fn requests_stay_within_the_cap() {
        let wanted: Vec<(&str, Range<u64>)> =
            (0..10).map(|i| ("f", i * 100..i * 100 + 100)).collect();
        let p = Plan::with_limits(&wanted, 0, 300);
        let sizes: Vec<u64> = p
            .fetches
            .iter()
            .map(|f| f.range.end - f.range.start)
            .collect();
        assert_eq!(sizes, [300, 300, 300, 100]);
        // One range larger than the cap is fetched whole.
        let p = Plan::with_limits(&[("f", 0..1000)], 0, 300);
        assert_eq!(p.fetches[0].range, 0..1000);
    }

    /// The default cap is libtiledb's batch size: a run of 8 MiB tiles
    /// (a dense read's band) is a few requests, not one per two tiles.
    #[test]
    fn default_requests_reach_libtiledbs_batch_size() {
        let tile = 7_500_000u64;
        let wanted: Vec<(&str, Range<u64>)> = (0..16)
            .map(|i| ("a0.tdb", i * tile..(i + 1) * tile))
            .collect();
        let p = Plan::new(&wanted);
        assert_eq!(p.fetches.len(), 2);
        assert!(p
            .fetches
            .iter()
            .all(|f| f.range.end - f.range.start <= 100 << 20));
    }
}
