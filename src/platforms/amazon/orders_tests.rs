//! The mapping held to the annex's worked example (§7): the first order of its
//! `searchOrders` answer must become its `orderbridge-order` block, field by field; and the
//! pull's rules on which orders are written and what cannot be read.

use serde_json::{Value, json};

use super::*;

/// The order as the pull reads it.
fn typed(order: &Value) -> Order {
    serde_json::from_value(order.clone()).expect("an order of Amazon's shape")
}

fn record(order: &Value) -> Result<PulledOrder, PlatformError> {
    super::record(&typed(order))
}

fn disposition(order: &Value) -> Disposition {
    super::disposition(&typed(order))
}

fn listed(order: Value) -> Result<ListedOrder, PlatformError> {
    super::listed(typed(&order))
}

/// The annex.
fn annex() -> String {
    std::fs::read_to_string(crate::simulate::shared_files::shared("spec/platforms/amazon.md")).unwrap()
}

/// The first fenced block whose info string is `info`, parsed.
fn block(text: &str, info: &str) -> Value {
    let start =
        text.find(&format!("```{info}\n")).unwrap_or_else(|| panic!("no block {info}")) + info.len() + 4;
    let end = start + text[start..].find("\n```").unwrap();
    serde_json::from_str(&text[start..end]).unwrap_or_else(|e| panic!("block {info}: {e}"))
}

/// Numbers and decimal text compare as decimals (the record writes amounts as text).
fn same(a: &Value, b: &Value) -> bool {
    let decimal = |v: &Value| match v {
        Value::Number(n) => n.to_string().parse::<Decimal>().ok(),
        Value::String(s) => s.parse::<Decimal>().ok().filter(|_| s.contains('.')),
        _ => None,
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            y.iter().all(|(k, v)| x.get(k).is_some_and(|w| same(w, v))) && x.len() >= y.len()
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w)),
        _ => a == b || matches!((decimal(a), decimal(b)), (Some(x), Some(y)) if x == y),
    }
}

#[test]
fn the_annex_worked_example_maps_field_by_field() {
    let text = annex();
    let answer = block(&text, "json amazon-response=searchOrders status=200");
    let order = &answer["orders"][0];
    let expected = block(&text, "json orderbridge-order");
    let record = Value::Object(record(order).unwrap().record);
    for (key, want) in expected.as_object().unwrap() {
        assert!(same(&record[key], want), "{key}: got {} want {want}", record[key]);
    }
    assert_eq!(disposition(order), Disposition::Import);
    assert_eq!(disposition(&answer["orders"][1]), Disposition::Cancel);
}

fn order(fulfillment: Value, programs: Value, quantity: i64) -> Value {
    json!({"orderId": "113-1", "createdTime": "2026-11-25T10:18:02Z", "lastUpdatedTime": "2026-11-25T10:20:41Z",
           "programs": programs, "fulfillment": fulfillment,
           "recipient": {"deliveryAddress": {"name": "Madonna", "addressLine1": "1 Main St", "city": "", "municipality": "Shibuya",
                                             "addressLine3": "Floor 3", "countryCode": "JP"}},
           "proceeds": {"grandTotal": {"amount": "19940", "currencyCode": "JPY"}},
           "orderItems": [{"orderItemId": "1", "quantityOrdered": quantity,
                           "product": {"sellerSku": "S", "price": {"unitPrice": {"amount": "19940", "currencyCode": "JPY"}}}}]})
}

#[test]
fn only_merchant_orders_ready_to_ship_with_units_are_written() {
    let mfn = |status: &str| json!({"fulfilledBy": "MERCHANT", "fulfillmentStatus": status});
    assert_eq!(disposition(&order(mfn("UNSHIPPED"), json!(["AMAZON_EASY_SHIP"]), 1)), Disposition::Import);
    assert_eq!(disposition(&order(mfn("PARTIALLY_SHIPPED"), json!([]), 1)), Disposition::Import);
    assert_eq!(disposition(&order(mfn("UNSHIPPED"), json!(["IN_STORE_PICK_UP"]), 1)), Disposition::Skip);
    assert_eq!(disposition(&order(mfn("UNSHIPPED"), json!([]), 0)), Disposition::Skip);
    for status in ["PENDING", "PENDING_AVAILABILITY", "SHIPPED", "UNFULFILLABLE"] {
        assert_eq!(disposition(&order(mfn(status), json!([]), 1)), Disposition::Skip, "{status}");
    }
    let fba = json!({"fulfilledBy": "AMAZON", "fulfillmentStatus": "UNSHIPPED"});
    assert_eq!(disposition(&order(fba, json!([]), 1)), Disposition::Skip);
    assert_eq!(disposition(&order(mfn("CANCELLED"), json!([]), 0)), Disposition::Cancel);
}

