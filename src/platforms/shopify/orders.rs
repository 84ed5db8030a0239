//! The pull (annex §11 Shopify, *Pull* and *Mapping*): pages of orders sorted by
//! `UPDATED_AT` and walked by cursor, `status:open` on a store's first pull and
//! `updated_at:>=` the cursor less the overlap after it; which orders are written; and an
//! order mapped to an import record. Each order arrives with its first lines; only an order
//! with more pages the rest.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::Client;
use super::documents::{ORDER_LINE_ITEMS, ORDERS};
use crate::platforms::PlatformError;
use crate::platforms::store::{Disposition, Listed, ListedOrder, Page, PulledOrder};

/// A page of orders.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OrdersData {
    shop: ShopUnit,
    orders: Connection<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ShopUnit {
    weight_unit: String,
}

#[derive(Deserialize, Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Connection<T> {
    pub nodes: Vec<T>,
    pub page_info: PageInfo,
}

#[derive(Deserialize, Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PageInfo {
    pub has_next_page: bool,
    pub end_cursor: Option<String>,
}

/// An order as `OrderbridgeOrders` reads it.
#[derive(Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Order {
    legacy_resource_id: String,
    name: String,
    processed_at: String,
    updated_at: String,
    cancelled_at: Option<String>,
    closed: bool,
    requires_shipping: bool,
    display_financial_status: Option<String>,
    display_fulfillment_status: String,
    email: Option<String>,
    note: Option<String>,
    tags: Vec<String>,
    po_number: Option<String>,
    source_name: Option<String>,
    discount_codes: Vec<String>,
    payment_gateway_names: Vec<String>,
    currency_code: String,
    current_shipping_price_set: Option<MoneyBag>,
    current_total_tax_set: Option<MoneyBag>,
    current_total_discounts_set: Option<MoneyBag>,
    shipping_line: Option<ShippingLine>,
    shipping_address: Option<Address>,
    billing_address: Option<Address>,
    line_items: Connection<Line>,
    /// Not Shopify's: the shop's weight unit, carried from the page to the mapping.
    #[serde(default)]
    shop_weight_unit: String,
}

#[derive(Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct MoneyBag {
    shop_money: Money,
}

#[derive(Deserialize, Serialize, Debug)]
struct Money {
    amount: Value,
}

#[derive(Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct ShippingLine {
    title: Option<String>,
    #[serde(default)]
    tax_lines: Vec<TaxLine>,
}

#[derive(Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct TaxLine {
    price_set: MoneyBag,
}

#[derive(Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Address {
    first_name: Option<String>,
    last_name: Option<String>,
    address1: Option<String>,
    address2: Option<String>,
    city: Option<String>,
    province: Option<String>,
    province_code: Option<String>,
    zip: Option<String>,
    country_code_v2: Option<String>,
    phone: Option<String>,
}

#[derive(Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Line {
    id: String,
    name: Option<String>,
    sku: Option<String>,
    current_quantity: i64,
    requires_shipping: bool,
    original_unit_price_set: Option<MoneyBag>,
    total_discount_set: Option<MoneyBag>,
    #[serde(default)]
    tax_lines: Vec<TaxLine>,
    weight: Option<Weight>,
    variant: Option<Variant>,
}

impl Line {
    /// Whether the line becomes an order item: it ships, and units of it are left.
    fn is_mapped(&self) -> bool {
        self.requires_shipping && self.current_quantity > 0
    }
}

#[derive(Deserialize, Serialize, Debug)]
struct Weight {
    unit: String,
    value: Value,
}

#[derive(Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Variant {
    legacy_resource_id: Option<String>,
    barcode: Option<String>,
}

/// The `query` of a pull: open orders on the first, changes since the cursor (less the
/// overlap, already taken off) after it. Shopify's search syntax needs dates quoted.
pub fn search(since_ms: Option<i64>) -> String {
    match since_ms {
        None => "status:open".to_string(),
        Some(ms) => {
            let at = OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
                .unwrap_or(OffsetDateTime::UNIX_EPOCH);
            let text = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
                at.year(),
                u8::from(at.month()),
                at.day(),
                at.hour(),
                at.minute(),
                at.second()
            );
            format!("updated_at:>='{text}'")
        }
    }
}

