//! Talking to one shop: every request is a POST of a GraphQL document to the shop's Admin
//! API under the access token, and this module turns Shopify's answers into data or a
//! [`PlatformError`] (annex §11 Shopify, *Transport*, *Rate limits*, *Errors*).
//!
//! The token is the adapter's `access_token`, or one fetched with the client credentials
//! grant; a fetched token lives in this process's memory only, is fetched again 60 s before
//! it expires, and once more after a 401. Shopify's cost-based limit arrives as HTTP 200 with
//! `THROTTLED`: the wait is what the bucket needs to refill for the query, from the
//! `throttleStatus` Shopify sent. Each account's last bucket reading paces the next request,
//! so a pass rarely meets `THROTTLED` at all.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use reqwest::header::CONTENT_TYPE;
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::documents::{API_VERSION, Document};
use crate::platforms::api::{self, Api, Auth};
use crate::platforms::http::{self, status_text};
use crate::platforms::retry::RetryPolicy;
use crate::platforms::token::{self, Asked};
use crate::platforms::{PlatformError, quote_platform_text};

pub const NAME: &str = "Shopify";

/// How the shop is opened.
#[derive(Clone)]
pub enum Credentials {
    /// A custom app's Admin API access token.
    Token(String),
    /// A Dev Dashboard app's client credentials, exchanged for tokens.
    App { client_id: String, client_secret: String },
}

/// One shop's Admin API, as one account: the shared transport at the GraphQL endpoint, the
/// token put on each request (the adapter's, or one fetched and kept here).
pub struct Shop {
    /// The shop's domain, as the adapter has it.
    pub domain: String,
    /// At the GraphQL endpoint, spending the account of the app on the shop: Shopify limits
    /// each app on each shop, and one shop's apps are told apart by how they open it.
    pub api: Api,
    token_url: String,
    credentials: Credentials,
}

impl Shop {
    /// `base` is `shopify_api_base`, whose `{shop}` becomes the domain in lower case.
    pub fn new(
        base: &str,
        domain: &str,
        credentials: Credentials,
        policy: RetryPolicy,
        max_body: usize,
    ) -> Shop {
        let base = base.replace("{shop}", &domain.to_ascii_lowercase());
        let base = base.trim_end_matches('/');
        let endpoint = format!("{base}/admin/api/{API_VERSION}/graphql.json");
        let account = match &credentials {
            Credentials::Token(_) => format!("shopify:{endpoint}"),
            Credentials::App { client_id, .. } => format!("shopify:{endpoint} app {client_id}"),
        };
        Shop {
            domain: domain.to_string(),
            api: Api::new(NAME, &endpoint, Auth::None, account, policy, max_body),
            token_url: format!("{base}/admin/oauth/access_token"),
            credentials,
        }
    }

    /// The account whose rate limit and gate this shop's requests share.
    pub fn account(&self) -> String {
        self.api.account.clone()
    }

