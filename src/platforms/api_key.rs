//! What the platforms reached with one API key or token in a header share (ShipBob, ShipStation):
//! the key read from the validated adapter, the account its requests spend (named by a
//! fingerprint of the key, never the key), a ping's one try, and [`KeyedApi`]: the base, the
//! key, the policy, the account and the body limit, with the sending and bounded reading
//! every request of theirs goes through. Each platform adds its own header for the key and
//! says what its statuses and error bodies mean.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{Method, RequestBuilder, StatusCode};

use super::retry::RetryPolicy;
use super::{Adapter, PlatformError, Settings, http};

/// A platform reached with one key in a header, for one key.
pub struct KeyedApi {
    /// Where the platform is, without a trailing `/`.
    pub base: String,
    pub key: String,
    pub timeout: Duration,
    pub policy: RetryPolicy,
    /// The account whose gate and waits a request spends: a fingerprint of the key.
    pub account: String,
    /// The most of one answer read (`max_platform_body_mib`).
    pub max_body: usize,
}

/// An answer: its status and (bounded) body.
pub struct Answer {
    pub status: StatusCode,
    pub body: Vec<u8>,
}

impl KeyedApi {
    /// The API at `base` of a validated adapter of `platform` (`prefix` names its accounts);
    /// `policy` for a pass, none for a ping (one try).
    pub fn new(
        settings: &Settings,
        adapter: &Adapter,
        platform: &str,
        prefix: &str,
        base: &str,
        policy: Option<RetryPolicy>,
    ) -> Result<KeyedApi, PlatformError> {
        let key = access_token(adapter, platform)?;
        let base = base.trim_end_matches('/').to_string();
        Ok(KeyedApi {
            account: account(prefix, &base, key),
            base,
            key: key.to_string(),
            timeout: settings.timeout,
            policy: policy.unwrap_or_else(|| one_try(settings.timeout)),
            max_body: settings.max_body_bytes,
        })
    }

    /// A request for JSON at `target` (a path with its query) under the base, with `body` as
    /// JSON; the platform adds its key's header.
    pub fn request(&self, method: Method, target: &str, body: Option<&serde_json::Value>) -> RequestBuilder {
        let request = http::client()
            .request(method, format!("{}{target}", self.base))
            .header(ACCEPT, "application/json");
        match body {
            Some(body) => request.header(CONTENT_TYPE, "application/json").body(body.to_string()),
            None => request,
        }
    }

    /// Sends `request` under the timeout and reads its answer up to the body limit, whatever
    /// its status; only no answer at all is an error here. `what` names it in messages.
    pub async fn exchange(
        &self,
        platform: &str,
        request: RequestBuilder,
        what: &str,
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>), PlatformError> {
        let response = http::send(request, self.timeout, platform, &self.base).await?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = http::read_answer(response, self.max_body, platform, what).await?;
        Ok((status, headers, body))
    }
}

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
