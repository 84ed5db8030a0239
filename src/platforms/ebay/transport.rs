//! Talking to one eBay seller account (annex §5, *Transport*, *Rate limits*, *Errors*): the
//! environment's base, the user access token from the refresh-token grant (kept in this
//! process's memory only, asked for again five minutes before it runs out and once after a
//! 401), the three accounts whose waits eBay's quotas make (Fulfillment, Inventory and the
//! token endpoint, per keyset and environment), and what eBay's error bodies say.

use std::future::Future;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::Value;

use crate::platforms::api::{self, Answer, Api, Auth};
use crate::platforms::retry::{self, RetryPolicy};
use crate::platforms::token::{self, Asked};
use crate::platforms::{Adapter, PlatformError, Settings, http, quote_platform_text};

pub const NAME: &str = "eBay";

/// The scopes asked for with every token: both APIs, in both environments.
pub const SCOPES: &str = "https://api.ebay.com/oauth/api_scope/sell.fulfillment https://api.ebay.com/oauth/api_scope/sell.inventory";

/// A token is asked for again this long before eBay said it runs out.
const TOKEN_MARGIN: Duration = Duration::from_secs(5 * 60);

/// eBay's APIs as its quotas count them: a wait one of them asks for holds only its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quota {
    Token,
    Fulfillment,
    Inventory,
}

impl Quota {
    /// As messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Quota::Token => "token",
            Quota::Fulfillment => "Fulfillment",
            Quota::Inventory => "Inventory",
        }
    }
}

/// One seller account: its keyset in one environment and its refresh token.
pub struct Seller {
    /// Orders and offers of this marketplace only, when the adapter names one.
    pub marketplace_id: Option<String>,
    client_secret: String,
    refresh_token: String,
    /// Where the token of these credentials is kept (never the credentials themselves).
    token_key: String,
    fulfillment: Api,
    inventory: Api,
    token: Api,
}