/// One page of the pull, oldest change first; `after` is the previous page's `endCursor`, a
/// key, so an order modified mid-pull moves to the end without shifting an unread one onto a
/// page already read, and each page commits the latest change on it.
pub(super) async fn page(
    client: &Client,
    since_ms: Option<i64>,
    after: Option<&str>,
) -> Result<Page, PlatformError> {
    let data: OrdersData = client.send(&ORDERS, json!({"query": search(since_ms), "after": after})).await?;
    let mut orders = Vec::with_capacity(data.orders.nodes.len());
    for mut node in data.orders.nodes {
        // The order is kept as Shopify sent it, with the shop's unit its weights convert to.
        if let Value::Object(fields) = &mut node {
            fields.insert("shopWeightUnit".into(), Value::from(data.shop.weight_unit.as_str()));
        }
        let mut order = Order::deserialize(&node).map_err(|e| {
            PlatformError::BadData(format!("Shopify listed an order that cannot be read: {e}."))
        })?;
        if order.line_items.page_info.has_next_page && !order.line_items.nodes.iter().any(Line::is_mapped) {
            // Whether it has a line to ship decides whether it is written at all.
            complete_lines(client, &mut order).await?;
            node = serde_json::to_value(&order)
                .map_err(|e| bad(&order.name, &format!("it cannot be kept ({e})")))?;
        }
        orders.push(listed(client, &order, node)?);
    }
    let next = data.orders.page_info.end_cursor.filter(|_| data.orders.page_info.has_next_page);
    let cursor = orders.iter().map(|o| o.cursor_ms).max();
    Ok(Page { orders, next, cursor, ..Page::default() })
}

fn listed(client: &Client, order: &Order, raw: Value) -> Result<ListedOrder, PlatformError> {
    let updated_ms = date_ms(&order.updated_at)
        .ok_or_else(|| bad(&order.name, &format!("its updatedAt {:?} is not a date", order.updated_at)))?;
    let disposition = if order.cancelled_at.is_some() {
        Disposition::Cancel
    } else if is_written(client, order) {
        Disposition::Import
    } else {
        Disposition::Skip
    };
    let external_id = order.legacy_resource_id.clone();
    if external_id.is_empty() || !external_id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(&order.name, "its legacyResourceId is not a number"));
    }
    Ok(ListedOrder {
        external_id,
        cursor_ms: updated_ms,
        version: updated_ms,
        disposition,
        listed: Listed::Entry(raw),
    })
}

/// Annex, *Pull*: open, to be shipped somewhere, not yet fulfilled, paid as the adapter
/// asks, and with a line to ship (a line beyond those read may be one).
fn is_written(client: &Client, order: &Order) -> bool {
    order.cancelled_at.is_none()
        && !order.closed
        && order.requires_shipping
        && order.shipping_address.is_some()
        && matches!(order.display_fulfillment_status.as_str(), "UNFULFILLED" | "PARTIALLY_FULFILLED")
        && order.display_financial_status.as_ref().is_some_and(|s| client.financial_statuses.contains(s))
        && (order.line_items.page_info.has_next_page || order.line_items.nodes.iter().any(Line::is_mapped))
}

/// Reads the lines the listing did not carry.
async fn complete_lines(client: &Client, order: &mut Order) -> Result<(), PlatformError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Data {
        order: Option<LinesOf>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct LinesOf {
        line_items: Connection<Line>,
    }
    let id = format!("gid://shopify/Order/{}", order.legacy_resource_id);
    // Bounded: Shopify pages 50 lines at a time, and no order has that many thousands.
    for _ in 0..1_000 {
        let info = &order.line_items.page_info;
        if !info.has_next_page {
            return Ok(());
        }
        let after = info.end_cursor.clone();
        let data: Data = client.send(&ORDER_LINE_ITEMS, json!({"id": id, "after": after})).await?;
        let more = data
            .order
            .ok_or_else(|| bad(&order.name, "Shopify no longer has it while its lines were read"))?
            .line_items;
        order.line_items.nodes.extend(more.nodes);
        order.line_items.page_info = more.page_info;
    }
    Err(bad(&order.name, "it has more lines than orderbridge reads"))
}

/// The whole order as an import record.
pub(super) async fn record(client: &Client, listed: &ListedOrder) -> Result<PulledOrder, PlatformError> {
    let mut order = Order::deserialize(listed.entry())
        .map_err(|e| PlatformError::BadData(format!("A listed Shopify order cannot be read again: {e}.")))?;
    complete_lines(client, &mut order).await?;
    map(&order)
}

