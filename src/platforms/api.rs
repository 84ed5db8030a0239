//! The one transport of every platform reached by HTTP: where the platform is (the base),
//! how a request carries the credentials ([`Auth`]), how requests are tried again (the
//! [`RetryPolicy`], whose `request_timeout` bounds each answer), the account whose gate and
//! waits they spend (`retry`), the most of an answer read, and the credentials no message
//! may quote. Every request goes one way: built under the base ([`Api::request`]), sent and
//! read up to the bound ([`Api::exchange`]: a 2xx body whole, another's first 16 KiB for its
//! reason), on the account's gate ([`Api::send`], [`Api::ask_once`], [`Api::create`]).
//! What a status or an error body means is each platform's own to say; [`Api::classify`]
//! sorts what it leaves, as `http::classify` does.

use std::future::Future;
use std::marker::PhantomData;
use std::ops::Deref;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{IntoUrl, Method, RequestBuilder, StatusCode};
use serde_json::Value;

use super::retry::{self, Created, RetryPolicy};
use super::{Adapter, PlatformError, Settings, http};

/// How a request carries the credentials.
pub enum Auth {
    /// Nothing the transport adds: the platform signs each request itself (WooCommerce's
    /// OAuth query, a token fetched per request).
    None,
    /// A credential in a header (`X-Auth-Token`, `api-key`, `Authorization`), kept out of
    /// any debug output.
    Header(HeaderName, HeaderValue),
}

impl Auth {
    /// `value` in the header `name`; a refusal when no HTTP header can carry it.
    pub fn header(name: &'static str, value: &str, platform: &str) -> Result<Auth, PlatformError> {
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            PlatformError::Refused(format!(
                "The {platform} access token has characters no HTTP header can carry."
            ))
        })?;
        value.set_sensitive(true);
        Ok(Auth::Header(HeaderName::from_static(name), value))
    }

    /// `Authorization: Bearer {token}`.
    pub fn bearer(token: &str, platform: &str) -> Result<Auth, PlatformError> {
        Auth::header("authorization", &format!("Bearer {token}"), platform)
    }

    /// `request` carrying the credentials.
    pub fn apply(&self, request: RequestBuilder) -> RequestBuilder {
        match self {
            Auth::None => request,
            Auth::Header(name, value) => request.header(name.clone(), value.clone()),
        }
    }

    /// HTTP Basic (`Authorization: Basic …`), which any user and password can be.
    pub fn basic(user: &str, password: &str) -> Auth {
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let mut value =
            HeaderValue::from_str(&format!("Basic {encoded}")).unwrap_or(HeaderValue::from_static(""));
        value.set_sensitive(true);
        Auth::Header(AUTHORIZATION, value)
    }
}

/// One platform account's API, for one pass or one ping.
pub struct Api {
    /// The platform as messages name it (`ShipBob`, `WooCommerce at https://shop.example`).
    pub platform: String,
    /// Where the platform is, without a trailing `/`.
    pub base: String,
    pub auth: Auth,
    pub policy: RetryPolicy,
    /// The account whose gate and waits a request spends: never a credential.
    pub account: String,
    /// The most of one answer read (`max_platform_body_mib`).
    pub max_body: usize,
    /// What no message quotes: the credentials.
    pub secrets: Vec<String>,
    client: &'static reqwest::Client,
}

/// An answer: its status, headers and (bounded) body.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The platform's clock (`Date`), in ms, when it sent one.
    pub fn date_ms(&self) -> Option<i64> {
        let text = self.headers.get(reqwest::header::DATE)?.to_str().ok()?;
        let at = httpdate::parse_http_date(text.trim()).ok()?;
        i64::try_from(at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis()).ok()
    }

    /// Whether the body says nothing (a 204, or only whitespace).
    pub fn is_empty(&self) -> bool {
        self.status == StatusCode::NO_CONTENT || self.body.iter().all(u8::is_ascii_whitespace)
    }
}

impl Api {
    /// The API of `platform` at `base` with `auth`, spending `account`, under `policy` (a
    /// ping's: [`one_try`]), reading answers of at most `max_body` bytes.
    pub fn new(
        platform: &str,
        base: &str,
        auth: Auth,
        account: String,
        policy: RetryPolicy,
        max_body: usize,
    ) -> Api {
        Api {
            platform: platform.to_string(),
            base: base.trim_end_matches('/').to_string(),
            auth,
            policy,
            account,
            max_body,
            secrets: Vec::new(),
            client: http::client(),
        }
    }

    /// The API with `secrets` kept out of every message.
    pub fn with_secrets(self, secrets: &[&str]) -> Api {
        Api { secrets: secrets.iter().map(|s| s.to_string()).collect(), ..self }
    }

    /// The API sending through `client` (one that keeps to a reach) instead of the process's.
    pub fn with_client(self, client: &'static reqwest::Client) -> Api {
        Api { client, ..self }
    }

    /// The secrets as a message's scrubber takes them.
    pub fn secrets(&self) -> Vec<&str> {
        self.secrets.iter().map(String::as_str).collect()
    }

