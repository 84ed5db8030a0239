//! How orderbridge speaks to one WooCommerce store (annex §11, "Addressing",
//! "Authentication", "Answers"): the API root (`{url}/wp-json/`, or the one WordPress's
//! discovery header names when that is not served), the credentials as the adapter's `auth`
//! says, and every answer sorted into JSON or a [`PlatformError`] a merchant can act on.
//! Most failures of a self-hosted shop are its own configuration (permalinks, a firewall's
//! page, PHP warnings before the JSON, a redirect), so each gets a sentence of its own. No
//! message names a query string: it may hold the consumer key or secret.

use std::sync::Mutex;
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap, LOCATION, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value};

use super::adapter::{Auth, Shop};
use super::oauth;
use crate::platforms::api;
use crate::platforms::http;
use crate::platforms::reach::{self, Reach};
use crate::platforms::{PlatformError, describe_duration, quote_platform_text, root_cause};

pub const NAME: &str = "WooCommerce";

/// How much of a body that should have been JSON a message quotes.
const QUOTED_CHARS: usize = 80;

/// One store's API, for one pass or one ping.
pub struct Api {
    /// The shared transport through the client that keeps to the store's reach, named
    /// "WooCommerce at {url}", spending the store's account (its address, never a
    /// credential), under HTTP Basic where the adapter says so; its policy's timeout bounds
    /// each answer (a pass tries again under its own policy, one request at a time).
    pub transport: api::Api,
    pub shop: Shop,
    root: Mutex<Root>,
}

/// Where routes are requested.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Root {
    /// Routes appended to this path (`{url}/wp-json/`); `settled` once discovery ran or
    /// found it, so a store that serves no API is asked for its front page only once.
    Path { prefix: String, settled: bool },
    /// WordPress with plain permalinks: the route goes in `rest_route`, beside the root
    /// URL's other parameters.
    RestRoute(url::Url),
}

/// A JSON answer: 2xx, or a 404 that WordPress explained.
#[derive(Debug, Clone)]
pub enum Answer {
    Json(Json),
    /// A JSON 404 (`rest_no_route`, or an id the store does not know): the step decides.
    NotFound {
        code: String,
        message: String,
    },
}

/// What one request brought back.
#[derive(Debug, Clone)]
pub struct Reply {
    pub answer: Answer,
    /// The store's clock (`Date`), when it sent one.
    pub date_ms: Option<i64>,
}

/// A 2xx answer's JSON text, checked to be JSON (an object or a list), not yet read into
/// values: a list of orders is read as such, never as a `Value` as large as the answer.
#[derive(Debug, Clone)]
pub struct Json(Vec<u8>);

impl Json {
    pub fn value(&self) -> Result<Value, PlatformError> {
        serde_json::from_slice(&self.0).map_err(|e| {
            PlatformError::BadData(format!("{NAME} answered with JSON that cannot be read: {e}."))
        })
    }
}

/// A JSON list of at most `max` objects, each read on its own: anything else in the list
/// (`[0,0,…]`) or more objects than asked for ends the reading at once.
struct Objects {
    max: usize,
}

impl<'de> serde::de::DeserializeSeed<'de> for Objects {
    type Value = Vec<Map<String, Value>>;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Objects {
    type Value = Vec<Map<String, Value>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a list of at most {} objects", self.max)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut objects = Vec::new();
        while let Some(object) = seq.next_element::<Map<String, Value>>()? {
            if objects.len() == self.max {
                return Err(serde::de::Error::custom(format!("more than {} objects", self.max)));
            }
            objects.push(object);
        }
        Ok(objects)
    }
}

impl Reply {
    /// The list of at most `max` objects a request that must succeed answers (see
    /// [`Reply::json`]); `what` names the list in the message of anything else.
    pub fn objects(
        self,
        api: &Api,
        route: &str,
        what: &str,
        max: usize,
    ) -> Result<Vec<Map<String, Value>>, PlatformError> {
        let json = self.json_text(api, route)?;
        let mut reader = serde_json::Deserializer::from_slice(&json.0);
        serde::de::DeserializeSeed::deserialize(Objects { max }, &mut reader).map_err(|e| {
            PlatformError::BadData(format!(
                "{NAME} at {} answered its {what} with JSON that is not a list of at most {max} objects ({e}).",
                api.site()
            ))
        })
    }

