//! The pull (annex §5, *Pull* and *Mapping*): Orders API 2026-01-01 `searchOrders` for
//! merchant-fulfilled orders, pages followed by `nextToken` with the same filters (the
//! continuation the engine keeps holds them), which orders are written, and an order mapped
//! to an import record with no further request: items, address and money are in the list.

use std::time::Duration;

use super::wire::{self, Address, Breakdown, Item, Money, Order};
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
use crate::platforms::store::{Disposition, Listed, ListedOrder, Page, PulledOrder};

/// Orders a page holds at most.
pub const PER_PAGE: usize = 100;

/// How far back a store's first pull reads.
const FIRST_PULL_MS: i64 = 30 * 24 * 3600 * 1000;

/// How long a stopped walk's continuation is used: a `nextToken` lives 24 hours (annex
/// §5, *Pull*), and an hour less leaves room for clocks and the walk's own pages.
pub const CONTINUATION_LIFETIME: Duration = Duration::from_secs(23 * 3600);

/// The datasets every page asks for.
const INCLUDED: &str = "BUYER,RECIPIENT,PROCEEDS,FULFILLMENT";

/// The largest amount an order field holds (CONTRACT's decimal 8.2).
const MAX_AMOUNT: Decimal = Decimal::from_parts(99_999_999, 0, 0, false, 2);

/// What a walk repeats on every page (Amazon requires the same filter values), where it is,
/// and what it read so far: the engine keeps this, as text, between pages and passes.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
struct Continuation {
    after: String,
    statuses: String,
    token: String,
    /// Amazon's clock when the walk's first page was answered (its `Date`).
    #[serde(default)]
    clock: Option<i64>,
    /// The latest change read so far.
    #[serde(default)]
    reached: Option<i64>,
}

