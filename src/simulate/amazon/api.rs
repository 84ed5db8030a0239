//! The wire: which operation a request is, whether Amazon takes it (the region, the access
//! token and its seller, faults, the token bucket), the operations' answers, and the headers
//! every answer carries (`Date` on the simulator's clock, `x-amzn-RateLimit-Limit` on 2xx).

use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

use super::wire::error;
use super::{Fault, Operation, Search, State, confirm, controls, feeds, listings, lwa, order_view};
use crate::simulate::http::{Request, Response};
use crate::simulate::running::lock;

fn denied() -> Response {
    error(403, "Unauthorized", "Access to requested resource is denied.", "")
}

fn quota() -> Response {
    error(429, "QuotaExceeded", "You exceeded your quota for the requested resource.", "")
}

fn server_error(status: u16) -> Response {
    match status {
        429 => quota(),
        503 => error(503, "ServiceUnavailable", "Service temporarily unavailable. Please try again.", ""),
        500 => error(500, "InternalFailure", "We encountered an internal error. Please try again.", ""),
        status => Response::empty(status),
    }
}

fn segment(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// The operation a path (after the region) names, with its path parameters decoded.
fn operation(method: &str, rest: &str) -> Option<(Operation, Vec<String>)> {
    let parts: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    let args = |at: &[usize]| at.iter().map(|&i| segment(parts[i])).collect::<Vec<_>>();
    Some(match (method, parts.as_slice()) {
        ("GET", ["orders", "2026-01-01", "orders"]) => (Operation::SearchOrders, Vec::new()),
        ("GET", ["orders", "2026-01-01", "orders", _]) => (Operation::GetOrder, args(&[3])),
        ("POST", ["orders", "v0", "orders", _, "shipmentConfirmation"]) => {
            (Operation::ConfirmShipment, args(&[3]))
        }
        ("GET", ["sellers", "v1", "marketplaceParticipations"]) => {
            (Operation::GetMarketplaceParticipations, Vec::new())
        }
        ("GET", ["listings", "2021-08-01", "items", _]) => (Operation::SearchListingsItems, args(&[3])),
        ("GET", ["listings", "2021-08-01", "items", _, _]) => (Operation::GetListingsItem, args(&[3, 4])),
        ("POST", ["feeds", "2021-06-30", "documents"]) => (Operation::CreateFeedDocument, Vec::new()),
        ("GET", ["feeds", "2021-06-30", "documents", _]) => (Operation::GetFeedDocument, args(&[3])),
        ("POST", ["feeds", "2021-06-30", "feeds"]) => (Operation::CreateFeed, Vec::new()),
        ("GET", ["feeds", "2021-06-30", "feeds", _]) => (Operation::GetFeed, args(&[3])),
        _ => return None,
    })
}

pub(super) async fn answer(state: Arc<Mutex<State>>, request: Request) -> Response {
    let mut state = lock(&state);
    let now_ms = state.now_ms();
    let mut response = route(&mut state, &request);
    let date = UNIX_EPOCH + Duration::from_millis(u64::try_from(now_ms).unwrap_or_default());
    response.headers.push(("Date".into(), httpdate::fmt_http_date(date)));
    if request.method == "GET" && request.path.ends_with("/orders/2026-01-01/orders") {
        let token = request.param("paginationToken").map(str::to_string);
        state.searches.push(Search { token, status: response.status });
    }
    #[cfg(test)]
    if state.recording {
        state.exchanges.push(crate::simulate::openapi_check::Exchange::between(&request, &response));
    }
    response
}

fn count(state: &mut State, op: Operation) {
    *state.counts.entry(op).or_default() += 1;
}

fn route(state: &mut State, request: &Request) -> Response {
    let now = state.now();
    controls::advance_demo(state, now);
    if request.path == "/auth/o2/token" {
        count(state, Operation::Token);
        if request.method != "POST" {
            return Response::json(
                405,
                &json!({"error": "invalid_request", "error_description": "POST only"}),
            );
        }
        let form: Vec<(String, String)> = url::form_urlencoded::parse(&request.body).into_owned().collect();
        let refresh = form.iter().find(|(n, _)| n == "refresh_token").map(|(_, v)| v.as_str());
        let account = state.accounts.values_mut().find(|a| Some(a.seller.refresh_token.as_str()) == refresh);
        if let Some(Fault::Status(status)) = account.and_then(|a| a.faults.take(|key| key == "token")) {
            return Response::json(
                status,
                &json!({"error": "server_error", "error_description": "Simulated failure"}),
            );
        }
        return lwa::token(state, request, now);
    }
    if request.path.starts_with("/s3/") {
        count(state, if request.method == "PUT" { Operation::Upload } else { Operation::Download });
        return feeds::transfer(state, request, now);
    }
    let rest = request.path.trim_start_matches('/');
    let (region, rest) = rest.split_once('/').unwrap_or((rest, ""));
    let Some((op, args)) = operation(&request.method, rest).filter(|_| matches!(region, "na" | "eu" | "fe"))
    else {
        return error(404, "NotFound", "The requested resource was not found.", "");
    };
    count(state, op);
    let token = request.header("x-amz-access-token").unwrap_or_default();
    let seller_id = match state.tokens.get(token) {
        Some(issued) if issued.expires > now => issued.seller_id.clone(),
        _ => return denied(),
    };
    let origin = state.origin.clone();
    let Some(account) = state.accounts.get_mut(&seller_id) else { return denied() };
    if account.seller.region != region {
        return denied();
    }
    match account.faults.take(|key| key.is_empty() || key == op.as_str()) {
        Some(Fault::Status(status)) => return server_error(status),
        Some(Fault::EchoToken(status)) => {
            return error(status, "InvalidInput", &format!("The access token {token} was rejected."), "");
        }
        None => {}
    }
    let bucket = account.bucket(op);
    let rate = bucket.rate;
    if !bucket.take() {
        return quota();
    }
    let is_post = request.method == "POST";
    let json_body = request
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("application/json"));
    if is_post && !json_body {
        return error(
            415,
            "UnsupportedMediaType",
            "The request's Content-Type must be application/json.",
            "",
        );
    }
    // A listings path names the seller; another seller's is not the token's to read.
    let own = args.first().is_some_and(|s| *s == account.seller.seller_id);
    let mut response = match op {
        Operation::SearchOrders => order_view::search(account, request, now),
        Operation::GetOrder => order_view::get(account, &args[0], request),
        Operation::ConfirmShipment => {
            let response = confirm::confirm(account, &args[0], request, now);
            if response.status == 204 && account.lost_confirmations > 0 {
                account.lost_confirmations -= 1;
                return Response::empty(502);
            }
            response
        }
        Operation::GetMarketplaceParticipations => participations(account),
        Operation::SearchListingsItems if own => listings::search(account, request),
        Operation::GetListingsItem if own => listings::get(account, &args[1], request),
        Operation::SearchListingsItems | Operation::GetListingsItem => denied(),
        Operation::CreateFeedDocument => feeds::create_document(account, &origin, request, now),
        Operation::CreateFeed => feeds::create_feed(account, request, now),
        Operation::GetFeed => feeds::get_feed(account, &args[0], now),
        Operation::GetFeedDocument => feeds::get_document(account, &origin, &args[0], now),
        Operation::Token | Operation::Upload | Operation::Download => denied(),
    };
    if (200..300).contains(&response.status) {
        response.headers.push(("x-amzn-RateLimit-Limit".into(), format!("{rate}")));
    }
    let request_id = format!("{:08x}-sim", state.rng.next() as u32);
    response.headers.push(("x-amzn-RequestId".into(), request_id));
    response
}

fn participations(account: &super::Account) -> Response {
    let payload: Vec<_> = account
        .seller
        .marketplaces
        .iter()
        .map(|m| {
            json!({"marketplace": {"id": m.id, "name": m.name, "countryCode": m.country_code,
                                   "defaultCurrencyCode": m.currency, "defaultLanguageCode": m.language,
                                   "domainName": m.domain},
                   "storeName": account.seller.store_name,
                   "participation": {"isParticipating": m.participating, "hasSuspendedListings": false}})
        })
        .collect();
    Response::json(200, &json!({"payload": payload}))
}
