//! Unit tests of the BigCommerce client: dates, money and the mapping of one order.

use super::*;

fn order(json: Value) -> wire::Order {
    serde_json::from_value(json).unwrap()
}

/// The record from the consignments, `None` when they send the order to the per-order calls.
fn from_consignments(json: Value) -> Option<PulledOrder> {
    let order = order(json);
    let shipping = order.consignments.as_ref()?;
    let lines = consignment_lines(shipping)?;
    Some(map_order(&order, &lines, shipping.first()).unwrap())
}

#[test]
fn lines_come_from_every_shipping_consignment_and_the_address_from_the_first() {
    let pulled = from_consignments(json!({"id": 1, "consignments": {"pickups": [], "shipping": [
        {"id": 70, "shipping_method": "Ground", "line_items": [{"id": 7, "sku": "A", "quantity": 1}]},
        {"id": 71, "shipping_method": "Air", "line_items": [{"id": 8, "sku": "B", "quantity": "2"}]}]}}))
    .unwrap();
    assert_eq!(pulled.address_id.as_deref(), Some("70"));
    assert_eq!(pulled.record["shipping_carrier_service_level"], "Ground");
    let items = pulled.record["order_items"].as_array().unwrap();
    let lines: Vec<(&Value, &Value)> = items.iter().map(|i| (&i["sku"], &i["quantity"])).collect();
    assert_eq!(lines, [(&json!("A"), &json!(1)), (&json!("B"), &json!(2))]);
}

#[test]
fn consignments_absent_or_as_links_leave_the_order_to_the_per_order_calls() {
    let cases = [
        json!({"id": 1}),
        json!({"id": 1, "consignments": {"url": "https://x/v2/orders/1/consignments", "resource": "/orders/1/consignments"}}),
        json!({"id": 1, "consignments": {"shipping": [{"id": 70, "line_items": [{"url": "u", "resource": "/orders/1/products/7"}]}]}}),
        json!({"id": 1, "consignments": {"shipping": [{"id": 70}]}}),
        json!({"id": 1, "consignments": [{"shipping": {"id": 70}}]}),
    ];
    for json in cases {
        assert!(from_consignments(json.clone()).is_none(), "{json}");
    }
    let digital_only =
        from_consignments(json!({"id": 1, "consignments": {"shipping": [], "downloads": [{}]}}));
    let digital_only = digital_only.unwrap();
    assert_eq!(
        (digital_only.record["order_items"].as_array().map(Vec::len), digital_only.address_id),
        (Some(0), None)
    );
}

#[test]
fn the_date_filter_is_rfc_2822_in_utc() {
    assert_eq!(rfc2822(1_700_000_000_999), "Tue, 14 Nov 2023 22:13:20 +0000");
}

#[test]
fn money_is_rounded_half_even_to_two_places() {
    let read = |json: &str| serde_json::from_str::<Scalar>(json).unwrap();
    assert_eq!(money(&read("\"12.5000\""), "a", 1).unwrap(), "12.50");
    assert_eq!(money(&read("\"0.1250\""), "b", 1).unwrap(), "0.12");
    assert_eq!(money(&read("0.135"), "c", 1).unwrap(), "0.14");
    assert_eq!(money(&read("\"\""), "d", 1).unwrap(), Value::Null);
    assert_eq!(money(&Scalar::Absent, "d", 1).unwrap(), Value::Null);
    let e = money(&read("\"x\""), "e", 7).unwrap_err();
    assert!(e.message().contains("order 7") && e.message().contains('e'), "{e}");
}

#[test]
fn a_guest_has_no_customer_ids_and_empty_text_is_null() {
    let order = order(json!({"id": 100, "customer_id": 0, "date_created": "Tue, 14 Nov 2023 22:13:20 +0000",
                       "customer_message": "", "billing_address": {"email": "a@b.c", "country_iso2": "US", "street_2": ""},
                       "currency_code": "USD", "payment_method": "Cash"}));
    let pulled = map_order(&order, &[], None).unwrap();
    let r = &pulled.record;
    assert_eq!(r["external_billing_customer_id"], Value::Null);
    assert_eq!(r["notes"], Value::Null);
    assert_eq!(r["customer_email"], "a@b.c");
    assert_eq!(r["ordered_at"], "2023-11-14T22:13:20.000Z");
    assert_eq!(r["billing_address"]["street2"], Value::Null);
    assert_eq!(r["billing_address"]["country"], "US");
    assert_eq!(pulled.address_id, None);
}

#[test]
fn an_order_that_cannot_be_read_names_itself_and_its_field() {
    let bad_quantity = order(
        json!({"id": 5, "consignments": {"shipping": [{"id": 50, "line_items": [{"id": 1, "quantity": "many"}]}]}}),
    );
    let shipping = bad_quantity.consignments.as_ref().unwrap();
    let e = map_order(&bad_quantity, &consignment_lines(shipping).unwrap(), shipping.first()).unwrap_err();
    assert!(e.message().contains("order 5") && e.message().contains("quantity"), "{e}");
    let bad_date = order(json!({"id": 6, "date_created": 17}));
    let e = map_order(&bad_date, &[], None).unwrap_err();
    assert!(e.message().contains("order 6") && e.message().contains("date_created"), "{e}");
}
