//! The pull (annex §5, *Pull* and *Mapping*): Orders API 2026-01-01 `searchOrders` for
//! merchant-fulfilled orders, pages followed by `nextToken` with the same filters (the
//! continuation the engine keeps holds them), which orders are written, and an order mapped
//! to an import record with no further request: items, address and money are in the list.

use reqwest::{Method, StatusCode};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::Client;
use super::pacing::Operation;
use super::transport::{encode, query_time};
use crate::platforms::PlatformError;
use crate::platforms::store::{Disposition, ListedOrder, PulledOrder, TokenPage};

/// Orders a page holds at most.
pub const PER_PAGE: usize = 100;

/// How far back a store's first pull reads.
const FIRST_PULL_MS: i64 = 30 * 24 * 3600 * 1000;

/// The datasets every page asks for.
const INCLUDED: &str = "BUYER,RECIPIENT,PROCEEDS,FULFILLMENT";

/// The largest amount an order field holds (CONTRACT's decimal 8.2).
const MAX_AMOUNT: Decimal = Decimal::from_parts(99_999_999, 0, 0, false, 2);

/// What a walk repeats on every page (Amazon requires the same filter values), and where
/// it is: the engine keeps this, as text, between pages and passes.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
struct Continuation {
    after: String,
    statuses: String,
    token: String,
}

/// One page of the walk: the first from `since_ms` (none: the store's first pull), or the
/// page `after` names.
pub async fn page(
    client: &Client,
    since_ms: Option<i64>,
    after: Option<String>,
) -> Result<TokenPage, PlatformError> {
    let (after_time, statuses, token) = match after.as_deref().map(serde_json::from_str::<Continuation>) {
        Some(Ok(c)) => (c.after, c.statuses, Some(c.token)),
        Some(Err(_)) => return Err(PlatformError::BadData("A kept Amazon walk cannot be read.".into())),
        None => match since_ms {
            Some(since) => (query_time(since), "UNSHIPPED,PARTIALLY_SHIPPED,CANCELLED".to_string(), None),
            None => {
                let first = crate::dates::now_ms().saturating_sub(FIRST_PULL_MS);
                (query_time(first), "UNSHIPPED,PARTIALLY_SHIPPED".to_string(), None)
            }
        },
    };
    let seller = &client.seller;
    let mut target = format!(
        "/orders/2026-01-01/orders?lastUpdatedAfter={}&marketplaceIds={}&fulfilledBy=MERCHANT&fulfillmentStatuses={statuses}&maxResultsPerPage={PER_PAGE}&includedData={INCLUDED}",
        encode(&after_time),
        seller.marketplaces(),
    );
    if let Some(token) = &token {
        target.push_str(&format!("&paginationToken={}", encode(token)));
    }
    let answer = seller.call(Operation::SearchOrders, Method::GET, &target, None).await?;
    if answer.status != StatusCode::OK {
        return Err(seller.refusal(answer.status, &answer.body, "the order search"));
    }
    #[derive(Deserialize)]
    struct Found {
        orders: Vec<Value>,
        #[serde(default)]
        pagination: Option<Pagination>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Pagination {
        #[serde(default)]
        next_token: Option<String>,
    }
    let found: Found = answer.json(Operation::SearchOrders)?;
    let orders = found.orders.into_iter().map(listed).collect::<Result<Vec<_>, _>>()?;
    let next = found.pagination.and_then(|p| p.next_token).filter(|t| !t.is_empty()).map(|token| {
        serde_json::to_string(&Continuation { after: after_time, statuses, token }).unwrap_or_default()
    });
    Ok(TokenPage { orders, next, clock: answer.date })
}

fn bad(order: &str, problem: &str) -> PlatformError {
    PlatformError::BadData(format!("Amazon's order {order} cannot be read: {problem}."))
}

/// The value at `path` (`/a/b`): as `Value::pointer` without its unescaping, which allocates
/// for every segment (a fifth of the mapping's time).
fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('/').skip(1).try_fold(v, |v, key| v.get(key))
}

fn str_at<'a>(v: &'a Value, path: &str) -> Option<&'a str> {
    at(v, path).and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

