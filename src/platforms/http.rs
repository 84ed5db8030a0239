//! HTTP for the platforms that speak it: one pooled client per engine, and the mapping of
//! answers to `PlatformError` that every HTTP platform shares (a 429 with its wait, 5xx and
//! timeouts passing, 401/403 refused, other 4xx rejected). Messages quote the platform's own
//! reason, scrubbed of every credential that was sent.

use std::sync::Once;
use std::time::Duration;

use reqwest::{Response, StatusCode};

use super::PlatformError;
use crate::ping::http::{platform_reason, status_text};
use crate::ping::{quote_platform_text, root_cause};

/// How much of an error body is read looking for the platform's reason.
const MAX_REASON_BYTES: usize = 16 * 1024;

/// A client that keeps connections to the platforms open between requests. Redirects are not
/// followed, so a credential never travels to a host it was not meant for. A pooled
/// connection belongs to the runtime that opened it, so each engine builds its own client
/// and shares it with all its passes.
pub fn new_client() -> reqwest::Client {
    static CRYPTO_PROVIDER: Once = Once::new();
    // reqwest is built without a bundled provider; ring is the one compiled in.
    CRYPTO_PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_idle_timeout(Duration::from_secs(30))
        .user_agent(concat!("orderbridge/", env!("CARGO_PKG_VERSION")))
        .build()
        .unwrap_or_else(|e| {
            log::error!("could not build the HTTP client ({}); using the default one", root_cause(&e));
            reqwest::Client::new()
        })
}

/// A request that got no answer: refused connection, timeout, TLS failure.
pub fn transport_error(platform: &str, e: &reqwest::Error) -> PlatformError {
    let what = if e.is_timeout() {
        "did not answer in time".to_string()
    } else {
        format!("could not be reached: {}", root_cause(e))
    };
    PlatformError::unreachable(format!("{platform} {what}."))
}

/// How long a rate-limited answer asks us to wait: BigCommerce's
/// `X-Rate-Limit-Time-Reset-Ms`, or a `Retry-After` in seconds.
pub fn asked_wait(response: &Response) -> Option<Duration> {
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("x-rate-limit-time-reset-ms").and_then(|v| v.parse::<u64>().ok()) {
        return Some(Duration::from_millis(ms));
    }
    header("retry-after").and_then(|v| v.parse::<u64>().ok()).map(Duration::from_secs)
}

/// The error an unsuccessful answer means. `refused_statuses` are the statuses that say the
/// credentials were refused (401 and 403 for most platforms).
pub async fn error_for(
    platform: &str,
    response: Response,
    secrets: &[&str],
    refused_statuses: &[u16],
) -> PlatformError {
    let status = response.status();
    let wait = asked_wait(&response);
    let reason = reason(response, secrets).await;
    let said = match &reason {
        Some(text) => format!("HTTP {}: {text}", status_text(status)),
        None => format!("HTTP {}", status_text(status)),
    };
    if status == StatusCode::TOO_MANY_REQUESTS {
        return PlatformError::rate_limited(format!("{platform} asked us to slow down ({said})."), wait);
    }
    if status.is_server_error() {
        return PlatformError::unreachable(format!("{platform} failed to answer ({said})."));
    }
    if refused_statuses.contains(&status.as_u16()) {
        return PlatformError::Refused(format!("{platform} refused the credentials ({said})."));
    }
    PlatformError::Rejected {
        status: status.as_u16(),
        message: format!("{platform} refused the request ({said})."),
    }
}

/// The platform's own reason in an error body, quoted safely.
pub async fn reason(mut response: Response, secrets: &[&str]) -> Option<String> {
    let mut body = Vec::new();
    while body.len() < MAX_REASON_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    platform_reason(&body).map(|text| quote_platform_text(&text, secrets))
}
