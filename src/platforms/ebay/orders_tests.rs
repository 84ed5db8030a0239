//! The annex's worked example (§7), read from the annex itself: its `getOrders` answer
//! mapped by [`record`] is its `orderbridge-order`, and the skip rules of §5 in their order.

use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::*;

/// The fenced block of the annex whose info string is `info`.
fn block(info: &str) -> Value {
    let annex =
        std::fs::read_to_string(crate::simulate::shared_files::shared("spec/platforms/ebay.md")).unwrap();
    let start =
        annex.find(&format!("```{info}\n")).unwrap_or_else(|| panic!("no block {info}")) + info.len() + 4;
    let end = start + annex[start..].find("```").unwrap();
    serde_json::from_str(&annex[start..end]).unwrap()
}

/// Whether `ours` says what `annex` says: amounts we write as text equal its numbers.
fn same(ours: &Value, annex: &Value) -> bool {
    match (ours, annex) {
        (Value::String(text), Value::Number(n)) => {
            text.parse::<Decimal>().ok() == n.to_string().parse::<Decimal>().ok()
        }
        (Value::Object(a), Value::Object(b)) => b.iter().all(|(k, v)| a.get(k).is_some_and(|x| same(x, v))),
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        (a, b) => a == b,
    }
}

fn orders() -> Vec<Order> {
    let page: wire::OrderPage =
        serde_json::from_value(block("json ebay-response=getOrders status=200")).unwrap();
    page.orders
}

#[test]
fn the_annex_order_maps_field_by_field() {
    let orders = orders();
    let mapped = Value::Object(record("27-11234-56789", &orders[0]).unwrap().record);
    let expected = block("json orderbridge-order");
    for (key, value) in expected.as_object().unwrap() {
        assert!(same(&mapped[key], value), "{key}: ours {} the annex's {value}", mapped[key]);
    }
    // The record is one an import takes.
    let mut record = mapped.as_object().unwrap().clone();
    record.insert("store_id".into(), json!(1));
    crate::orders::model::NewOrder::from_record(record).expect("an import record");
}

#[test]
fn the_annex_orders_are_written_and_canceled() {
    let orders = orders();
    assert_eq!(disposition(&orders[0], None), Disposition::Import);
    assert_eq!(disposition(&orders[1], None), Disposition::Cancel, "CANCELED and FULLY_REFUNDED");
    assert_eq!(disposition(&orders[0], Some("EBAY_US")), Disposition::Import);
    assert_eq!(disposition(&orders[0], Some("EBAY_GB")), Disposition::Skip, "another marketplace's");
}

#[test]
fn the_skip_rules_apply_in_their_order() {
    let base = block("json ebay-response=getOrders status=200")["orders"][0].clone();
    let with = |pointer: &str, value: Value| {
        let mut order = base.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        order.pointer_mut(parent).unwrap_or_else(|| panic!("{pointer}"))[key] = value;
        disposition(&serde_json::from_value(order).unwrap(), None)
    };
    assert_eq!(
        with("/cancelStatus/cancelState", json!("IN_PROGRESS")),
        Disposition::Skip,
        "a cancel request"
    );
    assert_eq!(with("/orderPaymentStatus", json!("PENDING")), Disposition::Skip);
    assert_eq!(with("/orderPaymentStatus", json!("PARTIALLY_REFUNDED")), Disposition::Import);
    assert_eq!(with("/orderPaymentStatus", json!("FULLY_REFUNDED")), Disposition::Cancel);
    assert_eq!(with("/orderFulfillmentStatus", json!("FULFILLED")), Disposition::Skip);
    for kind in ["DIGITAL", "PREPARE_FOR_PICKUP", "FULFILLED_BY_EBAY", "SELLER_DEFINED"] {
        assert_eq!(
            with("/fulfillmentStartInstructions/0/fulfillmentInstructionsType", json!(kind)),
            Disposition::Skip,
            "{kind}"
        );
    }
    assert_eq!(with("/program", json!({"fulfillmentProgram": {"fulfilledBy": "EBAY"}})), Disposition::Skip);
    let mut shipped = base.clone();
    for line in shipped["lineItems"].as_array_mut().unwrap() {
        line["lineItemFulfillmentStatus"] = json!("FULFILLED");
    }
    assert_eq!(disposition(&serde_json::from_value(shipped).unwrap(), None), Disposition::Skip);
    // A Global Shipping Program order is written like any other, its tag said.
    let mut gsp = base.clone();
    gsp["fulfillmentStartInstructions"][0]["ebaySupportedFulfillment"] = json!(true);
    gsp["program"] = json!({"authenticityVerification": {"status": "PENDING"}});
    let gsp: Order = serde_json::from_value(gsp).unwrap();
    assert_eq!(disposition(&gsp, None), Disposition::Import);
    let record = record("27-11234-56789", &gsp).unwrap().record;
    assert_eq!(record["external_tags"], "authenticityVerification, ebaySupportedFulfillment");
}

