//! What the platforms reached with one API key or token in a header share (ShipBob, ShipStation):
//! the key read from the validated adapter, the account its requests spend (named by a
//! fingerprint of the key, never the key), and a ping's one try.

use std::time::Duration;

use super::retry::RetryPolicy;
use super::{Adapter, PlatformError};

/// The adapter's `access_token`, or a refusal naming the platform when it has none.
pub fn access_token<'a>(adapter: &'a Adapter, platform: &str) -> Result<&'a str, PlatformError> {
    adapter
        .get("access_token")
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| PlatformError::Refused(format!("The {platform} adapter has no access_token.")))
}

/// The account a key's requests spend (`retry`'s gate and waits): `{prefix}:{base}:{fingerprint}`.
pub fn account(prefix: &str, base: &str, key: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    format!("{prefix}:{base}:{:016x}", hasher.finish())
}

/// A ping's policy: one try, bounded by the ping's timeout (its answer and any wait).
pub fn one_try(timeout: Duration) -> RetryPolicy {
    RetryPolicy { tries: 1, base: Duration::from_secs(1), request_timeout: timeout, longest_wait: timeout }
}
