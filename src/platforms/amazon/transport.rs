//! How orderbridge speaks to Amazon (annex §5, *Transport*, *Token*, *Rate limits*,
//! *Errors*): the regional base, the headers of every SP-API request, Login with Amazon's
//! token exchange with the access token kept in memory only (shared by every store with the
//! same credentials, fetched again 60 s before it runs out and once after a 401/403), the
//! pacing of [`super::pacing`], answers read up to a bound, and Amazon's `errors[].message`
//! quoted without any credential.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap};
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::Value;

use super::NAME;
use super::pacing::{self, Operation};
use crate::platforms::api::{self, Api, Auth};
use crate::platforms::retry::{self, Account, RetryPolicy};
use crate::platforms::token::{self, Asked};
use crate::platforms::{Adapter, PlatformError, Settings, http, quote_platform_text};

/// `User-Agent`: Amazon asks for `AppId/AppVersion (Language=…)`.
const USER_AGENT: &str = concat!("orderbridge/", env!("CARGO_PKG_VERSION"), " (Language=Rust)");

/// 429s one request takes in one pass before it is not sent again in it.
const MAX_429: u32 = 3;

/// The content type of a feed document, named at its creation and sent with its upload.
pub const FEED_CONTENT_TYPE: &str = "application/json; charset=UTF-8";

/// One seller account of a validated adapter, in one region.
pub struct Seller {
    pub region: String,
    pub marketplace_ids: Vec<String>,
    pub seller_id: String,
    client_id: String,
    client_secret: String,
    refresh_token: String,
    /// The SP-API base with the region filled in, spending (with the buckets of `pacing`)
    /// the account of `client_id`, `seller_id` and region (no secret). The access token goes
    /// on each request; its policy's `request_timeout` bounds one answer and a wait for a
    /// rate-limit token.
    api: Api,
    /// Login with Amazon's token endpoint, read up to 64 KiB.
    lwa: Api,
    /// Whose access token requests carry: a fingerprint of the three credentials.
    credentials: String,
}

/// An SP-API answer that is not one the transport handles itself: its status, body and
/// `Date` (ms), and the access token it answered, which a quote of it never shows.
pub struct Answer {
    pub status: StatusCode,
    pub body: Vec<u8>,
    pub date: Option<i64>,
    token: String,
}

impl Answer {
    /// The answer's JSON, or `bad_data` naming the operation.
    pub fn json<T: serde::de::DeserializeOwned>(&self, op: Operation) -> Result<T, PlatformError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            PlatformError::BadData(format!(
                "Amazon's answer to {} is not the documented JSON: {}.",
                op.name(),
                e.to_string().split(" at line").next().unwrap_or_default()
            ))
        })
    }
}

/// Amazon's error body: `{"errors": [{"code", "message", "details"}]}`.
#[derive(Deserialize, Default)]
struct Errors {
    #[serde(default)]
    errors: Vec<ErrorItem>,
}

#[derive(Deserialize, Default)]
struct ErrorItem {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    code: Option<String>,
}

impl Seller {
    /// The seller of a validated adapter; `policy` for a pass (a ping: one try).
    pub fn new(
        settings: &Settings,
        adapter: &Adapter,
        policy: Option<RetryPolicy>,
    ) -> Result<Seller, PlatformError> {
        let text = |key: &str| {
            adapter
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or_else(|| PlatformError::Refused(format!("The Amazon adapter has no {key}.")))
        };
        let region = text("region")?.to_ascii_lowercase();
        let marketplace_ids: Vec<String> = match adapter.get("marketplace_ids") {
            Some(Value::Array(ids)) => ids.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => Vec::new(),
        };
        if marketplace_ids.is_empty() {
            return Err(PlatformError::Refused("The Amazon adapter has no marketplace_ids.".into()));
        }
        let (seller_id, client_id) = (text("seller_id")?, text("client_id")?);
        let (client_secret, refresh_token) = (text("client_secret")?, text("refresh_token")?);
        let base = settings.amazon_api_base.replace("{region}", &region).trim_end_matches('/').to_string();
        let token_url = format!("{}/auth/o2/token", settings.amazon_lwa_base.trim_end_matches('/'));
        let policy = policy.unwrap_or_else(|| api::one_try(settings.timeout));
        let account = format!("amazon:{client_id}:{seller_id}:{region}");
        Ok(Seller {
            api: Api::new(NAME, &base, Auth::None, account, policy, settings.max_body_bytes),
            credentials: api::account(
                "amazon-lwa",
                &token_url,
                &format!("{client_id}\n{client_secret}\n{refresh_token}"),
            ),
            region,
            marketplace_ids,
            seller_id,
            client_id,
            client_secret,
            refresh_token,
            lwa: Api::new("Login with Amazon", &token_url, Auth::None, String::new(), policy, 64 * 1024),
        })
    }

