//! Notify (annex §5, *Notify*): `getOrder` with its packages first, so a package Amazon
//! already has (a crash, a lost answer, Amazon's own label) is never confirmed again and a
//! cancelled, FBA or over-shipped order is caught before Amazon; then Orders v0
//! `confirmShipment` keyed by orderbridge's shipment id as `packageReferenceId`, which Amazon
//! edits rather than adds when it arrives twice.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::Client;
use super::pacing::Operation;
use super::transport::segment;
use crate::platforms::PlatformError;
use crate::platforms::store::{Notified, ShipmentNotice};

/// Amazon's carrier codes (annex §5): (names that match, ignoring case, spaces, hyphens and
/// dots; the code in Amazon's spelling).
const CARRIERS: &[(&[&str], &str)] = &[
    (&["USPS"], "USPS"),
    (&["UPS"], "UPS"),
    (&["UPS Mail Innovations"], "UPS Mail Innovations"),
    (&["FedEx"], "FedEx"),
    (&["FedEx SmartPost"], "FedEx SmartPost"),
    (&["DHL"], "DHL"),
    (&["DHL Express"], "DHL Express"),
    (&["DHL eCommerce"], "DHL eCommerce"),
    (&["DHL Global Mail"], "DHL Global Mail"),
    (&["OnTrac"], "OnTrac"),
    (&["LaserShip"], "Lasership"),
    (&["Amazon Shipping"], "Amazon Shipping"),
    (&["Canada Post"], "Canada Post"),
    (&["Royal Mail"], "Royal Mail"),
    (&["Parcelforce"], "Parcelforce"),
    (&["Yodel"], "Yodel"),
    (&["Hermes"], "Hermes"),
    (&["DPD"], "DPD"),
    (&["GLS"], "GLS"),
    (&["Deutsche Post"], "Deutsche Post"),
    (&["InPost"], "InPost"),
    (&["La Poste"], "La Poste"),
    (&["Colissimo"], "Colissimo"),
    (&["Chronopost"], "Chronopost"),
    (&["Poste Italiane"], "Poste Italiane"),
    (&["Correos"], "Correos"),
    (&["Australia Post"], "Australia Post"),
    (&["China Post"], "China Post"),
    (&["India Post"], "India Post"),
    (&["Blue Dart", "BlueDart"], "BlueDart"),
    (&["Delhivery"], "Delhivery"),
    (&["Aramex"], "Aramex"),
    (&["Yamato", "Yamato Transport"], "YAMATO"),
    (&["Sagawa", "Sagawa Express"], "SAGAWA"),
];

/// A carrier name as the table matches it: lower case, without spaces, hyphens and dots.
fn folded(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, ' ' | '-' | '.')).flat_map(char::to_lowercase).collect()
}

/// Amazon's `carrierCode` for a carrier name, and the `carrierName` that goes with `Other`.
pub fn carrier(name: Option<&str>) -> (&'static str, Option<String>) {
    let name = name.map(str::trim).filter(|n| !n.is_empty());
    if let Some(name) = name {
        let key = folded(name);
        if let Some((_, code)) = CARRIERS.iter().find(|(names, _)| names.iter().any(|n| folded(n) == key)) {
            return (code, None);
        }
    }
    ("Other", Some(name.unwrap_or("Other").to_string()))
}

