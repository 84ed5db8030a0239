//! Sellbrite stores (`sellbrite`): the adapter's rules and the credential check,
//! `GET {api_base}/v1/warehouses` with HTTP Basic (CONTRACT §6, §8). Sellbrite answers its
//! rate limit with a 403 `Rate Limit Exceeded`, which `http::classify` tells from a refusal.

pub mod client;

use std::time::Duration;

use reqwest::header::ACCEPT;
use serde_json::{Map, Value};

use super::{PlatformError, http};
use crate::body::Fields;

pub const TOKEN: &str = "sellbrite";
pub const NAME: &str = "Sellbrite";

/// `auth_token` and `secret_key` required; `warehouse_uuid` (the Sellbrite warehouse whose
/// fulfillments orderbridge handles) optional.
pub fn validate(adapter: &mut Fields) {
    adapter.required("auth_token", Fields::text);
    adapter.required("secret_key", Fields::text);
    adapter.text("warehouse_uuid");
}

/// Asks Sellbrite whether the account token and secret key authenticate.
pub async fn check(
    client: &reqwest::Client,
    api_base: &str,
    timeout: Duration,
    adapter: &Map<String, Value>,
) -> Result<(), PlatformError> {
    let auth_token = field(adapter, "auth_token")?;
    let secret_key = field(adapter, "secret_key")?;
    let url = format!("{}/v1/warehouses", api_base.trim_end_matches('/'));
    // reqwest marks the Authorization header it builds here as sensitive.
    let request = client.get(url).basic_auth(auth_token, Some(secret_key)).header(ACCEPT, "application/json");
    let response = http::send(request, timeout, NAME, api_base).await?;
    if response.status().is_success() {
        return Ok(());
    }
    Err(http::error_from(NAME, response, &[auth_token, secret_key]).await)
}

/// A string field of the validated adapter; missing answers as a refusal, never a panic.
fn field<'a>(adapter: &'a Map<String, Value>, key: &str) -> Result<&'a str, PlatformError> {
    adapter
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| PlatformError::Refused(format!("The {NAME} adapter has no {key}.")))
}
