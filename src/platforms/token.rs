//! Access tokens a platform grants for longer-lived credentials (Login with Amazon's refresh
//! token, Shopify's client credentials): asked for with a form at the token endpoint through
//! the shared transport, kept in this process's memory only (never the database) under a key
//! that names the credentials without holding them, and asked for again a minute before
//! they run out.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use reqwest::Method;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::Deserialize;

use super::api::{Answer, Api};
use super::{PlatformError, http};

/// A token is asked for again this long before the platform said it runs out.
pub const MARGIN: Duration = Duration::from_secs(60);

/// The most tokens kept at once: past it, those run out go first, then the soonest to run out.
const MAX_KEPT: usize = 4096;

struct Kept {
    token: String,
    /// When it is asked for again; `None`: never (it does not run out).
    renew: Option<Instant>,
}

fn kept() -> MutexGuard<'static, HashMap<String, Kept>> {
    static KEPT: OnceLock<Mutex<HashMap<String, Kept>>> = OnceLock::new();
    KEPT.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// The token kept under `key` while it has more than [`MARGIN`] left.
pub fn good(key: &str) -> Option<String> {
    let all = kept();
    let kept = all.get(key)?;
    kept.renew.is_none_or(|at| at > Instant::now()).then(|| kept.token.clone())
}

/// The token kept under `key`, good or not: what no message may quote.
pub fn held(key: &str) -> Option<String> {
    kept().get(key).map(|k| k.token.clone())
}

/// Forgets the token kept under `key` (the platform refused it).
pub fn forget(key: &str) {
    kept().remove(key);
}

/// Keeps `token` under `key`; it runs out after `lives` (`None`, or a lifetime past any
/// clock: it does not).
pub fn keep(key: &str, token: &str, lives: Option<Duration>) {
    keep_for(key, token, lives, MARGIN);
}

/// [`keep`], asked for again `margin` before it runs out (eBay's five minutes).
pub fn keep_for(key: &str, token: &str, lives: Option<Duration>, margin: Duration) {
    let now = Instant::now();
    let renew = lives.and_then(|lives| now.checked_add(lives.saturating_sub(margin)));
    let mut all = kept();
    if !all.contains_key(key) && all.len() >= MAX_KEPT {
        all.retain(|_, k| k.renew.is_none_or(|at| at > now));
        if all.len() >= MAX_KEPT
            && let Some(soonest) =
                all.iter().filter_map(|(k, v)| Some((k, v.renew?))).min_by_key(|(_, at)| *at)
        {
            let soonest = soonest.0.clone();
            all.remove(&soonest);
        }
    }
    all.insert(key.to_string(), Kept { token: token.to_string(), renew });
}

/// What a token endpoint answered.
pub enum Asked {
    /// A token, and how long it lives (seconds), when the platform said.
    Granted { token: String, expires_in: Option<u64> },
    /// A 2xx answer without an `access_token`.
    NoToken,
    /// Any other status, for the platform to read.
    Refused(Answer),
}

/// Asks `url` for a token with the form `fields`, sent under `api`'s timeout and named by its
/// platform, carrying `api`'s credentials (eBay's Basic client id and secret); `what` names
/// the request in messages.
pub async fn ask(api: &Api, url: &str, fields: &[(&str, &str)], what: &str) -> Result<Asked, PlatformError> {
    let form = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
    let request = api.auth.apply(api.bare(Method::POST, url));
    let request = request.header(CONTENT_TYPE, "application/x-www-form-urlencoded");
    let request = request.header(ACCEPT, "application/json").body(form);
    let answer =
        api.read(http::send(request, api.policy.request_timeout, &api.platform, url).await?, what).await?;
    if !answer.status.is_success() {
        return Ok(Asked::Refused(answer));
    }
    #[derive(Deserialize)]
    struct Grant {
        access_token: String,
        #[serde(default)]
        expires_in: Option<u64>,
    }
    Ok(match serde_json::from_slice::<Grant>(&answer.body) {
        Ok(grant) => Asked::Granted { token: grant.access_token, expires_in: grant.expires_in },
        Err(_) => Asked::NoToken,
    })
}

/// A token endpoint's refusal as a message says it: `HTTP 400 Bad Request: invalid_grant:
/// {error_description}` (OAuth's `error` and `error_description`, quoted by `quote`), or the
/// status alone when the body says neither.
pub fn refusal(answer: &Answer, quote: impl Fn(&str) -> String) -> String {
    #[derive(Deserialize, Default)]
    struct Refusal {
        #[serde(default)]
        error: Option<String>,
        #[serde(default)]
        error_description: Option<String>,
    }
    let refusal = serde_json::from_slice::<Refusal>(&answer.body).unwrap_or_default();
    let reason = [refusal.error, refusal.error_description].into_iter().flatten().collect::<Vec<_>>();
    let status = http::status_text(answer.status);
    match reason.is_empty() {
        true => format!("HTTP {status}"),
        false => format!("HTTP {status}: {}", quote(&reason.join(": "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_good_until_a_minute_before_it_runs_out_and_one_past_any_clock_never_runs_out() {
        keep("test-short", "t1", Some(Duration::from_secs(30)));
        assert_eq!(good("test-short"), None);
        assert_eq!(held("test-short").as_deref(), Some("t1"));
        keep("test-long", "t2", Some(Duration::from_secs(3600)));
        assert_eq!(good("test-long").as_deref(), Some("t2"));
        keep("test-endless", "t3", Some(Duration::from_secs(u64::MAX)));
        assert_eq!(good("test-endless").as_deref(), Some("t3"));
        forget("test-long");
        assert_eq!(held("test-long"), None);
    }
}