    pub fn max_body(&self) -> usize {
        self.api.max_body
    }

    /// What a message never shows: the secrets, the access token named and the one in memory.
    fn secrets(&self, token: &str) -> Vec<String> {
        let mut secrets = vec![self.client_secret.clone(), self.refresh_token.clone(), token.to_string()];
        secrets.extend(token::held(&self.credentials));
        secrets
    }

    /// Amazon's text as a message may quote it: without any credential.
    pub fn quote(&self, text: &str) -> String {
        let secrets = self.secrets("");
        quote_platform_text(text, &secrets.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// The marketplace ids as a query value: comma-separated, each encoded.
    pub fn marketplaces(&self) -> String {
        self.marketplace_ids.iter().map(|id| encode(id)).collect::<Vec<_>>().join(",")
    }

    /// An access token: the one in memory while it has more than a minute left, unless
    /// `fresh`, else a new one from Login with Amazon.
    pub async fn token(&self, fresh: bool) -> Result<String, PlatformError> {
        if !fresh && let Some(token) = token::good(&self.credentials) {
            return Ok(token);
        }
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", self.refresh_token.as_str()),
            ("client_id", self.client_id.as_str()),
            ("client_secret", self.client_secret.as_str()),
        ];
        let answer = match token::ask(&self.lwa, &self.lwa.base, &form, "the token exchange").await? {
            Asked::Granted { token, expires_in } => {
                token::keep(&self.credentials, &token, Some(Duration::from_secs(expires_in.unwrap_or(3600))));
                return Ok(token);
            }
            Asked::NoToken => {
                return Err(PlatformError::unreachable(
                    "Login with Amazon answered the token exchange without an access_token.",
                ));
            }
            Asked::Refused(answer) => answer,
        };
        let status = answer.status;
        let said = token::refusal(&answer, |text| self.quote(text));
        if status.is_client_error() && status != StatusCode::TOO_MANY_REQUESTS {
            return Err(PlatformError::Refused(format!(
                "Login with Amazon refused the credentials ({said})."
            )));
        }
        Err(PlatformError::unreachable(format!("Login with Amazon gave no token ({said}).")))
    }

    /// Whether `op` may be sent now without waiting: a ping never waits (annex §3).
    pub fn may_ask_now(&self, ops: &[Operation]) -> Result<(), PlatformError> {
        for &op in ops {
            let wait = pacing::wait(&self.api.account, op);
            if !wait.is_zero() {
                return Err(not_now(op, wait));
            }
        }
        Ok(())
    }

    /// A ping's one request: one token from the bucket (none: nothing sent), a 429 empties
    /// it; every status comes back as an answer but for no answer at all.
    pub async fn ask_once(
        &self,
        op: Operation,
        token: &str,
        target: &str,
    ) -> Result<(StatusCode, Vec<u8>), PlatformError> {
        pacing::take(&self.api.account, op).map_err(|wait| not_now(op, wait))?;
        let _permit = retry::permit(Account::from(self.api.account.as_str())).await;
        let answer = self.send_once(op, Method::GET, target, token, None).await?;
        pacing::learn_rate(&self.api.account, op, header(&answer.headers, "x-amzn-ratelimit-limit"));
        if answer.status == StatusCode::TOO_MANY_REQUESTS {
            pacing::empty(&self.api.account, op);
        }
        Ok((answer.status, answer.body))
    }

    /// The request itself, with Amazon's headers, and its answer.
    async fn send_once(
        &self,
        op: Operation,
        method: Method,
        target: &str,
        token: &str,
        body: Option<&Value>,
    ) -> Result<api::Answer, PlatformError> {
        let request = self.api.request(method, self.api.target(target), body);
        let request =
            request.header("x-amz-access-token", token).header(reqwest::header::USER_AGENT, USER_AGENT);
        self.api.exchange(request, op.name()).await
    }

    /// One SP-API operation in a pass: paced by the account's bucket (waiting for a token at
    /// most the timeout, else [`PlatformError::NotYet`]), a new token and one more try after
    /// a 401/403, passing failures tried again per the policy, 429s waited out by the bucket
    /// up to three. 2xx and the 4xx an operation reads itself (400, 404, 413, 415, …) come
    /// back as answers.
    pub async fn call(
        &self,
        op: Operation,
        method: Method,
        target: &str,
        body: Option<&Value>,
    ) -> Result<Answer, PlatformError> {
        let (mut limited, mut refreshed, mut tries) = (0u32, false, 1u32);
        loop {
            // The token first: an account's buckets are made only once Login with Amazon
            // has accepted its credentials.
            let token = self.token(false).await?;
            self.pace(op).await?;
            let permit = retry::permit(Account::from(self.api.account.as_str())).await;
            let outcome = self.send_once(op, method.clone(), target, &token, body).await;
            drop(permit);
            let failure = match outcome {
                Ok(answer) => {
                    let date = answer.date_ms();
                    let api::Answer { status, headers, body } = answer;
                    if status.is_success() {
                        pacing::learn_rate(&self.api.account, op, header(&headers, "x-amzn-ratelimit-limit"));
                    }
                    match status {
                        StatusCode::TOO_MANY_REQUESTS => {
                            pacing::empty(&self.api.account, op);
                            limited += 1;
                            if limited >= MAX_429 {
                                let next = pacing::at(pacing::wait(&self.api.account, op));
                                return Err(PlatformError::rate_limited(
                                    format!(
                                        "Amazon answered {} with 429 QuotaExceeded {limited} times; it allows the next at {next}.",
                                        op.name()
                                    ),
                                    None,
                                ));
                            }
                            continue;
                        }
                        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                            if !refreshed {
                                refreshed = true;
                                token::forget(&self.credentials);
                                continue;
                            }
                            return Err(PlatformError::Refused(format!(
                                "Amazon refused the credentials for {} ({}).",
                                op.name(),
                                self.said(status, &body, &token)
                            )));
                        }
                        s if s.is_server_error() || s == StatusCode::REQUEST_TIMEOUT => {
                            PlatformError::unreachable(format!(
                                "Amazon answered {} without a verdict ({}).",
                                op.name(),
                                self.said(status, &body, &token)
                            ))
                        }
                        s if s.is_redirection() => {
                            return Err(PlatformError::BadData(format!(
                                "Amazon answered {} with a redirect (HTTP {}).",
                                op.name(),
                                http::status_text(s)
                            )));
                        }
                        _ => return Ok(Answer { status, body, date, token }),
                    }
                }
                Err(e) if e.is_passing() => e,
                Err(e) => return Err(e),
            };
            // A write whose outcome is unknown is not sent again here: the next try of the
            // step starts with its check (a confirmation's `getOrder`).
            if tries >= self.api.policy.tries.max(1) || method != Method::GET {
                return Err(failure);
            }
            tries += 1;
            tokio::time::sleep(retry::wait_before(&self.api.policy, tries, &failure)).await;
        }
    }