#[test]
fn an_order_ebay_cannot_give_whole_is_named() {
    let base = block("json ebay-response=getOrders status=200")["orders"][0].clone();
    let fails = |pointer: &str, value: Value| {
        let mut order = base.clone();
        *order.pointer_mut(pointer).unwrap() = value;
        let order: Order = serde_json::from_value(order).unwrap();
        record("27-11234-56789", &order).unwrap_err().message().to_string()
    };
    let said = fails("/pricingSummary/tax/value", json!("3,53"));
    assert!(said.contains("27-11234-56789") && said.contains("not a decimal"), "{said}");
    let said = fails("/pricingSummary/tax/currency", json!("EUR"));
    assert!(said.contains("more than one currency"), "{said}");
    let said = fails("/pricingSummary/total/value", json!("100000000.00"));
    assert!(said.contains("beyond"), "{said}");
    let said = fails("/creationDate", json!("yesterday"));
    assert!(said.contains("creationDate"), "{said}");
}

#[test]
fn a_name_without_a_space_is_a_last_name_and_amounts_round_half_even() {
    let mut order = block("json ebay-response=getOrders status=200")["orders"][0].clone();
    order["fulfillmentStartInstructions"][0]["shippingStep"]["shipTo"]["fullName"] = json!("Cher");
    // 3 units for 10.00: 3.333… is 3.33; 3 for 10.01: 3.336… is 3.34; 2 for 0.05: 0.025 is 0.02.
    order["lineItems"][0]["quantity"] = json!(3);
    order["lineItems"][0]["lineItemCost"]["value"] = json!("10.00");
    order["lineItems"][1]["quantity"] = json!(2);
    order["lineItems"][1]["lineItemCost"]["value"] = json!("0.05");
    let order: Order = serde_json::from_value(order).unwrap();
    let record = record("27-11234-56789", &order).unwrap().record;
    assert_eq!(record["shipping_address"]["first_name"], Value::Null);
    assert_eq!(record["shipping_address"]["last_name"], "Cher");
    assert_eq!(record["order_items"][0]["unit_price"], "3.33");
    assert_eq!(record["order_items"][1]["unit_price"], "0.02");
}

#[test]
fn a_window_ends_two_minutes_before_the_walk_and_reaches_back_at_most_729_days() {
    let now = 1_795_000_000_000;
    let walk = Walk::start(Some(now - 3_600_000), now);
    assert_eq!((walk.from, walk.to), (now - 3_600_000, now - 120_000));
    let first = Walk::start(None, now);
    assert_eq!(first.from, now - 30 * DAY_MS);
    let ancient = Walk::start(Some(0), now);
    assert_eq!(ancient.from, now - 120_000 - 729 * DAY_MS);
    // The annex's request, word for word.
    let annex = Walk { from: 1_795_602_000_000 - 5 * 60_000, to: 1_795_604_280_000, ..first };
    assert_eq!(
        annex.target(),
        "/sell/fulfillment/v1/order?filter=lastmodifieddate:%5B2026-11-25T10:15:00.000Z..2026-11-25T10:58:00.000Z%5D,orderfulfillmentstatus:%7BNOT_STARTED%7CIN_PROGRESS%7D&limit=200&offset=0"
    );
}
