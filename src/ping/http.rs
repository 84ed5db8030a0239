//! The HTTP checks: BigCommerce (`X-Auth-Token`) and Sellbrite (HTTP Basic).
//!
//! How answers map: 2xx means the credentials work; 401/403 is a refusal; a BigCommerce 404 is
//! an unknown store hash, also a refusal. Every other answer (3xx, 429, 5xx, any other 4xx) says
//! nothing about the credentials, so it is `Unreachable` ("answered HTTP 503"): the platform gave
//! no usable verdict, which is what a 502 from orderbridge tells the user.

use std::sync::Once;

use reqwest::header::{ACCEPT, HeaderValue};
use reqwest::{Response, StatusCode};

use super::{Adapter, PingError, adapter_field, quote_platform_text, root_cause};

/// How much of an error body is read looking for the platform's reason.
const MAX_BODY_BYTES: usize = 16 * 1024;

pub(super) async fn check_bigcommerce(api_base: &str, adapter: &Adapter) -> Result<(), PingError> {
    const NAME: &str = "BigCommerce";
    let token = adapter_field(adapter, "access_token", NAME)?;
    let store_hash = adapter_field(adapter, "store_hash", NAME)?;
    if !is_store_hash(store_hash) {
        // It goes into the URL path; anything else could walk to another endpoint.
        return Err(PingError::AuthenticationFailed(format!(
            "BigCommerce has no store with hash '{}': store hashes are letters and digits only.",
            quote_platform_text(store_hash, &[token])
        )));
    }
    let mut token_header = HeaderValue::from_str(token).map_err(|_| {
        PingError::AuthenticationFailed(
            "The BigCommerce access token contains characters that cannot be sent in an HTTP header."
                .to_owned(),
        )
    })?;
    token_header.set_sensitive(true);
    let url = format!("{}/stores/{store_hash}/v2/store", api_base.trim_end_matches('/'));
    let request =
        client(NAME)?.get(url).header("X-Auth-Token", token_header).header(ACCEPT, "application/json");
    let response = send(request, NAME, api_base).await?;
    let status = response.status();
    match status {
        s if s.is_success() => Ok(()),
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(refused(NAME, response, &[token]).await),
        StatusCode::NOT_FOUND => Err(PingError::AuthenticationFailed(format!(
            "BigCommerce has no store with hash '{store_hash}' (HTTP {}).",
            status_text(status)
        ))),
        _ => Err(no_verdict(NAME, response, &[token]).await),
    }
}

pub(super) async fn check_sellbrite(api_base: &str, adapter: &Adapter) -> Result<(), PingError> {
    const NAME: &str = "Sellbrite";
    let auth_token = adapter_field(adapter, "auth_token", NAME)?;
    let secret_key = adapter_field(adapter, "secret_key", NAME)?;
    let url = format!("{}/v1/warehouses", api_base.trim_end_matches('/'));
    // reqwest marks the Authorization header it builds here as sensitive.
    let request =
        client(NAME)?.get(url).basic_auth(auth_token, Some(secret_key)).header(ACCEPT, "application/json");
    let response = send(request, NAME, api_base).await?;
    let secrets = [auth_token, secret_key];
    match response.status() {
        s if s.is_success() => Ok(()),
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(refused(NAME, response, &secrets).await),
        _ => Err(no_verdict(NAME, response, &secrets).await),
    }
}

