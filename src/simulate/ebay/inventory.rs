//! The Inventory API's four operations: `getInventoryItems`, `bulkGetInventoryItem` (≤ 25,
//! 207 with 25702 entries), `getOffers` and `bulkUpdatePriceQuantity` (≤ 25, the item's and
//! each offer's quantity, a "one SKU per call" mode, 250 revisions per listing per UTC day).

use std::collections::HashSet;

use serde_json::{Value, json};

use super::call::Call;
use super::{Account, Item, State, day, error, error_entry};
use crate::simulate::http::Response;

const DOMAIN: &str = "API_INVENTORY";
/// Revisions eBay allows a listing in a UTC day.
pub(super) const DAILY_REVISIONS: u32 = 250;

fn bad(id: u32, message: &str) -> Response {
    error(400, id, DOMAIN, message, None)
}

fn item_json(sku: &str, item: &Item) -> Value {
    let mut json = json!({"sku": sku, "condition": "NEW",
                          "availability": {"shipToLocationAvailability": {"quantity": item.quantity}}});
    if !item.groups.is_empty() {
        json["inventoryItemGroupKeys"] = json!(item.groups);
    }
    json
}

fn account<'a>(state: &'a mut State, call: &Call) -> Option<&'a mut Account> {
    state.accounts.get_mut(&call.seller)
}

/// `limit` and `offset` of a page, or eBay's 25706.
fn paging(call: &Call, default_limit: usize) -> Result<(usize, usize), Response> {
    let invalid = || bad(25706, "You have provided invalid pagination values.");
    let limit = match call.request.param("limit") {
        None => default_limit,
        Some(text) => text.parse::<usize>().ok().filter(|n| (1..=200).contains(n)).ok_or_else(invalid)?,
    };
    let offset = match call.request.param("offset") {
        None => 0,
        Some(text) => text.parse::<usize>().map_err(|_| invalid())?,
    };
    Ok((limit, offset))
}

/// Answers `GET /sell/inventory/v1/inventory_item` (200 with `total` 0 for a seller with none).
pub(super) fn get_items(state: &mut State, call: &Call) -> Response {
    let (limit, offset) = match paging(call, 25) {
        Ok(paging) => paging,
        Err(response) => return response,
    };
    let host = call.ebay_host;
    let Some(account) = account(state, call) else { return super::call::invalid_token() };
    let page: Vec<Value> =
        account.items.iter().skip(offset).take(limit).map(|(sku, item)| item_json(sku, item)).collect();
    let total = account.items.len();
    let href =
        |offset: usize| format!("{host}/sell/inventory/v1/inventory_item?limit={limit}&offset={offset}");
    let mut body = json!({"href": href(offset), "limit": limit, "size": page.len(), "total": total, "inventoryItems": page});
    if offset.saturating_add(limit) < total {
        body["next"] = json!(href(offset.saturating_add(limit)));
    }
    if offset > 0 {
        body["prev"] = json!(href(offset.saturating_sub(limit)));
    }
    Response::json(200, &body)
}

/// The `requests` of a bulk body: 1 to 25 entries, each SKU once.
fn requests(call: &Call, too_many: (u32, &str)) -> Result<Vec<Value>, Response> {
    let body: Value = serde_json::from_slice(&call.request.body)
        .map_err(|_| bad(25709, "Invalid request. Invalid value for field requests"))?;
    let requests = body.get("requests").and_then(Value::as_array).cloned().unwrap_or_default();
    if requests.is_empty() || requests.len() > 25 {
        return Err(bad(too_many.0, too_many.1));
    }
    let mut seen = HashSet::new();
    for entry in &requests {
        let sku = entry.get("sku").and_then(Value::as_str).unwrap_or_default();
        if sku.is_empty() {
            return Err(bad(25708, "Invalid SKU."));
        }
        if !seen.insert(sku.to_string()) {
            return Err(bad(25734, "SKU should be unique in the request."));
        }
    }
    Ok(requests)
}

fn multi(responses: Vec<Value>) -> Response {
    let all = responses.iter().all(|r| r["statusCode"] == 200);
    Response::json(if all { 200 } else { 207 }, &json!({"responses": responses}))
}

/// Answers `POST /sell/inventory/v1/bulk_get_inventory_item`.
pub(super) fn bulk_get(state: &mut State, call: &Call) -> Response {
    let requests =
        match requests(call, (25727, "The number of InventoryItems in the request cannot exceed 25.")) {
            Ok(requests) => requests,
            Err(response) => return response,
        };
    let Some(account) = account(state, call) else { return super::call::invalid_token() };
    let responses = requests
        .iter()
        .map(|entry| {
            let sku = entry["sku"].as_str().unwrap_or_default();
            match account.items.get(sku) {
                Some(item) => json!({"statusCode": 200, "sku": sku, "inventoryItem": item_json(sku, item)}),
                None => json!({"statusCode": 404, "sku": sku, "errors": [error_entry(
                    25702, DOMAIN, &format!("SKU {sku} is not available in the system"), None)]}),
            }
        })
        .collect();
    multi(responses)
}

