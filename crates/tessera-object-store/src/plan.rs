//! Turning a batch of wanted byte ranges into the requests that fetch them:
//! ranges of one file that overlap or lie within a gap of each other
//! (`object_store`'s 1 MiB by default) become one span, so no byte is
//! fetched twice and small neighbours share a round trip; a span is then
//! fetched in parts of about the store's request size
//! ([`crate::StoreTuning::request_bytes`]), in flight at once, so a large
//! read streams over many connections instead of one.

use std::ops::Range;

/// Neighbouring ranges closer than this are fetched as one span:
/// `object_store`'s own default for coalescing ranges (1 MiB). At tens of
/// milliseconds and a fraction of a cent per thousand requests, a MiB of
/// unwanted bytes (a few milliseconds at a few hundred MB/s) costs less
/// than another request; a read of a small part of a sparse array skips
/// gaps of a few tiles between the ones it needs.
pub const COALESCE_GAP: u64 = object_store::OBJECT_STORE_COALESCE_DEFAULT;

/// One request of a plan: a file (by its index among the distinct files
/// asked for) and the bytes fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    /// Index into the plan's files.
    pub file: usize,
    /// The byte range fetched.
    pub range: Range<u64>,
}

/// Wanted ranges of one file merged: the bytes from the first's start to
/// the last's end, fetched by consecutive requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Index into the plan's files.
    pub file: usize,
    /// The bytes it holds.
    pub range: Range<u64>,
    /// Its requests: indexes into the plan's fetches, in byte order.
    pub fetches: Range<usize>,
}

/// The requests for a batch, and where each wanted range lies in them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan<K> {
    /// The distinct files, in first-asked order.
    pub files: Vec<K>,
    /// The merged ranges.
    pub spans: Vec<Span>,
    /// The requests to issue: each span's parts.
    pub fetches: Vec<Fetch>,
    /// Per wanted range, in the order asked: the span holding it and the
    /// offset of its first byte in that span.
    pub served_by: Vec<(usize, u64)>,
}

impl<K: Clone + Eq + std::hash::Hash> Plan<K> {
    /// Plans `wanted` (file, range): ranges of a file at most `gap` bytes
    /// apart merge into spans, fetched in parts of at most `request`
    /// bytes (a span is cut into equal parts).
    pub fn new(wanted: &[(K, Range<u64>)], gap: u64, request: u64) -> Plan<K> {
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
        let mut spans: Vec<Span> = Vec::new();
        let mut served_by = vec![(0, 0); wanted.len()];
        for (file, start, end, i) in order {
            let joins = spans
                .last()
                .is_some_and(|s| s.file == file && start <= s.range.end.saturating_add(gap));
            if !joins {
                spans.push(Span {
                    file,
                    range: start..end,
                    fetches: 0..0,
                });
            }
            let last = spans.len() - 1;
            let s = &mut spans[last];
            s.range.end = s.range.end.max(end);
            served_by[i] = (last, start - s.range.start);
        }
        let mut fetches = Vec::with_capacity(spans.len());
        for s in &mut spans {
            let first = fetches.len();
            fetches.extend(parts(s.range.clone(), request).map(|range| Fetch {
                file: s.file,
                range,
            }));
            s.fetches = first..fetches.len();
        }
        Plan {
            files,
            spans,
            fetches,
            served_by,
        }
    }
}

/// `range` cut into the fewest equal parts of at most `request` bytes (an
/// empty range is one empty part).
fn parts(range: Range<u64>, request: u64) -> impl Iterator<Item = Range<u64>> {
    let len = range.end - range.start;
    let n = len.div_ceil(request.max(1)).max(1);
    let part = len.div_ceil(n);
    (0..n).map(move |i| {
        let start = range.start + i * part;
        start..(start + part).min(range.end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetched<K>(p: &Plan<K>) -> Vec<(usize, Range<u64>)> {
        p.fetches
            .iter()
            .map(|f| (f.file, f.range.clone()))
            .collect()
    }

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
        let p = Plan::new(&wanted, 1000, 1 << 20);
        assert_eq!(p.files, ["b", "a"]);
        assert_eq!(
            fetched(&p),
            [(0, 50..200), (1, 0..1010), (1, 10_000..10_010)]
        );
        assert_eq!(
            p.served_by,
            [(0, 50), (1, 0), (1, 5), (1, 1000), (2, 0), (0, 0)]
        );
    }

    /// A span larger than the request size goes as equal parts, in byte
    /// order, that together hold it once.
    #[test]
    fn large_spans_go_in_equal_parts() {
        let wanted: Vec<(&str, Range<u64>)> =
            (0..10).map(|i| ("f", i * 100..i * 100 + 100)).collect();
        let p = Plan::new(&wanted, 0, 300);
        assert_eq!(p.spans.len(), 1);
        assert_eq!(p.spans[0].fetches, 0..4);
        assert_eq!(
            fetched(&p),
            [(0, 0..250), (0, 250..500), (0, 500..750), (0, 750..1000)]
        );
        assert_eq!(p.served_by[3], (0, 300));
        // One wanted range larger than a request is split too.
        let p = Plan::new(&[("f", 0..1000), ("g", 5..5)], 0, 300);
        assert_eq!(p.fetches.len(), 5);
        assert_eq!(p.fetches[4].range, 5..5);
    }

    /// A band of 8 MiB tiles goes as 8 MiB requests, however many.
    #[test]
    fn a_run_of_tiles_goes_as_requests_of_the_store_size() {
        let tile = 7_500_000u64;
        let wanted: Vec<(&str, Range<u64>)> = (0..16)
            .map(|i| ("a0.tdb", i * tile..(i + 1) * tile))
            .collect();
        let p = Plan::new(&wanted, COALESCE_GAP, 8 << 20);
        assert_eq!(p.fetches.len(), 15);
        assert!(p
            .fetches
            .iter()
            .all(|f| f.range.end - f.range.start <= 8 << 20));
    }
}