    /// The JSON of a request that must succeed: a 404 is a refusal, and `rest_no_route` says
    /// WooCommerce is not there.
    pub fn json(self, api: &Api, route: &str) -> Result<Value, PlatformError> {
        self.json_text(api, route)?.value()
    }

    fn json_text(self, api: &Api, route: &str) -> Result<Json, PlatformError> {
        match self.answer {
            Answer::Json(json) => Ok(json),
            Answer::NotFound { code, .. } if code == "rest_no_route" => Err(api.no_route(route)),
            Answer::NotFound { code, message } => {
                let secrets = [api.shop.key.as_str(), api.shop.secret.as_str()];
                Err(PlatformError::Rejected {
                    status: 404,
                    message: format!(
                        "{NAME} at {} refused {route} (HTTP 404: {} ({})).",
                        api.site(),
                        quote_platform_text(&message, &secrets),
                        quote_platform_text(&code, &secrets)
                    ),
                })
            }
        }
    }
}

/// What a request to the current root found, before discovery.
enum Raw {
    Reply(Reply),
    /// A 404 that is not a WordPress JSON error: no REST API at this root.
    NoApi,
}

impl Api {
    /// The API of a validated shop, whose requests connect only within `reach`.
    pub fn new(shop: Shop, timeout: Duration, reach: Reach, max_body: usize) -> Result<Api, PlatformError> {
        let url = reqwest::Url::parse(&shop.base)
            .map_err(|_| PlatformError::Refused("The WooCommerce adapter's url cannot be used.".into()))?;
        let http = reach::http_client(&url, reach).map_err(|e| match reach::refusal(&e) {
            Some(refused) => not_allowed(refused),
            None => PlatformError::unreachable(format!("{NAME} could not be reached: {e}.")),
        })?;
        let account = format!("woocommerce:{}", shop.base);
        let root = Root::Path { prefix: format!("{}/wp-json/", shop.base), settled: false };
        let auth = if shop.auth == Auth::Basic {
            api::Auth::basic(&shop.key, &shop.secret)
        } else {
            api::Auth::None
        };
        let name = format!("{NAME} at {}", shop.base);
        let transport = api::Api::new(&name, &shop.base, auth, account, api::one_try(timeout), max_body)
            .with_client(http)
            .with_secrets(&[&shop.key, &shop.secret]);
        Ok(Api { transport, shop, root: Mutex::new(root) })
    }