/// One page of the walk: the first from `since_ms` (none: the store's first pull), or the
/// page `at` names. The list comes in no documented order, so the cursor moves only at the
/// walk's last page: to the latest change read, but never past Amazon's clock when the
/// walk's first page was answered, so an order changed while the walk runs is read by the
/// next one; a first pull that read nothing starts from that clock.
pub async fn page(client: &Client, since_ms: Option<i64>, at: Option<&str>) -> Result<Page, PlatformError> {
    let (after_time, statuses, token, clock, reached) = match at.map(serde_json::from_str::<Continuation>) {
        Some(Ok(c)) => (c.after, c.statuses, Some(c.token), c.clock, c.reached),
        Some(Err(_)) => return Err(PlatformError::BadData("A kept Amazon walk cannot be read.".into())),
        None => match since_ms {
            Some(since) => {
                (query_time(since), "UNSHIPPED,PARTIALLY_SHIPPED,CANCELLED".to_string(), None, None, None)
            }
            None => {
                let first = crate::dates::now_ms().saturating_sub(FIRST_PULL_MS);
                (query_time(first), "UNSHIPPED,PARTIALLY_SHIPPED".to_string(), None, None, None)
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
        return Err(seller.refusal(&answer, "the order search"));
    }
    let found: wire::Page = answer.json(Operation::SearchOrders)?;
    let orders = found.orders.into_iter().map(listed).collect::<Result<Vec<_>, _>>()?;
    let clock = clock.or(answer.date);
    let reached = reached.max(orders.iter().map(|o| o.cursor_ms).max());
    let token = found.pagination.and_then(|p| p.next_token).filter(|t| !t.is_empty());
    let Some(token) = token else {
        let cursor = match reached {
            Some(reached) => Some(clock.map_or(reached, |clock| reached.min(clock))),
            None => clock.filter(|_| since_ms.is_none()),
        };
        return Ok(Page { orders, next: None, cursor, ..Page::default() });
    };
    let next = Continuation { after: after_time, statuses, token, clock, reached };
    let next = Some(serde_json::to_string(&next).unwrap_or_default());
    Ok(Page { orders, next, cursor: None, ..Page::default() })
}

fn bad(order: &str, problem: &str) -> PlatformError {
    PlatformError::BadData(format!("Amazon's order {order} cannot be read: {problem}."))
}

fn date_ms(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc3339).ok().map(crate::dates::to_ms)
}

/// Text that is there and not blank.
fn given(text: &Option<String>) -> Option<&str> {
    text.as_deref().filter(|s| !s.trim().is_empty())
}

fn text(value: Option<&str>) -> Value {
    value.map_or(Value::Null, Value::from)
}

/// A listed order: its key, its `lastUpdatedTime` (cursor and version), what the pull does
/// with it and, for an order to write, its import record made now (Amazon's list has the
/// whole order), or why it cannot be one ([`record_of`] reads it back).
fn listed(order: Order) -> Result<ListedOrder, PlatformError> {
    let id = given(&order.order_id).ok_or_else(|| bad("(no orderId)", "it has no orderId"))?.to_string();
    let updated =
        given(&order.last_updated_time).ok_or_else(|| bad(&id, "it has no lastUpdatedTime")).and_then(
            |t| date_ms(t).ok_or_else(|| bad(&id, &format!("its lastUpdatedTime {t:?} is not a date"))),
        )?;
    let disposition = disposition(&order);
    let listed = match disposition {
        Disposition::Import => Listed::Whole(record(&order)),
        Disposition::Cancel | Disposition::Skip => Listed::Entry(Value::Null),
    };
    Ok(ListedOrder { external_id: id, cursor_ms: updated, version: updated, disposition, listed })
}

/// What the pull does with an order, by its `fulfillment` block (annex §5, *Pull*).
pub fn disposition(order: &Order) -> Disposition {
    let Some(fulfillment) = &order.fulfillment else { return Disposition::Skip };
    if given(&fulfillment.fulfilled_by) != Some("MERCHANT") {
        return Disposition::Skip;
    }
    match given(&fulfillment.fulfillment_status) {
        Some("UNSHIPPED" | "PARTIALLY_SHIPPED") => {
            let pick_up = order.programs.iter().flatten().any(|p| p == "IN_STORE_PICK_UP");
            let units = items(order).iter().any(|i| i.quantity_ordered.unwrap_or(0) > 0);
            if pick_up || !units { Disposition::Skip } else { Disposition::Import }
        }
        Some("CANCELLED") => Disposition::Cancel,
        _ => Disposition::Skip,
    }
}

fn items(order: &Order) -> &[Item] {
    order.order_items.as_deref().unwrap_or_default()
}

/// Amounts of one order: read exactly, one currency, in range.
struct Amounts<'a> {
    order: &'a str,
    currency: Option<String>,
}

impl Amounts<'_> {
    /// A `Money`'s amount (absolute when `absolute`), checked; `None` when absent.
    fn read(
        &mut self,
        money: Option<&Money>,
        field: &str,
        absolute: bool,
    ) -> Result<Option<Decimal>, PlatformError> {
        let Some(money) = money else { return Ok(None) };
        let amount: Decimal = match &money.amount {
            Some(Value::String(text)) => text.trim().parse().ok(),
            _ => None,
        }
        .ok_or_else(|| {
            let sent = money.amount.as_ref().map_or_else(|| "nothing".to_string(), Value::to_string);
            bad(self.order, &format!("{field} {sent} is not a decimal amount"))
        })?;
        if let Some(code) = given(&money.currency_code) {
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
        Ok(Some(if absolute { amount.abs() } else { amount }))
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

/// The breakdown of `kind` in a `breakdowns` list.
fn breakdown<'a>(breakdowns: &'a Option<Vec<Breakdown>>, kind: &str) -> Option<&'a Breakdown> {
    breakdowns.as_ref()?.iter().find(|b| b.kind.as_deref() == Some(kind))
}

/// The detail of `subtype` in a breakdown.
fn detail<'a>(breakdown: &'a Breakdown, subtype: &str) -> Option<&'a Money> {
    breakdown
        .detailed_breakdowns
        .as_ref()?
        .iter()
        .find(|d| d.subtype.as_deref() == Some(subtype))?
        .value
        .as_ref()
}

/// An item's amount of a breakdown: its `ITEM` detail, else the whole subtotal.
fn item_part(breakdown: Option<&Breakdown>) -> Option<&Money> {
    let breakdown = breakdown?;
    detail(breakdown, "ITEM").or(breakdown.subtotal.as_ref())
}