/// The annex's Mapping.
fn map(order: &Order) -> Result<PulledOrder, PlatformError> {
    let name = order.name.as_str();
    let ordered_at = date_ms(&order.processed_at)
        .map(crate::dates::format_ms)
        .ok_or_else(|| bad(name, &format!("its processedAt {:?} is not a date", order.processed_at)))?;
    let joined = |list: &[String]| if list.is_empty() { Value::Null } else { Value::from(list.join(", ")) };
    let shipping_tax = match &order.shipping_line {
        None => Value::Null,
        Some(line) => sum(line.tax_lines.iter().map(|t| &t.price_set), name, "shippingLine.taxLines")?,
    };
    let mut items = Vec::with_capacity(order.line_items.nodes.len());
    for line in order.line_items.nodes.iter().filter(|l| l.is_mapped()) {
        let line_id = line
            .id
            .rsplit('/')
            .next()
            .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| bad(name, &format!("the line id {:?} is not a Shopify global id", line.id)))?;
        let variant = line.variant.as_ref();
        items.push(json!({
            "name": line.name,
            "sku": text(line.sku.as_deref()),
            "upc": text(variant.and_then(|v| v.barcode.as_deref())),
            "quantity": line.current_quantity,
            "unit_price": money(line.original_unit_price_set.as_ref(), name, "originalUnitPriceSet")?,
            "discount_amount": money(line.total_discount_set.as_ref(), name, "totalDiscountSet")?,
            "tax_amount": sum(line.tax_lines.iter().map(|t| &t.price_set), name, "taxLines")?,
            "weight": weight(line.weight.as_ref(), &order.shop_weight_unit, name)?,
            "external_order_item_id": line_id,
            "external_product_id": text(variant.and_then(|v| v.legacy_resource_id.as_deref())),
        }));
    }
    let record = json!({
        "external_id": order.legacy_resource_id,
        "external_display_id": order.name,
        "ordered_at": ordered_at,
        "customer_email": text(order.email.as_deref()),
        "external_billing_customer_id": null,
        "external_shipping_customer_id": null,
        "payment_type": joined(&order.payment_gateway_names),
        "currency_code": order.currency_code,
        "shipping_amount": money(order.current_shipping_price_set.as_ref(), name, "currentShippingPriceSet")?,
        "shipping_tax_amount": shipping_tax,
        "tax_amount": money(order.current_total_tax_set.as_ref(), name, "currentTotalTaxSet")?,
        "discount_amount": money(order.current_total_discounts_set.as_ref(), name, "currentTotalDiscountsSet")?,
        "notes": text(order.note.as_deref()),
        "external_tags": joined(&order.tags),
        "discount_codes": joined(&order.discount_codes),
        "purchase_order_id": text(order.po_number.as_deref()),
        "external_type": text(order.source_name.as_deref()),
        "shipping_carrier_service_level": text(order.shipping_line.as_ref().and_then(|l| l.title.as_deref())),
        "shipping_address": order.shipping_address.as_ref().map_or(Value::Null, address),
        "billing_address": order.billing_address.as_ref().map_or(Value::Null, address),
        "order_items": items,
    });
    let Value::Object(record) = record else { return Err(bad(name, "its record could not be built")) };
    Ok(PulledOrder { record, address_id: None })
}

fn bad(order: &str, problem: &str) -> PlatformError {
    PlatformError::BadData(format!("Shopify's order {order} cannot be read: {problem}."))
}

/// Text, or null when empty.
fn text(value: Option<&str>) -> Value {
    match value {
        Some(s) if !s.trim().is_empty() => Value::from(s),
        _ => Value::Null,
    }
}

fn date_ms(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc3339).ok().map(crate::dates::to_ms)
}

/// A `Decimal` as Shopify sends it (text, or a number), exactly.
fn decimal(value: &Value) -> Option<Decimal> {
    match value {
        Value::String(s) => s.trim().parse().ok(),
        Value::Number(n) => n.to_string().parse().or_else(|_| Decimal::from_scientific(&n.to_string())).ok(),
        _ => None,
    }
}

fn two_places(amount: Decimal) -> String {
    format!("{:.2}", amount.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven))
}

/// A MoneyBag's shop amount, rounded half-even to 2 places; null when absent.
fn money(bag: Option<&MoneyBag>, order: &str, field: &str) -> Result<Value, PlatformError> {
    let Some(bag) = bag else { return Ok(Value::Null) };
    let amount = decimal(&bag.shop_money.amount)
        .ok_or_else(|| bad(order, &format!("{field} {} is not an amount", bag.shop_money.amount)))?;
    Ok(Value::from(two_places(amount)))
}

