//! Orders API v0 `confirmShipment` with Amazon's rules: the body checked member by member,
//! a new `packageReferenceId` adds a package and a known one edits it, quantities held to
//! what is unfulfilled, cancelled, pending and FBA orders refused, carrier codes held to the
//! annex's table plus `Other` (which needs `carrierName`).

use serde_json::Value;

use super::Account;
use super::orders::{Package, Phase};
use super::wire::parse_iso;
use super::wire::{bad_request, error};
use crate::simulate::http::{Request, Response};

/// The annex's carrier table (§5), in Amazon's spelling, and `Other`.
pub const CARRIER_CODES: [&str; 35] = [
    "USPS",
    "UPS",
    "UPS Mail Innovations",
    "FedEx",
    "FedEx SmartPost",
    "DHL",
    "DHL Express",
    "DHL eCommerce",
    "DHL Global Mail",
    "OnTrac",
    "Lasership",
    "Amazon Shipping",
    "Canada Post",
    "Royal Mail",
    "Parcelforce",
    "Yodel",
    "Hermes",
    "DPD",
    "GLS",
    "Deutsche Post",
    "InPost",
    "La Poste",
    "Colissimo",
    "Chronopost",
    "Poste Italiane",
    "Correos",
    "Australia Post",
    "China Post",
    "India Post",
    "BlueDart",
    "Delhivery",
    "Aramex",
    "YAMATO",
    "SAGAWA",
    "Other",
];

/// Amazon's answer to a body it cannot take: `InvalidInput`, "Invalid Input", the member
/// named in `details`.
fn invalid(details: &str) -> Response {
    error(400, "InvalidInput", "Invalid Input", details)
}

/// A confirmation's package as read from the body.
struct Detail {
    reference: String,
    carrier: String,
    service: Option<String>,
    tracking: String,
    ship_time: i64,
    items: Vec<(String, u32)>,
}

fn text<'a>(v: &'a Value, name: &str) -> Result<Option<&'a str>, Response> {
    match v.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(invalid(&format!("packageDetail.{name} must be a string"))),
    }
}

fn read(body: &[u8], marketplace_id: &str) -> Result<Detail, Response> {
    let body: Value = serde_json::from_slice(body).map_err(|_| invalid("The body is not JSON"))?;
    match body.get("marketplaceId").and_then(Value::as_str) {
        None => return Err(invalid("marketplaceId is required")),
        Some(id) if id != marketplace_id => {
            return Err(invalid(&format!("marketplaceId {id} is not the order's marketplace")));
        }
        Some(_) => {}
    }
    let detail = body
        .get("packageDetail")
        .filter(|d| d.is_object())
        .ok_or_else(|| invalid("packageDetail is required"))?;
    let reference = text(detail, "packageReferenceId")?.unwrap_or_default();
    let positive = !reference.is_empty()
        && reference.bytes().all(|b| b.is_ascii_digit())
        && reference.bytes().any(|b| b != b'0');
    if !positive {
        return Err(invalid("packageReferenceId takes only positive numeric values"));
    }
    let code = text(detail, "carrierCode")?.ok_or_else(|| invalid("carrierCode is required"))?;
    if !CARRIER_CODES.contains(&code) {
        return Err(invalid(&format!("carrierCode {code} is not a valid carrier code")));
    }
    let name = text(detail, "carrierName")?.map(str::trim).filter(|n| !n.is_empty());
    let carrier = match (code, name) {
        ("Other", None) => return Err(invalid("carrierName is required when carrierCode is Other")),
        ("Other", Some(name)) => name.to_string(),
        (code, _) => code.to_string(),
    };
    let service = text(detail, "shippingMethod")?.map(str::to_string);
    let tracking = text(detail, "trackingNumber")?.map(str::trim).filter(|t| !t.is_empty());
    let tracking = tracking.ok_or_else(|| invalid("trackingNumber is required"))?.to_string();
    let ship_time = text(detail, "shipDate")?
        .and_then(parse_iso)
        .ok_or_else(|| invalid("shipDate must be an ISO 8601 date-time"))?;
    let lines = detail.get("orderItems").and_then(Value::as_array).filter(|l| !l.is_empty());
    let lines = lines.ok_or_else(|| invalid("orderItems must list at least one item"))?;
    let mut items: Vec<(String, u32)> = Vec::new();
    for line in lines {
        let id = line.get("orderItemId").and_then(Value::as_str).filter(|id| !id.is_empty());
        let quantity = line.get("quantity").and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
        match (id, quantity) {
            (Some(id), Some(n)) if n > 0 => match items.iter_mut().find(|(i, _)| i == id) {
                Some((_, units)) => *units += n,
                None => items.push((id.to_string(), n)),
            },
            _ => return Err(invalid("each of orderItems needs an orderItemId and a positive quantity")),
        }
    }
    Ok(Detail { reference: reference.to_string(), carrier, service, tracking, ship_time, items })
}

/// `POST /orders/v0/orders/{orderId}/shipmentConfirmation`: 204, or why not.
pub(super) fn confirm(account: &mut Account, order_id: &str, request: &Request, now: i64) -> Response {
    let delay = account.package_delay;
    let marketplaces = &account.seller.marketplaces;
    let Some(order) = account.orders.get_mut(order_id) else {
        return error(404, "NotFound", &format!("Order {order_id} was not found."), "");
    };
    let detail = match read(&request.body, &marketplaces[order.marketplace].id) {
        Ok(detail) => detail,
        Err(response) => return response,
    };
    match order.phase {
        _ if order.fba => return bad_request("The order is fulfilled by Amazon and cannot be confirmed."),
        Phase::Cancelled => return bad_request(&format!("Order {order_id} is cancelled.")),
        Phase::Pending => {
            return bad_request(&format!("Order {order_id} is pending and cannot be shipped yet."));
        }
        _ => {}
    }
    let existing = order.packages.iter().position(|p| p.reference == detail.reference);
    for (item_id, units) in &detail.items {
        let Some(item) = order.items.iter().find(|i| i.id == *item_id) else {
            return bad_request(&format!("Order item {item_id} is not an item of order {order_id}."));
        };
        // An edit gives back what the package held before.
        let held = existing
            .map(|at| {
                order.packages[at].items.iter().filter(|(i, _)| i == item_id).map(|(_, n)| *n).sum::<u32>()
            })
            .unwrap_or(0);
        let open = item.ordered - order.fulfilled(item, false) + held;
        if *units > open {
            return bad_request(&format!(
                "Quantity {units} of order item {item_id} is more than the {open} unit(s) not yet shipped."
            ));
        }
    }
    match existing {
        Some(at) => {
            let package = &mut order.packages[at];
            package.carrier = detail.carrier;
            package.service = detail.service;
            package.tracking = detail.tracking;
            package.ship_time = detail.ship_time;
            package.items = detail.items;
            package.confirmations += 1;
        }
        None => order.packages.push(Package {
            reference: detail.reference,
            carrier: detail.carrier,
            service: detail.service,
            tracking: detail.tracking,
            ship_time: detail.ship_time,
            created: now,
            items: detail.items,
            confirmations: 1,
            hidden_reads: delay,
        }),
    }
    order.updated = now.max(order.updated);
    Response::empty(204)
}
