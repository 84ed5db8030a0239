//! The wire: which operation a request is, whether the account takes it (token, latency,
//! faults, the sliding window), and the six operations' answers with ShipBob's headers.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::data::{Account, Ids};
use super::{Fault, Operation, Sandbox, State, create};
use crate::simulate::http::{Request, Response};
use crate::simulate::running::lock;

const PREFIX: &str = "/2026-01/";

/// The operation a request names, with the order id of the two that carry one.
fn operation(request: &Request) -> Option<(Operation, Option<&str>)> {
    let rest = request.path.strip_prefix(PREFIX)?;
    Some(match (request.method.as_str(), rest) {
        ("GET", "channel") => (Operation::GetChannels, None),
        ("POST", "order") => (Operation::CreateOrder, None),
        ("GET", "order") => (Operation::GetOrders, None),
        ("GET", "inventory-level") => (Operation::GetInventoryLevels, None),
        ("POST", rest) => {
            (Operation::CancelOrder, Some(rest.strip_prefix("order/")?.strip_suffix(":cancel")?))
        }
        ("GET", rest) => {
            (Operation::GetOrder, Some(rest.strip_prefix("order/").filter(|id| !id.contains('/'))?))
        }
        _ => return None,
    })
}

/// A query parameter, its name matched without regard to case (ASP.NET binds them so).
fn param<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.query.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

fn bearer(request: &Request) -> Option<&str> {
    let value = request.header("authorization")?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

pub(super) async fn answer(state: Arc<Mutex<State>>, request: Request) -> Response {
    let delay = {
        let mut state = lock(&state);
        let op = operation(&request).map(|(op, _)| op);
        if let Some(op) = op {
            *state.counts.entry(op).or_default() += 1;
        }
        bearer(&request).and_then(|t| state.sandboxes.get(t)).map_or(Duration::ZERO, |s| s.latency)
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut state = lock(&state);
    let mut response = admit_and_route(&mut state, &request);
    response.headers.push(("Date".into(), httpdate::fmt_http_date(std::time::SystemTime::now())));
    #[cfg(test)]
    if state.recording {
        state.exchanges.push(crate::simulate::openapi_check::Exchange::between(&request, &response));
    }
    response
}

fn admit_and_route(state: &mut State, request: &Request) -> Response {
    let Some((op, order_id)) = operation(request) else { return Response::empty(404) };
    let now = Instant::now();
    let now_ms = super::now_ms();
    let State { sandboxes, ids, rng, auto_ship, .. } = state;
    let sandbox = match bearer(request).and_then(|t| sandboxes.get_mut(t)) {
        Some(sandbox) if !sandbox.revoked => sandbox,
        _ => return unauthorized(op),
    };
    let mut failure = None;
    match sandbox.faults.take(|key| key.is_empty() || key == op.as_str()) {
        Some(Fault::RateLimited(secs)) => return too_many(secs),
        Some(Fault::Status(status)) => failure = Some(status),
        None => {}
    }
    // The sliding window: every request of the last minute counts.
    while sandbox.window.front().is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60)) {
        sandbox.window.pop_front();
    }
    if sandbox.window.len() >= sandbox.per_minute {
        let oldest = sandbox.window.front().copied().unwrap_or(now);
        let wait = Duration::from_secs(60).saturating_sub(now.duration_since(oldest));
        return too_many((wait.as_secs_f64().ceil() as u64).max(1));
    }
    sandbox.window.push_back(now);
    let remaining = sandbox.per_minute - sandbox.window.len();
    if let Some(status) = failure {
        return with_remaining(
            op,
            Response::json(status, &json!({"": ["Simulated server error"]})),
            remaining,
        );
    }
    sandbox.account.advance(ids, rng, now_ms);
    let response = match op {
        Operation::GetChannels => channels(&sandbox.account, request),
        Operation::CreateOrder => create_order(sandbox, ids, rng, auto_ship.as_ref(), request, now_ms),
        Operation::GetOrders => orders(&sandbox.account, request),
        Operation::GetOrder => get_order(&sandbox.account, order_id.unwrap_or_default()),
        Operation::CancelOrder => cancel(&mut sandbox.account, order_id.unwrap_or_default(), now_ms),
        Operation::GetInventoryLevels => inventory(&sandbox.account, request),
    };
    let lost = matches!(op, Operation::CreateOrder | Operation::CancelOrder)
        && matches!(response.status, 200 | 201)
        && sandbox.lost_answers.get_mut(&op).is_some_and(|n| {
            let due = *n > 0;
            *n = n.saturating_sub(1);
            due
        });
    let response = if lost { Response::empty(502) } else { response };
    with_remaining(op, response, remaining)
}

