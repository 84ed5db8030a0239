//! The HTTP side every HTTP platform shares: the one client of the process, sending under a
//! deadline, and sorting an answer that is not 2xx into a [`PlatformError`].
//!
//! How answers sort: 401/403 is a refusal (but Sellbrite's 403 `Rate Limit Exceeded`, which
//! is its rate limit); 429, 408 and 5xx are passing, with the wait the platform asked for
//! (`Retry-After` seconds, or BigCommerce's `X-Rate-Limit-Time-Reset-Ms`); every other answer
//! (3xx, other 4xx) is refused for good. A platform module handles the statuses that mean
//! something of its own (BigCommerce's 404 for an unknown store) before asking [`classify`].
//!
//! Every platform reads the wait it is asked for through [`retry_after`] (under the header
//! name the platform uses) or [`reset_ms`]; `retry` keeps it under one cap for all of them.

use std::sync::{Once, OnceLock};
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use reqwest::{Response, StatusCode};

use super::{PlatformError, describe_duration, quote_platform_text, root_cause};

/// The one HTTP client of the process: it pools connections and TLS sessions, which a client
/// per request would throw away. Timeouts are set on each request. Redirects are not
/// followed, so a credential never travels to a host it was not meant for.
pub fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        builder()
            .build()
            // Building fails only when the TLS backend cannot start, which `builder` rules
            // out; the plain client is the same but for the settings.
            .unwrap_or_default()
    })
}

/// The settings every client of the process shares; `reach` adds its resolver to them for
/// the client of customer users' addresses.
pub(crate) fn builder() -> reqwest::ClientBuilder {
    static CRYPTO_PROVIDER: Once = Once::new();
    // reqwest is built without a bundled provider; ring is the one compiled in. If the
    // process already installed a provider, that one stays and reqwest uses it.
    CRYPTO_PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_idle_timeout(Duration::from_secs(30))
        .user_agent(concat!("orderbridge/", env!("CARGO_PKG_VERSION")))
}

/// How much of an error body is read looking for the platform's reason.
const MAX_BODY_BYTES: usize = 16 * 1024;

/// The largest answer a client reads unless told otherwise (`max_platform_body_mib`'s
/// default).
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 16 << 20;

/// Reads a 2xx answer's body, at most `limit` bytes: a platform that sends more (or says it
/// will) fails the step with `BadData`, and reading stops there, so no answer makes the
/// process hold more than the limit. `what` names the request in messages.
pub async fn read_answer(
    mut response: Response,
    limit: usize,
    platform: &str,
    what: &str,
) -> Result<Vec<u8>, PlatformError> {
    if response.content_length().is_some_and(|len| len > limit as u64) {
        return Err(too_large(platform, what, limit));
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > limit {
                    return Err(too_large(platform, what, limit));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => {
                return Err(PlatformError::unreachable(format!(
                    "{platform} broke off its answer to {what}: {}.",
                    root_cause(&e.without_url())
                )));
            }
        }
    }
}

/// The failure of an answer past `limit` bytes.
pub fn too_large(platform: &str, what: &str, limit: usize) -> PlatformError {
    PlatformError::BadData(format!(
        "{platform} sent an answer to {what} larger than {} (max_platform_body_mib); orderbridge stopped reading it.",
        describe_bytes(limit)
    ))
}

/// `16 MiB`, or a byte count when the limit is not whole MiB.
pub fn describe_bytes(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Sends with `timeout` on the request. A failure to get any answer (refused connection,
/// DNS, TLS, timeout) is passing: the platform may be back later.
pub async fn send(
    request: reqwest::RequestBuilder,
    timeout: Duration,
    platform: &str,
    api_base: &str,
) -> Result<Response, PlatformError> {
    request.timeout(timeout).send().await.map_err(|e| {
        if e.is_timeout() {
            return PlatformError::unreachable(format!(
                "{platform} did not answer within {}.",
                describe_duration(timeout)
            ));
        }
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
        PlatformError::unreachable(format!(
            "{platform} could not be reached at {host}: {}.",
            root_cause(&e.without_url())
        ))
    })
}

/// The sorting itself (see the module doc); `body` is the start of the answer's body.
pub fn classify(
    platform: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    secrets: &[&str],
) -> PlatformError {
    let said = status_and_reason(status, body, secrets);
    let rate_limit_body = String::from_utf8_lossy(body).trim().eq_ignore_ascii_case("Rate Limit Exceeded");
    if status == StatusCode::TOO_MANY_REQUESTS || (status == StatusCode::FORBIDDEN && rate_limit_body) {
        return PlatformError::rate_limited(
            format!("{platform} asked us to slow down ({said})."),
            wait(headers),
        );
    }
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            PlatformError::Refused(format!("{platform} refused the credentials ({said})."))
        }
        s if s.is_server_error() || s == StatusCode::REQUEST_TIMEOUT => PlatformError::Unreachable {
            message: format!("{platform} answered without a verdict ({said})."),
            wait: wait(headers),
            rate_limited: false,
        },
        s => PlatformError::Rejected {
            status: s.as_u16(),
            message: format!("{platform} refused the request ({said})."),
        },
    }
}

