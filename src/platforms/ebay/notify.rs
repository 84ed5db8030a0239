//! Notify (annex §5, *Notify*): a shipment becomes one shipping fulfillment of its eBay
//! order. Every try first lists the order's fulfillments (`getShippingFulfillments`): one
//! whose id or tracking number is the shipment's means eBay has it already, so a crash or a
//! lost answer never reports it twice; the same list says how much of each line is left.
//! Only then `createShippingFulfillment`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::Client;
use super::transport::{Quota, Seller};
use super::wire::Fulfillments;
use crate::dates::{format_ms, now_ms};
use crate::platforms::PlatformError;
use crate::platforms::retry::Created;
use crate::platforms::store::{Notified, ShipmentNotice};

/// eBay's carrier codes by the names that match them (annex §5's table): compared without
/// case, spaces, hyphens and dots, the whole name.
const CARRIERS: [(&str, &str); 15] = [
    ("usps", "USPS"),
    ("ups", "UPS"),
    ("fedex", "FedEx"),
    ("dhl", "DHL"),
    ("deutschepost", "DeutschePost"),
    ("hermes", "Hermes"),
    ("iloxx", "iLoxx"),
    ("chronopost", "Chronopost"),
    ("coliposte", "ColiposteDomestic"),
    ("colissimo", "ColiposteDomestic"),
    ("coliposteinternational", "ColiposteInternational"),
    ("correos", "Correos"),
    ("seur", "Seur"),
    ("nacex", "Nacex"),
    ("other", "Other"),
];

/// eBay's `shippingCarrierCode` for a shipment's carrier: the table's, else `Other`.
pub fn carrier_code(carrier: Option<&str>) -> &'static str {
    let Some(carrier) = carrier else { return "Other" };
    let key: String = carrier
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.') && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    CARRIERS.iter().find(|(name, _)| *name == key).map_or("Other", |(_, code)| code)
}