fn date_ms(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc3339).ok().map(crate::dates::to_ms)
}

/// A listed order: its key, its `lastUpdatedTime` (cursor and version) and what the pull
/// does with it.
fn listed(order: Value) -> Result<ListedOrder, PlatformError> {
    let id = str_at(&order, "/orderId").ok_or_else(|| bad("(no orderId)", "it has no orderId"))?.to_string();
    let updated =
        str_at(&order, "/lastUpdatedTime").ok_or_else(|| bad(&id, "it has no lastUpdatedTime")).and_then(
            |t| date_ms(t).ok_or_else(|| bad(&id, &format!("its lastUpdatedTime {t:?} is not a date"))),
        )?;
    Ok(ListedOrder {
        external_id: id,
        cursor_ms: updated,
        version: updated,
        disposition: disposition(&order),
        raw: order,
    })
}

/// What the pull does with an order, by its `fulfillment` block (annex §5, *Pull*).
pub fn disposition(order: &Value) -> Disposition {
    if str_at(order, "/fulfillment/fulfilledBy") != Some("MERCHANT") {
        return Disposition::Skip;
    }
    match str_at(order, "/fulfillment/fulfillmentStatus") {
        Some("UNSHIPPED" | "PARTIALLY_SHIPPED") => {
            let pick_up = order
                .get("programs")
                .and_then(Value::as_array)
                .is_some_and(|p| p.iter().any(|p| p.as_str() == Some("IN_STORE_PICK_UP")));
            let units = items(order)
                .iter()
                .any(|i| i.get("quantityOrdered").and_then(Value::as_i64).unwrap_or(0) > 0);
            if pick_up || !units { Disposition::Skip } else { Disposition::Import }
        }
        Some("CANCELLED") => Disposition::Cancel,
        _ => Disposition::Skip,
    }
}

fn items(order: &Value) -> &[Value] {
    order.get("orderItems").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Amounts of one order: read exactly, one currency, in range.
struct Money<'a> {
    order: &'a str,
    currency: Option<String>,
}

impl Money<'_> {
    /// A `Money` object's amount (absolute when `absolute`), checked; `None` when absent.
    fn read(
        &mut self,
        money: Option<&Value>,
        field: &str,
        absolute: bool,
    ) -> Result<Option<Decimal>, PlatformError> {
        let Some(money) = money.filter(|m| !m.is_null()) else { return Ok(None) };
        let text = money.get("amount").and_then(Value::as_str).unwrap_or_default();
        let amount: Decimal = text
            .trim()
            .parse()
            .map_err(|_| bad(self.order, &format!("{field} {text:?} is not a decimal amount")))?;
        if let Some(code) = money.get("currencyCode").and_then(Value::as_str) {
            match &self.currency {
                Some(seen) if seen != code => {
                    return Err(bad(
                        self.order,
                        &format!("its amounts are in more than one currency ({seen}, {code})"),
                    ));
                }
                Some(_) => {}
                None => self.currency = Some(code.to_string()),
            }
        }
        let amount = if absolute { amount.abs() } else { amount };
        Ok(Some(amount))
    }

    /// Rounded half-even to 2 places, within decimal 8.2, as text.
    fn two_places(&self, amount: Decimal, field: &str) -> Result<Value, PlatformError> {
        let rounded = amount.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven);
        if rounded.abs() > MAX_AMOUNT {
            return Err(bad(self.order, &format!("{field} {amount} is beyond 999,999.99")));
        }
        Ok(Value::from(format!("{rounded:.2}")))
    }
}

/// A breakdown of `type` in a `breakdowns` list.
fn breakdown<'a>(proceeds: &'a Value, kind: &str) -> Option<&'a Value> {
    proceeds
        .get("breakdowns")?
        .as_array()?
        .iter()
        .find(|b| b.get("type").and_then(Value::as_str) == Some(kind))
}

/// The detail of `subtype` in a breakdown.
fn detail<'a>(breakdown: &'a Value, subtype: &str) -> Option<&'a Value> {
    breakdown
        .get("detailedBreakdowns")?
        .as_array()?
        .iter()
        .find(|d| d.get("subtype").and_then(Value::as_str) == Some(subtype))
        .and_then(|d| d.get("value"))
}