impl Seller {
    /// The account of a validated adapter; `policy` for a pass, none for a ping (one try).
    pub fn new(
        settings: &Settings,
        adapter: &Adapter,
        policy: Option<RetryPolicy>,
    ) -> Result<Seller, PlatformError> {
        let text = |key| api::field(adapter, key, NAME);
        let (client_id, client_secret, refresh_token) =
            (text("client_id")?, text("client_secret")?, text("refresh_token")?);
        let sandbox = adapter
            .get("environment")
            .and_then(Value::as_str)
            .is_some_and(|e| e.trim().eq_ignore_ascii_case("sandbox"));
        let (base, environment) = if sandbox {
            (&settings.ebay_sandbox_api_base, "sandbox")
        } else {
            (&settings.ebay_api_base, "production")
        };
        let base = base.trim_end_matches('/');
        let policy = policy.unwrap_or_else(|| api::one_try(settings.timeout));
        let secrets = [client_secret, refresh_token];
        let api = |quota: Quota, auth: Auth, max_body: usize| {
            let account = format!("ebay:{environment}:{client_id}:{}", quota.name());
            Api::new(NAME, base, auth, account, policy, max_body).with_secrets(&secrets)
        };
        let marketplace_id = adapter
            .get("marketplace_id")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_string);
        Ok(Seller {
            marketplace_id,
            token_key: api::account(
                "ebay-token",
                base,
                &format!("{client_id}\n{client_secret}\n{refresh_token}"),
            ),
            fulfillment: api(Quota::Fulfillment, Auth::None, settings.max_body_bytes),
            inventory: api(Quota::Inventory, Auth::None, settings.max_body_bytes),
            token: api(Quota::Token, Auth::basic(client_id, client_secret), 64 * 1024),
            client_secret: client_secret.to_string(),
            refresh_token: refresh_token.to_string(),
        })
    }

    /// The API whose quota `quota` is.
    pub fn api(&self, quota: Quota) -> &Api {
        match quota {
            Quota::Token => &self.token,
            Quota::Fulfillment => &self.fulfillment,
            Quota::Inventory => &self.inventory,
        }
    }

    /// What a message never shows: the secrets and any token held for them.
    fn secrets(&self) -> Vec<String> {
        let mut secrets = vec![self.client_secret.clone(), self.refresh_token.clone()];
        secrets.extend(token::held(&self.token_key));
        secrets
    }

    /// eBay's text as a message may quote it: without any credential.
    pub fn quote(&self, text: &str) -> String {
        let secrets = self.secrets();
        quote_platform_text(text, &secrets.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// An access token: the one in memory while it has more than five minutes left, unless
    /// `fresh`, else a new one from the refresh-token grant.
    pub async fn access_token(&self, fresh: bool) -> Result<String, PlatformError> {
        if !fresh && let Some(token) = token::good(&self.token_key) {
            return Ok(token);
        }
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", self.refresh_token.as_str()),
            ("scope", SCOPES),
        ];
        let url = format!("{}/identity/v1/oauth2/token", self.token.base);
        let answer = match token::ask(&self.token, &url, &form, "the token exchange").await? {
            Asked::Granted { token, expires_in } => {
                let lives = Duration::from_secs(expires_in.unwrap_or(7200));
                token::keep_for(&self.token_key, &token, Some(lives), TOKEN_MARGIN);
                return Ok(token);
            }
            Asked::NoToken => {
                return Err(PlatformError::BadData(
                    "eBay answered the token exchange without an access_token.".into(),
                ));
            }
            Asked::Refused(answer) => answer,
        };
        let status = answer.status;
        if let Some(error) = self.token.passing(
            status,
            || http::retry_after(&answer.headers, "retry-after"),
            "the token exchange",
        ) {
            return Err(error);
        }
        let said = token::refusal(&answer, |text| self.quote(text));
        Err(match status.as_u16() {
            // `invalid_grant`: the refresh token; `invalid_client`: the App ID or Cert ID;
            // `invalid_scope`: a consent without one of the two scopes.
            400 | 401 => PlatformError::Refused(format!("eBay refused the token exchange ({said}).")),
            _ => PlatformError::BadData(format!("eBay answered the token exchange with {said}.")),
        })
    }

    /// One request under the token, whatever eBay answers; a 401 fetches a new token and
    /// sends once more. `op` names it in messages. Passing failures (429, 5xx) are errors here,
    /// so that [`Seller::call`] tries them again; every other status is the caller's to read.
    pub async fn once(
        &self,
        quota: Quota,
        method: &Method,
        target: &str,
        body: Option<&Value>,
        op: &str,
    ) -> Result<Answer, PlatformError> {
        let api = self.api(quota);
        let mut renewed = false;
        loop {
            let token = self.access_token(renewed).await?;
            let request =
                Auth::bearer(&token, NAME)?.apply(api.request(method.clone(), api.target(target), body));
            let answer = api.exchange(request, op).await?;
            if answer.status == StatusCode::UNAUTHORIZED && !renewed {
                // Revoked or expired early: one new token, one more try.
                token::forget(&self.token_key);
                renewed = true;
                continue;
            }
            let wait = || http::retry_after(&answer.headers, "retry-after");
            if let Some(error) = api.passing(answer.status, wait, op) {
                return Err(error);
            }
            if matches!(answer.status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
                return Err(PlatformError::Refused(format!("eBay refused {op} ({}).", self.said(&answer))));
            }
            return Ok(answer);
        }
    }

    /// [`Seller::once`] tried again on passing failures under the API's gate and waits: a
    /// read, or a write that leaves eBay the same however often it arrives. A wait eBay asked
    /// for that is longer than the pass may take sends nothing and is [`PlatformError::NotYet`].
    pub async fn call(
        &self,
        quota: Quota,
        method: Method,
        target: &str,
        body: Option<&Value>,
        op: &str,
    ) -> Result<Answer, PlatformError> {
        let api = self.api(quota);
        self.paced(quota, api.send(|| self.once(quota, &method, target, body, op))).await
    }

    /// Runs `work` (requests of `quota`'s API through the shared retry layer) unless eBay asked
    /// that API to wait longer than the pass may; a rate limit that leaves such a wait is
    /// [`PlatformError::NotYet`] too, so the pull stops, a shipment waits and the stock step
    /// names the time (annex §5, *Rate limits*).
    pub async fn paced<T>(
        &self,
        quota: Quota,
        work: impl Future<Output = Result<T, PlatformError>>,
    ) -> Result<T, PlatformError> {
        self.not_yet(quota)?;
        match work.await {
            Err(e @ PlatformError::Unreachable { rate_limited: true, .. }) => {
                Err(self.not_yet(quota).err().unwrap_or(e))
            }
            other => other,
        }
    }

    /// A ping's request: sent once, and only when eBay has not asked us to wait.
    pub async fn ask_once(&self, quota: Quota, target: &str, op: &str) -> Result<Answer, PlatformError> {
        let api = self.api(quota);
        api.ask_once(self.once(quota, &Method::GET, target, None, op)).await
    }

    /// Whether the ping may ask the token endpoint now.
    pub fn may_ask_now(&self) -> Result<(), PlatformError> {
        for quota in [Quota::Token, Quota::Fulfillment, Quota::Inventory] {
            retry::may_ask_now(&self.api(quota).account)?;
        }
        Ok(())
    }

    /// Fails, naming the time, while eBay asked this API's requests to wait longer than the
    /// pass may.
    pub fn not_yet(&self, quota: Quota) -> Result<(), PlatformError> {
        let api = self.api(quota);
        match retry::waiting(&api.account) {
            Some((left, until)) if left > api.policy.longest_wait => Err(PlatformError::NotYet(format!(
                "eBay allows the next {} request at {}",
                quota.name(),
                crate::dates::format_ms(until)
            ))),
            _ => Ok(()),
        }
    }

    /// eBay's reason for an answer: each error's `errorId`, `message` and `longMessage`,
    /// joined with `; `, or the status alone.
    pub fn said(&self, answer: &Answer) -> String {
        let reason = self.reason(&answer.body);
        match reason.is_empty() {
            true => format!("HTTP {}", http::status_text(answer.status)),
            false => format!("HTTP {}: {reason}", http::status_text(answer.status)),
        }
    }

    /// The errors of an eBay error body, quoted: `errorId 32300: message (longMessage)`.
    pub fn reason(&self, body: &[u8]) -> String {
        let errors = errors(body);
        let said: Vec<String> = errors
            .iter()
            .map(|e| {
                let long = e
                    .long_message
                    .as_deref()
                    .filter(|l| !l.trim().is_empty() && Some(*l) != e.message.as_deref());
                let message = e.message.as_deref().unwrap_or("");
                match (e.error_id, long) {
                    (Some(id), Some(long)) => format!("errorId {id}: {message} ({long})"),
                    (Some(id), None) => format!("errorId {id}: {message}"),
                    (None, Some(long)) => format!("{message} ({long})"),
                    (None, None) => message.to_string(),
                }
            })
            .collect();
        self.quote(&said.join("; "))
    }

    /// Whether eBay's answer carries the error `id`.
    pub fn has_error(answer: &Answer, id: i64) -> bool {
        errors(&answer.body).iter().any(|e| e.error_id == Some(id))
    }
}

/// One entry of eBay's `{"errors": [...]}`.
#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ErrorEntry {
    #[serde(default)]
    pub error_id: Option<i64>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub long_message: Option<String>,
}

/// The errors of an eBay error body (none when it is not one).
pub fn errors(body: &[u8]) -> Vec<ErrorEntry> {
    #[derive(Deserialize)]
    struct Body {
        #[serde(default)]
        errors: Vec<ErrorEntry>,
    }
    serde_json::from_slice::<Body>(body).map(|b| b.errors).unwrap_or_default()
}

/// A query value as eBay wants it: everything but unreserved characters percent-encoded,
/// so `[ ] { } |` are `%5B %5D %7B %7D %7C`, and `:` `,` `.` stay as they are in `filter`.
pub fn encode(value: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~')
        .remove(b':')
        .remove(b',');
    percent_encoding::utf8_percent_encode(value, KEEP).to_string()
}