/// The wait a platform asked for: `Retry-After`, or `X-Rate-Limit-Time-Reset-Ms`.
fn wait(headers: &HeaderMap) -> Option<Duration> {
    retry_after(headers, "retry-after").or_else(|| reset_ms(headers, "x-rate-limit-time-reset-ms"))
}

/// The wait a platform asked for in the header `name` (`Retry-After`, ShipBob's
/// `x-retry-after`): whole seconds, a fraction of them (Shopify), or an HTTP date. Text that
/// is none of these, or a number no wait can hold (negative, NaN, 1e300), names no wait.
///
/// The wait is returned as asked, so a message can quote it. The one cap on every
/// platform's wait is where `retry` keeps it (`hold_off`: at most a day), and whether a pass
/// takes it at all is the retry policy's `longest_wait` (CONTRACT §11).
pub fn retry_after(headers: &HeaderMap, name: &str) -> Option<Duration> {
    retry_after_at(headers, name, SystemTime::now())
}

/// [`retry_after`] with `now` the time an HTTP date is measured from.
pub fn retry_after_at(headers: &HeaderMap, name: &str, now: SystemTime) -> Option<Duration> {
    let text = headers.get(name)?.to_str().ok()?.trim();
    match (text.parse::<u64>(), text.parse::<f64>()) {
        (Ok(seconds), _) => Some(Duration::from_secs(seconds)),
        (Err(_), Ok(seconds)) => Duration::try_from_secs_f64(seconds).ok(),
        (Err(_), Err(_)) => {
            Some(httpdate::parse_http_date(text).ok()?.duration_since(now).unwrap_or(Duration::ZERO))
        }
    }
}

/// A wait in milliseconds in the header `name` (BigCommerce's `X-Rate-Limit-Time-Reset-Ms`),
/// kept under the same cap as [`retry_after`]'s.
pub fn reset_ms(headers: &HeaderMap, name: &str) -> Option<Duration> {
    headers.get(name)?.to_str().ok()?.trim().parse::<u64>().ok().map(Duration::from_millis)
}

/// A `next` link (a path with its query, or an absolute URL) as a target under `base`: its
/// path below the base's own path, with its query. The link is resolved against the base and
/// followed only when it stays on the base's scheme, host, port and path, so a credential
/// never travels elsewhere; otherwise it is `bad_data` naming the `list` whose pages it
/// links.
pub fn follow(platform: &str, base: &str, next: &str, list: &str) -> Result<String, PlatformError> {
    let elsewhere = || {
        PlatformError::BadData(format!(
            "{platform}'s next link for {list} leads elsewhere; the list was not read further."
        ))
    };
    let base = url::Url::parse(base).map_err(|_| elsewhere())?;
    let link = base.join(next).map_err(|_| elsewhere())?;
    if link.scheme() != base.scheme()
        || link.host_str() != base.host_str()
        || link.port_or_known_default() != base.port_or_known_default()
    {
        return Err(elsewhere());
    }
    let prefix = base.path().trim_end_matches('/');
    let path = link.path().strip_prefix(prefix).filter(|p| p.starts_with('/')).ok_or_else(elsewhere)?;
    Ok(match link.query() {
        Some(query) => format!("{path}?{query}"),
        None => path.to_string(),
    })
}

/// The first 16 KiB of an answer that is not 2xx, all its reason needs; a body that breaks
/// off is what came.
pub async fn read_reason(mut response: Response) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < MAX_BODY_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body
}

/// "HTTP 401 Unauthorized: <the platform's error text>", the text only if it sent one.
fn status_and_reason(status: StatusCode, body: &[u8], secrets: &[&str]) -> String {
    let status = status_text(status);
    match platform_reason(body) {
        Some(reason) => format!("HTTP {status}: {}", quote_platform_text(&reason, secrets)),
        None => format!("HTTP {status}"),
    }
}

