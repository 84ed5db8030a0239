//! How orderbridge speaks to ShipBob (annex §4): the URL under the pinned version, the headers,
//! answers read up to a bound and decoded into `wire` types, `next` links kept on ShipBob's
//! host and path, statuses sorted into what a pass and a ping do with them, and the wait of a
//! 429 (`x-retry-after`) kept for the token across passes by `retry`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;

use super::NAME;
use super::wire::Channels;
pub use crate::platforms::api::Answer;
use crate::platforms::api::{self, Auth};
use crate::platforms::{PlatformError, Settings, http, quote_platform_text};

/// The ShipBob API version every path is under (annex: pinned, supported until 2027-01-31).
pub const VERSION: &str = "2026-01";

/// The most pages one walk of a `next` chain follows: more is a loop.
pub const MAX_PAGES: usize = 1_000;

/// ShipBob for one token: the shared transport under `Authorization: Bearer`, with what
/// ShipBob's statuses, error bodies and next links mean.
pub type Api = api::Of<super::ShipBob>;

impl api::Keyed for super::ShipBob {
    const NAMES: (&'static str, &'static str) = (NAME, "shipbob");

    fn base(settings: &Settings) -> &str {
        &settings.shipbob_api_base
    }

    fn auth(token: &str) -> Result<Auth, PlatformError> {
        Auth::bearer(token, NAME)
    }
}

impl Api {
    /// `/{VERSION}/{path}`.
    pub fn path(path: &str) -> String {
        format!("/{VERSION}/{path}")
    }

