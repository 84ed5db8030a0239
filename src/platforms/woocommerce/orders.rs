//! The pull (annex §11, "Pull" and "Mapping"): `GET wc/v3/orders` filtered by status and
//! modification time, oldest change first, and each order mapped to an import record from
//! the list itself (line items, addresses and shipping lines come inside each order).
//!
//! `modified_after` is exclusive and second-precise, and the engine asks from a time
//! inclusively, so the filter sent is that time's second less one: every order changed at or
//! after it. An order listed at or before the filter means the store ignored it (WooCommerce
//! older than 5.8), and the pull stops rather than read the whole history.

use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::{Map, Value, json};
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime};

use super::adapter::{CANCELLING, Shop};
use crate::platforms::PlatformError;
use crate::platforms::store::{Disposition, Listed, ListedOrder, PulledOrder, integer};

/// Orders on one page, WooCommerce's largest `per_page`.
pub const PAGE_SIZE: usize = 100;

/// The fields a pull reads.
pub const FIELDS: &str = "id,parent_id,number,status,currency,created_via,date_created_gmt,date_modified_gmt,date_paid_gmt,customer_id,customer_note,billing,shipping,payment_method,payment_method_title,discount_total,shipping_total,shipping_tax,total_tax,line_items,shipping_lines,coupon_lines";

/// WooCommerce's dates: `YYYY-MM-DDTHH:MM:SS`, no zone (the `_gmt` ones are UTC).
const WC_DATE: &[time::format_description::BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");

/// The query of one list page. `after_secs` is the `modified_after` filter (exclusive), in
/// Unix seconds; `first_pull` reads only the statuses to import.
pub fn query(
    shop: &Shop,
    after_secs: Option<i64>,
    page: u32,
    first_pull: bool,
) -> Vec<(&'static str, String)> {
    let mut statuses = shop.import_statuses.clone();
    if !first_pull {
        statuses.extend(CANCELLING.iter().map(|s| s.to_string()));
    }
    let mut query = vec![
        ("status", statuses.join(",")),
        ("orderby", "modified".to_string()),
        ("order", "asc".to_string()),
        ("dates_are_gmt", "true".to_string()),
        ("per_page", PAGE_SIZE.to_string()),
        ("page", page.to_string()),
        ("_fields", FIELDS.to_string()),
    ];
    if let Some(after) = after_secs {
        query.push(("modified_after", wc_date(after.saturating_mul(1000))));
    }
    query
}

/// A time as WooCommerce's filters read it with `dates_are_gmt`: UTC, no zone, no fraction.
pub fn wc_date(ms: i64) -> String {
    let t = OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    t.format(WC_DATE).unwrap_or_default()
}

/// A listed order, checked against the filter it was asked with.
pub fn listed(shop: &Shop, raw: Value, after_secs: Option<i64>) -> Result<ListedOrder, PlatformError> {
    let id = raw
        .get("id")
        .and_then(integer)
        .ok_or_else(|| PlatformError::BadData("WooCommerce listed an order without a numeric id.".into()))?;
    let modified =
        date(&raw, "date_modified_gmt", id)?.ok_or_else(|| bad(id, "date_modified_gmt", "is missing"))?;
    if let Some(after) = after_secs
        && modified <= after.saturating_mul(1000)
    {
        return Err(PlatformError::BadData(format!(
            "WooCommerce listed order {id}, modified {}, when asked only for orders modified after {}: the store ignores modified_after (WooCommerce older than 5.8), so orderbridge would read its whole history. Update WooCommerce.",
            wc_date(modified),
            wc_date(after.saturating_mul(1000))
        )));
    }
    let status = raw.get("status").and_then(Value::as_str).unwrap_or_default();
    let parent = raw.get("parent_id").and_then(integer).unwrap_or(0);
    let disposition = if parent != 0 {
        // A marketplace plugin's child order repeats its parent's items.
        Disposition::Skip
    } else if shop.imports(status) {
        Disposition::Import
    } else if CANCELLING.contains(&status) {
        Disposition::Cancel
    } else {
        Disposition::Skip
    };
    Ok(ListedOrder {
        external_id: id.to_string(),
        cursor_ms: modified,
        version: modified,
        disposition,
        listed: Listed::Entry(raw),
    })
}

fn bad(order: i64, field: &str, problem: &str) -> PlatformError {
    PlatformError::BadData(format!("WooCommerce's order {order} cannot be read: {field} {problem}."))
}

/// A `*_gmt` date, in ms; `None` when null or empty.
fn date(v: &Value, field: &str, order: i64) -> Result<Option<i64>, PlatformError> {
    let text = match v.get(field) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s.trim(),
        Some(_) => return Err(bad(order, field, "is not a date string")),
    };
    let parsed = PrimitiveDateTime::parse(text, WC_DATE)
        .map_err(|_| bad(order, field, &format!("is not a date like 2024-03-05T14:07:09: {text:?}")))?;
    Ok(Some(crate::dates::to_ms(parsed.assume_utc())))
}