/// The whole order as an import record (CONTRACT §9, without `store_id`).
pub fn record(order: &Value) -> Result<PulledOrder, PlatformError> {
    let id = str_at(order, "/orderId").unwrap_or("(no orderId)");
    let created = str_at(order, "/createdTime").ok_or_else(|| bad(id, "it has no createdTime"))?;
    let created_ms =
        date_ms(created).ok_or_else(|| bad(id, &format!("its createdTime {created:?} is not a date")))?;
    if str_at(order, "/recipient/deliveryAddress/addressLine1").is_none() {
        return Err(PlatformError::Refused(format!(
            "Amazon sent no shipping address for order {id}: the application needs the Direct-to-Consumer Delivery (Restricted) role"
        )));
    }
    let mut money = Money { order: id, currency: None };
    let text = |pointer: &str| str_at(order, pointer).map_or(Value::Null, Value::from);
    let programs: Vec<&str> = order
        .get("programs")
        .and_then(Value::as_array)
        .map(|p| p.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut lines = Vec::new();
    let mut gift_messages: Vec<String> = Vec::new();
    let mut shipping_tax = Decimal::ZERO;
    let mut signature = false;
    for item in items(order) {
        let quantity = item.get("quantityOrdered").and_then(Value::as_i64).unwrap_or(0);
        let proceeds = item.get("proceeds").unwrap_or(&Value::Null);
        let tax = breakdown(proceeds, "TAX");
        if let Some(tax) = tax
            && let Some(amount) = money.read(detail(tax, "SHIPPING"), "an item's shipping tax", false)?
        {
            shipping_tax += amount;
        }
        if quantity <= 0 {
            continue;
        }
        let item_id = str_at(item, "/orderItemId").ok_or_else(|| bad(id, "an item has no orderItemId"))?;
        let tax_amount = match tax {
            Some(tax) => match detail(tax, "ITEM") {
                Some(value) => money.read(Some(value), "an item's tax", false)?,
                None => money.read(tax.get("subtotal"), "an item's tax", false)?,
            },
            None => None,
        };
        let discount = match breakdown(proceeds, "DISCOUNT") {
            Some(d) => match detail(d, "ITEM") {
                Some(value) => money.read(Some(value), "an item's discount", true)?,
                None => money.read(d.get("subtotal"), "an item's discount", true)?,
            },
            None => None,
        };
        let unit_price = money.read(at(item, "/product/price/unitPrice"), "an item's unitPrice", false)?;
        let gift = str_at(item, "/fulfillment/packing/giftOption/giftMessage");
        if let Some(message) = gift
            && !gift_messages.iter().any(|m| m == message)
        {
            gift_messages.push(message.to_string());
        }
        signature |= str_at(item, "/fulfillment/shipping/shippingConstraints/signatureConfirmation")
            == Some("MANDATORY");
        let field = |v: Option<Decimal>, name: &str| money.two_places(v.unwrap_or(Decimal::ZERO), name);
        lines.push(json!({
            "name": str_at(item, "/product/title"),
            "sku": str_at(item, "/product/sellerSku"),
            "quantity": quantity,
            "unit_price": match unit_price { Some(p) => money.two_places(p, "an item's unitPrice")?, None => Value::Null },
            "tax_amount": field(tax_amount, "an item's tax")?,
            "discount_amount": field(discount, "an item's discount")?,
            "gift_wrap": str_at(item, "/fulfillment/packing/giftOption/giftWrapLevel").is_some(),
            "custom": gift.map_or(Value::Null, |m| json!({"gift_message": m})),
            "upc": null,
            "weight": null,
            "external_order_item_id": item_id,
            "external_product_id": str_at(item, "/product/asin"),
        }));
    }
    let mut record = json!({
        "external_id": id,
        "external_display_id": id,
        "ordered_at": crate::dates::format_ms(created_ms),
        "requested_ship_date": str_at(order, "/fulfillment/shipByWindow/latestDateTime")
            .and_then(date_ms).map_or(Value::Null, |ms| Value::from(crate::dates::format_ms(ms))),
        "customer_email": text("/buyer/buyerEmail"),
        "external_billing_customer_id": null,
        "external_shipping_customer_id": null,
        "payment_type": null,
        "payment_date": null,
        "external_type": str_at(order, "/salesChannel/marketplaceName").or(str_at(order, "/salesChannel/channelName")),
        "external_source_id": text("/salesChannel/marketplaceId"),
        "external_tags": if programs.is_empty() { Value::Null } else { Value::from(programs.join(", ")) },
        "purchase_order_id": text("/buyer/buyerPurchaseOrderNumber"),
        "shipping_carrier_service_level": text("/fulfillment/fulfillmentServiceLevel"),
        "signature_required": signature,
        "shipping_notes": text("/recipient/deliveryPreference/addressInstruction"),
        "gift_message": if gift_messages.is_empty() { Value::Null } else { Value::from(gift_messages.join("\n")) },
        "billing_address": null,
        "shipping_address": address(at(order, "/recipient/deliveryAddress").unwrap_or(&Value::Null)),
        "order_items": lines,
    });
    if let Some(proceeds) = order.get("proceeds").filter(|p| !p.is_null()) {
        let grand = money.read(proceeds.get("grandTotal"), "proceeds.grandTotal", false)?;
        let mut amount = |kind: &str, field: &str, absolute: bool| -> Result<Value, PlatformError> {
            let value = breakdown(proceeds, kind).and_then(|b| b.get("subtotal"));
            let amount = money.read(value, field, absolute)?.unwrap_or(Decimal::ZERO);
            money.two_places(amount, field)
        };
        let shipping = amount("SHIPPING", "the SHIPPING breakdown", false)?;
        let tax = amount("TAX", "the TAX breakdown", false)?;
        let discount = amount("DISCOUNT", "the DISCOUNT breakdown", true)?;
        let shipping_tax = money.two_places(shipping_tax, "the items' shipping tax")?;
        if let Some(grand) = grand {
            money.two_places(grand, "proceeds.grandTotal")?;
        }
        let currency = at(proceeds, "/grandTotal/currencyCode").and_then(Value::as_str).map(str::to_string);
        let map = record.as_object_mut().ok_or_else(|| bad(id, "its record could not be built"))?;
        map.insert("currency_code".into(), currency.map_or(Value::Null, Value::from));
        map.insert("shipping_amount".into(), shipping);
        map.insert("tax_amount".into(), tax);
        map.insert("discount_amount".into(), discount);
        map.insert("shipping_tax_amount".into(), shipping_tax);
    }
    let Value::Object(record) = record else { return Err(bad(id, "its record could not be built")) };
    Ok(PulledOrder { record, address_id: None })
}

/// `recipient.deliveryAddress` as orderbridge's address.
fn address(a: &Value) -> Value {
    let name = str_at(a, "/name").map(str::trim);
    let (first, last) = match name.and_then(|n| n.rsplit_once(' ')) {
        Some((first, last)) => (Some(first.trim()), Some(last)),
        None => (None, name),
    };
    let street2: Vec<&str> = ["/addressLine2", "/addressLine3"].iter().filter_map(|p| str_at(a, p)).collect();
    let mut map = Map::new();
    let mut put = |key: &str, value: Option<&str>| {
        map.insert(key.into(), value.filter(|v| !v.trim().is_empty()).map_or(Value::Null, Value::from));
    };
    put("first_name", first);
    put("last_name", last);
    put("street1", str_at(a, "/addressLine1"));
    let joined = street2.join(", ");
    put("street2", Some(joined.as_str()));
    put("city", str_at(a, "/city").or(str_at(a, "/municipality")));
    put("region", str_at(a, "/stateOrRegion"));
    put("postal_code", str_at(a, "/postalCode"));
    put("country", str_at(a, "/countryCode"));
    put("telephone", str_at(a, "/phone"));
    Value::Object(map)
}

#[cfg(test)]
#[path = "orders_tests.rs"]
mod tests;
