//! How reads from one store are cut into requests and how many go at once
//! ([`StoreTuning`]): set from what a request costs there, a round trip
//! before the first byte and a connection's bandwidth after it.

use std::time::Duration;

/// The smallest request a range is split into: below it, a round trip
/// costs more than the bytes it brings on any store.
const MIN_REQUEST: u64 = 1 << 20;
/// The largest: a request is a unit of retry, and one connection streams
/// it alone.
const MAX_REQUEST: u64 = 64 << 20;
/// A request this many times larger than what a connection streams in
/// one round trip spends at most a fifth of its time waiting for the
/// first byte.
const ROUND_TRIPS_PER_REQUEST: f64 = 4.0;

/// A store's read tuning: what a request costs there, and how many a
/// reader keeps in flight. A read fills the network by keeping up to
/// [`StoreTuning::concurrency`] ranged GETs of about
/// [`StoreTuning::request_bytes`] in flight; what it has fetched and not
/// yet decoded stays within [`StoreTuning::read_ahead_bytes`].
///
/// Defaults per store ([`StoreTuning::for_scheme`]) follow what the
/// providers advise (AWS: parallel ranged GETs of 8 to 16 MB, a connection
/// streaming about 100 MB/s). Each setting can be overridden from the
/// environment ([`StoreTuning::from_env`]), or set through
/// [`crate::ObjectStorage::with_tuning`]:
///
/// | variable | setting |
/// |---|---|
/// | `TESSERA_STORE_LATENCY_MS` | [`StoreTuning::latency`], milliseconds |
/// | `TESSERA_STORE_CONNECTION_MBPS` | [`StoreTuning::connection_bandwidth`], MB/s |
/// | `TESSERA_STORE_CONCURRENCY` | [`StoreTuning::concurrency`] |
/// | `TESSERA_STORE_REQUEST_MIB` | [`StoreTuning::request_size`], MiB |
///
/// ```
/// use std::time::Duration;
/// use tessera_object_store::StoreTuning;
///
/// let s3 = StoreTuning::for_scheme("s3");
/// // 20 ms and 100 MB/s: requests of 8 MiB, 32 in flight.
/// assert_eq!(s3.request_bytes(), 8 << 20);
/// assert_eq!(s3.concurrency, 32);
/// // Farther away, each request grows so the round trip stays a fifth of it.
/// let far = StoreTuning { latency: Duration::from_millis(80), ..s3 };
/// assert_eq!(far.request_bytes(), 31 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoreTuning {
    /// A request's wait before its first byte arrives.
    pub latency: Duration,
    /// Bytes per second one connection streams.
    pub connection_bandwidth: u64,
    /// Requests in flight at once, at most, across everything the storage
    /// reads (clones of one storage share them).
    pub concurrency: usize,
    /// A set request size, instead of the one latency and bandwidth give.
    pub request_size: Option<u64>,
    /// Ranges of a file this close are fetched as one request: the bytes
    /// between them cost less than another round trip.
    pub coalesce_gap: u64,
}

impl StoreTuning {
    /// The defaults for a store named by its URI scheme (`s3`, `gs`,
    /// `az`, `http`, `memory`, ...).
    pub fn for_scheme(scheme: &str) -> StoreTuning {
        let (latency_ms, mb_per_s, concurrency) = match scheme {
            // Same-region S3: tens of milliseconds to the first byte,
            // about 100 MB/s a connection; AWS advises many at once.
            "s3" | "s3a" => (20, 100, 32),
            // GCS and Azure Blob: a longer first byte, a connection a
            // little slower (Azure's per-blob throughput).
            "gs" | "gcs" => (30, 100, 32),
            "az" | "azure" | "abfs" => (30, 60, 32),
            "http" | "https" => (20, 100, 16),
            // In memory: no round trip.
            _ => (0, 1000, 8),
        };
        StoreTuning {
            latency: Duration::from_millis(latency_ms),
            connection_bandwidth: mb_per_s * 1_000_000,
            concurrency,
            request_size: None,
            coalesce_gap: object_store::OBJECT_STORE_COALESCE_DEFAULT,
        }
    }