    /// `{base}{target}`: `target` is a path with its query.
    pub fn target(&self, target: &str) -> String {
        format!("{}{target}", self.base)
    }

    /// `{base}/{path}` with `query` (no `?` without one), or a refusal when that is no URL.
    pub fn url(&self, path: &str, query: &[(String, String)]) -> Result<reqwest::Url, PlatformError> {
        let mut url = reqwest::Url::parse(&format!("{}/{path}", self.base)).map_err(|e| {
            PlatformError::Refused(format!("The {} API address is not a URL ({e}).", self.platform))
        })?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        Ok(url)
    }

    /// A request to `url` with nothing added: no credential, no `Accept`.
    pub fn bare(&self, method: Method, url: impl IntoUrl) -> RequestBuilder {
        self.client.request(method, url)
    }

    /// A request for JSON at `url` under the credentials, with `body` as JSON.
    pub fn request(&self, method: Method, url: impl IntoUrl, body: Option<&Value>) -> RequestBuilder {
        let request = self.auth.apply(self.bare(method, url).header(ACCEPT, "application/json"));
        match body {
            Some(body) => request.header(CONTENT_TYPE, "application/json").body(body.to_string()),
            None => request,
        }
    }

    /// Sends `request` under the timeout and reads its answer, whatever its status: a 2xx
    /// body up to the body limit (past it, `bad_data`), another's first 16 KiB, all its
    /// reason needs. Only no answer at all is an error here. `what` names it in messages.
    pub async fn exchange(&self, request: RequestBuilder, what: &str) -> Result<Answer, PlatformError> {
        let response = http::send(request, self.policy.request_timeout, &self.platform, &self.base).await?;
        self.read(response, what).await
    }

    /// An answer's status, headers and bounded body (see [`exchange`](Self::exchange)).
    pub async fn read(&self, response: reqwest::Response, what: &str) -> Result<Answer, PlatformError> {
        let status = response.status();
        let headers = response.headers().clone();
        let body = if status.is_success() {
            http::read_answer(response, self.max_body, &self.platform, what).await?
        } else {
            http::read_reason(response).await
        };
        Ok(Answer { status, headers, body })
    }

    /// What `http::classify` makes of an answer the platform did not read itself.
    pub fn classify(&self, answer: &Answer) -> PlatformError {
        http::classify(&self.platform, answer.status, &answer.headers, &answer.body, &self.secrets())
    }

    /// What a 429, 408 or 5xx means for any request of a platform that asks for its wait in
    /// a header (`wait` reads it), `op` naming the request; `None` for other statuses.
    pub fn passing(
        &self,
        status: StatusCode,
        wait: impl FnOnce() -> Option<std::time::Duration>,
        op: &str,
    ) -> Option<PlatformError> {
        match status {
            StatusCode::TOO_MANY_REQUESTS => {
                let wait = wait();
                let asked = wait.map_or_else(
                    || "without saying how long".to_string(),
                    |w| format!("after {} s", w.as_secs()),
                );
                Some(PlatformError::rate_limited(
                    format!("{} asked to retry {asked} ({op}).", self.platform),
                    wait,
                ))
            }
            s if s.is_server_error() || s == StatusCode::REQUEST_TIMEOUT => Some(PlatformError::unreachable(
                format!("{} answered {op} without a verdict (HTTP {}).", self.platform, http::status_text(s)),
            )),
            _ => None,
        }
    }

    /// A 2xx body's JSON as `T`, or `bad_data` naming the request (`op`) and what could not
    /// be read.
    pub fn decode<T: serde::de::DeserializeOwned>(&self, body: &[u8], op: &str) -> Result<T, PlatformError> {
        serde_json::from_slice(body).map_err(|e| {
            PlatformError::BadData(format!("{}'s answer to {op} cannot be read: {e}.", self.platform))
        })
    }

    /// A status no request of the platform takes, refused for good: "{platform} refused {op}
    /// (HTTP 404 Not Found: {reason})", the reason only when the body gave one.
    pub fn rejected(&self, answer: &Answer, op: &str, reason: &str) -> PlatformError {
        let said = if reason.is_empty() { String::new() } else { format!(": {reason}") };
        PlatformError::Rejected {
            status: answer.status.as_u16(),
            message: format!(
                "{} refused {op} (HTTP {}{said}).",
                self.platform,
                http::status_text(answer.status)
            ),
        }
    }

    /// A request sent once under the credentials: a 2xx answer's body (`None` when it is
    /// empty); another status is what `judge` says, else what [`classify`](Self::classify) says.
    pub async fn once(
        &self,
        method: Method,
        url: &reqwest::Url,
        body: Option<&Value>,
        what: &str,
        judge: impl Fn(&Answer) -> Option<PlatformError>,
    ) -> Result<Option<Vec<u8>>, PlatformError> {
        let answer = self.exchange(self.request(method, url.clone(), body), what).await?;
        if !answer.status.is_success() {
            return Err(judge(&answer).unwrap_or_else(|| self.classify(&answer)));
        }
        Ok((!answer.is_empty()).then_some(answer.body))
    }