    fn root(&self) -> Root {
        self.root.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_root(&self, root: Root) {
        *self.root.lock().unwrap_or_else(|p| p.into_inner()) = root;
    }

    /// The store as messages name it: its address, which holds no credential.
    pub fn site(&self) -> &str {
        &self.shop.base
    }

    /// One request of `route` (`wc/v3/orders`), sent once. A 404 that is not WordPress's
    /// own JSON sends WordPress's discovery request once per pass, and the request again at
    /// the root it names.
    pub async fn once(
        &self,
        method: &Method,
        route: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Reply, PlatformError> {
        let root = self.root();
        match self.exchange(&root, method, route, query, body).await? {
            Raw::Reply(reply) => Ok(reply),
            Raw::NoApi => {
                let Root::Path { settled: false, .. } = root else { return Err(self.no_api()) };
                let found = self.discover().await?;
                let Some(found) = found.filter(|r| *r != root) else {
                    self.set_root(Root::Path {
                        prefix: format!("{}/wp-json/", self.shop.base),
                        settled: true,
                    });
                    return Err(self.no_api());
                };
                self.set_root(found.clone());
                match self.exchange(&found, method, route, query, body).await? {
                    Raw::Reply(reply) => Ok(reply),
                    Raw::NoApi => Err(self.no_api()),
                }
            }
        }
    }

    /// The request at `root`, sorted.
    async fn exchange(
        &self,
        root: &Root,
        method: &Method,
        route: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Raw, PlatformError> {
        let (address, mut params) = match root {
            Root::Path { prefix, .. } => (format!("{prefix}{route}"), Vec::new()),
            Root::RestRoute(url) => {
                let mut at = url.clone();
                at.set_query(None);
                let kept =
                    url.query_pairs().filter(|(k, _)| k != "rest_route").map(|(k, v)| (k.into(), v.into()));
                let mut params: Vec<(String, String)> = kept.collect();
                params.push(("rest_route".into(), format!("/{route}")));
                (at.to_string(), params)
            }
        };
        params.extend(query.iter().map(|(k, v)| (k.to_string(), v.clone())));
        match self.shop.auth {
            Auth::Basic => {}
            Auth::QueryString => {
                params.push(("consumer_key".into(), self.shop.key.clone()));
                params.push(("consumer_secret".into(), self.shop.secret.clone()));
            }
            Auth::OAuth1 => {
                let now = crate::dates::now_ms().div_euclid(1000);
                oauth::sign(method.as_str(), &address, &mut params, &self.shop.key, &self.shop.secret, now);
            }
        }
        let full = if params.is_empty() { address } else { format!("{address}?{}", oauth::query(&params)) };
        let url = reqwest::Url::parse(&full).map_err(|_| {
            PlatformError::BadData(format!("{NAME} at {} has an API address that is not a URL.", self.site()))
        })?;
        let request = self.transport.request(method.clone(), url, body);
        let response = self.sent(request).await?;
        let from = response.url().clone();
        let answer = self.transport.read(response, route).await?;
        self.judge(route, &from, answer)
    }

    /// Sends `request` under the timeout; no answer is a sentence of its own (a reach that
    /// refused the address, a timeout, the cause).
    async fn sent(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, PlatformError> {
        request.timeout(self.transport.policy.request_timeout).send().await.map_err(|e| self.unreachable(e))
    }

    /// Sorts an answer (annex, "Answers") to a request sent to `from`.
    fn judge(&self, route: &str, from: &reqwest::Url, answer: api::Answer) -> Result<Raw, PlatformError> {
        let date_ms = answer.date_ms();
        let api::Answer { status, headers, body } = answer;
        if status.is_redirection() {
            let to = headers.get(LOCATION).and_then(|l| l.to_str().ok()).map(|l| self.shown(from, l));
            return Err(PlatformError::BadData(format!(
                "{NAME} at {} answers {route} with HTTP {} to {}: use that address as url.",
                self.site(),
                status.as_u16(),
                to.as_deref().unwrap_or("another address")
            )));
        }
        if status.is_success() {
            return match json_text(&body) {
                Some(text) => Ok(Raw::Reply(Reply { answer: Answer::Json(Json(text.to_vec())), date_ms })),
                None => Err(PlatformError::BadData(self.not_json(route, status, &headers, &body))),
            };
        }
        let error = wordpress_error(&body);
        let secrets = [self.shop.key.as_str(), self.shop.secret.as_str()];
        let reason = |code: &str, message: &str| {
            format!("{} ({})", quote_platform_text(message, &secrets), quote_platform_text(code, &secrets))
        };
        let said = match &error {
            Some((code, message, _)) => format!("HTTP {}: {}", status.as_u16(), reason(code, message)),
            None => format!("HTTP {}", status.as_u16()),
        };
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(PlatformError::Refused(match &error {
                Some((code, message, _)) => {
                    format!("{NAME} at {} refused the key: {}.", self.site(), reason(code, message))
                }
                None if status == StatusCode::FORBIDDEN => format!(
                    "{NAME} at {} answered HTTP 403 with a web page: a firewall or security plugin refused the request.",
                    self.site()
                ),
                None => format!(
                    "{NAME} at {} answered HTTP 401 without JSON: the web server asks for its own password in front of WordPress.",
                    self.site()
                ),
            })),
            StatusCode::NOT_FOUND => match error {
                Some((code, message, _)) => {
                    Ok(Raw::Reply(Reply { answer: Answer::NotFound { code, message }, date_ms }))
                }
                None => Ok(Raw::NoApi),
            },
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => {
                let wait = http::retry_after(&headers, RETRY_AFTER.as_str());
                let asked =
                    wait.map_or(String::new(), |w| format!("; it asked to retry after {} s", w.as_secs()));
                let message = format!("{NAME} at {} asked us to wait ({said}{asked}).", self.site());
                match (status, wait) {
                    (StatusCode::SERVICE_UNAVAILABLE, None) => Err(PlatformError::unreachable(message)),
                    _ => Err(PlatformError::rate_limited(message, wait)),
                }
            }
            s if s.is_server_error() || s == StatusCode::REQUEST_TIMEOUT => Err(PlatformError::unreachable(
                format!("{NAME} at {} answered {route} without a verdict ({said}).", self.site()),
            )),
            s => {
                let params = error.as_ref().and_then(|(_, _, params)| params.clone());
                let params =
                    params.map_or(String::new(), |p| format!(": {}", quote_platform_text(&p, &secrets)));
                Err(PlatformError::Rejected {
                    status: s.as_u16(),
                    message: format!("{NAME} at {} refused {route} ({said}{params}).", self.site()),
                })
            }
        }
    }

    /// WordPress's discovery: the front page's `Link: <R>; rel="https://api.w.org/"`, when
    /// `R` is on the same scheme, host and port as `url`.
    async fn discover(&self) -> Result<Option<Root>, PlatformError> {
        let front = format!("{}/", self.shop.base);
        let response = self.sent(self.transport.bare(Method::HEAD, &front)).await?;
        let status = response.status();
        if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            return Err(PlatformError::unreachable(format!(
                "{NAME} at {} answered HTTP {} for its front page.",
                self.site(),
                status.as_u16()
            )));
        }
        let base = url::Url::parse(&front).ok();
        let roots = response.headers().get_all(reqwest::header::LINK).iter().filter_map(|v| v.to_str().ok());
        let found = roots.flat_map(api_links).find_map(|link| {
            let root = base.as_ref()?.join(&link).ok()?;
            let base = base.as_ref()?;
            let same = root.scheme() == base.scheme()
                && root.host_str() == base.host_str()
                && root.port_or_known_default() == base.port_or_known_default();
            same.then_some(root)
        });
        Ok(found.map(|root| {
            if root.query_pairs().any(|(k, _)| k == "rest_route") {
                Root::RestRoute(root)
            } else {
                let mut prefix = root.to_string();
                if !prefix.ends_with('/') {
                    prefix.push('/');
                }
                Root::Path { prefix, settled: true }
            }
        }))
    }

    /// A redirect's target as a message may show it: scheme, host and path.
    fn shown(&self, from: &reqwest::Url, location: &str) -> String {
        match from.join(location) {
            Ok(to) => {
                let port = to.port().map_or(String::new(), |p| format!(":{p}"));
                format!("{}://{}{port}{}", to.scheme(), to.host_str().unwrap_or_default(), to.path())
            }
            Err(_) => "another address".into(),
        }
    }

    fn not_json(&self, route: &str, status: StatusCode, headers: &HeaderMap, body: &[u8]) -> String {
        let kind = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("no content type");
        let start: String = String::from_utf8_lossy(body).chars().take(QUOTED_CHARS).collect();
        let start = quote_platform_text(&start, &[self.shop.key.as_str(), self.shop.secret.as_str()]);
        format!(
            "{NAME} at {} answered {route} with HTTP {} and {} that is not JSON (it begins {start:?}); a plugin may print warnings before the API's answer.",
            self.site(),
            status.as_u16(),
            quote_platform_text(kind, &[])
        )
    }

    /// WordPress answers, but not at this route: WooCommerce is not active (or too old).
    pub fn no_route(&self, route: &str) -> PlatformError {
        PlatformError::BadData(format!(
            "WordPress at {} has no route {route}: is WooCommerce (3.5 or later) active?",
            self.site()
        ))
    }

    fn no_api(&self) -> PlatformError {
        PlatformError::BadData(format!(
            "There is no WordPress REST API at {}/wp-json/: check the URL or turn on pretty permalinks.",
            self.site()
        ))
    }

    fn unreachable(&self, e: reqwest::Error) -> PlatformError {
        if let Some(refused) = refusal_in(&e) {
            return not_allowed(refused);
        }
        if e.is_timeout() {
            return PlatformError::unreachable(format!(
                "{NAME} at {} did not answer within {}.",
                self.site(),
                describe_duration(self.transport.policy.request_timeout)
            ));
        }
        PlatformError::unreachable(format!(
            "{NAME} could not be reached at {}: {}.",
            self.site(),
            root_cause(&e.without_url())
        ))
    }
}

fn not_allowed(refused: &reach::Refused) -> PlatformError {
    PlatformError::NotAllowed(format!(
        "{NAME} may not be reached: {refused}; a customer user's store may point only at public internet addresses."
    ))
}

/// The reach refusal somewhere in a request's chain of causes.
fn refusal_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a reach::Refused> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(found) = e.downcast_ref::<std::io::Error>().and_then(reach::refusal) {
            return Some(found);
        }
        if let Some(found) = e.downcast_ref::<reach::Refused>() {
            return Some(found);
        }
        cause = e.source();
    }
    None
}