/// Text, empty as null, HTML character references decoded (WordPress stores names with
/// `&ndash;` and `&amp;`).
fn text(v: &Value, field: &str) -> Value {
    match v.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            Value::String(html_escape::decode_html_entities(s).into_owned())
        }
        Some(Value::Number(n)) => Value::String(n.to_string()),
        _ => Value::Null,
    }
}

/// Money as WooCommerce sends it (text with the store's decimals), read exactly.
fn amount(v: &Value, field: &str, order: i64) -> Result<Option<Decimal>, PlatformError> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => {
            s.trim().parse().map(Some).map_err(|_| bad(order, field, &format!("is not a decimal: {s:?}")))
        }
        Some(Value::Number(n)) => {
            n.to_string().parse().map(Some).map_err(|_| bad(order, field, &format!("is not a decimal: {n}")))
        }
        Some(other) => Err(bad(order, field, &format!("is not a decimal: {other}"))),
    }
}

/// Rounded half-even to 2 places, as text; null for none.
fn money(amount: Option<Decimal>) -> Value {
    amount.map_or(Value::Null, |a| {
        Value::String(format!("{:.2}", a.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven)))
    })
}

/// A WooCommerce address in the import's shape.
fn address(a: &Value, phone: Value) -> Value {
    let country = match a.get("country").and_then(Value::as_str) {
        Some(code) if code.len() == 2 => Value::String(code.to_string()),
        _ => Value::Null,
    };
    json!({
        "first_name": text(a, "first_name"),
        "last_name": text(a, "last_name"),
        "street1": text(a, "address_1"),
        "street2": text(a, "address_2"),
        "city": text(a, "city"),
        "region": text(a, "state"),
        "postal_code": text(a, "postcode"),
        "country": country,
        "telephone": phone,
    })
}

