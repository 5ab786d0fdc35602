//! Loopback ports for servers a test starts: free when asked, distinct,
//! and outside the kernel's ephemeral range.
//!
//! A port from that range (what binding port 0 gives) may become the local
//! port of some outgoing connection before the server binds it, and a test
//! polling `connect` to a port nobody listens on yet can be given that very
//! port as its own local one: TCP then connects the socket to itself and
//! the "server" answers. Ports below the range are never handed out for
//! outgoing connections.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::net::TcpListener;

/// The lowest port tried: above the well-known and common service ports.
const LOWEST: u16 = 10_000;

/// `n` distinct loopback ports nothing listens on now, below the ephemeral
/// range; random, so that tests run at once seldom try the same.
///
/// ```
/// let ports = tessera_emulators::free_ports(3);
/// assert_eq!(ports.len(), 3);
/// assert!(ports.iter().all(|p| *p >= 10_000));
/// ```
pub fn free_ports(n: usize) -> Vec<u16> {
    let (low, _) = ephemeral_range();
    let span = u64::from(low.saturating_sub(LOWEST).max(1));
    let random = RandomState::new();
    // Held until all are found, so none is given twice.
    let mut held = Vec::with_capacity(n);
    let mut attempt = 0u64;
    while held.len() < n {
        attempt += 1;
        assert!(attempt < 10_000, "no free loopback port below {low}");
        let mut h = random.build_hasher();
        h.write_u64(attempt);
        let port = LOWEST + (h.finish() % span) as u16;
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)) {
            held.push(listener);
        }
    }
    held.iter()
        .map(|l| l.local_addr().expect("a bound listener's address").port())
        .collect()
}

/// One port of [`free_ports`].
pub fn free_port() -> u16 {
    free_ports(1)[0]
}

/// The kernel's ephemeral port range (Linux's default where it can't be
/// read).
fn ephemeral_range() -> (u16, u16) {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range");
    let parsed = text.ok().and_then(|t| {
        let mut it = t.split_whitespace().map(|v| v.parse::<u16>());
        match (it.next(), it.next()) {
            (Some(Ok(low)), Some(Ok(high))) => Some((low, high)),
            _ => None,
        }
    });
    parsed.unwrap_or((32_768, 60_999))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_distinct_free_and_below_the_ephemeral_range() {
        let (low, high) = ephemeral_range();
        assert!(LOWEST < low && low <= high);
        let ports = free_ports(20);
        let mut sorted = ports.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 20, "{ports:?}");
        for p in ports {
            assert!((LOWEST..low).contains(&p), "{p}");
            TcpListener::bind(("127.0.0.1", p)).expect("free");
        }
    }
}