/// The JSON object or array in `bytes`, after an optional UTF-8 BOM and whitespace, checked
/// without reading it into values.
fn json_text(bytes: &[u8]) -> Option<&[u8]> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    if !matches!(bytes[start], b'{' | b'[') {
        return None;
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(&bytes[start..]).ok()?;
    Some(&bytes[start..])
}

/// A JSON object or array, after an optional UTF-8 BOM and whitespace (annex, "Answers").
pub fn json(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice(json_text(bytes)?).ok()
}

/// A WordPress JSON error's `code`, `message` and `data.params` (as text), if that is what
/// the body is.
fn wordpress_error(body: &[u8]) -> Option<(String, String, Option<String>)> {
    let v = json(body)?;
    let code = v.get("code")?.as_str()?.to_string();
    let message = v.get("message").and_then(Value::as_str).unwrap_or_default().to_string();
    let params = v.pointer("/data/params").and_then(Value::as_object).map(|p| {
        p.iter()
            .map(|(k, v)| format!("{k}: {}", v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join("; ")
    });
    Some((code, message, params))
}

/// The targets of `rel="https://api.w.org/"` links in one `Link` header.
fn api_links(header: &str) -> Vec<String> {
    header
        .split(',')
        .filter_map(|part| {
            let (target, params) = part.trim().split_once(';')?;
            let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
            let api = params.split(';').any(|p| {
                let p = p.trim();
                p.strip_prefix("rel=").is_some_and(|rel| rel.trim_matches('"') == "https://api.w.org/")
            });
            api.then(|| target.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_may_follow_a_bom_and_whitespace_but_nothing_else() {
        assert_eq!(json(b"\xEF\xBB\xBF \n[1]"), Some(serde_json::json!([1])));
        assert_eq!(json(b"{\"a\":1}"), Some(serde_json::json!({"a": 1})));
        for bad in [&b"<br /><b>Warning</b>: x [1]"[..], b"", b"42", b"\"text\"", b"[1"] {
            assert_eq!(json(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn the_api_root_is_read_from_link_headers() {
        let header = r#"<https://shop.test/wp-json/wp/v2/pages/2>; rel="alternate"; type="application/json", <https://shop.test/?rest_route=/>; rel="https://api.w.org/""#;
        assert_eq!(api_links(header), ["https://shop.test/?rest_route=/"]);
        assert!(api_links("<https://shop.test/>; rel=shortlink").is_empty());
    }
}
