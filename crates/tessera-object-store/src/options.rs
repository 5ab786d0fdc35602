//! Storage options given by a caller, set on a store's client builder
//! over what the environment says.

use crate::ObjectStoreError;
use std::str::FromStr;

/// A caller's options (`object_store` configuration keys and values) for
/// the store of `uri`.
pub(crate) struct StoreOptions<'a> {
    pub(crate) uri: &'a str,
    pub(crate) options: &'a [(String, String)],
}

impl StoreOptions<'_> {
    /// `builder` with each option set by `with` (the builder's
    /// `with_config`), its key parsed as the builder's key type.
    pub(crate) fn on<B, K>(
        &self,
        builder: B,
        with: fn(B, K, String) -> B,
    ) -> Result<B, ObjectStoreError>
    where
        K: FromStr,
        K::Err: std::fmt::Display,
    {
        self.options.iter().try_fold(builder, |b, (key, value)| {
            let parsed = key
                .parse::<K>()
                .map_err(|e| self.refused(key, e.to_string()))?;
            Ok(with(b, parsed, value.clone()))
        })
    }

    /// Nothing, where the store takes no options (`http(s)://`, `memory://`).
    pub(crate) fn none(&self) -> Result<(), ObjectStoreError> {
        match self.options.first() {
            Some((key, _)) => Err(self.refused(key, "this store takes no options".into())),
            None => Ok(()),
        }
    }

    fn refused(&self, key: &str, reason: String) -> ObjectStoreError {
        ObjectStoreError::Option {
            uri: self.uri.to_owned(),
            key: key.to_owned(),
            reason,
        }
    }
}