/// The whole order as an import record (CONTRACT §9, without `store_id`).
pub fn record(order: &Order) -> Result<PulledOrder, PlatformError> {
    let id = given(&order.order_id).unwrap_or("(no orderId)");
    let created = given(&order.created_time).ok_or_else(|| bad(id, "it has no createdTime"))?;
    let created_ms =
        date_ms(created).ok_or_else(|| bad(id, &format!("its createdTime {created:?} is not a date")))?;
    let recipient = order.recipient.as_ref();
    let address = recipient.and_then(|r| r.delivery_address.as_ref());
    if address.and_then(|a| given(&a.address_line1)).is_none() {
        return Err(PlatformError::Refused(format!(
            "Amazon sent no shipping address for order {id}: the application needs the Direct-to-Consumer Delivery (Restricted) role"
        )));
    }
    let mut money = Amounts { order: id, currency: None };
    let programs: Vec<&str> = order.programs.iter().flatten().map(String::as_str).collect();
    let mut lines = Vec::with_capacity(items(order).len());
    let mut gift_messages: Vec<&str> = Vec::new();
    let mut shipping_tax = Decimal::ZERO;
    let mut signature = false;
    for item in items(order) {
        let quantity = item.quantity_ordered.unwrap_or(0);
        let none = None;
        let breakdowns = item.proceeds.as_ref().map_or(&none, |p| &p.breakdowns);
        let tax = breakdown(breakdowns, "TAX");
        if let Some(amount) =
            money.read(tax.and_then(|t| detail(t, "SHIPPING")), "an item's shipping tax", false)?
        {
            shipping_tax = shipping_tax
                .checked_add(amount)
                .ok_or_else(|| bad(id, "its items' shipping tax adds up beyond any amount"))?;
        }
        if quantity <= 0 {
            continue;
        }
        let item_id = given(&item.order_item_id).ok_or_else(|| bad(id, "an item has no orderItemId"))?;
        let tax_amount = money.read(item_part(tax), "an item's tax", false)?;
        let discount =
            money.read(item_part(breakdown(breakdowns, "DISCOUNT")), "an item's discount", true)?;
        let product = item.product.as_ref();
        let unit_price = money.read(
            product.and_then(|p| p.price.as_ref()).and_then(|p| p.unit_price.as_ref()),
            "an item's unitPrice",
            false,
        )?;
        let fulfillment = item.fulfillment.as_ref();
        let gift = fulfillment.and_then(|f| f.packing.as_ref()).and_then(|p| p.gift_option.as_ref());
        let message = gift.and_then(|g| given(&g.gift_message));
        if let Some(message) = message
            && !gift_messages.contains(&message)
        {
            gift_messages.push(message);
        }
        let constraint = fulfillment
            .and_then(|f| f.shipping.as_ref())
            .and_then(|s| s.shipping_constraints.as_ref())
            .and_then(|c| given(&c.signature_confirmation));
        signature |= constraint == Some("MANDATORY");
        let mut line = Map::with_capacity(12);
        line.insert("name".into(), text(product.and_then(|p| given(&p.title))));
        line.insert("sku".into(), text(product.and_then(|p| given(&p.seller_sku))));
        line.insert("quantity".into(), Value::from(quantity));
        let price = match unit_price {
            Some(p) => money.two_places(p, "an item's unitPrice")?,
            None => Value::Null,
        };
        line.insert("unit_price".into(), price);
        line.insert("tax_amount".into(), money.two_places(tax_amount.unwrap_or_default(), "an item's tax")?);
        line.insert(
            "discount_amount".into(),
            money.two_places(discount.unwrap_or_default(), "an item's discount")?,
        );
        line.insert("gift_wrap".into(), Value::Bool(gift.and_then(|g| given(&g.gift_wrap_level)).is_some()));
        line.insert("custom".into(), json!({"gift_message": message}));
        line.insert("upc".into(), Value::Null);
        line.insert("weight".into(), Value::Null);
        line.insert("external_order_item_id".into(), Value::from(item_id));
        line.insert("external_product_id".into(), text(product.and_then(|p| given(&p.asin))));
        lines.push(Value::Object(line));
    }
    let channel = order.sales_channel.as_ref();
    let buyer = order.buyer.as_ref();
    let fulfillment = order.fulfillment.as_ref();
    let ship_by = fulfillment
        .and_then(|f| f.ship_by_window.as_ref())
        .and_then(|w| given(&w.latest_date_time))
        .and_then(date_ms);
    let mut record = Map::with_capacity(32);
    let mut put = |key: &str, value: Value| {
        record.insert(key.to_string(), value);
    };
    put("external_id", Value::from(id));
    put("external_display_id", Value::from(id));
    put("ordered_at", Value::from(crate::dates::format_ms(created_ms)));
    put("requested_ship_date", ship_by.map_or(Value::Null, |ms| Value::from(crate::dates::format_ms(ms))));
    put("customer_email", text(buyer.and_then(|b| given(&b.buyer_email))));
    for absent in
        ["external_billing_customer_id", "external_shipping_customer_id", "payment_type", "payment_date"]
    {
        put(absent, Value::Null);
    }
    put(
        "external_type",
        text(
            channel.and_then(|c| given(&c.marketplace_name)).or(channel.and_then(|c| given(&c.channel_name))),
        ),
    );
    put("external_source_id", text(channel.and_then(|c| given(&c.marketplace_id))));
    put("external_tags", if programs.is_empty() { Value::Null } else { Value::from(programs.join(", ")) });
    put("purchase_order_id", text(buyer.and_then(|b| given(&b.buyer_purchase_order_number))));
    put(
        "shipping_carrier_service_level",
        text(fulfillment.and_then(|f| given(&f.fulfillment_service_level))),
    );
    put("signature_required", Value::Bool(signature));
    put(
        "shipping_notes",
        text(
            recipient
                .and_then(|r| r.delivery_preference.as_ref())
                .and_then(|p| given(&p.address_instruction)),
        ),
    );
    put(
        "gift_message",
        if gift_messages.is_empty() { Value::Null } else { Value::from(gift_messages.join("\n")) },
    );
    put("billing_address", Value::Null);
    put("shipping_address", address.map_or(Value::Null, shipping_address));
    put("order_items", Value::Array(lines));
    if let Some(proceeds) = &order.proceeds {
        let grand = money.read(proceeds.grand_total.as_ref(), "proceeds.grandTotal", false)?;
        let mut amount = |kind: &str, field: &str, absolute: bool| -> Result<Value, PlatformError> {
            let value = breakdown(&proceeds.breakdowns, kind).and_then(|b| b.subtotal.as_ref());
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
        let currency = proceeds.grand_total.as_ref().and_then(|g| given(&g.currency_code));
        put("currency_code", text(currency));
        put("shipping_amount", shipping);
        put("tax_amount", tax);
        put("discount_amount", discount);
        put("shipping_tax_amount", shipping_tax);
    }
    Ok(PulledOrder { record, address_id: None })
}

/// `recipient.deliveryAddress` as orderbridge's address.
fn shipping_address(a: &Address) -> Value {
    let name = given(&a.name).map(str::trim);
    let (first, last) = match name.and_then(|n| n.rsplit_once(' ')) {
        Some((first, last)) => (Some(first.trim()), Some(last)),
        None => (None, name),
    };
    let street2: Vec<&str> = [&a.address_line2, &a.address_line3].into_iter().filter_map(given).collect();
    let street2 = street2.join(", ");
    let mut map = Map::with_capacity(9);
    let mut put = |key: &str, value: Option<&str>| {
        map.insert(key.into(), value.filter(|v| !v.trim().is_empty()).map_or(Value::Null, Value::from));
    };
    put("first_name", first);
    put("last_name", last);
    put("street1", given(&a.address_line1));
    put("street2", Some(street2.as_str()));
    put("city", given(&a.city).or(given(&a.municipality)));
    put("region", given(&a.state_or_region));
    put("postal_code", given(&a.postal_code));
    put("country", given(&a.country_code));
    put("telephone", given(&a.phone));
    Value::Object(map)
}

#[cfg(test)]
#[path = "orders_tests.rs"]
mod tests;