    /// [`StoreTuning::for_scheme`] with the settings the environment
    /// overrides (the table above); an unreadable value is an error naming
    /// the variable.
    pub fn from_env(scheme: &str) -> Result<StoreTuning, String> {
        Self::from_vars(scheme, |name| std::env::var(name).ok())
    }

    /// [`StoreTuning::from_env`] with the variables from `var`.
    fn from_vars(
        scheme: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<StoreTuning, String> {
        let mut t = Self::for_scheme(scheme);
        let number = |name: &str| -> Result<Option<u64>, String> {
            match var(name) {
                None => Ok(None),
                Some(v) => match v.trim().parse::<u64>() {
                    Ok(n) if n > 0 || name == "TESSERA_STORE_LATENCY_MS" => Ok(Some(n)),
                    _ => Err(format!("{name}={v}: not a positive whole number")),
                },
            }
        };
        if let Some(ms) = number("TESSERA_STORE_LATENCY_MS")? {
            t.latency = Duration::from_millis(ms);
        }
        if let Some(mb) = number("TESSERA_STORE_CONNECTION_MBPS")? {
            t.connection_bandwidth = mb.saturating_mul(1_000_000);
        }
        if let Some(n) = number("TESSERA_STORE_CONCURRENCY")? {
            t.concurrency = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(mib) = number("TESSERA_STORE_REQUEST_MIB")? {
            t.request_size = Some(mib.saturating_mul(1 << 20));
        }
        Ok(t)
    }

    /// The size ranges are split into: the set [`StoreTuning::request_size`],
    /// else [`ROUND_TRIPS_PER_REQUEST`] times what a connection streams in
    /// one round trip, in whole MiB, from 1 to 64 MiB.
    pub fn request_bytes(&self) -> u64 {
        if let Some(n) = self.request_size {
            return n.max(1);
        }
        let per_trip = self.latency.as_secs_f64() * self.connection_bandwidth as f64;
        let bytes = (per_trip * ROUND_TRIPS_PER_REQUEST) as u64;
        bytes
            .div_ceil(1 << 20)
            .saturating_mul(1 << 20)
            .clamp(MIN_REQUEST, MAX_REQUEST)
    }

    /// What a reader keeps fetched ahead of its decoding, in flight or
    /// landed, at most: enough for every connection to be busy with a
    /// request.
    pub fn read_ahead_bytes(&self) -> u64 {
        self.request_bytes()
            .saturating_mul(self.concurrency.max(1) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_each_stores_costs() {
        let s3 = StoreTuning::for_scheme("s3");
        assert_eq!((s3.request_bytes(), s3.concurrency), (8 << 20, 32));
        assert_eq!(s3.read_ahead_bytes(), 256 << 20);
        assert_eq!(StoreTuning::for_scheme("gs").request_bytes(), 12 << 20);
        assert_eq!(StoreTuning::for_scheme("az").request_bytes(), 7 << 20);
        // No round trip: the smallest request.
        assert_eq!(StoreTuning::for_scheme("memory").request_bytes(), 1 << 20);
    }

    #[test]
    fn the_environment_overrides_each_setting() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let t = StoreTuning::from_vars(
            "s3",
            vars(&[
                ("TESSERA_STORE_LATENCY_MS", "50"),
                ("TESSERA_STORE_CONNECTION_MBPS", "200"),
                ("TESSERA_STORE_CONCURRENCY", "64"),
            ]),
        )
        .unwrap();
        assert_eq!(t.latency, Duration::from_millis(50));
        assert_eq!(t.concurrency, 64);
        // 50 ms at 200 MB/s: 10 MB a round trip, 40 MB a request.
        assert_eq!(t.request_bytes(), 39 << 20);
        let t = StoreTuning::from_vars("s3", vars(&[("TESSERA_STORE_REQUEST_MIB", "16")])).unwrap();
        assert_eq!(t.request_bytes(), 16 << 20);
        let err = StoreTuning::from_vars("s3", vars(&[("TESSERA_STORE_CONCURRENCY", "0")]));
        assert!(err.unwrap_err().contains("TESSERA_STORE_CONCURRENCY=0"));
        let err = StoreTuning::from_vars("s3", vars(&[("TESSERA_STORE_LATENCY_MS", "x")]));
        assert!(err.is_err());
    }
}