    /// Waits for a token of `op`'s bucket, if it comes within the timeout.
    async fn pace(&self, op: Operation) -> Result<(), PlatformError> {
        // Bounded: each round either takes a token or sleeps until one is due.
        for _ in 0..8 {
            match pacing::take(&self.api.account, op) {
                Ok(()) => return Ok(()),
                Err(wait) if wait <= self.api.policy.request_timeout => tokio::time::sleep(wait).await,
                Err(wait) => {
                    return Err(PlatformError::NotYet(format!(
                        "Amazon allows the next {} at {}",
                        op.name(),
                        pacing::at(wait)
                    )));
                }
            }
        }
        let wait = pacing::wait(&self.api.account, op);
        Err(PlatformError::NotYet(format!("Amazon allows the next {} at {}", op.name(), pacing::at(wait))))
    }

    /// "HTTP 400 Bad Request: <Amazon's messages>", without any credential.
    pub fn said(&self, status: StatusCode, body: &[u8], token: &str) -> String {
        match messages(body) {
            Some(text) => {
                format!(
                    "HTTP {}: {}",
                    http::status_text(status),
                    quote_platform_text(
                        &text,
                        &self.secrets(token).iter().map(String::as_str).collect::<Vec<_>>()
                    )
                )
            }
            None => format!("HTTP {}", http::status_text(status)),
        }
    }