    /// One request, without trying again: `target` is a path with its query, under the base.
    /// The channel header goes with every order request. Statuses other than 2xx come back as
    /// answers; only no answer at all is an error here.
    pub async fn request(
        &self,
        method: Method,
        target: &str,
        channel: Option<i32>,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, PlatformError> {
        let mut request = api::Api::request(self, method, self.target(target), body);
        if let Some(channel) = channel {
            request = request.header("shipbob_channel_id", channel.to_string());
        }
        let answer = self.exchange(request, &operation(target)).await?;
        match self.passing(answer.status, &answer.headers, target) {
            Some(error) => Err(error),
            None => Ok(answer),
        }
    }

    /// What a 401, 403, 429 (its wait in `x-retry-after`) or 5xx means for any request
    /// (annex §4); `None` for the others, which each operation reads itself.
    fn passing(&self, status: StatusCode, headers: &HeaderMap, target: &str) -> Option<PlatformError> {
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                Some(PlatformError::Refused(format!("{NAME} refused the token (HTTP {}).", status.as_u16())))
            }
            s => api::Api::passing(self, s, || retry_after(headers), &operation(target)),
        }
    }

    /// A request tried again on passing failures (reads, and writes ShipBob takes the same
    /// however often they arrive), under the token's gate and waits.
    pub async fn send(
        &self,
        method: Method,
        target: &str,
        channel: Option<i32>,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, PlatformError> {
        api::Api::send(self, || self.request(method.clone(), target, channel, body)).await
    }

    /// A 2xx answer's JSON as `T`; any other status is refused for good, naming it.
    pub fn read<T: DeserializeOwned>(&self, answer: &Answer, target: &str) -> Result<T, PlatformError> {
        if !answer.status.is_success() {
            return Err(self.refused(answer, target));
        }
        self.decode(&answer.body, &operation(target))
    }

    /// A status no operation takes, as a refusal for good quoting ShipBob's reason.
    pub fn refused(&self, answer: &Answer, target: &str) -> PlatformError {
        self.rejected(answer, &operation(target), &self.reasons(&answer.body))
    }

    /// ShipBob's messages in an error body, quoted without the token.
    pub fn reasons(&self, body: &[u8]) -> String {
        reasons(body, &self.secrets())
    }

    /// A `next` link as a target under the base, whose path must be `path`, the list's own
    /// (annex §4).
    pub fn follow(&self, next: &str, path: &str) -> Result<String, PlatformError> {
        // Annex §4: a link is a path with its query or an absolute URL, and either is asked at
        // `{shipbob_api_base}` with its path and query: the token never goes to another host.
        let Some(relative) = link_target(next) else {
            return Err(PlatformError::BadData(format!(
                "{NAME}'s next link for {path} is neither a path nor a URL; the list was not read further."
            )));
        };
        let link_path = relative.split('?').next().unwrap_or_default();
        if !link_path.eq_ignore_ascii_case(path) {
            return Err(PlatformError::BadData(format!(
                "{NAME}'s next link for {path} leads elsewhere ({link_path}); the list was not read further."
            )));
        }
        Ok(relative)
    }

    /// Get Channels, every page: the channels of the token.
    pub async fn channels(&self, once: bool) -> Result<Vec<super::wire::Channel>, PlatformError> {
        let path = Self::path("channel");
        let mut target = path.clone();
        let mut all = Vec::new();
        for _ in 0..MAX_PAGES {
            let answer = if once {
                self.ask_once(self.request(Method::GET, &target, None, None)).await?
            } else {
                self.send(Method::GET, &target, None, None).await?
            };
            let page: Channels = match self.read(&answer, &target) {
                // A wrong base or a version ShipBob no longer serves says nothing good of
                // the token either: the ping names the status and the path.
                Err(PlatformError::Rejected { message, .. }) => return Err(PlatformError::Refused(message)),
                other => other?,
            };
            all.extend(page.items);
            match page.next.filter(|n| !n.is_empty()) {
                Some(next) => target = self.follow(&next, &path)?,
                None => return Ok(all),
            }
        }
        Err(PlatformError::BadData(format!("{NAME}'s channel list went on past {MAX_PAGES} pages.")))
    }

    /// The ping (annex §2): a channel of the token that may create orders, the adapter's own
    /// when it names one.
    pub async fn ping_channel(&self, wanted: Option<i64>) -> Result<(), PlatformError> {
        let channels = self.channels(true).await?;
        let writable = |c: &&super::wire::Channel| c.may_create_orders();
        match wanted {
            Some(id) if channels.iter().filter(writable).any(|c| i64::from(c.id) == id) => Ok(()),
            Some(id) => {
                let found: Vec<String> = channels.iter().filter(writable).map(|c| c.id.to_string()).collect();
                Err(PlatformError::Refused(format!(
                    "channel {id} is not one of this token's channels with orders_write (found: {}).",
                    if found.is_empty() { "none".to_string() } else { found.join(", ") }
                )))
            }
            None if channels.iter().any(|c| c.may_create_orders()) => Ok(()),
            None => Err(PlatformError::Refused(
                "this token has no channel with orders_write: give the token the orders scopes.".into(),
            )),
        }
    }
}

/// The channel orders are created on, without a `channel_id`: among the token's channels
/// with `orders_write`, the `SMA` one (the token's own), else the lowest id (annex §5.2).
pub fn own_channel(channels: &[super::wire::Channel]) -> Option<i32> {
    let writable = channels.iter().filter(|c| c.may_create_orders());
    let sma = writable.clone().filter(|c| c.application_name.as_deref() == Some("SMA")).map(|c| c.id).min();
    sma.or_else(|| writable.map(|c| c.id).min())
}

/// "GET /2026-01/order": how a message names the request of `target`.
fn operation(target: &str) -> String {
    target.split('?').next().unwrap_or(target).to_string()
}

/// The wait a 429 asks for: ShipBob's `x-retry-after`, else `Retry-After`.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    http::retry_after(headers, "x-retry-after").or_else(|| http::retry_after(headers, "retry-after"))
}