    /// Shopify's text as a message may quote it: without any credential.
    pub fn quote(&self, text: &str) -> String {
        let secrets = self.secrets();
        quote_platform_text(text, &secrets.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// The credentials to keep out of every message.
    fn secrets(&self) -> Vec<String> {
        match &self.credentials {
            Credentials::Token(token) => vec![token.clone()],
            Credentials::App { client_id, client_secret } => {
                let fetched = token::held(&self.token_key(client_id, client_secret));
                [client_secret.clone()].into_iter().chain(fetched).collect()
            }
        }
    }

    /// Sends `doc` once and reads its `data` as `T`. A 401 under a fetched token fetches a
    /// new one and sends once more.
    pub async fn query<T: DeserializeOwned>(
        &self,
        doc: &Document,
        variables: Value,
    ) -> Result<T, PlatformError> {
        let body = json!({"query": doc.text, "operationName": doc.name, "variables": variables}).to_string();
        pace(&self.api.account, doc.cost, self.api.policy.request_timeout).await;
        let mut renewed = false;
        loop {
            let token = Auth::header("x-shopify-access-token", &self.token(renewed).await?, NAME)?;
            let request = token.apply(self.api.request(Method::POST, &self.api.base, None));
            let request = request.header(CONTENT_TYPE, "application/json").body(body.clone());
            let answer = self.api.exchange(request, doc.name).await?;
            if answer.status == StatusCode::UNAUTHORIZED
                && !renewed
                && matches!(self.credentials, Credentials::App { .. })
            {
                // The token may have been revoked or expired early: one new one, one more try.
                renewed = true;
                continue;
            }
            if !answer.status.is_success() {
                return Err(self.refusal(&answer));
            }
            return self.read_answer(doc, &answer.body);
        }
    }

    /// Sorts an HTTP answer that is not 2xx (annex, *Errors*).
    fn refusal(&self, answer: &api::Answer) -> PlatformError {
        let status = answer.status;
        let retry_after = http::retry_after(&answer.headers, "retry-after");
        let secrets = self.secrets();
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let error = http::classify(NAME, status, &answer.headers, &answer.body, &secrets);
        match status.as_u16() {
            404 => PlatformError::Refused(format!(
                "There is no Shopify shop at {} (HTTP {}).",
                self.domain,
                status_text(status)
            )),
            402 | 423 => PlatformError::Refused(format!(
                "Shopify refused the shop {} as {} ({}).",
                self.domain,
                if status.as_u16() == 402 { "frozen" } else { "locked" },
                error.message().trim_end_matches('.')
            )),
            429 => PlatformError::rate_limited(error.message().to_string(), retry_after),
            _ => error,
        }
    }

    /// Reads a 200 answer: its `data`, or what its `errors` mean.
    fn read_answer<T: DeserializeOwned>(&self, doc: &Document, bytes: &[u8]) -> Result<T, PlatformError> {
        let answer: Answer = serde_json::from_slice(bytes).map_err(|e| {
            PlatformError::BadData(format!(
                "Shopify answered {} with something that is not JSON: {e}.",
                doc.name
            ))
        })?;
        if let Some(status) = answer.extensions.as_ref().and_then(|e| e.cost.as_ref()) {
            remember(&self.account(), status);
        }
        let secrets = self.secrets();
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        if let Some(error) = answer.errors.first() {
            let code = answer.errors.iter().find_map(|e| e.code()).unwrap_or_default();
            let coded = answer.errors.iter().find(|e| e.code() == Some(code)).unwrap_or(error);
            let said = quote_platform_text(&coded.message, &secrets);
            return Err(match code {
                "THROTTLED" => {
                    let wait =
                        answer.extensions.as_ref().and_then(|e| e.cost.as_ref()).and_then(Cost::refill_wait);
                    PlatformError::rate_limited(
                        format!("Shopify throttled {} until its cost bucket refills ({said}).", doc.name),
                        wait,
                    )
                }
                "ACCESS_DENIED" => PlatformError::Refused(format!(
                    "Shopify denied {} the access it needs for {} ({said}).",
                    self.domain, doc.name
                )),
                "INTERNAL_SERVER_ERROR" => {
                    PlatformError::unreachable(format!("Shopify failed on {} ({said}).", doc.name))
                }
                _ => PlatformError::BadData(format!("Shopify refused {} ({said}).", doc.name)),
            });
        }
        let data = answer
            .data
            .filter(|d| !d.is_null())
            .ok_or_else(|| PlatformError::BadData(format!("Shopify answered {} without data.", doc.name)))?;
        serde_json::from_value(data).map_err(|e| {
            PlatformError::BadData(format!(
                "Shopify's answer to {} cannot be read: {}.",
                doc.name,
                quote_platform_text(&e.to_string(), &secrets)
            ))
        })
    }

    /// The token to send: the adapter's, or a fetched one still good for a minute
    /// (`fresh`: a new one whatever memory holds).
    async fn token(&self, fresh: bool) -> Result<String, PlatformError> {
        let (client_id, client_secret) = match &self.credentials {
            Credentials::Token(token) => return Ok(token.clone()),
            Credentials::App { client_id, client_secret } => (client_id, client_secret),
        };
        let key = self.token_key(client_id, client_secret);
        if !fresh && let Some(token) = token::good(&key) {
            return Ok(token);
        }
        // The client credentials grant: `POST {base}/admin/oauth/access_token`.
        let form = [
            ("grant_type", "client_credentials"),
            ("client_id", client_id),
            ("client_secret", client_secret),
        ];
        match token::ask(&self.api, &self.token_url, &form, "the token request").await? {
            Asked::Granted { token, expires_in } => {
                token::keep(&key, &token, expires_in.map(Duration::from_secs));
                Ok(token)
            }
            Asked::NoToken => Err(PlatformError::BadData(
                "Shopify's answer to the token request holds no access token.".into(),
            )),
            Asked::Refused(answer) => Err(match self.refusal(&answer) {
                PlatformError::Rejected { message, .. } => PlatformError::Refused(format!(
                    "Shopify refused the app's client credentials {}",
                    message.trim_start_matches("Shopify refused the request ")
                )),
                other => other,
            }),
        }
    }

    /// Where a fetched token of the app's credentials is kept: the token endpoint and a
    /// fingerprint of the client id and secret (a changed secret fetches anew).
    fn token_key(&self, client_id: &str, client_secret: &str) -> String {
        api::account("shopify-app", &self.token_url, &format!("{client_id}\n{client_secret}"))
    }
}

/// A GraphQL answer.
#[derive(Deserialize)]
struct Answer {
    data: Option<Value>,
    #[serde(default)]
    errors: Vec<GraphqlError>,
    extensions: Option<Extensions>,
}

#[derive(Deserialize)]
struct GraphqlError {
    #[serde(default)]
    message: String,
    extensions: Option<Value>,
}

impl GraphqlError {
    fn code(&self) -> Option<&str> {
        self.extensions.as_ref()?.get("code")?.as_str()
    }
}

#[derive(Deserialize)]
struct Extensions {
    cost: Option<Cost>,
}

/// `extensions.cost`: what a query cost and how full the bucket is.
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    pub requested_query_cost: Option<f64>,
    pub actual_query_cost: Option<f64>,
    pub throttle_status: Option<ThrottleStatus>,
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct ThrottleStatus {
    pub maximum_available: f64,
    pub currently_available: f64,
    pub restore_rate: f64,
}

impl Cost {
    /// How long the bucket needs to hold the requested cost: whole seconds, at least one.
    pub fn refill_wait(&self) -> Option<Duration> {
        let requested = self.requested_query_cost?;
        let status = self.throttle_status?;
        if status.restore_rate.is_nan() || status.restore_rate <= 0.0 {
            return None;
        }
        let seconds = ((requested - status.currently_available) / status.restore_rate).ceil().max(1.0);
        seconds.is_finite().then(|| Duration::from_secs(seconds.min(86_400.0) as u64))
    }
}

/// The last bucket reading of an account, and when it was taken.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    at: Instant,
    available: f64,
    maximum: f64,
    rate: f64,
}

fn buckets() -> &'static Mutex<HashMap<String, Bucket>> {
    static BUCKETS: OnceLock<Mutex<HashMap<String, Bucket>>> = OnceLock::new();
    BUCKETS.get_or_init(Default::default)
}

