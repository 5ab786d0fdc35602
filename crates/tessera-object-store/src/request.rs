//! The requests a storage sent, as it records them
//! ([`ObjectStorage::record_requests`](crate::ObjectStorage::record_requests)).

/// One request sent to the store, as [`ObjectStorage::requests`](crate::ObjectStorage::requests) records
/// it: for tests and benchmarks that count and compare request sequences.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Request {
    /// Which storage call sent it: requests of one call (a batch) are in
    /// flight together, in no set order.
    pub call: usize,
    /// `GET`, `HEAD`, `LIST`, `PUT` or `DELETE`.
    pub method: &'static str,
    /// The object key (for `LIST`, the folder's prefix).
    pub key: String,
    /// The bytes asked for: `a..b`, `last N`, or empty for whole objects.
    pub range: String,
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.key)?;
        if !self.range.is_empty() {
            write!(f, " {}", self.range)?;
        }
        Ok(())
    }
}