/// ShipBob's error messages: `{"Member.Path": ["message"]}` written `member: message`, joined by
/// `; `, at most 300 characters; else its `title`/`detail`, else the text itself.
fn reasons(body: &[u8], secrets: &[&str]) -> String {
    let text = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(map)) => {
            let mut parts = Vec::new();
            for (member, said) in &map {
                let messages: Vec<&str> = match said {
                    serde_json::Value::Array(list) => list.iter().filter_map(|m| m.as_str()).collect(),
                    serde_json::Value::String(one)
                        if matches!(member.as_str(), "title" | "detail" | "message") =>
                    {
                        vec![one.as_str()]
                    }
                    _ => Vec::new(),
                };
                for message in messages {
                    parts.push(if member.is_empty() || !said.is_array() {
                        message.to_string()
                    } else {
                        format!("{member}: {message}")
                    });
                }
            }
            parts.join("; ")
        }
        Ok(_) | Err(_) => String::from_utf8_lossy(body.get(..2048).unwrap_or(body)).into_owned(),
    };
    let quoted = quote_platform_text(&text, secrets);
    if quoted.chars().count() > 300 { quoted.chars().take(299).collect::<String>() + "…" } else { quoted }
}

/// Whether a request whose answer never came may have reached ShipBob: set by a create that
/// got no verdict, so the next try looks the reference up first.
#[derive(Debug, Default)]
pub struct Doubt(AtomicBool);

impl Doubt {
    pub fn raise(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// A `next` link's path and query, whether it came as a path or as an absolute URL.
fn link_target(next: &str) -> Option<String> {
    match url::Url::parse(next) {
        Ok(absolute) => Some(match absolute.query() {
            Some(query) => format!("{}?{query}", absolute.path()),
            None => absolute.path().to_string(),
        }),
        Err(_) if next.starts_with('/') => Some(next.to_string()),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_next_link_is_asked_at_the_base_with_its_path_and_query_whatever_host_it_names() {
        assert_eq!(link_target("/2026-01/channel?cursor=eyJ"), Some("/2026-01/channel?cursor=eyJ".into()));
        assert_eq!(
            link_target("https://api.shipbob.com/2026-01/channel?cursor=eyJ"),
            Some("/2026-01/channel?cursor=eyJ".into())
        );
        assert_eq!(link_target("https://elsewhere.example/2026-01/order"), Some("/2026-01/order".into()));
        assert_eq!(link_target("page=2"), None);
    }

    #[test]
    fn reasons_are_member_and_message_and_never_the_token() {
        let body =
            br#"{"Recipient.Address.Country": ["'ZZ' is not a valid country code"], "": ["Bad tok-9"]}"#;
        assert_eq!(
            reasons(body, &["tok-9"]),
            "Bad [redacted]; Recipient.Address.Country: 'ZZ' is not a valid country code"
        );
        assert_eq!(reasons(br#"{"title": "Not Found"}"#, &[]), "Not Found");
        assert_eq!(reasons(b"<html>oops</html>", &[]), "<html>oops</html>");
        assert!(
            reasons(format!("{{\"a\": [\"{}\"]}}", "x".repeat(500)).as_bytes(), &[]).chars().count() <= 300
        );
    }

    #[test]
    fn the_wait_of_a_429_is_shipbobs_header_before_retry_after() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "9".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(9)));
        headers.insert("x-retry-after", "18446744073709551615".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(u64::MAX)));
    }

    #[test]
    fn the_token_s_channel_is_sma_else_the_lowest_that_may_create_orders() {
        let channel = |id, app: &str, write: bool| super::super::wire::Channel {
            id,
            application_name: Some(app.into()),
            scopes: Some(if write { vec!["orders_write".into()] } else { vec!["orders_read".into()] }),
        };
        assert_eq!(
            own_channel(&[
                channel(1, "ShipBob", false),
                channel(9, "SMA", true),
                channel(3, "Shopify", true)
            ]),
            Some(9)
        );
        assert_eq!(own_channel(&[channel(7, "Shopify", true), channel(3, "Other", true)]), Some(3));
        assert_eq!(own_channel(&[channel(1, "ShipBob", false)]), None);
    }
}
