//! How orderbridge speaks to ShipStation API V2 (annex §1, §5.1): the URL under `/v2/`, the
//! `api-key` header, answers read up to a bound, statuses sorted into what a pass and a ping
//! do with them (401/403 the key refused, 429 a wait kept for the account across passes by
//! `retry`, 5xx and no answer passing), at most [`PER_MINUTE`] requests in any 60 seconds per
//! account, and ShipStation's `errors[0].message` quoted without the key.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;

use super::NAME;
use super::wire::ErrorBody;
pub use crate::platforms::api::Answer;
use crate::platforms::api::{self, Auth};
use crate::platforms::{PlatformError, Settings, http, quote_platform_text};

/// The most pages one walk follows: more is a loop.
pub const MAX_PAGES: usize = 1_000;

/// Requests orderbridge sends one account in any 60 seconds, over all its connections and
/// passes (annex §5.1: ShipStation's own limit).
pub const PER_MINUTE: usize = 200;

/// The path of the inventory, whose 402, 403 and 404 mean "no Inventory add-on" (annex §5.6).
pub const INVENTORY: &str = "/v2/inventory";

/// ShipStation for one API key: the shared transport under `api-key`, paced to
/// [`PER_MINUTE`], with what ShipStation's statuses and error bodies mean.
pub type Api = api::Of<super::ShipStation>;

impl api::Keyed for super::ShipStation {
    const NAMES: (&'static str, &'static str) = (NAME, "shipstation");

    fn base(settings: &Settings) -> &str {
        &settings.shipstation_api_base
    }

    /// The key in ShipStation's own `api-key` header.
    fn auth(key: &str) -> Result<Auth, PlatformError> {
        Auth::header("api-key", key, NAME)
    }
}

impl Api {
    /// A place among the account's requests of the last 60 seconds (annex §5.1), shared by
    /// every connection and pass of the key. When the minute is full, a wait the policy allows
    /// (a pass's `sync_interval_secs`, a ping's timeout) is taken; a longer one fails as
    /// ShipStation's 429 would, naming the wait, and `retry` keeps it for the account.
    async fn place(&self) -> Result<(), PlatformError> {
        let minute = Duration::from_secs(60);
        for _ in 0..3 {
            let wait = {
                let mut all = sent().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                let now = Instant::now();
                forget_quiet_accounts(&mut all, now);
                let sent = all.accounts.entry(self.account.clone()).or_default();
                while sent.front().is_some_and(|t| now.duration_since(*t) >= minute) {
                    sent.pop_front();
                }
                if sent.len() < PER_MINUTE {
                    sent.push_back(now);
                    return Ok(());
                }
                sent.front()
                    .map_or(Duration::ZERO, |oldest| minute.saturating_sub(now.duration_since(*oldest)))
            };
            if wait > self.policy.longest_wait {
                return Err(PlatformError::rate_limited(
                    format!(
                        "orderbridge sent this {NAME} account {PER_MINUTE} requests in the last 60 seconds, its limit; the next may go in {} s.",
                        wait.as_secs().max(1)
                    ),
                    Some(wait),
                ));
            }
            tokio::time::sleep(wait).await;
        }
        Err(PlatformError::rate_limited(format!("{NAME}'s limit of requests a minute is taken."), None))
    }