fn with_remaining(op: Operation, mut response: Response, remaining: usize) -> Response {
    if op.is_order_operation() {
        response.headers.push(("x-remaining-calls".into(), remaining.to_string()));
    }
    response
}

/// 401: no body on the order operations and Get Channels, a problem on inventory.
fn unauthorized(op: Operation) -> Response {
    match op {
        Operation::GetInventoryLevels => {
            problem(401, "Unauthorized", "The access token is missing, unknown or revoked.")
        }
        _ => Response::empty(401),
    }
}

fn problem(status: u16, title: &str, detail: &str) -> Response {
    Response::json(
        status,
        &json!({"type": "https://tools.ietf.org/html/rfc9110#section-15.5", "title": title, "status": status,
                "detail": detail}),
    )
}

fn too_many(secs: u64) -> Response {
    let mut response = Response::empty(429);
    response.headers.push(("x-retry-after".into(), secs.to_string()));
    response.headers.push(("x-remaining-calls".into(), "0".into()));
    response
}

fn bad_request(member: &str, message: &str) -> Response {
    Response::json(400, &json!({ member: [message] }))
}

/// A cursor: the offset of a page, as opaque base64 JSON (`{"Offset":250}`).
fn cursor(offset: usize, size: usize) -> String {
    base64::engine::general_purpose::STANDARD_NO_PAD
        .encode(format!("{{\"Offset\":{offset},\"PageSize\":{size}}}"))
}

fn read_cursor(text: &str) -> Option<(usize, Option<usize>)> {
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD.decode(text.trim_end_matches('=')).ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    let offset = usize::try_from(value.get("Offset")?.as_u64()?).ok()?;
    Some((offset, value.get("PageSize").and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok())))
}

fn channels(account: &Account, request: &Request) -> Response {
    let size = match param(request, "RecordsPerPage").map(str::parse::<usize>) {
        None => 50,
        Some(Ok(n)) if n >= 1 => n,
        Some(_) => return bad_request("RecordsPerPage", "The value is not valid for RecordsPerPage."),
    };
    let offset = match param(request, "Cursor").map(read_cursor) {
        None => 0,
        Some(Some((offset, _))) => offset,
        Some(None) => return bad_request("Cursor", "The cursor is not valid."),
    };
    let items: Vec<Value> = account
        .channels
        .iter()
        .skip(offset)
        .take(size)
        .map(|c| json!({"id": c.id, "application_name": c.application_name, "name": c.name, "scopes": c.scopes}))
        .collect();
    let next = (offset + size < account.channels.len())
        .then(|| format!("{PREFIX}channel?cursor={}", cursor(offset + size, size)));
    let prev =
        (offset > 0).then(|| format!("{PREFIX}channel?cursor={}", cursor(offset.saturating_sub(size), size)));
    Response::json(200, &json!({"items": items, "next": next, "prev": prev}))
}

/// The channel a create names: 400 without one, 403 for one that may not write orders.
fn create_order(
    sandbox: &mut Sandbox,
    ids: &mut Ids,
    rng: &mut crate::simulate::Rng,
    auto: Option<&super::AutoShip>,
    request: &Request,
    now_ms: i64,
) -> Response {
    let channel = match request.header("shipbob_channel_id").map(|v| v.trim().parse::<i64>()) {
        None => return bad_request("shipbob_channel_id", "The shipbob_channel_id header is required."),
        Some(Err(_)) => {
            return bad_request("shipbob_channel_id", "The shipbob_channel_id header is not a valid id.");
        }
        Some(Ok(id)) => match sandbox.account.channel_index(id) {
            Some(at) if sandbox.account.channels[at].scopes.contains(&"orders_write") => at,
            _ => return Response::empty(403),
        },
    };
    let new = match create::read(&request.body) {
        Ok(new) => new,
        Err(complaints) => {
            let mut body = serde_json::Map::new();
            for (member, message) in complaints {
                let messages = body.entry(member).or_insert_with(|| json!([]));
                if let Some(list) = messages.as_array_mut() {
                    list.push(json!(message));
                }
            }
            return Response::json(400, &Value::Object(body));
        }
    };
    if let Some(status) = sandbox.refusals.get(&new.reference_id) {
        return match status {
            422 => Response::json(422, &json!({"": ["Simulated refusal: the order cannot be created"]})),
            _ => bad_request("Recipient.Address.Country", "'ZZ' is not a valid country code"),
        };
    }
    if sandbox.duplicates > 0 && sandbox.account.by_reference(&new.reference_id).is_none() {
        // As if an earlier create of this reference had been applied and its answer lost.
        sandbox.duplicates -= 1;
        sandbox.account.create(ids, rng, auto, channel, new, now_ms - 1000);
        return duplicate();
    }
    if sandbox.account.by_reference(&new.reference_id).is_some() {
        return duplicate();
    }
    let id = sandbox.account.create(ids, rng, auto, channel, new, now_ms);
    let order = &sandbox.account.orders[&id];
    Response::json(201, &order.view(&sandbox.account.channels[order.channel]))
}