pub fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The error text in a platform's body: BigCommerce sends `{"status":401,"title":"..."}` or
/// `[{"status":401,"message":"..."}]`; others use `error`/`message` keys or plain text.
fn platform_reason(body: &[u8]) -> Option<String> {
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
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn rate_limits_and_server_errors_are_passing_with_the_wait_asked_for() {
        let none = HeaderMap::new();
        let cases = [
            (429, headers(&[("retry-after", "7")]), "", Some(Duration::from_secs(7)), true),
            (
                429,
                headers(&[("x-rate-limit-time-reset-ms", "1500")]),
                "",
                Some(Duration::from_millis(1500)),
                true,
            ),
            (429, none.clone(), "", None, true),
            (403, none.clone(), "Rate Limit Exceeded", None, true),
            (503, headers(&[("retry-after", "3")]), "", Some(Duration::from_secs(3)), false),
            (500, none.clone(), "boom", None, false),
            (408, none.clone(), "", None, false),
        ];
        for (status, headers, body, wait, limited) in cases {
            let error = classify("P", StatusCode::from_u16(status).unwrap(), &headers, body.as_bytes(), &[]);
            assert!(error.is_passing(), "{status}: {error:?}");
            let PlatformError::Unreachable { wait: got, rate_limited, .. } = error else { unreachable!() };
            assert_eq!((got, rate_limited), (wait, limited), "{status}");
        }
    }

    #[test]
    fn a_wait_is_seconds_a_fraction_or_a_date_as_asked() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let cases: [(&str, Option<Duration>); 9] = [
            ("23", Some(Duration::from_secs(23))),
            (" 600 ", Some(Duration::from_secs(600))),
            ("2.5", Some(Duration::from_millis(2500))),
            ("Sun, 06 Nov 1994 08:50:07 GMT", Some(Duration::from_secs(30))),
            ("Sun, 06 Nov 1994 08:00:00 GMT", Some(Duration::ZERO)),
            ("18446744073709551615", Some(Duration::from_secs(u64::MAX))),
            ("-1", None),
            ("1e300", None),
            ("soon", None),
        ];
        for (text, expected) in cases {
            let asked = headers(&[("x-retry-after", text)]);
            assert_eq!(retry_after_at(&asked, "x-retry-after", now), expected, "{text}");
            assert_eq!(retry_after_at(&asked, "retry-after", now), None, "{text}: another header");
        }
        let reset = headers(&[("x-rate-limit-time-reset-ms", "18446744073709551615")]);
        assert_eq!(reset_ms(&reset, "x-rate-limit-time-reset-ms"), Some(Duration::from_millis(u64::MAX)));
    }

    #[test]
    fn a_next_link_is_followed_only_on_the_bases_scheme_host_port_and_path() {
        let cases: [(&str, &str, Option<&str>); 10] = [
            ("https://api.test", "/v2/inventory?page=2", Some("/v2/inventory?page=2")),
            ("https://api.test", "https://api.test/v2/inventory?page=2", Some("/v2/inventory?page=2")),
            ("https://api.test", "https://api.test:443/v2/inventory", Some("/v2/inventory")),
            ("https://api.test/sandbox", "/sandbox/v2/inventory?page=2", Some("/v2/inventory?page=2")),
            ("http://127.0.0.1:8080", "/2026-01/channel?cursor=eyJ9", Some("/2026-01/channel?cursor=eyJ9")),
            ("https://api.test", "https://evil.test/v2/inventory?page=2", None),
            ("https://api.test", "http://api.test/v2/inventory?page=2", None),
            ("https://api.test", "https://api.test:8443/v2/inventory", None),
            ("https://api.test", "//evil.test/v2/inventory", None),
            ("https://api.test/sandbox", "/v2/inventory?page=2", None),
        ];
        for (base, next, expected) in cases {
            let followed = follow("P", base, next, "/v2/inventory");
            match expected {
                Some(target) => assert_eq!(followed.ok().as_deref(), Some(target), "{base} {next}"),
                None => {
                    let Err(e) = followed else { panic!("{base} {next} was followed") };
                    assert!(e.message().contains("leads elsewhere"), "{e}");
                }
            }
        }
    }

    #[test]
    fn refusals_and_other_client_errors_are_permanent() {
        let none = HeaderMap::new();
        for status in [401, 403] {
            let error = classify("P", StatusCode::from_u16(status).unwrap(), &none, b"no", &["no"]);
            assert!(matches!(error, PlatformError::Refused(_)), "{status}: {error:?}");
        }
        for status in [404, 400, 422, 302] {
            let error = classify("P", StatusCode::from_u16(status).unwrap(), &none, b"", &[]);
            assert!(matches!(error, PlatformError::Rejected { status: s, .. } if s == status), "{error:?}");
            assert!(!error.is_passing());
        }
    }

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
}