#[test]
fn yen_amounts_names_without_a_space_and_the_third_address_line_map() {
    let o = order(json!({"fulfilledBy": "MERCHANT", "fulfillmentStatus": "UNSHIPPED"}), json!([]), 1);
    let r = record(&o).unwrap().record;
    assert_eq!(r["currency_code"], "JPY");
    assert_eq!(r["shipping_amount"], "0.00");
    assert_eq!(r["order_items"][0]["unit_price"], "19940.00");
    let a = &r["shipping_address"];
    assert_eq!((&a["first_name"], &a["last_name"]), (&Value::Null, &json!("Madonna")));
    assert_eq!((&a["street2"], &a["city"]), (&json!("Floor 3"), &json!("Shibuya")));
}

#[test]
fn an_order_amazon_sends_without_an_address_names_the_missing_role() {
    let mut o = order(json!({"fulfilledBy": "MERCHANT", "fulfillmentStatus": "UNSHIPPED"}), json!([]), 1);
    o.as_object_mut().unwrap().remove("recipient");
    let e = record(&o).unwrap_err();
    assert_eq!(e.code(), "adapter_authentication_failed");
    assert!(
        e.message().contains("113-1") && e.message().contains("Direct-to-Consumer Delivery (Restricted)")
    );
}

#[test]
fn unreadable_amounts_mixed_currencies_and_amounts_out_of_range_are_bad_data_naming_the_order() {
    let base = || order(json!({"fulfilledBy": "MERCHANT", "fulfillmentStatus": "UNSHIPPED"}), json!([]), 1);
    let mut o = base();
    o["proceeds"]["grandTotal"]["amount"] = json!("12,50");
    let mut mixed = base();
    mixed["proceeds"]["grandTotal"]["currencyCode"] = json!("USD");
    let mut huge = base();
    huge["orderItems"][0]["product"]["price"]["unitPrice"]["amount"] = json!("1000000.00");
    let mut undated = base();
    undated.as_object_mut().unwrap().remove("createdTime");
    for (o, says) in [
        (o, "is not a decimal"),
        (mixed, "more than one currency"),
        (huge, "beyond 999,999.99"),
        (undated, "createdTime"),
    ] {
        let e = record(&o).unwrap_err();
        assert_eq!(e.code(), "bad_data");
        assert!(e.message().contains("113-1") && e.message().contains(says), "{}", e.message());
    }
    let e = listed(json!({"orderId": "113-2"})).unwrap_err();
    assert!(e.message().contains("113-2") && e.message().contains("lastUpdatedTime"));
}

#[test]
fn shipping_taxes_that_add_up_past_any_decimal_are_bad_data_not_a_panic() {
    let mut o = order(json!({"fulfilledBy": "MERCHANT", "fulfillmentStatus": "UNSHIPPED"}), json!([]), 1);
    let huge = "79228162514264337593543950335";
    let taxed = json!({"breakdowns": [{"type": "TAX", "detailedBreakdowns": [
        {"subtype": "SHIPPING", "value": {"amount": huge, "currencyCode": "JPY"}}]}]});
    let item = o["orderItems"][0].clone();
    let mut second = item.clone();
    second["orderItemId"] = json!("2");
    o["orderItems"] = json!([item, second]);
    for item in o["orderItems"].as_array_mut().unwrap() {
        item["proceeds"] = taxed.clone();
    }
    let e = record(&o).unwrap_err();
    assert_eq!(e.code(), "bad_data");
    assert!(e.message().contains("113-1") && e.message().contains("shipping tax"), "{}", e.message());
    // In the pull the order is listed, and reading it back says why.
    let Listed::Whole(read) = listed(o).unwrap().listed else { panic!("an order to write is listed whole") };
    let read = read.unwrap_err();
    assert_eq!(read.code(), "bad_data");
}