fn duplicate() -> Response {
    Response::json(422, &json!({"": ["Cannot insert order with existing ReferenceId"]}))
}

fn date(request: &Request, name: &str) -> Result<Option<i64>, Response> {
    let Some(text) = param(request, name) else { return Ok(None) };
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map(|at| Some((at.unix_timestamp_nanos() / 1_000_000) as i64))
        .map_err(|_| bad_request(name, &format!("The value '{text}' is not valid for {name}.")))
}

fn flag(request: &Request, name: &str) -> Result<Option<bool>, Response> {
    match param(request, name).map(|v| v.to_ascii_lowercase()) {
        None => Ok(None),
        Some(v) if v == "true" => Ok(Some(true)),
        Some(v) if v == "false" => Ok(Some(false)),
        Some(v) => Err(bad_request(name, &format!("The value '{v}' is not valid for {name}."))),
    }
}

fn whole(request: &Request, name: &str, min: i64, max: i64, default: i64) -> Result<i64, Response> {
    match param(request, name).map(str::parse::<i64>) {
        None => Ok(default),
        Some(Ok(n)) if (min..=max).contains(&n) => Ok(n),
        Some(Ok(_)) => Err(bad_request(name, &format!("The field {name} must be between {min} and {max}."))),
        Some(Err(_)) => Err(bad_request(name, &format!("The value is not valid for {name}."))),
    }
}

fn orders(account: &Account, request: &Request) -> Response {
    match list_orders(account, request) {
        Ok(response) | Err(response) => response,
    }
}

