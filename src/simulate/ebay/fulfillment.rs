//! `getShippingFulfillments` and `createShippingFulfillment`: the body checked as eBay does
//! (tracking number letters and digits with its carrier, each line once and known, quantities
//! not above what is left, the shipped date), the tracking number as the fulfillment's id,
//! and the line items', the order's status and `lastModifiedDate` moved.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::call::Call;
use super::{State, error, iso, parse_iso};
use crate::simulate::http::Response;

const DOMAIN: &str = "API_FULFILLMENT";

fn bad(id: u32, message: &str) -> Response {
    error(400, id, DOMAIN, message, None)
}

/// Answers `GET /sell/fulfillment/v1/order/{orderId}/shipping_fulfillment`.
pub(super) fn list(state: &mut State, call: &Call, order_id: &str) -> Response {
    let account = state.accounts.get(&call.seller);
    let Some(order) = account.and_then(|a| a.by_id.get(order_id).map(|&i| &a.orders[i])) else {
        return bad(32100, &format!("Invalid order ID: {order_id}"));
    };
    Response::json(200, &json!({"fulfillments": order.fulfillments, "total": order.fulfillments.len()}))
}

/// How many units of each line item are shipped: (lineItemId, quantity ordered, shipped).
fn lines(order: &super::OrderRec) -> Vec<(String, i64, i64)> {
    let items = order.json["lineItems"].as_array().map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .map(|item| {
            let id = item["lineItemId"].as_str().unwrap_or_default().to_string();
            let shipped: i64 = order
                .fulfillments
                .iter()
                .flat_map(|f| f["lineItems"].as_array().into_iter().flatten())
                .filter(|l| l["lineItemId"] == id.as_str())
                .map(|l| l["quantity"].as_i64().unwrap_or_default())
                .sum();
            (id, item["quantity"].as_i64().unwrap_or_default(), shipped)
        })
        .collect()
}

/// Answers `POST /sell/fulfillment/v1/order/{orderId}/shipping_fulfillment`.
pub(super) fn create(state: &mut State, call: &Call, order_id: &str) -> Response {
    let now_ms = state.now_ms();
    let serial = state.next_serial();
    let Some(account) = state.accounts.get_mut(&call.seller) else { return super::call::invalid_token() };
    let Some(&index) = account.by_id.get(order_id) else {
        return bad(32100, &format!("Invalid Order Id: {order_id}"));
    };
    let Ok(body) = serde_json::from_slice::<Value>(&call.request.body) else {
        return bad(32600, "Invalid input data");
    };
    let order = &account.orders[index];
    let tracking = body.get("trackingNumber").map(|v| v.as_str().unwrap_or_default().to_string());
    let carrier = body.get("shippingCarrierCode").map(|v| v.as_str().unwrap_or_default().to_string());
    let tracking_ok =
        tracking.as_deref().is_none_or(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric()));
    if tracking.is_some() != carrier.is_some() || !tracking_ok || carrier.as_deref() == Some("") {
        return bad(32300, "Invalid shipment tracking number or carrier");
    }
    let shipped_ms = match body.get("shippedDate") {
        None => now_ms,
        Some(date) => {
            let text = date.as_str().unwrap_or_default();
            let shaped = text.len() == 24 && text.ends_with('Z') && text.as_bytes().get(19) == Some(&b'.');
            match parse_iso(text) {
                Some(ms) if shaped && ms >= order.created_ms && ms <= now_ms + 86_400_000 => ms,
                _ => return bad(32500, "Invalid shipped date"),
            }
        }
    };
    let Some(asked) = body.get("lineItems").and_then(Value::as_array).filter(|a| !a.is_empty()) else {
        return bad(32600, "Invalid input data");
    };
    let hub =
        order.json.pointer("/fulfillmentStartInstructions/0/ebaySupportedFulfillment") == Some(&json!(true));
    if hub && asked.len() > 1 {
        return bad(
            34300,
            "Mark As Shipped for multiple Global Shipping Program line items is not supported",
        );
    }
    let known = lines(order);
    let mut seen = HashSet::new();
    let mut sent = Vec::new();
    for entry in asked {
        let id = entry["lineItemId"].as_str().unwrap_or_default();
        if !seen.insert(id) {
            return bad(32210, "Duplicate line item in the request");
        }
        let Some((_, quantity, shipped)) = known.iter().find(|(known, _, _)| known == id) else {
            return bad(32200, &format!("Invalid line item id: {id}"));
        };
        let left = quantity - shipped;
        let wanted = match entry.get("quantity") {
            None => left,
            Some(q) => q.as_i64().unwrap_or(0),
        };
        if wanted < 1 || wanted > left {
            return bad(32600, "Invalid input data");
        }
        sent.push(json!({"lineItemId": id, "quantity": wanted}));
    }
    let fulfillment_id = tracking.clone().unwrap_or_else(|| format!("9{serial:015}"));
    if order.fulfillments.iter().any(|f| f["fulfillmentId"] == fulfillment_id.as_str()) {
        return bad(34500, "Please use PUT operation for updating shipping fulfillment");
    }
    let mut fulfillment =
        json!({"fulfillmentId": fulfillment_id, "shippedDate": iso(shipped_ms), "lineItems": sent});
    if let (Some(tracking), Some(carrier)) = (&tracking, &carrier) {
        fulfillment["shipmentTrackingNumber"] = json!(tracking);
        fulfillment["shippingCarrierCode"] = json!(carrier);
    }
    let href =
        format!("{}/sell/fulfillment/v1/order/{order_id}/shipping_fulfillment/{fulfillment_id}", call.base);
    let order = &mut account.orders[index];
    order.fulfillments.push(fulfillment);
    mark_statuses(order);
    if let Some(hrefs) = order.json.get_mut("fulfillmentHrefs").and_then(Value::as_array_mut) {
        hrefs.push(json!(format!(
            "{}/sell/fulfillment/v1/order/{order_id}/shipping_fulfillment/{fulfillment_id}",
            call.ebay_host
        )));
    }
    account.touch(order_id, now_ms);
    if let Some(tracking) = tracking {
        state.tracking.push((call.seller.clone(), tracking));
    }
    let Some(account) = state.accounts.get_mut(&call.seller) else { return super::call::invalid_token() };
    if account.lose_answers > 0 {
        account.lose_answers -= 1;
        return error(502, 2003, "ACCESS", "Bad gateway", None);
    }
    let mut response = Response::empty(201);
    response.headers.push(("Location".into(), href));
    response
}

/// Each line item's `lineItemFulfillmentStatus` and the order's `orderFulfillmentStatus`,
/// from the units shipped.
fn mark_statuses(order: &mut super::OrderRec) {
    let counted = lines(order);
    let mut all = true;
    let mut any = false;
    if let Some(items) = order.json.get_mut("lineItems").and_then(Value::as_array_mut) {
        for (item, (_, quantity, shipped)) in items.iter_mut().zip(&counted) {
            let status = if shipped >= quantity {
                "FULFILLED"
            } else if *shipped > 0 {
                "IN_PROGRESS"
            } else {
                "NOT_STARTED"
            };
            all &= status == "FULFILLED" || *quantity == 0;
            any |= *shipped > 0;
            super::set(item, "lineItemFulfillmentStatus", json!(status));
        }
    }
    let status = if all {
        "FULFILLED"
    } else if any {
        "IN_PROGRESS"
    } else {
        "NOT_STARTED"
    };
    order.status = status.to_string();
    super::set(&mut order.json, "orderFulfillmentStatus", json!(status));
}
