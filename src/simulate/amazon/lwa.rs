//! Login with Amazon's token endpoint, `POST /auth/o2/token`, refresh-token grant: a form
//! body with `grant_type`, `refresh_token`, `client_id` and `client_secret`; an access token
//! for an hour, remembered with its seller; errors as LWA words them.

use serde_json::json;

use super::{Issued, State};
use crate::simulate::http::{Request, Response};

/// An access token lives this long.
pub(super) const TOKEN_LIFE_SECS: i64 = 3600;

fn refusal(status: u16, error: &str, description: &str) -> Response {
    Response::json(status, &json!({"error": error, "error_description": description}))
}

pub(super) fn token(state: &mut State, request: &Request, now: i64) -> Response {
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&request.body).into_owned().collect();
    let field =
        |name: &str| form.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty());
    for name in ["grant_type", "refresh_token", "client_id", "client_secret"] {
        if field(name).is_none() {
            return refusal(
                400,
                "invalid_request",
                &format!("The request is missing a required parameter : {name}"),
            );
        }
    }
    if field("grant_type") != Some("refresh_token") {
        return refusal(400, "unsupported_grant_type", "The authorization grant type is not supported");
    }
    let (client_id, secret, refresh) = (
        field("client_id").unwrap_or_default(),
        field("client_secret").unwrap_or_default(),
        field("refresh_token").unwrap_or_default(),
    );
    let mut clients = state.accounts.values().filter(|a| a.seller.client_id == client_id).peekable();
    if clients.peek().is_none_or(|a| a.seller.client_secret != secret) {
        return refusal(401, "invalid_client", "Client authentication failed");
    }
    let Some(account) = clients.find(|a| a.seller.refresh_token == refresh && !a.refresh_revoked) else {
        return refusal(400, "invalid_grant", "The request has an invalid grant parameter : refresh_token");
    };
    let seller_id = account.seller.seller_id.clone();
    let access = format!("Atza|IwEB{:016x}{:016x}", state.rng.next(), state.rng.next());
    state.tokens.insert(access.clone(), Issued { seller_id, expires: now + TOKEN_LIFE_SECS });
    Response::json(
        200,
        &json!({"access_token": access, "token_type": "bearer", "expires_in": TOKEN_LIFE_SECS}),
    )
}
