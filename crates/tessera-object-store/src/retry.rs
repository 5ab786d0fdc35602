//! How hard a request is retried: the limits of `object_store`'s retries
//! (throttling, 5xx answers, dropped connections, timeouts; a GET whose
//! body stops is resumed from the byte it reached, a multipart upload's
//! failed part is sent again alone), set by the caller.
//!
//! | storage option | variable | meaning | default |
//! |---|---|---|---|
//! | `max_retries` | `TESSERA_STORE_MAX_RETRIES` | retries of one request (0: none) | 10 |
//! | `retry_timeout` | `TESSERA_STORE_RETRY_TIMEOUT_SECS` | seconds after a request's first try past which it is not retried | 180 |
//!
//! A storage option overrides the variable. What still fails is an error
//! naming the request, the object and the store's last answer.

use crate::ObjectStoreError;
use object_store::RetryConfig;
use std::time::Duration;

/// The storage option keys read here, not passed to the store's builder.
const KEYS: [&str; 2] = ["max_retries", "retry_timeout"];

/// The retry configuration `options` and the environment give, and the
/// options left for the store's builder.
pub(crate) fn retry_config(
    uri: &str,
    options: &[(String, String)],
) -> Result<(RetryConfig, Vec<(String, String)>), ObjectStoreError> {
    retry_config_from(uri, options, |name| std::env::var(name).ok())
}

fn retry_config_from(
    uri: &str,
    options: &[(String, String)],
    var: impl Fn(&str) -> Option<String>,
) -> Result<(RetryConfig, Vec<(String, String)>), ObjectStoreError> {
    let mut config = RetryConfig::default();
    let given = |key: &str, variable: &str| -> Result<Option<u64>, ObjectStoreError> {
        let (source, text) = match options.iter().rev().find(|(k, _)| k == key) {
            Some((_, v)) => (key, v.clone()),
            None => match var(variable) {
                Some(v) => (variable, v),
                None => return Ok(None),
            },
        };
        let trimmed = text.trim().trim_end_matches('s');
        trimmed
            .parse::<u64>()
            .map(Some)
            .map_err(|_| ObjectStoreError::Option {
                uri: uri.to_owned(),
                key: source.to_owned(),
                reason: format!("`{text}` is not a whole number"),
            })
    };
    if let Some(n) = given("max_retries", "TESSERA_STORE_MAX_RETRIES")? {
        config.max_retries = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(s) = given("retry_timeout", "TESSERA_STORE_RETRY_TIMEOUT_SECS")? {
        config.retry_timeout = Duration::from_secs(s);
    }
    let rest = options
        .iter()
        .filter(|(k, _)| !KEYS.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok((config, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn options_override_the_environment_and_are_taken_out() {
        let env = |name: &str| (name == "TESSERA_STORE_MAX_RETRIES").then(|| "3".to_string());
        let given = opts(&[("aws_region", "eu-west-1"), ("retry_timeout", "30s")]);
        let (config, rest) = retry_config_from("s3://b", &given, env).unwrap();
        assert_eq!(config.max_retries, 3);
        assert_eq!(config.retry_timeout, Duration::from_secs(30));
        assert_eq!(rest, opts(&[("aws_region", "eu-west-1")]));
        let given = opts(&[("max_retries", "0")]);
        let (config, _) = retry_config_from("s3://b", &given, env).unwrap();
        assert_eq!(config.max_retries, 0);
        let (config, _) = retry_config_from("s3://b", &[], |_| None).unwrap();
        assert_eq!(config.max_retries, RetryConfig::default().max_retries);
    }

    #[test]
    fn a_value_that_is_no_number_names_its_key() {
        let given = opts(&[("max_retries", "many")]);
        let e = retry_config_from("s3://b", &given, |_| None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_retries") && e.contains("many"), "{e}");
    }
}