fn list_orders(account: &Account, request: &Request) -> Result<Response, Response> {
    if let Some(channel) = request.header("shipbob_channel_id") {
        match channel.trim().parse::<i64>() {
            Ok(id) if account.channel_index(id).is_some() => {}
            Ok(_) => return Ok(Response::empty(403)),
            Err(_) => return Err(bad_request("shipbob_channel_id", "The value is not a valid id.")),
        }
    }
    let limit = whole(request, "Limit", 1, 250, 50)?;
    let page = whole(request, "Page", 1, i64::from(i32::MAX), 1)?;
    let newest = match param(request, "SortOrder") {
        None => true,
        Some(s) if s.eq_ignore_ascii_case("Newest") => true,
        Some(s) if s.eq_ignore_ascii_case("Oldest") => false,
        Some(s) => {
            return Err(bad_request("SortOrder", &format!("The value '{s}' is not valid for SortOrder.")));
        }
    };
    let references: Option<Vec<&str>> =
        param(request, "ReferenceIds").map(|v| v.split(',').map(str::trim).collect());
    let ids: Option<Vec<i64>> = match param(request, "IDs") {
        None => None,
        Some(v) => Some(
            v.split(',')
                .map(|id| id.trim().parse::<i64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad_request("IDs", &format!("The value '{v}' is not valid for IDs.")))?,
        ),
    };
    let (start, end) = (date(request, "StartDate")?, date(request, "EndDate")?);
    let (updated_from, updated_to) =
        (date(request, "LastUpdateStartDate")?, date(request, "LastUpdateEndDate")?);
    let tracked_from = date(request, "LastTrackingUpdateStartDate")?;
    let tracked_to = date(request, "LastTrackingUpdateEndDate")?;
    let has_tracking = flag(request, "HasTracking")?;
    let uploaded = flag(request, "IsTrackingUploaded")?;
    let within =
        |t: i64, from: Option<i64>, to: Option<i64>| from.is_none_or(|f| t >= f) && to.is_none_or(|e| t <= e);
    let mut found: Vec<&super::data::Order> = account
        .orders
        .values()
        .filter(|o| references.as_ref().is_none_or(|r| r.contains(&o.reference_id.as_str())))
        .filter(|o| ids.as_ref().is_none_or(|ids| ids.contains(&o.id)))
        .filter(|o| within(o.created_ms, start, end))
        .filter(|o| within(o.updated_ms(), updated_from, updated_to))
        .filter(|o| {
            (tracked_from.is_none() && tracked_to.is_none())
                || o.has_tracking()
                    && o.tracking_updated_ms().is_some_and(|t| within(t, tracked_from, tracked_to))
        })
        .filter(|o| has_tracking.is_none_or(|h| o.has_tracking() == h))
        // No tracking is ever marked uploaded here: orderbridge does not use that flag.
        .filter(|_| uploaded != Some(true))
        .collect();
    // By creation, never by the filtered time, as ShipBob sorts.
    if newest {
        found.reverse();
    }
    // The backlog comes first in a walk of shipments, whatever the order asked.
    let backlog = if tracked_from.is_some() { account.backlog } else { 0 };
    let total = found.len() + backlog;
    let limit = limit as usize;
    let pages = total.div_ceil(limit);
    let skip = (page as usize - 1).saturating_mul(limit);
    let mut views: Vec<Value> = (skip..backlog.min(skip.saturating_add(limit)))
        .map(|n| {
            json!({"id": 1_000_000_000 + n, "reference_id": format!("BACKLOG-{n}"), "status": "Processing",
                        "shipments": []})
        })
        .collect();
    let own = limit - views.len();
    views.extend(
        found
            .iter()
            .skip(skip.saturating_sub(backlog))
            .take(own)
            .map(|o| o.view(&account.channels[o.channel])),
    );
    let mut response = Response::json(200, &Value::Array(views));
    response.headers.push(("total-count".into(), total.to_string()));
    response.headers.push(("total-pages".into(), pages.to_string()));
    response.headers.push(("page-number".into(), page.to_string()));
    Ok(response)
}

fn order_id(text: &str) -> Result<i64, Response> {
    text.parse::<i32>()
        .map(i64::from)
        .map_err(|_| bad_request("orderId", &format!("The value '{text}' is not valid.")))
}

fn get_order(account: &Account, id: &str) -> Response {
    let id = match order_id(id) {
        Ok(id) => id,
        Err(response) => return response,
    };
    match account.orders.get(&id) {
        Some(order) => Response::json(200, &order.view(&account.channels[order.channel])),
        None => Response::empty(404),
    }
}

fn cancel(account: &mut Account, id: &str, now_ms: i64) -> Response {
    let id = match order_id(id) {
        Ok(id) => id,
        Err(response) => return response,
    };
    if account.orders.get(&id).is_some_and(|o| o.cancelled_ms.is_some()) {
        return Response::json(422, &json!({"": ["Order is already cancelled"]}));
    }
    let Some((status, results)) = account.cancel(id, now_ms) else { return Response::empty(404) };
    let order = &account.orders[&id];
    Response::json(
        200,
        &json!({"order_id": id, "status": status, "canceled_shipment_results": results,
                "order": order.view(&account.channels[order.channel])}),
    )
}

fn inventory(account: &Account, request: &Request) -> Response {
    let from_cursor = match param(request, "cursor").map(read_cursor) {
        None => None,
        Some(Some(at)) => Some(at),
        Some(None) => return problem(400, "Bad Request", "The cursor is not valid."),
    };
    let size = match param(request, "PageSize").map(str::parse::<usize>) {
        None => from_cursor.and_then(|(_, size)| size).unwrap_or(100),
        Some(Ok(n)) if (1..=250).contains(&n) => n,
        Some(_) => return problem(400, "Bad Request", "PageSize must be a whole number from 1 to 250."),
    };
    let offset = from_cursor.map_or(0, |(offset, _)| offset);
    let items: Vec<Value> = account.items.iter().skip(offset).take(size).map(|i| i.view()).collect();
    let next = (offset + size < account.items.len())
        .then(|| format!("{PREFIX}inventory-level?cursor={}", cursor(offset + size, size)));
    Response::json(200, &json!({"items": items, "first": null, "prev": null, "next": next, "last": null}))
}