fn trimmed_eq(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// Reports a shipment unless Amazon already has its package.
pub async fn notify(client: &Client, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
    let seller = &client.seller;
    let order_id = &notice.external_order_id;
    let target = format!("/orders/2026-01-01/orders/{}?includedData=FULFILLMENT,PACKAGES", segment(order_id));
    let answer = seller.call(Operation::GetOrder, Method::GET, &target, None).await?;
    let refused = |message: String| PlatformError::Rejected { status: 0, message };
    match answer.status {
        StatusCode::OK => {}
        StatusCode::NOT_FOUND => return Err(refused(format!("Amazon has no order {order_id}."))),
        _ => return Err(seller.refusal(&answer, &format!("the order {order_id}"))),
    }
    #[derive(serde::Deserialize)]
    struct Found {
        order: Value,
    }
    let order = answer.json::<Found>(Operation::GetOrder)?.order;
    let reference = notice.shipment_id.to_string();
    let packages = order.get("packages").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let live = |p: &&Value| p.pointer("/packageStatus/status").and_then(Value::as_str) != Some("CANCELLED");
    let tracking_of =
        |p: &Value| p.get("trackingNumber").and_then(Value::as_str).unwrap_or_default().to_string();
    if packages.iter().filter(live).any(|p| trimmed_eq(&tracking_of(p), &notice.tracking_number)) {
        return Ok(Notified::AlreadyThere);
    }
    let fulfillment = order.get("fulfillment").unwrap_or(&Value::Null);
    let status = fulfillment.get("fulfillmentStatus").and_then(Value::as_str).unwrap_or_default();
    if status == "CANCELLED" {
        return Err(refused(format!(
            "Amazon's order {order_id} is cancelled; the shipment was not confirmed."
        )));
    }
    if fulfillment.get("fulfilledBy").and_then(Value::as_str) != Some("MERCHANT") {
        return Err(refused(format!(
            "Amazon fulfils order {order_id} itself; the shipment was not confirmed."
        )));
    }
    if let Some(other) = packages
        .iter()
        .filter(live)
        .find(|p| p.get("packageReferenceId").and_then(Value::as_str) == Some(reference.as_str()))
    {
        return Err(refused(format!(
            "Amazon's order {order_id} already has package {reference} with tracking number {}, not {}.",
            tracking_of(other),
            notice.tracking_number
        )));
    }
    let items = order.get("orderItems").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let unfulfilled = |id: &str| {
        items
            .iter()
            .find(|i| i.get("orderItemId").and_then(Value::as_str) == Some(id))
            .map(|i| i.pointer("/fulfillment/quantityUnfulfilled").and_then(Value::as_i64).unwrap_or(0))
    };
    let mut lines = Vec::new();
    for item in &notice.items {
        let Some(id) = item.line.as_deref() else {
            return Err(refused(format!(
                "The shipment's item {} has no Amazon orderItemId; it cannot be confirmed.",
                item.sku.as_deref().unwrap_or("(no SKU)")
            )));
        };
        match unfulfilled(id) {
            None => return Err(refused(format!("Amazon's order {order_id} has no item {id}."))),
            Some(left) if item.quantity > left => {
                return Err(refused(format!(
                    "The shipment sends {} of item {id} ({}), but Amazon expects only {left} more of it on order {order_id}.",
                    item.quantity,
                    item.sku.as_deref().unwrap_or("no SKU")
                )));
            }
            Some(_) => lines.push(json!({"orderItemId": id, "quantity": item.quantity})),
        }
    }
    if notice.items.is_empty() {
        for item in items {
            let left = item.pointer("/fulfillment/quantityUnfulfilled").and_then(Value::as_i64).unwrap_or(0);
            if let (Some(id), true) = (item.get("orderItemId").and_then(Value::as_str), left > 0) {
                lines.push(json!({"orderItemId": id, "quantity": left}));
            }
        }
        if lines.is_empty() {
            return Err(refused(format!("Amazon expects no more units on order {order_id}.")));
        }
    }
    let marketplace =
        order.pointer("/salesChannel/marketplaceId").and_then(Value::as_str).unwrap_or_default();
    let (code, name) = carrier(notice.carrier.as_deref());
    let mut package = json!({
        "packageReferenceId": reference,
        "carrierCode": code,
        "trackingNumber": notice.tracking_number,
        "shipDate": crate::dates::format_ms(notice.shipped_at.unwrap_or_else(crate::dates::now_ms)),
        "orderItems": lines,
    });
    if let Some(name) = name {
        package["carrierName"] = Value::from(name);
    }
    if let Some(method) = notice.shipping_method.as_deref().filter(|m| !m.trim().is_empty()) {
        package["shippingMethod"] = Value::from(method);
    }
    let body = json!({"marketplaceId": marketplace, "packageDetail": package});
    let target = format!("/orders/v0/orders/{}/shipmentConfirmation", segment(order_id));
    let answer = seller.call(Operation::ConfirmShipment, Method::POST, &target, Some(&body)).await?;
    match answer.status {
        s if s.is_success() => Ok(Notified::Posted),
        StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND => Err(refused(format!(
            "Amazon refused the shipment confirmation for order {order_id}: {}",
            seller.reason(&answer)
        ))),
        status => Err(PlatformError::Rejected {
            status: status.as_u16(),
            message: format!(
                "Amazon refused the shipment confirmation for order {order_id} ({}).",
                seller.said_of(&answer)
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carriers_match_the_whole_name_ignoring_case_spaces_hyphens_and_dots() {
        assert_eq!(carrier(Some("UPS")), ("UPS", None));
        assert_eq!(carrier(Some("u.p.s")), ("UPS", None));
        assert_eq!(carrier(Some("dhl-express")), ("DHL Express", None));
        assert_eq!(carrier(Some("DHL")), ("DHL", None));
        assert_eq!(carrier(Some("Laser Ship")), ("Lasership", None));
        assert_eq!(carrier(Some("Blue Dart")), ("BlueDart", None));
        assert_eq!(carrier(Some("yamato transport")), ("YAMATO", None));
        assert_eq!(carrier(Some("Speedy Freight Ltd")), ("Other", Some("Speedy Freight Ltd".into())));
        assert_eq!(carrier(None), ("Other", Some("Other".into())));
        assert_eq!(carrier(Some("  ")), ("Other", Some("Other".into())));
    }
}