/// The annex's mapping of a listed order to an import record.
pub fn record(order: &Value) -> Result<PulledOrder, PlatformError> {
    let id = order.get("id").and_then(integer).unwrap_or_default();
    let ordered_at =
        date(order, "date_created_gmt", id)?.ok_or_else(|| bad(id, "date_created_gmt", "is missing"))?;
    let paid_at = date(order, "date_paid_gmt", id)?;
    let customer = order.get("customer_id").and_then(integer).filter(|c| *c != 0).map(|c| c.to_string());
    let billing = order.get("billing").cloned().unwrap_or(Value::Null);
    let shipping = order.get("shipping").cloned().unwrap_or(Value::Null);
    let billing_phone = text(&billing, "phone");
    let billing_address = address(&billing, billing_phone.clone());
    // An order that needs no shipping has no shipping address: it goes to the billing one.
    let ships_nowhere = text(&shipping, "address_1").is_null() && text(&shipping, "country").is_null();
    let shipping_address = if ships_nowhere {
        billing_address.clone()
    } else {
        // Checkout does not ask for a shipping phone (and stores before 5.6 have none).
        let phone = match text(&shipping, "phone") {
            Value::Null => billing_phone,
            phone => phone,
        };
        address(&shipping, phone)
    };
    let mut items = Vec::new();
    for line in order.get("line_items").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
        let quantity = line
            .get("quantity")
            .and_then(|q| match q {
                Value::Number(n) => n.as_i64(),
                _ => None,
            })
            .ok_or_else(|| bad(id, "line_items[].quantity", "is not a whole number"))?;
        if quantity == 0 {
            continue;
        }
        let subtotal = amount(line, "subtotal", id)?;
        let total = amount(line, "total", id)?;
        // Checked: a store can send amounts whose difference no decimal holds.
        let unit_price = subtotal
            .map(|s| s.checked_div(Decimal::from(quantity)))
            .map(|p| p.ok_or_else(|| bad(id, "line_items[].subtotal", "cannot be divided by the quantity")))
            .transpose()?;
        let discount =
            match (subtotal, total) {
                (Some(s), Some(t)) => Some(s.checked_sub(t).ok_or_else(|| {
                    bad(id, "line_items[].discount", "(subtotal less total) is out of range")
                })?),
                _ => None,
            };
        let variation = line.get("variation_id").and_then(integer).filter(|v| *v != 0);
        let product = variation.or_else(|| line.get("product_id").and_then(integer).filter(|p| *p != 0));
        items.push(json!({
            "name": text(line, "name"),
            "sku": text(line, "sku"),
            "quantity": quantity,
            "unit_price": money(unit_price),
            "discount_amount": money(discount),
            "tax_amount": money(amount(line, "total_tax", id)?),
            "external_order_item_id": text(line, "id"),
            "external_product_id": product.map(|p| p.to_string()),
        }));
    }
    let codes: Vec<String> = order
        .get("coupon_lines")
        .and_then(Value::as_array)
        .map(|lines| lines.iter().filter_map(|c| text(c, "code").as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let service_level = order
        .get("shipping_lines")
        .and_then(Value::as_array)
        .and_then(|lines| lines.first())
        .map_or(Value::Null, |line| text(line, "method_title"));
    let payment_type = match text(order, "payment_method_title") {
        Value::Null => text(order, "payment_method"),
        title => title,
    };
    let currency = match order.get("currency").and_then(Value::as_str) {
        Some(code) if code.len() == 3 => Value::String(code.to_string()),
        _ => Value::Null,
    };
    let record = json!({
        "external_id": id.to_string(),
        "external_display_id": text(order, "number"),
        "ordered_at": crate::dates::format_ms(ordered_at),
        "payment_date": paid_at.map(crate::dates::format_ms),
        "customer_email": text(&billing, "email"),
        "external_billing_customer_id": customer,
        "external_shipping_customer_id": customer,
        "payment_type": payment_type,
        "currency_code": currency,
        "shipping_amount": money(amount(order, "shipping_total", id)?),
        "shipping_tax_amount": money(amount(order, "shipping_tax", id)?),
        "tax_amount": money(amount(order, "total_tax", id)?),
        "discount_amount": money(amount(order, "discount_total", id)?),
        "discount_codes": if codes.is_empty() { Value::Null } else { Value::String(codes.join(", ")) },
        "notes": text(order, "customer_note"),
        "shipping_carrier_service_level": service_level,
        "external_type": text(order, "created_via"),
        "billing_address": billing_address,
        "shipping_address": shipping_address,
        "order_items": items,
    });
    let Value::Object(record): Value = record else { return Err(bad(id, "record", "could not be built")) };
    let record: Map<String, Value> = record;
    Ok(PulledOrder { record, address_id: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The annex's example order (§2.1).
    fn example() -> Value {
        json!({
            "id": 727, "number": "727", "status": "processing", "currency": "USD", "created_via": "rest-api",
            "date_created_gmt": "2017-03-22T19:28:02", "date_modified_gmt": "2017-03-22T19:28:08",
            "date_paid_gmt": "2017-03-22T19:28:08", "discount_total": "0.00", "shipping_total": "10.00",
            "shipping_tax": "0.00", "total_tax": "1.35", "customer_id": 0, "customer_note": "",
            "billing": {"first_name": "John", "last_name": "Doe", "company": "", "address_1": "969 Market",
                        "address_2": "", "city": "San Francisco", "state": "CA", "postcode": "94103",
                        "country": "US", "email": "john.doe@example.com", "phone": "(555) 555-5555"},
            "shipping": {"first_name": "John", "last_name": "Doe", "company": "", "address_1": "969 Market",
                         "address_2": "", "city": "San Francisco", "state": "CA", "postcode": "94103",
                         "country": "US", "phone": ""},
            "payment_method": "bacs", "payment_method_title": "Direct Bank Transfer",
            "line_items": [
                {"id": 315, "name": "Woo Single #1", "product_id": 93, "variation_id": 0, "quantity": 2,
                 "subtotal": "6.00", "subtotal_tax": "0.45", "total": "6.00", "total_tax": "0.45", "sku": "", "price": 3},
                {"id": 316, "name": "Ship Your Idea &ndash; Color: Black, Size: M Test", "product_id": 22,
                 "variation_id": 23, "quantity": 1, "subtotal": "12.00", "subtotal_tax": "0.90", "total": "12.00",
                 "total_tax": "0.90", "sku": "Bar3", "price": 12}
            ],
            "shipping_lines": [{"id": 317, "method_title": "Flat Rate", "method_id": "flat_rate", "total": "10.00", "total_tax": "0.00"}],
            "coupon_lines": []
        })
    }

    #[test]
    fn the_annexes_example_maps_as_section_2_2_shows() {
        let pulled = record(&example()).unwrap();
        let expected = json!({
            "external_id": "727", "external_display_id": "727",
            "ordered_at": "2017-03-22T19:28:02.000Z", "payment_date": "2017-03-22T19:28:08.000Z",
            "customer_email": "john.doe@example.com",
            "external_billing_customer_id": null, "external_shipping_customer_id": null,
            "payment_type": "Direct Bank Transfer", "currency_code": "USD",
            "shipping_amount": "10.00", "shipping_tax_amount": "0.00", "tax_amount": "1.35", "discount_amount": "0.00",
            "discount_codes": null, "notes": null, "shipping_carrier_service_level": "Flat Rate", "external_type": "rest-api",
            "billing_address": {"first_name": "John", "last_name": "Doe", "street1": "969 Market", "street2": null,
                                "city": "San Francisco", "region": "CA", "postal_code": "94103", "country": "US",
                                "telephone": "(555) 555-5555"},
            "shipping_address": {"first_name": "John", "last_name": "Doe", "street1": "969 Market", "street2": null,
                                 "city": "San Francisco", "region": "CA", "postal_code": "94103", "country": "US",
                                 "telephone": "(555) 555-5555"},
            "order_items": [
                {"name": "Woo Single #1", "sku": null, "quantity": 2, "unit_price": "3.00", "discount_amount": "0.00",
                 "tax_amount": "0.45", "external_order_item_id": "315", "external_product_id": "93"},
                {"name": "Ship Your Idea – Color: Black, Size: M Test", "sku": "Bar3", "quantity": 1, "unit_price": "12.00",
                 "discount_amount": "0.00", "tax_amount": "0.90", "external_order_item_id": "316", "external_product_id": "23"}
            ]
        });
        assert_eq!(Value::Object(pulled.record), expected);
    }

    #[test]
    fn coupons_discounts_customers_and_orders_without_shipping_map_as_the_annex_says() {
        let mut order = example();
        order["customer_id"] = json!(42);
        order["coupon_lines"] = json!([{"code": "SPRING"}, {"code": "VIP"}]);
        order["shipping"] = json!({"first_name": "", "address_1": "", "country": ""});
        order["payment_method_title"] = json!("");
        order["line_items"] = json!([
            {"id": 1, "name": "A &amp; B", "product_id": 5, "variation_id": 0, "quantity": 3, "subtotal": "10.00",
             "total": "8.50", "total_tax": "0.00", "sku": null},
            {"id": 2, "name": "Gone", "product_id": 6, "variation_id": 0, "quantity": 0, "subtotal": "0", "total": "0"}
        ]);
        let r = record(&order).unwrap().record;
        assert_eq!(r["external_billing_customer_id"], "42");
        assert_eq!(r["discount_codes"], "SPRING, VIP");
        assert_eq!(r["payment_type"], "bacs");
        assert_eq!(r["shipping_address"], r["billing_address"]);
        let items = r["order_items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "a line of quantity 0 is left out");
        assert_eq!(items[0]["name"], "A & B");
        assert_eq!(items[0]["unit_price"], "3.33", "10.00 / 3, half-even");
        assert_eq!(items[0]["discount_amount"], "1.50");
        assert_eq!(items[0]["sku"], Value::Null);
    }

    #[test]
    fn unreadable_orders_name_the_order_and_the_field() {
        for (field, value) in [
            ("date_created_gmt", json!("22/03/2017")),
            ("date_created_gmt", Value::Null),
            ("total_tax", json!("1,35")),
        ] {
            let mut order = example();
            order[field] = value;
            let e = record(&order).unwrap_err();
            assert!(e.message().contains("727") && e.message().contains(field), "{e}");
        }
        let mut order = example();
        order["line_items"][0]["quantity"] = json!(1.5);
        assert!(record(&order).unwrap_err().message().contains("quantity"));
    }

    #[test]
    fn amounts_past_what_a_decimal_holds_are_bad_data_not_a_panic() {
        let mut order = example();
        order["line_items"][0]["subtotal"] = json!("79228162514264337593543950335");
        order["line_items"][0]["total"] = json!("-1");
        let e = record(&order).unwrap_err();
        assert!(matches!(e, PlatformError::BadData(_)), "{e:?}");
        assert!(e.message().contains("727") && e.message().contains("discount"), "{e}");
    }

    #[test]
    fn filters_are_utc_without_a_zone_and_an_ignored_filter_stops_the_pull() {
        assert_eq!(wc_date(1_700_000_000_999), "2023-11-14T22:13:20");
        let shop = super::super::adapter::Shop::from_adapter(
            json!({"url": "https://s.test", "consumer_key": "k", "consumer_secret": "s"})
                .as_object()
                .unwrap(),
        )
        .unwrap();
        let order = example();
        let modified = 1_490_210_888; // 2017-03-22T19:28:08
        assert!(listed(&shop, order.clone(), Some(modified - 1)).is_ok());
        let e = listed(&shop, order.clone(), Some(modified)).unwrap_err();
        assert!(e.message().contains("ignores modified_after"), "{e}");
        let mut child = order.clone();
        child["parent_id"] = json!(700);
        assert_eq!(listed(&shop, child, None).unwrap().disposition, Disposition::Skip);
        for (status, disposition) in [
            ("processing", Disposition::Import),
            ("cancelled", Disposition::Cancel),
            ("refunded", Disposition::Cancel),
            ("failed", Disposition::Cancel),
            ("trash", Disposition::Cancel),
            ("on-hold", Disposition::Skip),
            ("completed", Disposition::Skip),
        ] {
            let mut o = order.clone();
            o["status"] = json!(status);
            assert_eq!(listed(&shop, o, None).unwrap().disposition, disposition, "{status}");
        }
        let q = query(&shop, None, 1, true);
        assert!(q.contains(&("status", "processing".to_string())));
        assert!(!q.iter().any(|(k, _)| *k == "modified_after"));
        let q = query(&shop, Some(modified), 2, false);
        assert!(q.contains(&("status", "processing,cancelled,refunded,failed,trash".to_string())));
        assert!(q.contains(&("modified_after", "2017-03-22T19:28:08".to_string())));
    }
}