/// Answers `GET /sell/inventory/v1/offer?sku=`.
pub(super) fn get_offers(state: &mut State, call: &Call) -> Response {
    let Some(sku) = call.request.param("sku").filter(|s| !s.is_empty()).map(str::to_string) else {
        return bad(25709, "Invalid value for sku.");
    };
    let (limit, offset) = match paging(call, 100) {
        Ok(paging) => paging,
        Err(response) => return response,
    };
    let marketplace = call.request.param("marketplace_id").map(str::to_string);
    let host = call.ebay_host;
    let Some(account) = account(state, call) else { return super::call::invalid_token() };
    if !account.items.contains_key(&sku) {
        return error(404, 25713, DOMAIN, "This Offer is not available.", None);
    }
    let offers: Vec<Value> = account
        .offers
        .iter()
        .filter(|o| o.sku == sku && marketplace.as_ref().is_none_or(|m| *m == o.marketplace))
        .map(|o| {
            let mut offer = json!({"offerId": o.id, "sku": o.sku, "marketplaceId": o.marketplace,
                "format": "FIXED_PRICE", "availableQuantity": o.quantity,
                "status": if o.published { "PUBLISHED" } else { "UNPUBLISHED" }});
            if let Some(listing) = &o.listing_id {
                offer["listing"] =
                    json!({"listingId": listing, "listingStatus": "ACTIVE", "soldQuantity": o.sold});
            }
            offer
        })
        .collect();
    let total = offers.len();
    let page: Vec<Value> = offers.into_iter().skip(offset).take(limit).collect();
    let encoded: String = url::form_urlencoded::byte_serialize(sku.as_bytes()).collect();
    let href = format!("{host}/sell/inventory/v1/offer?sku={encoded}&limit={limit}&offset={offset}");
    Response::json(
        200,
        &json!({"href": href, "limit": limit, "size": page.len(), "total": total, "offers": page}),
    )
}

/// Answers `POST /sell/inventory/v1/bulk_update_price_quantity`.
pub(super) fn bulk_update(state: &mut State, call: &Call) -> Response {
    let requests = match requests(call, (25709, "Invalid value for requests. Between 1 and 25 are allowed."))
    {
        Ok(requests) => requests,
        Err(response) => return response,
    };
    if state.one_sku && requests.len() > 1 {
        return bad(25002, "Any User error. Only one SKU can be updated per call.");
    }
    let today = day(state.now_ms());
    let Some(account) = account(state, call) else { return super::call::invalid_token() };
    let mut responses = Vec::new();
    for entry in &requests {
        responses.extend(update_one(account, entry, today));
    }
    multi(responses)
}

/// The answers to one SKU's entry, one per offer (one for the SKU when it names none).
fn update_one(account: &mut Account, entry: &Value, today: i64) -> Vec<Value> {
    let sku = entry["sku"].as_str().unwrap_or_default();
    let refused = |offer: Option<&str>, id: u32, message: String| {
        let mut answer =
            json!({"statusCode": 400, "sku": sku, "errors": [error_entry(id, DOMAIN, &message, None)]});
        if let Some(offer) = offer {
            answer["offerId"] = json!(offer);
        }
        answer
    };
    if !account.items.contains_key(sku) {
        return vec![refused(None, 25702, format!("SKU {sku} is not available in the system"))];
    }
    let quantity = entry.pointer("/shipToLocationAvailability/quantity").and_then(Value::as_i64);
    let offers = entry.get("offers").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut found = Vec::new();
    for offer in &offers {
        let id = offer["offerId"].as_str().unwrap_or_default();
        let Some(at) = account.offers.iter().position(|o| o.id == id && o.sku == sku) else {
            return vec![refused(Some(id), 25709, "Invalid value for offerId.".into())];
        };
        found.push((at, offer["availableQuantity"].as_i64()));
    }
    let spent = found.iter().find_map(|(at, _)| {
        let listing = account.offers[*at].listing_id.clone()?;
        let used = account.revisions.get(&(listing.clone(), today)).copied().unwrap_or_default();
        (used >= DAILY_REVISIONS).then_some(listing)
    });
    if let Some(listing) = spent {
        let message = format!(
            "Any User error. The listing {listing} has reached the maximum of {DAILY_REVISIONS} revisions for today."
        );
        return found
            .iter()
            .map(|(at, _)| refused(Some(&account.offers[*at].id), 25002, message.clone()))
            .collect();
    }
    if let (Some(quantity), Some(item)) = (quantity, account.items.get_mut(sku)) {
        item.quantity = quantity.max(0);
    }
    if found.is_empty() {
        return vec![json!({"statusCode": 200, "sku": sku})];
    }
    let mut answers = Vec::new();
    for (at, available) in found {
        let offer = &mut account.offers[at];
        if let Some(available) = available {
            offer.quantity = available.max(0);
        }
        if let Some(listing) = &offer.listing_id {
            *account.revisions.entry((listing.clone(), today)).or_default() += 1;
        }
        answers.push(json!({"statusCode": 200, "sku": sku, "offerId": offer.id}));
    }
    answers
}
