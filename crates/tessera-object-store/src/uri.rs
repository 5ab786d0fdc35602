//! Object store URIs: `s3://bucket/key`, `gs://`, `az://` (and `abfs://`,
//! `azure://`), `http(s)://host/path`, `memory://bucket` for tests.

use crate::ObjectStoreError;

/// The schemes served, as written before `://`.
const SCHEMES: [&str; 9] = [
    "s3", "s3a", "gs", "gcs", "az", "azure", "abfs", "http", "https",
];

/// A URI split into what names the store (scheme and bucket, or for HTTP
/// the origin) and the object key inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectUri {
    /// `s3`, `gs`, `az`, `http`, `memory`, ... as written.
    pub scheme: String,
    /// The bucket, container or HTTP authority.
    pub bucket: String,
    /// The key, without leading or trailing slashes (may be empty).
    pub key: String,
}

impl ObjectUri {
    /// Splits `uri`. Paths built by joining onto a URI may have lost one of
    /// the two slashes after the scheme (`Path::components` folds them):
    /// both forms are taken.
    pub fn parse(uri: &str) -> Result<ObjectUri, ObjectStoreError> {
        let bad = |reason: &str| ObjectStoreError::Uri {
            uri: uri.to_string(),
            reason: reason.to_string(),
        };
        let (scheme, rest) = uri
            .split_once(":/")
            .ok_or_else(|| bad("not a URI (scheme://bucket/key)"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "memory" && !SCHEMES.contains(&scheme.as_str()) {
            return Err(bad(&format!(
                "scheme {scheme}:// is not served (s3, gs, az, abfs, http, https, memory)"
            )));
        }
        let rest = rest.trim_start_matches('/');
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("no bucket (or host) after the scheme"));
        }
        Ok(ObjectUri {
            scheme,
            bucket: bucket.to_string(),
            key: key.trim_matches('/').to_string(),
        })
    }

    /// The URI of the store itself: `scheme://bucket`.
    pub fn store(&self) -> String {
        format!("{}://{}", self.scheme, self.bucket)
    }

    /// Whether `path` is a store's root (`scheme://bucket`), which always
    /// exists.
    pub(crate) fn is_store_root(path: &std::path::Path) -> bool {
        ObjectUri::parse(&path.to_string_lossy()).is_ok_and(|u| u.key.is_empty())
    }
}

impl std::fmt::Display for ObjectUri {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.store())
        } else {
            write!(f, "{}/{}", self.store(), self.key)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn uris_split_into_store_and_key() {
        let u = ObjectUri::parse("s3://bucket/dir/array/").unwrap();
        assert_eq!(
            (u.store().as_str(), u.key.as_str()),
            ("s3://bucket", "dir/array")
        );
        // As Path::join and components leave it.
        let p = Path::new("s3://bucket/dir").join("__schema");
        assert_eq!(
            ObjectUri::parse(&p.to_string_lossy()).unwrap().key,
            "dir/__schema"
        );
        let folded: std::path::PathBuf = p.components().collect();
        assert_eq!(
            ObjectUri::parse(&folded.to_string_lossy()).unwrap().key,
            "dir/__schema"
        );
        assert_eq!(ObjectUri::parse("gs://b").unwrap().key, "");
        assert!(ObjectUri::parse("https://host:8080/a").is_ok());
        assert!(ObjectUri::parse("/local/array").is_err());
        assert!(ObjectUri::parse("file:///local/array").is_err());
        let e = ObjectUri::parse("ftp://x/y").unwrap_err().to_string();
        assert!(e.contains("ftp:// is not served"), "{e}");
        assert!(ObjectUri::parse("s3://").is_err());
    }
}
