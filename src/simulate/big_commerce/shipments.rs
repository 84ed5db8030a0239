//! An order's shipments (`orders.v2.oas2.yml`, "Order Shipments"): `GET` lists them (`204`
//! for none) and `POST` creates one, checked as BigCommerce checks it: an address of the
//! order, items with units left to ship, a `tracking_number` of at most 50 characters and a
//! `tracking_carrier` that is `""` or a courier slug.

use serde_json::{Value, json};

use super::http::Response;
use super::orders::{Orders, PARTIALLY_SHIPPED, SHIPPED, rfc2822};
use super::{Call, PostedShipment, Store, now_ms, paging, v2_page};
use crate::platforms::big_commerce::carriers;
use crate::platforms::big_commerce::client::MAX_TRACKING_NUMBER;

/// `shipping_provider`'s standard values (`shipping_provider_standard`); a third-party
/// provider is `carrier_{id}`.
const PROVIDERS: [&str; 11] = [
    "",
    "auspost",
    "canadapost",
    "endicia",
    "usps",
    "fedex",
    "ups",
    "upsready",
    "upsonline",
    "shipperhq",
    "royalmail",
];

/// `GET v2/orders/{id}/shipments`.
pub fn list(orders: &Orders, call: &Call, id: &str) -> Response {
    let Some(order) = orders.get(id) else { return call.error(404, "The requested resource was not found.") };
    match paging(call, 50, 250) {
        Ok(paging) => v2_page(order.shipments.iter(), paging, Value::clone),
        Err(response) => response,
    }
}

/// What a shipment post asks, once checked.
struct Post {
    tracking_number: String,
    tracking_carrier: String,
    shipping_provider: String,
    shipping_method: String,
    /// (order product id, units).
    lines: Vec<(i64, i64)>,
}

/// Checks a post against the order; the v2 error to answer when it cannot be taken.
fn check(orders: &Orders, call: &Call, id: &str) -> Result<Post, Response> {
    let bad = |message: String| call.error(400, &message);
    let order = orders.get(id).ok_or_else(|| call.error(404, "The requested resource was not found."))?;
    let body: Value = serde_json::from_slice(&call.request.body)
        .map_err(|_| bad("The request body is not JSON.".into()))?;
    let text = |field: &str| match body.get(field) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(bad(format!("The field '{field}' must be text."))),
    };
    if body.get("order_address_id").and_then(Value::as_i64) != Some(order.address_id) {
        return Err(bad("The field 'order_address_id' is not a shipping address of this order.".into()));
    }
    let tracking_number = text("tracking_number")?;
    if tracking_number.chars().count() > MAX_TRACKING_NUMBER {
        return Err(bad(format!(
            "The field 'tracking_number' is longer than {MAX_TRACKING_NUMBER} characters."
        )));
    }
    let tracking_carrier = text("tracking_carrier")?;
    if !carriers::is_tracking_carrier(&tracking_carrier) {
        return Err(bad(format!(
            "The field 'tracking_carrier' is not a tracking carrier: {tracking_carrier:?}."
        )));
    }
    let shipping_provider = text("shipping_provider")?;
    if !PROVIDERS.contains(&shipping_provider.as_str()) && !shipping_provider.starts_with("carrier_") {
        return Err(bad(format!(
            "The field 'shipping_provider' is not a shipping provider: {shipping_provider:?}."
        )));
    }
    let items = body.get("items").and_then(Value::as_array).filter(|i| !i.is_empty());
    let items = items.ok_or_else(|| bad("The field 'items' is required.".into()))?;
    let mut lines = Vec::with_capacity(items.len());
    for item in items {
        let field = |name: &str| item.get(name).and_then(Value::as_i64);
        let (Some(line), Some(quantity)) = (field("order_product_id"), field("quantity")) else {
            return Err(bad("Each item needs a whole order_product_id and quantity.".into()));
        };
        let Some(product) = order.products.iter().find(|p| p.id == line) else {
            return Err(bad(format!("order_product_id {line} is not a product of this order.")));
        };
        let already: i64 = lines.iter().filter(|(l, _)| *l == line).map(|(_, q)| q).sum();
        if quantity < 1 || product.shipped + already + quantity > product.quantity {
            return Err(
                call.error(422, &format!("Line {line} has fewer units left to ship than {quantity}."))
            );
        }
        lines.push((line, quantity));
    }
    Ok(Post {
        tracking_number,
        tracking_carrier,
        shipping_provider,
        shipping_method: text("shipping_method")?,
        lines,
    })
}

/// `POST v2/orders/{id}/shipments`: checks, applies the shipment to the order (its lines
/// shipped, its status, its modification time), then answers `201` with the shipment, the
/// answer made in one place after the write.
pub fn post(store: &mut Store, call: &Call, id: &str) -> Response {
    let post = match check(&store.orders, call, id) {
        Ok(post) => post,
        Err(response) => return response,
    };
    let now = now_ms();
    let Some(shipment) = id.parse::<i64>().ok().and_then(|id| {
        store.orders.change(id, now, |order| {
            for (line, quantity) in &post.lines {
                if let Some(product) = order.products.iter_mut().find(|p| p.id == *line) {
                    product.shipped += quantity;
                }
            }
            let everything = order.products.iter().all(|p| p.shipped >= p.quantity);
            order.status_id = if everything { SHIPPED } else { PARTIALLY_SHIPPED };
            let address = Value::Object(order.address());
            let items: Vec<Value> = post
                .lines
                .iter()
                .map(|(line, quantity)| {
                    let product_id =
                        order.products.iter().find(|p| p.id == *line).map_or(0, |p| p.product_id);
                    json!({"order_product_id": line, "product_id": product_id, "quantity": quantity})
                })
                .collect();
            let shipment = json!({
                "id": order.shipments.len() + 1, "order_id": order.id, "customer_id": order.customer_id,
                "order_address_id": order.address_id, "date_created": rfc2822(now),
                "tracking_number": post.tracking_number, "merchant_shipping_cost": "0.0000",
                "shipping_method": post.shipping_method, "shipping_provider": post.shipping_provider,
                "tracking_carrier": post.tracking_carrier, "tracking_link": "", "comments": "",
                "billing_address": address.clone(), "shipping_address": address, "items": items,
                "shipping_provider_display_name": "", "generated_tracking_link": "",
            });
            order.shipments.push(shipment.clone());
            shipment
        })
    }) else {
        return call.error(404, "The requested resource was not found.");
    };
    crate::logging::notice(format_args!(
        "simulated BigCommerce: order {id} was told it shipped, tracking {}",
        post.tracking_number
    ));
    store.posted.push(PostedShipment {
        order_id: id.to_string(),
        tracking_number: post.tracking_number,
        tracking_carrier: post.tracking_carrier,
        items: post.lines,
    });
    Response::json(201, &shipment)
}
