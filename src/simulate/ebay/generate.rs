//! eBay's `Order` JSON of a [`NewOrder`], and the seeded realistic mix of §8: paid, pending,
//! cancelled, refunded, cancel requested; several lines, variations, promotions, taxes,
//! marketplaces and currencies; ship-to, digital, pick-up and eBay-fulfilled orders; Global
//! Shipping Program hubs; names with and without a space; old orders without address lines.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::{NewLine, NewOrder, iso};
use crate::simulate::{CITIES, FIRST, LAST, Rng};

/// SKUs of [`super::Simulator::add_ready_orders`].
pub(super) const READY_SKUS: [&str; 4] = ["MUG-BLU", "TEA-GRN", "MUG-RED", "KETTLE-1"];

fn money(value: Decimal, currency: &str) -> Value {
    json!({"value": value.round_dp(2).to_string(), "currency": currency})
}

fn amount(text: &Option<String>) -> Decimal {
    text.as_deref().and_then(|t| Decimal::from_str(t).ok()).unwrap_or_default()
}

/// The order id of serial `n`: `NN-NNNNN-NNNNN`.
pub(super) fn order_id(n: u64) -> String {
    format!("{:02}-{:05}-{:05}", 10 + n / 10_000_000_000 % 90, n / 100_000 % 100_000, n % 100_000)
}

/// eBay's JSON of `order`, with id serial `serial`, created at `created_ms`.
pub(super) fn order_json(serial: u64, seller: &str, order: &NewOrder, created_ms: i64) -> Value {
    let currency = order.currency;
    let at = iso(created_ms);
    let ship_by = iso(created_ms + 2 * 86_400_000);
    let mut subtotal = Decimal::ZERO;
    let mut discount = Decimal::ZERO;
    let mut tax = Decimal::ZERO;
    let lines: Vec<Value> = order
        .lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let cost = Decimal::from_str(&line.unit_price).unwrap_or_default() * Decimal::from(line.quantity);
            let (off, line_tax) = (amount(&line.promotion), amount(&line.tax));
            subtotal += cost;
            discount += off;
            tax += line_tax;
            line_json(serial * 10 + i as u64, line, order, cost, off, line_tax, &ship_by)
        })
        .collect();
    let delivery = Decimal::new(499, 2);
    let total = subtotal - discount + delivery + tax;
    let mut pricing = json!({"priceSubtotal": money(subtotal, currency), "deliveryCost": money(delivery, currency),
                             "total": money(total, currency)});
    if !discount.is_zero() {
        pricing["priceDiscount"] = money(-discount, currency);
    }
    if !tax.is_zero() {
        pricing["tax"] = money(tax, currency);
    }
    let paid = matches!(order.payment_status, "PAID" | "FULLY_REFUNDED" | "PARTIALLY_REFUNDED");
    let payments = if paid {
        json!([{"paymentMethod": "EBAY", "paymentStatus": "PAID", "paymentDate": at, "amount": money(total, currency)}])
    } else {
        json!([{"paymentMethod": "EBAY", "paymentStatus": "PENDING", "amount": money(total, currency)}])
    };
    let mut cancel = json!({"cancelState": order.cancel_state, "cancelRequests": []});
    if order.cancel_state == "CANCELED" {
        cancel["cancelledDate"] = json!(at);
    }
    let id = order_id(serial);
    let mut json = json!({
        "orderId": id, "creationDate": at, "lastModifiedDate": at,
        "orderFulfillmentStatus": "NOT_STARTED", "orderPaymentStatus": order.payment_status,
        "sellerId": seller, "buyer": {"username": format!("buyer_{}", serial % 9973)},
        "salesRecordReference": (1000 + serial % 100_000).to_string(),
        "cancelStatus": cancel, "pricingSummary": pricing,
        "paymentSummary": {"payments": payments, "refunds": [], "totalDueSeller": money(total, currency)},
        "fulfillmentStartInstructions": [instruction(order, serial)],
        "fulfillmentHrefs": [], "lineItems": lines,
    });
    if order.instructions_type == "FULFILLED_BY_EBAY" {
        json["program"] = json!({"fulfillmentProgram": {"fulfilledBy": "EBAY"}});
    }
    json
}

/// Gives an order built with serial 0 the ids of serial `serial`: its `orderId`, sales record
/// number, buyer and line item ids (the listing ids stay: the same SKU, the same listing).
pub(super) fn renumber(order: &mut Value, serial: u64) {
    super::set(order, "orderId", json!(order_id(serial)));
    super::set(order, "salesRecordReference", json!((1000 + serial % 100_000).to_string()));
    super::set(order, "buyer", json!({"username": format!("buyer_{}", serial % 9973)}));
    for (i, item) in
        order.get_mut("lineItems").and_then(Value::as_array_mut).into_iter().flatten().enumerate()
    {
        super::set(item, "lineItemId", json!(format!("1{:013}", serial * 10 + i as u64)));
    }
}