/// BigCommerce store hashes are short lowercase alphanumerics (`abc123`); this also admits
/// upper case, `-` and `_`, never `/`, `.`, `%`, `?` or `#`.
pub(crate) fn is_store_hash(hash: &str) -> bool {
    !hash.is_empty()
        && hash.len() <= 64
        && hash.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// One client per check: pings are rare, and a pooled connection must not outlive the
/// runtime that opened it. Redirects are not followed, so the token never travels to a
/// host it was not meant for.
fn client(platform: &str) -> Result<reqwest::Client, PingError> {
    static CRYPTO_PROVIDER: Once = Once::new();
    // reqwest is built without a bundled provider; ring is the one compiled in. If the
    // process already installed a provider, that one stays and reqwest uses it.
    CRYPTO_PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(0)
        .user_agent(concat!("orderbridge/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| {
            PingError::Unreachable(format!(
                "Could not prepare the HTTPS client to reach {platform}: {}.",
                root_cause(&e)
            ))
        })
}

async fn send(
    request: reqwest::RequestBuilder,
    platform: &str,
    api_base: &str,
) -> Result<Response, PingError> {
    request.send().await.map_err(|e| {
        // reqwest's own text names the URL; the innermost cause ("Connection refused",
        // "invalid peer certificate: UnknownIssuer") names no credential and is what a person needs.
        let host = reqwest::Url::parse(api_base)
            .ok()
            .and_then(|url| match (url.host_str(), url.port()) {
                (Some(host), Some(port)) => Some(format!("{host}:{port}")),
                (host, None) => host.map(str::to_owned),
                (None, Some(_)) => None,
            })
            .unwrap_or_else(|| "its API".to_owned());
        PingError::Unreachable(format!(
            "{platform} could not be reached at {host}: {}.",
            root_cause(&e.without_url())
        ))
    })
}

async fn refused(platform: &str, response: Response, secrets: &[&str]) -> PingError {
    PingError::AuthenticationFailed(format!(
        "{platform} refused the credentials ({}).",
        status_and_reason(response, secrets).await
    ))
}

async fn no_verdict(platform: &str, response: Response, secrets: &[&str]) -> PingError {
    PingError::Unreachable(format!(
        "{platform} answered without a verdict on the credentials ({}).",
        status_and_reason(response, secrets).await
    ))
}

/// "HTTP 401 Unauthorized: <the platform's error text>", the text only if it sent one.
async fn status_and_reason(mut response: Response, secrets: &[&str]) -> String {
    let status = status_text(response.status());
    let mut body = Vec::new();
    while body.len() < MAX_BODY_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    match platform_reason(&body) {
        Some(reason) => format!("HTTP {status}: {}", quote_platform_text(&reason, secrets)),
        None => format!("HTTP {status}"),
    }
}

pub(crate) fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The error text in a platform's body: BigCommerce sends `{"status":401,"title":"..."}` or
/// `[{"status":401,"message":"..."}]`; others use `error`/`message` keys or plain text.
pub(crate) fn platform_reason(body: &[u8]) -> Option<String> {
    let body = body.get(..MAX_BODY_BYTES).unwrap_or(body);
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(json) => json_reason(&json, 3),
        Err(_) => {
            let text = String::from_utf8_lossy(body);
            let text = text.trim();
            // An HTML error page is noise, not a reason.
            (!text.is_empty() && !text.starts_with('<'))
                .then(|| text.lines().next().unwrap_or_default().to_owned())
        }
    }
}

fn json_reason(json: &serde_json::Value, depth: u8) -> Option<String> {
    use serde_json::Value;
    const KEYS: [&str; 6] = ["title", "message", "error_description", "error", "detail", "errors"];
    if depth == 0 {
        return None;
    }
    match json {
        Value::String(text) if !text.trim().is_empty() => Some(text.clone()),
        Value::Array(items) => items.iter().find_map(|item| json_reason(item, depth - 1)),
        Value::Object(fields) => {
            KEYS.iter().filter_map(|key| fields.get(*key)).find_map(|value| json_reason(value, depth - 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_reasons_are_found_in_the_usual_body_shapes() {
        let cases: [(&str, Option<&str>); 7] = [
            (r#"{"status":401,"title":"No auth","type":"x"}"#, Some("No auth")),
            (r#"[{"status":401,"message":"Bad token"}]"#, Some("Bad token")),
            (r#"{"error":{"message":"Nested"}}"#, Some("Nested")),
            (r#"{"errors":["First"]}"#, Some("First")),
            ("HTTP Basic: Access denied.\n", Some("HTTP Basic: Access denied.")),
            ("<html><body>401</body></html>", None),
            (r#"{"status":401}"#, None),
        ];
        for (body, expected) in cases {
            assert_eq!(platform_reason(body.as_bytes()).as_deref(), expected, "{body}");
        }
    }

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