    /// [`once`](Self::once) at `{base}/{path}` with `query`, tried again on passing failures
    /// under the account's gate and waits: a read, or a write that leaves the platform the same
    /// however often it arrives.
    pub async fn call(
        &self,
        method: Method,
        (path, query): (&str, &[(String, String)]),
        body: Option<&Value>,
        judge: impl Fn(&Answer) -> Option<PlatformError>,
    ) -> Result<Option<Vec<u8>>, PlatformError> {
        let url = self.url(path, query)?;
        self.send(|| self.once(method.clone(), &url, body, path, &judge)).await
    }

    /// A body's JSON (`what` names the request in the message when it is not).
    pub fn value(&self, body: Option<Vec<u8>>, what: &str) -> Result<Option<Value>, PlatformError> {
        let Some(body) = body else { return Ok(None) };
        serde_json::from_slice(&body).map(Some).map_err(|e| {
            PlatformError::BadData(format!(
                "{} answered {what} with JSON that cannot be read: {e}.",
                self.platform
            ))
        })
    }

    /// Runs `request`, which reads or leaves the platform the same however often it arrives,
    /// under the account's gate and waits, tried again per the policy.
    pub async fn send<T, F, Fut>(&self, request: F) -> Result<T, PlatformError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, PlatformError>>,
    {
        retry::send(&self.policy, self.account.as_str(), request).await
    }

    /// A ping's one request: sent only when the account may be asked now.
    pub async fn ask_once<T>(
        &self,
        request: impl Future<Output = Result<T, PlatformError>>,
    ) -> Result<T, PlatformError> {
        retry::ask_once(self.account.as_str(), request).await
    }

    /// Creates something at most once (`retry::create`): `look` before every `make`.
    pub async fn create<T, L, LFut, M, MFut>(&self, look: L, make: M) -> Result<Created<T>, PlatformError>
    where
        L: FnMut() -> LFut,
        LFut: Future<Output = Result<Option<T>, PlatformError>>,
        M: FnMut() -> MFut,
        MFut: Future<Output = Result<T, PlatformError>>,
    {
        retry::create(&self.policy, self.account.as_str(), look, make).await
    }
}

/// The shared transport as one platform's own type (`Of<ShipBob>`), to which the platform's
/// module adds what its statuses, error bodies and links mean.
pub struct Of<P>(Api, PhantomData<P>);

impl<P> From<Api> for Of<P> {
    fn from(api: Api) -> Of<P> {
        Of(api, PhantomData)
    }
}

impl<P> Deref for Of<P> {
    type Target = Api;

    fn deref(&self) -> &Api {
        &self.0
    }
}

/// A platform reached with one key, the adapter's `access_token`, on each request.
pub trait Keyed {
    /// The platform as messages name it, and the prefix of its accounts.
    const NAMES: (&'static str, &'static str);

    /// Where it is (a setting).
    fn base(settings: &Settings) -> &str;

    /// How a request carries the key.
    fn auth(key: &str) -> Result<Auth, PlatformError>;
}

impl<P: Keyed> Of<P> {
    /// The API of a validated adapter, spending the account of a fingerprint of its key;
    /// `policy` for a pass, none for a ping (one try).
    pub fn new(
        settings: &Settings,
        adapter: &Adapter,
        policy: Option<RetryPolicy>,
    ) -> Result<Of<P>, PlatformError> {
        let ((platform, prefix), base) = (P::NAMES, P::base(settings));
        let key = field(adapter, "access_token", platform)?;
        let policy = policy.unwrap_or_else(|| one_try(settings.timeout));
        let api = Api::new(
            platform,
            base,
            P::auth(key)?,
            account(prefix, base, key),
            policy,
            settings.max_body_bytes,
        );
        Ok(Of::from(api.with_secrets(&[key])))
    }
}

/// The adapter's text field `key`, or a refusal naming the platform when it has none.
pub fn field<'a>(adapter: &'a Adapter, key: &str, platform: &str) -> Result<&'a str, PlatformError> {
    adapter
        .get(key)
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| PlatformError::Refused(format!("The {platform} adapter has no {key}.")))
}

/// The account a key's requests spend (`retry`'s gate and waits): `{prefix}:{base}:{fingerprint}`.
pub fn account(prefix: &str, base: &str, key: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    format!("{prefix}:{}:{:016x}", base.trim_end_matches('/'), hasher.finish())
}

/// A path segment, percent-encoded (`MUG,XL` is `MUG%2CXL`).
pub fn segment(value: &str) -> String {
    const SEGMENT: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    percent_encoding::utf8_percent_encode(value, SEGMENT).to_string()
}

/// A ping's policy: one try, bounded by the ping's timeout (its answer and any wait).
pub fn one_try(timeout: std::time::Duration) -> RetryPolicy {
    RetryPolicy {
        tries: 1,
        base: std::time::Duration::from_secs(1),
        request_timeout: timeout,
        longest_wait: timeout,
    }
}