    /// One request, without trying again: `target` is a path with its query, under the base.
    /// 401, 403 (but the inventory's), 429 and 5xx come back as errors; other statuses as
    /// answers; no answer at all is passing.
    pub async fn request(
        &self,
        method: Method,
        target: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, PlatformError> {
        let op = operation(&method, target);
        self.place().await?;
        let answer = self.exchange(api::Api::request(self, method, self.target(target), body), &op).await?;
        match self.passing(answer.status, &answer.headers, &answer.body, &op, target) {
            Some(error) => Err(error),
            None => Ok(answer),
        }
    }

    /// What a 401, 403, 429 or 5xx means for any request (annex §5.1); `None` for the rest.
    fn passing(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
        op: &str,
        target: &str,
    ) -> Option<PlatformError> {
        let inventory = target.split('?').next() == Some(INVENTORY);
        match status {
            StatusCode::FORBIDDEN if inventory => None,
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Some(PlatformError::Refused(format!(
                "{NAME} refused the API key ({op}, HTTP {}{}).",
                status.as_u16(),
                said(&self.reason(body, true))
            ))),
            s => api::Api::passing(self, s, || http::retry_after(headers, "retry-after"), op),
        }
    }

    /// A read, tried again on passing failures under the account's gate and waits.
    pub async fn send(&self, method: Method, target: &str) -> Result<Answer, PlatformError> {
        api::Api::send(self, || self.request(method.clone(), target, None)).await
    }

    /// A 2xx answer's JSON as `T`; another status is refused for good, quoting ShipStation.
    pub fn read<T: DeserializeOwned>(
        &self,
        answer: &Answer,
        method: &Method,
        target: &str,
    ) -> Result<T, PlatformError> {
        if !answer.status.is_success() {
            return Err(self.refused(answer, method, target));
        }
        self.decode(&answer.body, &operation(method, target))
    }

    /// A status no step takes: `bad_data` quoting `errors[0].message`.
    pub fn refused(&self, answer: &Answer, method: &Method, target: &str) -> PlatformError {
        self.rejected(answer, &operation(method, target), &self.reason(&answer.body, false))
    }

    /// ShipStation's `errors[0].message` (with its `error_code` when `code`), quoted without
    /// the key; empty when the body says none.
    pub fn reason(&self, body: &[u8], code: bool) -> String {
        let Ok(parsed) = serde_json::from_slice::<ErrorBody>(body) else { return String::new() };
        let Some(first) = parsed.errors.into_iter().next() else { return String::new() };
        let message = first.message.unwrap_or_default();
        let text = match first.error_code.filter(|c| code && !c.is_empty()) {
            Some(error_code) if !message.is_empty() => format!("{message} [{error_code}]"),
            Some(error_code) => error_code,
            None => message,
        };
        quote_platform_text(&text, &self.secrets())
    }

    /// The ping (annex §3): the key may list warehouses, or read the adapter's one.
    pub async fn ping(&self, warehouse: Option<&str>) -> Result<(), PlatformError> {
        let target = match warehouse {
            Some(id) => format!("/v2/warehouses/{id}"),
            None => "/v2/warehouses".to_string(),
        };
        let answer = self.ask_once(self.request(Method::GET, &target, None)).await?;
        match (answer.status, warehouse) {
            (StatusCode::NOT_FOUND, Some(id)) => {
                Err(PlatformError::Refused(format!("{NAME} has no warehouse {id} for this API key.")))
            }
            (s, _) if s.is_success() => {
                self.decode::<serde_json::Value>(&answer.body, &operation(&Method::GET, &target)).map(|_| ())
            }
            _ => Err(PlatformError::Refused(
                self.refused(&answer, &Method::GET, &target).message().to_string(),
            )),
        }
    }
}

/// When each account's requests of the last 60 seconds were sent.
#[derive(Default)]
struct Sent {
    accounts: HashMap<String, VecDeque<Instant>>,
    pruned: Option<Instant>,
}

fn sent() -> &'static Mutex<Sent> {
    static SENT: OnceLock<Mutex<Sent>> = OnceLock::new();
    SENT.get_or_init(Default::default)
}

/// Once a minute, forgets the accounts that sent nothing in the last minute, so keys that are
/// tried once (a ping with a wrong key) are not kept.
fn forget_quiet_accounts(all: &mut Sent, now: Instant) {
    let minute = Duration::from_secs(60);
    if all.pruned.is_some_and(|at| now.duration_since(at) < minute) {
        return;
    }
    all.pruned = Some(now);
    all.accounts.retain(|_, sent| sent.back().is_some_and(|t| now.duration_since(*t) < minute));
}

fn said(reason: &str) -> String {
    if reason.is_empty() { String::new() } else { format!(": {reason}") }
}

/// "GET /v2/labels": how a message names the request of `target`.
pub fn operation(method: &Method, target: &str) -> String {
    format!("{method} {}", target.split('?').next().unwrap_or(target))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api() -> Api {
        let adapter = serde_json::json!({"access_token": "key-9"});
        Api::new(&Settings::default(), adapter.as_object().unwrap(), None).unwrap()
    }

    #[test]
    fn the_reason_is_the_first_errors_message_and_never_the_key() {
        let body = br#"{"request_id": "8a0d", "errors": [{"error_source": "ShipStation", "error_type": "security",
            "error_code": "unauthorized", "message": "The API key key-9 is invalid."}, {"message": "second"}]}"#;
        assert_eq!(api().reason(body, true), "The API key [redacted] is invalid. [unauthorized]");
        assert_eq!(api().reason(body, false), "The API key [redacted] is invalid.");
        assert_eq!(api().reason(b"", true), "");
        assert_eq!(api().reason(b"<html>", true), "");
    }
}