/// The sum of MoneyBags' shop amounts, rounded once, at the end.
fn sum<'a>(
    bags: impl Iterator<Item = &'a MoneyBag>,
    order: &str,
    field: &str,
) -> Result<Value, PlatformError> {
    let mut total = Decimal::ZERO;
    for bag in bags {
        let amount = decimal(&bag.shop_money.amount)
            .ok_or_else(|| bad(order, &format!("{field} {} is not an amount", bag.shop_money.amount)))?;
        total = total
            .checked_add(amount)
            .ok_or_else(|| bad(order, &format!("{field} add up past any amount")))?;
    }
    Ok(Value::from(two_places(total)))
}

/// Grams in one of Shopify's weight units.
fn grams(unit: &str) -> Option<Decimal> {
    match unit {
        "GRAMS" => Some(Decimal::ONE),
        "KILOGRAMS" => Some(Decimal::from(1000)),
        "POUNDS" => "453.59237".parse().ok(),
        "OUNCES" => "28.349523125".parse().ok(),
        _ => None,
    }
}

/// A line's weight in the shop's unit, rounded half-even to 2 places.
fn weight(weight: Option<&Weight>, shop_unit: &str, order: &str) -> Result<Value, PlatformError> {
    let Some(weight) = weight else { return Ok(Value::Null) };
    let value = decimal(&weight.value)
        .ok_or_else(|| bad(order, &format!("a weight {} is not a number", weight.value)))?;
    let (from, to) = grams(&weight.unit).zip(grams(shop_unit)).ok_or_else(|| {
        bad(order, &format!("the weight units {} and {shop_unit} are not Shopify's", weight.unit))
    })?;
    let converted = value
        .checked_mul(from)
        .and_then(|g| g.checked_div(to))
        .ok_or_else(|| bad(order, "a weight is out of range"))?;
    Ok(Value::from(two_places(converted)))
}