fn line_json(
    n: u64,
    line: &NewLine,
    order: &NewOrder,
    cost: Decimal,
    off: Decimal,
    tax: Decimal,
    ship_by: &str,
) -> Value {
    let currency = order.currency;
    let mut item = json!({
        "lineItemId": format!("1{:013}", n), "legacyItemId": format!("2{:011}", n / 10 % 100_000_000_000),
        "title": line.title, "quantity": line.quantity, "soldFormat": "FIXED_PRICE",
        "listingMarketplaceId": order.marketplace, "purchaseMarketplaceId": order.marketplace,
        "lineItemCost": money(cost, currency), "total": money(cost - off + tax, currency),
        "deliveryCost": {"shippingCost": money(Decimal::ZERO, currency)},
        "appliedPromotions": [], "taxes": [], "refunds": [],
        "lineItemFulfillmentStatus": "NOT_STARTED",
        "lineItemFulfillmentInstructions": {"shipByDate": ship_by, "guaranteedDelivery": false},
    });
    if let Some(sku) = &line.sku {
        item["sku"] = json!(sku);
    }
    if let Some((name, value)) = &line.variation {
        item["variationAspects"] = json!([{"name": name, "value": value}]);
        item["legacyVariationId"] = json!(format!("6{:011}", n % 100_000_000_000));
    }
    if !off.is_zero() {
        item["discountedLineItemCost"] = money(cost - off, currency);
        item["appliedPromotions"] = json!([{"promotionId": format!("50{}", n % 100_000), "description": "Promotion",
                                            "discountAmount": money(off, currency)}]);
    }
    if !tax.is_zero() {
        item["taxes"] = json!([{"amount": money(tax, currency)}]);
    }
    item
}

fn instruction(order: &NewOrder, serial: u64) -> Value {
    let kind = order.instructions_type;
    let mut start =
        json!({"fulfillmentInstructionsType": kind, "ebaySupportedFulfillment": order.ebay_supported});
    match kind {
        "SHIP_TO" => {
            let ship_to = if order.ebay_supported {
                json!({"fullName": "eBay Global Shipping Program", "contactAddress": {
                    "addressLine1": "1850 Airport Exchange Blvd", "addressLine2": format!("Reference #{serial}"),
                    "city": "Erlanger", "stateOrProvince": "KY", "postalCode": "41025-2501", "countryCode": "US"}})
            } else {
                let mut address = json!({"city": CITIES[(serial % 6) as usize], "postalCode": "98101",
                                         "countryCode": "US", "stateOrProvince": "WA"});
                if order.with_address {
                    address["addressLine1"] = json!(format!("{} Pine St", 100 + serial % 900));
                }
                json!({"fullName": order.full_name, "contactAddress": address,
                       "primaryPhone": {"phoneNumber": "2065550100"},
                       "email": format!("b{serial:x}@members.ebay.com")})
            };
            start["shippingStep"] = json!({"shippingCarrierCode": "USPS", "shippingServiceCode": "USPSPriority", "shipTo": ship_to});
        }
        "PREPARE_FOR_PICKUP" => start["pickupStep"] = json!({"merchantLocationKey": "store-1"}),
        _ => {}
    }
    start
}

/// The `index`th order of the seeded mix: mostly importable, some of every other kind.
pub(super) fn mixed(rng: &mut Rng, now_ms: i64) -> NewOrder {
    let lines = 1 + rng.below(3) as usize;
    let mut order = NewOrder::ready(&[]);
    for i in 0..lines {
        let sku = READY_SKUS[rng.below(4) as usize];
        order.lines.push(NewLine {
            sku: (rng.below(20) != 0).then(|| sku.to_string()),
            title: format!("{sku} item {i}"),
            quantity: 1 + rng.below(3) as i64,
            unit_price: format!("{}.{:02}", 3 + rng.below(60), rng.below(100)),
            variation: (rng.below(5) == 0).then(|| ("Colour".to_string(), "Blue".to_string())),
            promotion: (rng.below(6) == 0).then(|| "1.00".to_string()),
            tax: (rng.below(3) == 0).then(|| "0.75".to_string()),
        });
    }
    let first = FIRST[rng.below(8) as usize];
    order.full_name = if rng.below(10) == 0 {
        first.to_string()
    } else {
        format!("{first} {}", LAST[rng.below(8) as usize])
    };
    order.created_ms = Some(now_ms - 1000 * rng.below(20 * 86_400) as i64);
    match rng.below(40) {
        0 => order.payment_status = "PENDING",
        1 => (order.payment_status, order.cancel_state) = ("FULLY_REFUNDED", "CANCELED"),
        2 => order.payment_status = "PARTIALLY_REFUNDED",
        3 => order.cancel_state = "IN_PROGRESS",
        4 => order.instructions_type = "DIGITAL",
        5 => order.instructions_type = "PREPARE_FOR_PICKUP",
        6 => order.instructions_type = "FULFILLED_BY_EBAY",
        7 => order.ebay_supported = true,
        8 => {
            order.with_address = false;
            order.created_ms = Some(now_ms - 86_400_000 * (91 + rng.below(200) as i64));
        }
        9 => (order.currency, order.marketplace) = ("GBP", "EBAY_GB"),
        10 => (order.currency, order.marketplace) = ("EUR", "EBAY_DE"),
        _ => {}
    }
    order
}
