//! What a handler of the simulated eBay is handed (the request, its environment and seller)
//! and the answers and counts every handler shares: a spent quota's 429, an unknown token's
//! 401, and the daily quota itself.

use super::{Api, State, day, error};
use crate::simulate::http::{Request, Response};

/// What a handler needs to know about the request besides its body.
pub(super) struct Call<'a> {
    pub request: &'a Request,
    pub sandbox: bool,
    /// The seller the access token was issued to (empty for the token endpoint).
    pub seller: String,
    /// `http://127.0.0.1:PORT` or `http://127.0.0.1:PORT/sandbox`, as the request reached it.
    pub base: String,
    /// eBay's own host for this environment, as its `href`s name it.
    pub ebay_host: &'static str,
}

/// 429 with eBay's error body.
pub(super) fn too_many() -> Response {
    error(
        429,
        2001,
        "ACCESS",
        "Too many requests",
        Some("The request limit has been reached for the resource."),
    )
}

/// 401 errorId 1001.
pub(super) fn invalid_token() -> Response {
    error(
        401,
        1001,
        "OAuth",
        "Invalid access token",
        Some("Invalid access token. Check the value of the Authorization HTTP request header."),
    )
}

/// Counts one call of `api` for the keyset today; false when its daily quota is spent.
pub(super) fn spend_quota(state: &mut State, client_id: &str, sandbox: bool, api: Api) -> bool {
    let today = day(state.now_ms());
    let limit = state.quotas.get(&(client_id.to_string(), api)).copied();
    let used = state.used.entry((client_id.to_string(), sandbox, api, today)).or_default();
    if limit.is_some_and(|limit| *used >= limit) {
        return false;
    }
    *used += 1;
    true
}