fn address(a: &Address) -> Value {
    let region = a.province_code.as_deref().filter(|c| !c.trim().is_empty()).or(a.province.as_deref());
    let mut map = Map::new();
    for (key, value) in [
        ("first_name", a.first_name.as_deref()),
        ("last_name", a.last_name.as_deref()),
        ("street1", a.address1.as_deref()),
        ("street2", a.address2.as_deref()),
        ("city", a.city.as_deref()),
        ("region", region),
        ("postal_code", a.zip.as_deref()),
        ("country", a.country_code_v2.as_deref()),
        ("telephone", a.phone.as_deref()),
    ] {
        map.insert(key.to_string(), text(value));
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_pull_asks_for_open_orders_and_later_ones_for_changes_in_quoted_utc() {
        assert_eq!(search(None), "status:open");
        // 2026-11-25T10:15:00.999Z
        assert_eq!(search(Some(1_795_601_700_999)), "updated_at:>='2026-11-25T10:15:00Z'");
    }

    /// The annex's worked example: the two example responses become this record.
    #[test]
    fn the_worked_example_maps_as_the_annex_says() {
        let node: Value = serde_json::from_str(
            r##"{
          "id": "gid://shopify/Order/5611239014435", "legacyResourceId": "5611239014435", "name": "#1001",
          "processedAt": "2026-11-25T10:18:02Z", "updatedAt": "2026-11-25T10:20:41Z", "cancelledAt": null,
          "closed": false, "requiresShipping": true, "displayFinancialStatus": "PAID",
          "displayFulfillmentStatus": "UNFULFILLED", "email": "ana@example.com", "note": "Leave at the back door",
          "tags": ["gift", "vip"], "poNumber": null, "sourceName": "web", "discountCodes": ["WELCOME10"],
          "paymentGatewayNames": ["shopify_payments"], "currencyCode": "EUR",
          "currentShippingPriceSet": {"shopMoney": {"amount": "4.9"}},
          "currentTotalTaxSet": {"shopMoney": {"amount": "7.125"}},
          "currentTotalDiscountsSet": {"shopMoney": {"amount": "3.0"}},
          "shippingLine": {"title": "Standard", "taxLines": [{"priceSet": {"shopMoney": {"amount": "0.93"}}}]},
          "shippingAddress": {"firstName": "Ana", "lastName": "Lima", "address1": "Rua A 1", "address2": null,
                              "city": "Lisboa", "province": "Lisboa", "provinceCode": "PT-11", "zip": "1000-001",
                              "countryCodeV2": "PT", "phone": "+351210000000"},
          "billingAddress": null,
          "lineItems": {"nodes": [
              {"id": "gid://shopify/LineItem/13857458094115", "name": "Mug - Blue", "sku": "MUG-BLU",
               "currentQuantity": 2, "requiresShipping": true,
               "originalUnitPriceSet": {"shopMoney": {"amount": "12.5"}},
               "totalDiscountSet": {"shopMoney": {"amount": "0.0"}},
               "taxLines": [{"priceSet": {"shopMoney": {"amount": "5.75"}}}],
               "weight": {"unit": "GRAMS", "value": 350.0},
               "variant": {"legacyResourceId": "44311002792483", "barcode": "5601234567890"}},
              {"id": "gid://shopify/LineItem/13857458126883", "name": "Gift card", "sku": null,
               "currentQuantity": 1, "requiresShipping": false,
               "originalUnitPriceSet": {"shopMoney": {"amount": "25.0"}},
               "totalDiscountSet": {"shopMoney": {"amount": "0.0"}}, "taxLines": [], "weight": null,
               "variant": {"legacyResourceId": "44311002825251", "barcode": null}}],
            "pageInfo": {"hasNextPage": false, "endCursor": "x"}}
        }"##,
        )
        .unwrap();
        let mut order: Order = serde_json::from_value(node).unwrap();
        order.shop_weight_unit = "KILOGRAMS".into();
        let record = Value::Object(map(&order).unwrap().record);
        let expected: Value = serde_json::from_str(
            r##"{
            "external_id": "5611239014435", "external_display_id": "#1001",
            "ordered_at": "2026-11-25T10:18:02.000Z", "customer_email": "ana@example.com",
            "external_billing_customer_id": null, "external_shipping_customer_id": null,
            "payment_type": "shopify_payments", "currency_code": "EUR",
            "shipping_amount": "4.90", "shipping_tax_amount": "0.93", "tax_amount": "7.12", "discount_amount": "3.00",
            "notes": "Leave at the back door", "external_tags": "gift, vip", "discount_codes": "WELCOME10",
            "purchase_order_id": null, "external_type": "web", "shipping_carrier_service_level": "Standard",
            "shipping_address": {"first_name": "Ana", "last_name": "Lima", "street1": "Rua A 1", "street2": null,
                                 "city": "Lisboa", "region": "PT-11", "postal_code": "1000-001", "country": "PT",
                                 "telephone": "+351210000000"},
            "billing_address": null,
            "order_items": [{"name": "Mug - Blue", "sku": "MUG-BLU", "upc": "5601234567890", "quantity": 2,
                             "unit_price": "12.50", "discount_amount": "0.00", "tax_amount": "5.75", "weight": "0.35",
                             "external_order_item_id": "13857458094115", "external_product_id": "44311002792483"}]
        }"##,
        )
        .unwrap();
        assert_eq!(record, expected);
    }

    #[test]
    fn weights_convert_to_the_shop_unit_and_round_half_even() {
        let w = |unit: &str, value: Value| Weight { unit: unit.into(), value };
        let cases = [
            (w("GRAMS", json!(350.0)), "KILOGRAMS", "0.35"),
            (w("POUNDS", json!(1)), "GRAMS", "453.59"),
            (w("OUNCES", json!(16)), "POUNDS", "1.00"),
            (w("KILOGRAMS", json!(0.125)), "KILOGRAMS", "0.12"),
            (w("GRAMS", json!(5)), "GRAMS", "5.00"),
        ];
        for (weight_in, shop, expected) in cases {
            assert_eq!(weight(Some(&weight_in), shop, "#1").unwrap(), expected, "{weight_in:?} in {shop}");
        }
        let e = weight(Some(&w("STONES", json!(1))), "GRAMS", "#7").unwrap_err();
        assert!(e.message().contains("#7"), "{e}");
        let e = money(Some(&MoneyBag { shop_money: Money { amount: json!("1.x") } }), "#8", "f").unwrap_err();
        assert!(e.message().contains("#8"), "{e}");
    }

    #[test]
    fn a_sum_past_what_a_decimal_holds_is_bad_data_not_a_panic() {
        let most = MoneyBag { shop_money: Money { amount: json!("79228162514264337593543950335") } };
        let e = sum([&most, &most].into_iter(), "#9", "discounts").unwrap_err();
        assert!(e.message().contains("#9") && e.message().contains("discounts"), "{e}");
    }
}
