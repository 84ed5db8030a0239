//! The wire: which operation a request is and in which environment (production at the root,
//! sandbox under `/sandbox`), faults, the access token and its seller and scopes, daily
//! quotas, the `Date` header every answer carries, and the log, counts and exchanges kept.

use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use super::call::{Call, invalid_token, spend_quota, too_many};
use super::{Api, Fault, Operation, SCOPE_FULFILLMENT, SCOPE_INVENTORY, State, error};
use crate::simulate::http::{Request, Response};
use crate::simulate::running::lock;

/// The sandbox's path prefix on the simulator's one server.
pub(super) const SANDBOX: &str = "/sandbox";

/// The operation a method and path (without the sandbox prefix) name, and the path's order id.
fn operation(method: &str, path: &str) -> Option<(Operation, Option<String>)> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    Some(match (method, parts.as_slice()) {
        ("POST", ["identity", "v1", "oauth2", "token"]) => (Operation::Token, None),
        ("GET", ["sell", "fulfillment", "v1", "order"]) => (Operation::GetOrders, None),
        ("GET", ["sell", "fulfillment", "v1", "order", id, "shipping_fulfillment"]) => {
            (Operation::GetShippingFulfillments, Some(decode(id)))
        }
        ("POST", ["sell", "fulfillment", "v1", "order", id, "shipping_fulfillment"]) => {
            (Operation::CreateShippingFulfillment, Some(decode(id)))
        }
        ("GET", ["sell", "inventory", "v1", "inventory_item"]) => (Operation::GetInventoryItems, None),
        ("POST", ["sell", "inventory", "v1", "bulk_get_inventory_item"]) => {
            (Operation::BulkGetInventoryItem, None)
        }
        ("GET", ["sell", "inventory", "v1", "offer"]) => (Operation::GetOffers, None),
        ("POST", ["sell", "inventory", "v1", "bulk_update_price_quantity"]) => {
            (Operation::BulkUpdatePriceQuantity, None)
        }
        _ => return None,
    })
}

fn decode(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

/// Answers one request (after the delay set), with a `Date` of the simulator's clock.
pub(super) async fn answer(state: Arc<Mutex<State>>, request: Request) -> Response {
    let delay = lock(&state).delay;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut state = lock(&state);
    let mut response = route(&mut state, &request);
    let now = u64::try_from(state.now_ms()).unwrap_or_default();
    response.headers.push(("Date".into(), httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_millis(now))));
    let query = if request.raw_query.is_empty() { String::new() } else { format!("?{}", request.raw_query) };
    let line = format!("{} {}{query} -> {}", request.method, request.path, response.status);
    state.log.push(line);
    #[cfg(test)]
    if state.exchanges.len() < super::MAX_EXCHANGES {
        state.exchanges.push(crate::simulate::openapi_check::Exchange::between(&request, &response));
    }
    response
}

fn route(state: &mut State, request: &Request) -> Response {
    let (path, sandbox) = match request.path.strip_prefix(SANDBOX) {
        Some(rest) if rest.starts_with('/') => (rest, true),
        _ => (request.path.as_str(), false),
    };
    let Some((op, order_id)) = operation(&request.method, path) else {
        return error(404, 2002, "ACCESS", "Resource not found", None);
    };
    state.total += 1;
    *state.counts.entry(op).or_default() += 1;
    if let Some(fault) = state.faults.take(|key| key.is_empty() || key == op.as_str()) {
        return faulted(&fault);
    }
    let host = request.header("host").unwrap_or("127.0.0.1");
    let base = format!("http://{host}{}", if sandbox { SANDBOX } else { "" });
    let ebay_host = if sandbox { "https://api.sandbox.ebay.com" } else { "https://api.ebay.com" };
    let mut call = Call { request, sandbox, seller: String::new(), base, ebay_host };
    if op == Operation::Token {
        return super::token::exchange(state, &call);
    }
    let seller = match authorize(state, request, sandbox, op.api()) {
        Ok(seller) => seller,
        Err(response) => return response,
    };
    let client_id = match state.accounts.get(&seller) {
        Some(account) => account.seller.client_id.clone(),
        None => return invalid_token(),
    };
    if !spend_quota(state, &client_id, sandbox, op.api()) {
        return too_many();
    }
    call.seller = seller;
    let order_id = order_id.unwrap_or_default();
    match op {
        Operation::Token => Response::empty(500),
        Operation::GetOrders => super::orders::get_orders(state, &call),
        Operation::GetShippingFulfillments => super::fulfillment::list(state, &call, &order_id),
        Operation::CreateShippingFulfillment => super::fulfillment::create(state, &call, &order_id),
        Operation::GetInventoryItems => super::inventory::get_items(state, &call),
        Operation::BulkGetInventoryItem => super::inventory::bulk_get(state, &call),
        Operation::GetOffers => super::inventory::get_offers(state, &call),
        Operation::BulkUpdatePriceQuantity => super::inventory::bulk_update(state, &call),
    }
}

/// The answer a fault stands for.
fn faulted(fault: &Fault) -> Response {
    match fault {
        Fault::RateLimit { retry_after } => {
            let mut response = too_many();
            if let Some(secs) = retry_after {
                response.headers.push(("Retry-After".into(), secs.to_string()));
            }
            response
        }
        Fault::Status(status) => {
            let message = match status {
                503 => "Service unavailable. Please try again later.",
                _ => {
                    "There was a problem with an eBay internal system or process. Contact eBay developer support for assistance."
                }
            };
            error(*status, 2003, "ACCESS", message, None)
        }
    }
}

/// The seller a bearer token was issued to, if it is valid here and carries `api`'s scope.
fn authorize(state: &State, request: &Request, sandbox: bool, api: Api) -> Result<String, Response> {
    let token = request.header("authorization").and_then(|v| v.strip_prefix("Bearer ")).map(str::trim);
    let issued = token.and_then(|t| state.tokens.get(t));
    let Some(issued) = issued.filter(|i| i.sandbox == sandbox && i.expires_ms > state.now_ms()) else {
        return Err(invalid_token());
    };
    let scope = if api == Api::Inventory { SCOPE_INVENTORY } else { SCOPE_FULFILLMENT };
    if !issued.scopes.iter().any(|s| s == scope) {
        return Err(error(
            403,
            1100,
            "ACCESS",
            "Access denied",
            Some("Insufficient permissions to fulfill the request."),
        ));
    }
    Ok(issued.username.clone())
}