    /// An answer other than the one expected to `what` (a pull, a lookup, a feed call):
    /// Amazon's refusal, quoted.
    pub fn refusal(&self, answer: &Answer, what: &str) -> PlatformError {
        PlatformError::Rejected {
            status: answer.status.as_u16(),
            message: format!("Amazon refused {what} ({}).", self.said_of(answer)),
        }
    }

    /// "HTTP 400 Bad Request: <Amazon's messages>" of an answer, without any credential.
    pub fn said_of(&self, answer: &Answer) -> String {
        self.said(answer.status, &answer.body, &answer.token)
    }

    /// Amazon's messages of an answer, quoted without any credential (for a refusal).
    pub fn reason(&self, answer: &Answer) -> String {
        messages(&answer.body)
            .map(|text| {
                let secrets = self.secrets(&answer.token);
                quote_platform_text(&text, &secrets.iter().map(String::as_str).collect::<Vec<_>>())
            })
            .unwrap_or_else(|| "no reason given".into())
    }

    /// Whether anything of this seller's is kept in memory: a bucket or an access token.
    #[cfg(test)]
    pub fn keeps_anything(&self) -> bool {
        pacing::holds(&self.api.account) || token::held(&self.credentials).is_some()
    }

    /// A request to a presigned document URL (annex §5, *Stock*): no SP-API header and no
    /// token; only `Content-Type` on an upload. Its answer, read up to the bound.
    pub async fn document(
        &self,
        method: Method,
        url: &str,
        upload: Option<Vec<u8>>,
        what: &str,
    ) -> Result<(StatusCode, Vec<u8>), PlatformError> {
        let mut request = self.api.bare(method, url);
        if let Some(bytes) = upload {
            request = request.header(CONTENT_TYPE, FEED_CONTENT_TYPE).body(bytes);
        }
        // Named by its own host in messages: a document is not at the SP-API base.
        let answer = self
            .api
            .read(http::send(request, self.api.policy.request_timeout, NAME, url).await?, what)
            .await?;
        Ok((answer.status, answer.body))
    }
}

/// A ping's request the bucket has no token for: nothing is sent.
fn not_now(op: Operation, wait: Duration) -> PlatformError {
    PlatformError::unreachable(format!(
        "Amazon allows the next {} at {}; nothing was sent.",
        op.name(),
        pacing::at(wait)
    ))
}

/// Amazon's `errors[].message` joined with `; ` (its `code` where a message is missing).
pub fn messages(body: &[u8]) -> Option<String> {
    let errors: Errors = serde_json::from_slice(body).ok()?;
    let said: Vec<String> = errors
        .errors
        .into_iter()
        .filter_map(|e| e.message.filter(|m| !m.trim().is_empty()).or(e.code))
        .collect();
    (!said.is_empty()).then(|| said.join("; "))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A query value, percent-encoded (a pagination token may hold `+`, `/` and `=`).
pub fn encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC).to_string()
}

pub use crate::platforms::api::segment;

/// A time as Amazon's queries take it: UTC `YYYY-MM-DDTHH:MM:SSZ`.
pub fn query_time(ms: i64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let format = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    at.format(&format).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_and_segments_are_encoded_as_amazon_takes_them() {
        assert_eq!(encode("2YgY+x/="), "2YgY%2Bx%2F%3D");
        assert_eq!(segment("MUG,XL"), "MUG%2CXL");
        assert_eq!(segment("TEA-GRN_1.a~"), "TEA-GRN_1.a~");
        assert_eq!(query_time(1_764_065_700_123), "2025-11-25T10:15:00Z");
    }

    #[test]
    fn amazon_messages_are_joined() {
        let body =
            br#"{"errors":[{"code":"InvalidInput","message":"Invalid Input"},{"code":"X","message":""}]}"#;
        assert_eq!(messages(body).as_deref(), Some("Invalid Input; X"));
        assert_eq!(messages(b"nope"), None);
    }
}
