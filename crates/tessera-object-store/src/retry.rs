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
//! naming the request, the object and the store's last answer. A `LIST`
//! whose answer's body is cut short, which `object_store` does not retry,
//! is sent again here ([`listed_again_if_cut`]).

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

/// Tries of a `LIST` whose answer's body was cut short (the connection
/// dropped after the status line): `object_store` retries a request that
/// fails, not the reading of a listing's body, so it is asked again here.
const LIST_TRIES: u32 = 4;

/// Whether `e` is a response body cut short (the answer began, then its
/// connection failed): the request may be sent again.
fn body_was_cut(e: &object_store::Error) -> bool {
    let mut cause: Option<&dyn std::error::Error> = Some(e);
    while let Some(c) = cause {
        if c.to_string().contains("body") {
            return true;
        }
        cause = c.source();
    }
    false
}

/// Runs `list` (a `LIST`) again while its answer's body is cut short,
/// up to [`LIST_TRIES`] times, with a short backoff.
pub(crate) async fn listed_again_if_cut<T, F, Fut>(mut list: F) -> Result<T, object_store::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, object_store::Error>>,
{
    let mut tries = 1;
    loop {
        match list().await {
            Err(e) if tries < LIST_TRIES && body_was_cut(&e) => {
                tokio::time::sleep(std::time::Duration::from_millis(50 << tries)).await;
                tries += 1;
            }
            listed => return listed,
        }
    }
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