/// A tracking number as eBay takes it: its ASCII letters and digits only.
pub fn reduce(tracking: &str) -> String {
    tracking.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// The path of an order's shipping fulfillments.
fn path(order: &str) -> String {
    format!("/sell/fulfillment/v1/order/{}/shipping_fulfillment", crate::platforms::api::segment(order))
}

fn refused(message: String) -> PlatformError {
    PlatformError::Rejected { status: 0, message }
}

/// What is to be sent, from the last look: the lines and their quantities.
type Lines = Vec<(String, i64)>;

/// Reports `notice` unless eBay has it (see the module doc).
pub async fn notify(client: &Client, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
    let seller = &client.seller;
    let tracking = reduce(&notice.tracking_number);
    if tracking.is_empty() {
        return Err(refused(format!(
            "The tracking number {:?} has no letters or digits, which is all eBay takes.",
            seller.quote(&notice.tracking_number)
        )));
    }
    let target = path(&notice.external_order_id);
    let planned: Mutex<Lines> = Mutex::new(Vec::new());
    let looking = || async {
        let lines = look(seller, notice, &target, &tracking).await?;
        Ok(match lines {
            None => Some(Made::There),
            Some(lines) => {
                *planned.lock().unwrap_or_else(|p| p.into_inner()) = lines;
                None
            }
        })
    };
    let make = || async {
        let lines = planned.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let body = body(notice, &lines, &tracking);
        let answer = seller
            .once(Quota::Fulfillment, &Method::POST, &target, Some(&body), "createShippingFulfillment")
            .await?;
        match answer.status {
            s if s.is_success() => Ok(Made::Created),
            StatusCode::BAD_REQUEST if Seller::has_error(&answer, 34500) => {
                Ok(Made::Exists(seller.said(&answer)))
            }
            StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::CONFLICT => Err(refused(format!(
                "eBay refused the shipping fulfillment of order {} ({}).",
                notice.external_order_id,
                seller.said(&answer)
            ))),
            _ => Err(seller.api(Quota::Fulfillment).rejected(
                &answer,
                "createShippingFulfillment",
                &seller.reason(&answer.body),
            )),
        }
    };
    let api = seller.api(Quota::Fulfillment);
    let made = match seller.paced(Quota::Fulfillment, api.create(looking, make)).await? {
        Created::AlreadyThere(made) | Created::Now(made) => made,
    };
    match made {
        Made::There => Ok(Notified::AlreadyThere),
        Made::Created => Ok(Notified::Posted),
        Made::Exists(said) => {
            // A fulfillment with this id exists: look once more.
            match look(seller, notice, &target, &tracking).await? {
                None => Ok(Notified::AlreadyThere),
                Some(_) => Err(refused(format!(
                    "eBay has a fulfillment with the id {tracking} that is not this shipment's ({said})."
                ))),
            }
        }
    }
}

/// What became of the shipment: eBay had it (the look found it), or what a
/// `createShippingFulfillment` did.
enum Made {
    There,
    Created,
    /// 34500: a fulfillment with that id exists; eBay's words.
    Exists(String),
}

/// The order's fulfillments at eBay: `None` when one is this shipment, else the lines to send
/// (or why none can be).
async fn look(
    seller: &Seller,
    notice: &ShipmentNotice,
    target: &str,
    tracking: &str,
) -> Result<Option<Lines>, PlatformError> {
    let answer =
        seller.once(Quota::Fulfillment, &Method::GET, target, None, "getShippingFulfillments").await?;
    let order = &notice.external_order_id;
    if answer.status == StatusCode::NOT_FOUND
        || (answer.status == StatusCode::BAD_REQUEST && Seller::has_error(&answer, 32100))
    {
        return Err(refused(format!("eBay has no order {order} ({}).", seller.said(&answer))));
    }
    if !answer.status.is_success() {
        return Err(seller.api(Quota::Fulfillment).rejected(
            &answer,
            "getShippingFulfillments",
            &seller.reason(&answer.body),
        ));
    }
    let listed: Fulfillments =
        seller.api(Quota::Fulfillment).decode(&answer.body, "getShippingFulfillments")?;
    let ours =
        |id: &Option<String>| id.as_deref().is_some_and(|id| reduce(id).eq_ignore_ascii_case(tracking));
    if listed.fulfillments.iter().any(|f| ours(&f.fulfillment_id) || ours(&f.shipment_tracking_number)) {
        return Ok(None);
    }
    let mut left: BTreeMap<&str, i64> = BTreeMap::new();
    for item in &notice.order_items {
        if let Some(line) = item.line.as_deref() {
            *left.entry(line).or_default() += item.quantity;
        }
    }
    for line in listed.fulfillments.iter().flat_map(|f| &f.line_items) {
        if let (Some(id), Some(quantity)) = (line.line_item_id.as_deref(), line.quantity)
            && let Some(left) = left.get_mut(id)
        {
            *left -= quantity;
        }
    }
    let mut lines: Lines = Vec::new();
    if notice.items.is_empty() {
        lines = left.iter().filter(|(_, n)| **n > 0).map(|(l, n)| (l.to_string(), *n)).collect();
        if lines.is_empty() {
            return Err(refused(format!("eBay's order {order} has nothing left to ship.")));
        }
        return Ok(Some(lines));
    }
    for item in &notice.items {
        let Some(line) = item.line.as_deref().filter(|l| left.contains_key(l)) else {
            return Err(refused(format!(
                "The shipment's item {} is not a line item of eBay's order {order}.",
                item.line.as_deref().or(item.sku.as_deref()).unwrap_or("(without a line id)")
            )));
        };
        match lines.iter_mut().find(|(l, _)| l == line) {
            Some((_, n)) => *n += item.quantity,
            None => lines.push((line.to_string(), item.quantity)),
        }
    }
    for (line, quantity) in &lines {
        let left = left.get(line.as_str()).copied().unwrap_or(0);
        if *quantity > left {
            return Err(refused(format!(
                "The shipment ships {quantity} of line item {line} of eBay's order {order}, which has {} left to ship.",
                left.max(0)
            )));
        }
    }
    Ok(Some(lines))
}

/// The `createShippingFulfillment` body.
fn body(notice: &ShipmentNotice, lines: &Lines, tracking: &str) -> Value {
    let now = now_ms();
    let shipped = notice.shipped_at.unwrap_or(now).min(now);
    let shipped = notice.ordered_at.map_or(shipped, |ordered| shipped.max(ordered));
    let lines: Vec<Value> =
        lines.iter().map(|(line, quantity)| json!({"lineItemId": line, "quantity": quantity})).collect();
    json!({
        "lineItems": lines,
        "shippedDate": format_ms(shipped),
        "shippingCarrierCode": carrier_code(notice.carrier.as_deref()),
        "trackingNumber": tracking,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carriers_match_the_whole_name_without_case_spaces_hyphens_or_dots() {
        assert_eq!(carrier_code(Some("UPS")), "UPS");
        assert_eq!(carrier_code(Some("u.p.s")), "UPS");
        assert_eq!(carrier_code(Some("Fed-Ex")), "FedEx");
        assert_eq!(carrier_code(Some("Deutsche Post")), "DeutschePost");
        assert_eq!(carrier_code(Some("Colissimo")), "ColiposteDomestic");
        assert_eq!(carrier_code(Some("Coliposte International")), "ColiposteInternational");
        assert_eq!(carrier_code(Some("iloxx")), "iLoxx");
        assert_eq!(carrier_code(Some("DHL Express")), "Other", "the whole name must match");
        assert_eq!(carrier_code(Some("SF Express")), "Other");
        assert_eq!(carrier_code(None), "Other");
    }

    #[test]
    fn tracking_numbers_keep_only_ascii_letters_and_digits() {
        assert_eq!(reduce("1Z 999AA1-0123456784"), "1Z999AA10123456784");
        assert_eq!(reduce("1Z 999AA1 0123456784"), "1Z999AA10123456784");
        assert_eq!(reduce("—ünï—"), "n");
        assert_eq!(reduce(" - "), "");
    }
}
