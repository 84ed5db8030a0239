//! BigCommerce stores (`big_commerce`, and `bigcommerce` as the same platform): the adapter's
//! rules and the credential check, `GET {api_base}/stores/{store_hash}/v2/store` with
//! `X-Auth-Token` (CONTRACT §6, §8).

pub mod carriers;
pub mod client;
#[cfg(test)]
mod client_tests;
mod wire;

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, HeaderValue};
use serde_json::{Map, Value};

use super::{PlatformError, http, quote_platform_text};
use crate::body::Fields;

/// The hosted service's own token.
pub const TOKEN: &str = "big_commerce";
/// The token orderbridge used first; the same platform, kept as a client sent it.
pub const OLD_TOKEN: &str = "bigcommerce";
pub const NAME: &str = "BigCommerce";

/// `access_token` and `store_hash` required, `client_id` optional.
pub fn validate(adapter: &mut Fields) {
    adapter.required("access_token", Fields::text);
    adapter.required("store_hash", Fields::text);
    adapter.text("client_id");
}

/// Asks BigCommerce whether the adapter's token opens its store. A 404 is an unknown store,
/// which for credentials is a refusal.
pub async fn check(
    client: &reqwest::Client,
    api_base: &str,
    timeout: Duration,
    adapter: &Map<String, Value>,
) -> Result<(), PlatformError> {
    let token = field(adapter, "access_token")?;
    let store_hash = field(adapter, "store_hash")?;
    if !is_store_hash(store_hash) {
        // It goes into the URL path; anything else could walk to another endpoint.
        return Err(PlatformError::Refused(format!(
            "BigCommerce has no store with hash '{}': store hashes are letters and digits only.",
            quote_platform_text(store_hash, &[token])
        )));
    }
    let mut token_header = HeaderValue::from_str(token).map_err(|_| {
        PlatformError::Refused(
            "The BigCommerce access token contains characters that cannot be sent in an HTTP header."
                .to_owned(),
        )
    })?;
    token_header.set_sensitive(true);
    let url = format!("{}/stores/{store_hash}/v2/store", api_base.trim_end_matches('/'));
    let request = client.get(url).header("X-Auth-Token", token_header).header(ACCEPT, "application/json");
    let response = http::send(request, timeout, NAME, api_base).await?;
    match response.status() {
        s if s.is_success() => Ok(()),
        StatusCode::NOT_FOUND => Err(PlatformError::Refused(format!(
            "BigCommerce has no store with hash '{store_hash}' (HTTP {}).",
            http::status_text(StatusCode::NOT_FOUND)
        ))),
        _ => Err(http::error_from(NAME, response, &[token]).await),
    }
}

/// A string field of the adapter. The caller validated the adapter, so a missing field is its
/// bug; it still answers as a refusal rather than a panic.
fn field<'a>(adapter: &'a Map<String, Value>, key: &str) -> Result<&'a str, PlatformError> {
    adapter
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| PlatformError::Refused(format!("The {NAME} adapter has no {key}.")))
}

/// BigCommerce store hashes are short lowercase alphanumerics (`abc123`); this also admits
/// upper case, `-` and `_`, never `/`, `.`, `%`, `?` or `#`.
pub(crate) fn is_store_hash(hash: &str) -> bool {
    !hash.is_empty()
        && hash.len() <= 64
        && hash.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_hashes_that_could_change_the_url_path_are_refused() {
        for hash in ["abc123", "ABC-1_2"] {
            assert!(is_store_hash(hash), "{hash}");
        }
        for hash in ["", "a/b", "..", "a?b", "a#b", "a%2F", "a b"] {
            assert!(!is_store_hash(hash), "{hash}");
        }
    }
}
