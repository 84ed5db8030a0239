//! `POST /identity/v1/oauth2/token`, the refresh-token grant: Basic auth of the keyset, the
//! seller's refresh token, and scopes no wider than the seller's consent.

use base64::Engine;
use serde_json::json;

use super::call::{Call, spend_quota, too_many};
use super::{Api, Issued, State};
use crate::simulate::http::Response;

fn oauth_error(status: u16, error: &str, description: &str) -> Response {
    Response::json(status, &json!({"error": error, "error_description": description}))
}

/// The (client id, secret) of a Basic `Authorization` header.
fn basic(header: Option<&str>) -> Option<(String, String)> {
    let encoded = header?.strip_prefix("Basic ")?.trim();
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, secret) = text.split_once(':')?;
    Some((id.to_string(), secret.to_string()))
}

/// Answers the token endpoint.
pub(super) fn exchange(state: &mut State, call: &Call) -> Response {
    let invalid_client = || oauth_error(401, "invalid_client", "client authentication failed");
    let Some((client_id, secret)) = basic(call.request.header("authorization")) else {
        return invalid_client();
    };
    let keyset = |a: &&super::Account| {
        a.seller.client_id == client_id
            && a.seller.client_secret == secret
            && a.seller.sandbox == call.sandbox
    };
    if !state.accounts.values().any(|a| keyset(&a)) {
        return invalid_client();
    }
    if !spend_quota(state, &client_id, call.sandbox, Api::Token) {
        return too_many();
    }
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&call.request.body).into_owned().collect();
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    if field("grant_type") != Some("refresh_token") {
        return oauth_error(
            400,
            "unsupported_grant_type",
            "grant type in request is not supported by the authorization server",
        );
    }
    let refresh = field("refresh_token").unwrap_or_default();
    let found = state
        .accounts
        .values()
        .filter(keyset)
        .find(|a| a.seller.refresh_token == refresh && !state.revoked.iter().any(|r| r == refresh));
    let Some(account) = found else {
        return oauth_error(
            400,
            "invalid_grant",
            "the provided authorization refresh token is invalid or was issued to another client",
        );
    };
    let consented = &account.seller.scopes;
    let asked: Vec<String> = match field("scope") {
        Some(scope) if !scope.trim().is_empty() => scope.split_whitespace().map(str::to_string).collect(),
        _ => consented.clone(),
    };
    if asked.iter().any(|s| !consented.contains(s)) {
        return oauth_error(
            400,
            "invalid_scope",
            "The requested scope is invalid, unknown, malformed, or exceeds the scope granted to the client",
        );
    }
    let username = account.seller.username.clone();
    let serial = state.next_serial();
    let tail = base64::engine::general_purpose::STANDARD.encode(format!(
        "{:016x}{serial:08x}",
        xxhash_rust::xxh3::xxh3_64(format!("{username}/{serial}").as_bytes())
    ));
    let token = format!("v^1.1#i^1#p^3#r^1#I^3#f^0#t^H4sI{tail}");
    let lifetime = state.token_lifetime;
    let expires_ms = state.now_ms() + i64::try_from(lifetime).unwrap_or(i64::MAX / 4).saturating_mul(1000);
    state.tokens.insert(token.clone(), Issued { username, scopes: asked, sandbox: call.sandbox, expires_ms });
    Response::json(
        200,
        &json!({"access_token": token, "expires_in": lifetime, "token_type": "User Access Token"}),
    )
}
