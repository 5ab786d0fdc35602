//! Settings that change how a read runs, never what it returns: tests hold
//! the paths to each other with them, and benchmarks compare them. Kept
//! apart from the user's settings on [`crate::ReadRequest`] and hidden from the
//! documented API.

/// How a read runs ([`crate::ReadRequest::tune`]). Every setting leaves the
/// result unchanged.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Whether reads take their fast paths: sparse tiles decoded straight
    /// into their place in the result, dense unfiltered tiles read from
    /// their files into it. Off: the general paths, the reference.
    pub direct: bool,
    /// Dense reads place bands of tiles (those sharing a coordinate on the
    /// result's slowest dimension) in parallel, each into its own region of
    /// the result; a band of fewer than this many decoded bytes joins the
    /// next, so that a small read stays one band and one request per run
    /// of tiles. 0: every band apart; `u64::MAX`: one band, on one thread,
    /// and fragments placed one after another even where their bands
    /// fill regions apart from each other's.
    pub dense_band_bytes: u64,
    /// Dense reads read the tiles of fixed-sized fields stored unfiltered
    /// (no filter, no encryption, not nullable) of at least this many bytes
    /// from their files straight into the result, one scatter read per tile
    /// and slab of rows: one copy of each byte instead of three. Smaller
    /// tiles are fetched with their neighbours. Only with `direct`. 0:
    /// every such tile; `u64::MAX`: none.
    pub direct_tile_bytes: u64,
    /// Whether dense reads skip the tiles of a fragment whose cells in the
    /// subarray a later dense fragment (holding every selected attribute)
    /// writes again: dense writes fill their whole non-empty domain.
    pub skip_overwritten: bool,
    /// Whether sparse reads with a condition skip fragments and tiles whose
    /// metadata (fragment summary, tile mins, maxes and null counts) shows
    /// no cell can satisfy it.
    pub prune: bool,
    /// On storage where a request costs a round trip (object stores), the
    /// sparse fragments whose tiles are fetched and decoded at once: each
    /// fragment's coordinates, then its fields, are dependent steps, so
    /// fragment after fragment would cost two round trips each. 1: one
    /// fragment after another.
    pub fragments_in_flight: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            direct: true,
            // Measured on the benchmark arrays (docs/PERFORMANCE.md).
            dense_band_bytes: 8 << 20,
            // A chunk's worth.
            direct_tile_bytes: 64 << 10,
            skip_overwritten: true,
            prune: true,
            // Measured on the S3 rig (a 100-fragment consolidation).
            fragments_in_flight: 16,
        }
    }
}
