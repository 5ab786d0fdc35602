//! Names of what a writer creates: `__t1_t2_uuid` for schemas,
//! `__uuid_0` for enumerations, `__t1_t2_uuid_version` for fragments
//! (`format_spec/timestamped_name.md`). Timestamps are milliseconds since
//! the epoch; uuids are 32 lowercase hex digits of the operating system's
//! randomness, as libtiledb's.

use crate::WriteError;

/// A random uuid, as 32 lowercase hex digits.
pub fn uuid() -> Result<String, WriteError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| WriteError::Randomness(e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A schema file's name: `__t_t_uuid`.
pub fn schema_name(timestamp: u64) -> Result<String, WriteError> {
    Ok(format!("__{timestamp}_{timestamp}_{}", uuid()?))
}

/// An enumeration file's name: `__uuid_0` (enumeration format 0).
pub fn enumeration_name() -> Result<String, WriteError> {
    Ok(format!("__{}_0", uuid()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_have_libtiledbs_shape() {
        let n = schema_name(7).unwrap();
        let parts: Vec<&str> = n.trim_start_matches("__").split('_').collect();
        assert_eq!(parts[..2], ["7", "7"]);
        assert_eq!(parts[2].len(), 32);
        assert!(parts[2]
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
        assert_ne!(uuid().unwrap(), uuid().unwrap());
        assert!(enumeration_name().unwrap().ends_with("_0"));
    }
}