fn remember(account: &str, cost: &Cost) {
    let Some(status) = cost.throttle_status else { return };
    let mut all = buckets().lock().unwrap_or_else(|p| p.into_inner());
    all.insert(
        account.to_string(),
        Bucket {
            at: Instant::now(),
            available: status.currently_available,
            maximum: status.maximum_available,
            rate: status.restore_rate,
        },
    );
}

/// Waits until the account's bucket, as last seen and refilled since, holds `cost`, and
/// takes `cost` from it, so requests sent side by side pace each other too. It waits at most
/// `bound` (what a pass waits for one answer): a bucket that needs longer meets Shopify's
/// `THROTTLED`, whose wait then ends the pass saying until when.
async fn pace(account: &str, cost: u32, bound: Duration) {
    let wait = {
        let mut all = buckets().lock().unwrap_or_else(|p| p.into_inner());
        let Some(bucket) = all.get_mut(account) else { return };
        let cost = f64::from(cost).min(bucket.maximum);
        let now = Instant::now();
        let refilled = (bucket.available + now.duration_since(bucket.at).as_secs_f64() * bucket.rate)
            .min(bucket.maximum);
        let short = cost - refilled;
        let wait = if short > 0.0 && bucket.rate > 0.0 { short / bucket.rate } else { 0.0 };
        // Taken now, as Shopify takes it when the query arrives.
        bucket.available = refilled + wait * bucket.rate - cost;
        bucket.at = now;
        Duration::try_from_secs_f64(wait).unwrap_or(bound).min(bound)
    };
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(requested: f64, available: f64, rate: f64) -> Cost {
        Cost {
            requested_query_cost: Some(requested),
            actual_query_cost: None,
            throttle_status: Some(ThrottleStatus {
                maximum_available: 2000.0,
                currently_available: available,
                restore_rate: rate,
            }),
        }
    }

    #[test]
    fn a_throttled_query_waits_for_the_bucket_to_hold_its_cost_in_whole_seconds() {
        // The annex's example: ceil((328 - 152) / 100) = 2 s.
        assert_eq!(cost(328.0, 152.0, 100.0).refill_wait(), Some(Duration::from_secs(2)));
        assert_eq!(cost(903.0, 900.0, 50.0).refill_wait(), Some(Duration::from_secs(1)));
        assert_eq!(cost(100.0, 500.0, 100.0).refill_wait(), Some(Duration::from_secs(1)), "at least 1 s");
        assert_eq!(cost(100.0, 0.0, 0.0).refill_wait(), None, "no rate, no computed wait");
        let missing = Cost { requested_query_cost: None, actual_query_cost: None, throttle_status: None };
        assert_eq!(missing.refill_wait(), None);
    }

    #[tokio::test]
    async fn requests_are_paced_by_the_last_bucket_reading() {
        let account = "test-pace";
        remember(account, &cost(0.0, 1000.0, 1000.0));
        let started = Instant::now();
        let bound = Duration::from_secs(5);
        pace(account, 900, bound).await;
        assert!(started.elapsed() < Duration::from_millis(50), "the bucket held it");
        // 100 left: 900 more need 0.8 s at 1000 a second.
        pace(account, 900, bound).await;
        assert!(started.elapsed() >= Duration::from_millis(750), "{:?}", started.elapsed());
    }

    #[test]
    fn the_base_template_takes_the_shop_in_lower_case() {
        let policy = api::one_try(Duration::from_secs(1));
        let token = || Credentials::Token("t".into());
        let shop = Shop::new("http://127.0.0.1:9/{shop}/", "Acme.myshopify.com", token(), policy, 1 << 20);
        assert_eq!(shop.api.base, "http://127.0.0.1:9/acme.myshopify.com/admin/api/2026-07/graphql.json");
        assert_eq!(shop.token_url, "http://127.0.0.1:9/acme.myshopify.com/admin/oauth/access_token");
        let fixed = Shop::new("https://proxy.example", "a.myshopify.com", token(), policy, 1 << 20);
        assert_eq!(fixed.api.base, "https://proxy.example/admin/api/2026-07/graphql.json");
    }
}
