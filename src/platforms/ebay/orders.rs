//! The pull (annex §5, *Pull* and *Mapping*): one `getOrders` walk over a closed
//! `lastmodifieddate` window, its pages read last page first after the first answer, which
//! orders are written, and an order mapped to an import record with no further request (the
//! list carries items, address and money).
//!
//! The walk's state travels between pages as the page's `next` (never kept between passes:
//! a walk that stops starts again from the cursor at the next pass), and the cursor moves to
//! the window's end `B` only with the walk's last page.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::Client;
use super::transport::{Quota, Seller};
use super::wire::{self, Amount, Order};
use crate::dates::{format_ms, now_ms};
use crate::platforms::PlatformError;
use crate::platforms::store::{Disposition, Listed, ListedOrder, Page, PulledOrder};

/// Orders a page holds.
pub const LIMIT: u64 = 200;

const MINUTE_MS: i64 = 60 * 1000;
const DAY_MS: i64 = 24 * 60 * MINUTE_MS;

/// How far back a store's first pull reads.
const FIRST_PULL_MS: i64 = 30 * DAY_MS;

/// The window ends this long before the walk starts (eBay refuses an end in its future).
const END_MARGIN_MS: i64 = 2 * MINUTE_MS;

/// The longest window eBay takes: its orders go back two years.
const LONGEST_WINDOW_MS: i64 = 729 * DAY_MS;

/// How often a walk starts again because eBay's total grew (its index lagging) in one pass.
const MAX_RESTARTS: u32 = 2;

/// The largest amount an order field holds (CONTRACT's decimal 8.2).
const MAX_AMOUNT: Decimal = Decimal::from_parts(99_999_999, 0, 0, false, 2);

/// A walk as it stands between pages: its window, the total of its first answer and the
/// offset read next (`None`: the first answer is still to come).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
struct Walk {
    from: i64,
    to: i64,
    total: Option<u64>,
    offset: u64,
    restarts: u32,
    /// The window's end was set from eBay's clock after a 30850.
    redated: bool,
}

impl Walk {
    fn start(since_ms: Option<i64>, now: i64) -> Walk {
        let to = now - END_MARGIN_MS;
        let from = since_ms.unwrap_or(now - FIRST_PULL_MS).max(to - LONGEST_WINDOW_MS);
        Walk { from, to, total: None, offset: 0, restarts: 0, redated: false }
    }

    /// `lastmodifieddate:[A..B],orderfulfillmentstatus:{NOT_STARTED|IN_PROGRESS}`, encoded.
    fn target(&self) -> String {
        let filter = format!(
            "lastmodifieddate:[{}..{}],orderfulfillmentstatus:{{NOT_STARTED|IN_PROGRESS}}",
            format_ms(self.from),
            format_ms(self.to)
        );
        let filter = super::transport::encode(&filter);
        format!("/sell/fulfillment/v1/order?filter={filter}&limit={LIMIT}&offset={}", self.offset)
    }

    /// Back to the first answer, the window kept.
    fn again(&mut self) {
        self.total = None;
        self.offset = 0;
    }
}

/// One page of the walk (see the module doc): the first from `since_ms` (none: the store's
/// first pull), or the one `at` names. Pages eBay answers empty are passed over, so a page
/// the engine gets has orders unless it is the walk's last.
pub async fn page(client: &Client, since_ms: Option<i64>, at: Option<&str>) -> Result<Page, PlatformError> {
    let seller = &client.seller;
    let mut walk = match at {
        Some(text) => serde_json::from_str::<Walk>(text)
            .map_err(|_| PlatformError::BadData("An eBay walk in progress cannot be read.".into()))?,
        None => Walk::start(since_ms, now_ms()),
    };
    let mut page = Page::default();
    loop {
        let answer =
            seller.call(Quota::Fulfillment, reqwest::Method::GET, &walk.target(), None, "getOrders").await?;
        if answer.status == reqwest::StatusCode::BAD_REQUEST
            && Seller::has_error(&answer, 30850)
            && !walk.redated
        {
            // eBay's clock is behind ours: the window ends by its clock, once.
            let clock = answer.date_ms().unwrap_or_else(now_ms);
            walk.to = walk.to.min(clock - END_MARGIN_MS);
            walk.from = walk.from.min(walk.to);
            walk.redated = true;
            walk.again();
            continue;
        }
        if !answer.status.is_success() {
            return Err(seller.api(Quota::Fulfillment).rejected(
                &answer,
                "getOrders",
                &seller.reason(&answer.body),
            ));
        }
        let read: wire::OrderPage = seller.api(Quota::Fulfillment).decode(&answer.body, "getOrders")?;
        let total = read
            .total
            .ok_or_else(|| PlatformError::BadData("eBay answered getOrders without its total.".into()))?;
        let finished = match walk.total {
            Some(first) if total > first => {
                // An order entered a closed window (eBay's index lagging): from the start.
                walk.restarts += 1;
                if walk.restarts > MAX_RESTARTS {
                    return Err(PlatformError::NotYet(
                        "eBay's order count grew during the walk three times (its index lagging); the walk starts again at the next pass".into(),
                    ));
                }
                walk.again();
                continue;
            }
            // The first answer: the walk ends with it, or reads the rest from the last page.
            None if total <= LIMIT => true,
            None => {
                walk.total = Some(total);
                walk.offset = LIMIT * (total.div_ceil(LIMIT) - 1);
                false
            }
            // Page 0 read again: the walk's last.
            Some(_) if walk.offset == 0 => true,
            Some(_) => {
                walk.offset -= LIMIT;
                false
            }
        };
        listed(seller, read.orders, &mut page)?;
        if finished {
            page.cursor = Some(walk.to);
            page.next = None;
            return Ok(page);
        }
        if !page.orders.is_empty() || !page.remarks.is_empty() {
            page.next = Some(serde_json::to_string(&walk).unwrap_or_default());
            return Ok(page);
        }
    }
}

/// Adds an answer's orders to `page`: each with what the pull does with it and, for an order
/// to write, its record; an order to write without an address is left out and named. An
/// order that cannot be read fails the page.
fn listed(seller: &Seller, orders: Vec<Order>, page: &mut Page) -> Result<(), PlatformError> {
    for order in orders {
        let id = given(&order.order_id).ok_or_else(|| bad("(no orderId)", "it has no orderId"))?.to_string();
        let modified = date_of(&id, &order.last_modified_date, "lastModifiedDate")?;
        date_of(&id, &order.creation_date, "creationDate")?;
        let mut disposition = disposition(&order, seller.marketplace_id.as_deref());
        let listed = match disposition {
            Disposition::Import
                if ship_to(&order)
                    .and_then(|t| t.contact_address.as_ref())
                    .and_then(|a| given(&a.address_line1))
                    .is_none() =>
            {
                page.remarks.push((id.clone(), format!("eBay sent no shipping address for order {id} (eBay drops the addresses of orders over 90 days old); it is not written")));
                disposition = Disposition::Skip;
                Listed::Entry(Value::Null)
            }
            Disposition::Import => Listed::Whole(Ok(record(&id, &order)?)),
            Disposition::Cancel | Disposition::Skip => Listed::Entry(Value::Null),
        };
        page.orders.push(ListedOrder {
            external_id: id,
            cursor_ms: modified,
            version: modified,
            disposition,
            listed,
        });
    }
    Ok(())
}

fn bad(order: &str, problem: &str) -> PlatformError {
    PlatformError::BadData(format!("eBay's order {order} cannot be read: {problem}."))
}

/// Text that is there and not blank.
fn given(text: &Option<String>) -> Option<&str> {
    text.as_deref().filter(|s| !s.trim().is_empty())
}

fn date_ms(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc3339).ok().map(crate::dates::to_ms)
}

fn date_of(id: &str, text: &Option<String>, field: &str) -> Result<i64, PlatformError> {
    let text = given(text).ok_or_else(|| bad(id, &format!("it has no {field}")))?;
    date_ms(text).ok_or_else(|| bad(id, &format!("its {field} {text:?} is not a date")))
}

/// `fulfillmentStartInstructions[0]`.
fn instruction(order: &Order) -> Option<&wire::Instruction> {
    order.fulfillment_start_instructions.first()
}

fn ship_to(order: &Order) -> Option<&wire::ShipTo> {
    instruction(order)?.shipping_step.as_ref()?.ship_to.as_ref()
}

/// What the pull does with an order (annex §5, *Pull*, its rules in their order).
pub fn disposition(order: &Order, marketplace: Option<&str>) -> Disposition {
    let cancel =
        order.cancel_status.as_ref().and_then(|c| given(&c.cancel_state)).unwrap_or("NONE_REQUESTED");
    let payment = given(&order.order_payment_status).unwrap_or("");
    if cancel == "CANCELED" || payment == "FULLY_REFUNDED" {
        return Disposition::Cancel;
    }
    let first = order.line_items.first();
    if let Some(marketplace) = marketplace
        && first.and_then(|l| given(&l.listing_marketplace_id)) != Some(marketplace)
    {
        return Disposition::Skip;
    }
    let by_ebay = order
        .program
        .as_ref()
        .and_then(|p| p.get("fulfillmentProgram"))
        .and_then(|f| f.get("fulfilledBy"))
        .and_then(Value::as_str)
        == Some("EBAY");
    let ships = instruction(order).and_then(|i| given(&i.fulfillment_instructions_type)) == Some("SHIP_TO");
    let open = order
        .line_items
        .iter()
        .any(|l| l.quantity.unwrap_or(0) > 0 && given(&l.line_item_fulfillment_status) != Some("FULFILLED"));
    let skip = cancel != "NONE_REQUESTED"
        || !matches!(payment, "PAID" | "PARTIALLY_REFUNDED")
        || given(&order.order_fulfillment_status) == Some("FULFILLED")
        || !ships
        || by_ebay
        || !open;
    if skip { Disposition::Skip } else { Disposition::Import }
}

/// Amounts of one order: read exactly, one currency, in range.
struct Amounts<'a> {
    order: &'a str,
    currency: Option<&'a str>,
}

impl<'a> Amounts<'a> {
    /// An `Amount`'s value (absolute when `absolute`); `None` when absent.
    fn read(
        &mut self,
        amount: Option<&'a Amount>,
        field: &str,
        absolute: bool,
    ) -> Result<Option<Decimal>, PlatformError> {
        let Some(amount) = amount else { return Ok(None) };
        let value: Decimal = match &amount.value {
            Some(Value::String(text)) => text.trim().parse().ok(),
            _ => None,
        }
        .ok_or_else(|| {
            let sent = amount.value.as_ref().map_or_else(|| "nothing".to_string(), Value::to_string);
            bad(self.order, &format!("{field} {sent} is not a decimal amount"))
        })?;
        if let Some(code) = given(&amount.currency) {
            match self.currency {
                Some(seen) if seen != code => {
                    return Err(bad(
                        self.order,
                        &format!("its amounts are in more than one currency ({seen}, {code})"),
                    ));
                }
                Some(_) => {}
                None => self.currency = Some(code),
            }
        }
        Ok(Some(if absolute { value.abs() } else { value }))
    }

    /// Rounded half-even to 2 places, within decimal 8.2, as text.
    fn two_places(&self, amount: Decimal, field: &str) -> Result<Value, PlatformError> {
        let rounded = amount.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven);
        if rounded.abs() > MAX_AMOUNT {
            return Err(bad(self.order, &format!("{field} {amount} is beyond 999,999.99")));
        }
        Ok(Value::from(format!("{rounded:.2}")))
    }

    /// The sum of `amounts` (absolute values when `absolute`), 0 when none, as text.
    fn sum(
        &mut self,
        amounts: impl Iterator<Item = Option<&'a Amount>>,
        field: &str,
        absolute: bool,
    ) -> Result<Value, PlatformError> {
        let mut sum = Decimal::ZERO;
        for amount in amounts {
            if let Some(value) = self.read(amount, field, absolute)? {
                sum = sum
                    .checked_add(value)
                    .ok_or_else(|| bad(self.order, &format!("{field} adds up beyond any amount")))?;
            }
        }
        self.two_places(sum, field)
    }
}

fn text(value: Option<&str>) -> Value {
    value.map_or(Value::Null, Value::from)
}

/// The order as an import record (CONTRACT §9, without `store_id`), by the annex's *Mapping*.
pub fn record(id: &str, order: &Order) -> Result<PulledOrder, PlatformError> {
    let created = date_of(id, &order.creation_date, "creationDate")?;
    let mut money = Amounts { order: id, currency: None };
    let pricing = order.pricing_summary.as_ref();
    let first = order.line_items.first();
    let mut lines = Vec::with_capacity(order.line_items.len());
    let mut ship_by: Option<i64> = None;
    for item in &order.line_items {
        let by = item
            .line_item_fulfillment_instructions
            .as_ref()
            .and_then(|i| given(&i.ship_by_date))
            .and_then(date_ms);
        ship_by = match (ship_by, by) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let quantity = item.quantity.unwrap_or(0);
        if quantity <= 0 {
            continue;
        }
        let line_id = given(&item.line_item_id).ok_or_else(|| bad(id, "a line item has no lineItemId"))?;
        let cost = money.read(item.line_item_cost.as_ref(), "a line item's lineItemCost", false)?;
        let unit_price = match cost {
            Some(cost) => money.two_places(cost / Decimal::from(quantity), "a line item's unit price")?,
            None => Value::Null,
        };
        let tax = money.sum(item.taxes.iter().map(|t| t.amount.as_ref()), "a line item's taxes", false)?;
        let discount = money.sum(
            item.applied_promotions.iter().map(|p| p.discount_amount.as_ref()),
            "a line item's promotions",
            true,
        )?;
        let variation: Vec<String> = item
            .variation_aspects
            .iter()
            .map(|a| format!("{}: {}", a.name.as_deref().unwrap_or(""), a.value.as_deref().unwrap_or("")))
            .collect();
        let mut line = Map::with_capacity(12);
        line.insert("name".into(), text(given(&item.title)));
        line.insert("sku".into(), text(given(&item.sku)));
        line.insert("quantity".into(), Value::from(quantity));
        line.insert("unit_price".into(), unit_price);
        line.insert("tax_amount".into(), tax);
        line.insert("discount_amount".into(), discount);
        line.insert("gift_wrap".into(), Value::Bool(false));
        let custom = if variation.is_empty() {
            Value::Null
        } else {
            Value::Object(Map::from_iter([("variation".to_string(), Value::from(variation.join(", ")))]))
        };
        line.insert("custom".into(), custom);
        line.insert("upc".into(), Value::Null);
        line.insert("weight".into(), Value::Null);
        line.insert("external_order_item_id".into(), Value::from(line_id));
        line.insert("external_product_id".into(), text(given(&item.legacy_item_id)));
        lines.push(Value::Object(line));
    }
    let step = instruction(order).and_then(|i| i.shipping_step.as_ref());
    let to = step.and_then(|s| s.ship_to.as_ref());
    let payments = order.payment_summary.as_ref().map(|p| p.payments.as_slice()).unwrap_or_default();
    let paid = payments.iter().filter_map(|p| given(&p.payment_date).and_then(date_ms)).max();
    let mut tags: Vec<&str> = order.program.iter().flat_map(|p| p.keys().map(String::as_str)).collect();
    if instruction(order).and_then(|i| i.ebay_supported_fulfillment) == Some(true) {
        tags.push("ebaySupportedFulfillment");
    }
    let username = text(order.buyer.as_ref().and_then(|b| given(&b.username)));
    let shipping =
        money.read(pricing.and_then(|p| p.delivery_cost.as_ref()), "pricingSummary.deliveryCost", false)?;
    let tax = money.read(pricing.and_then(|p| p.tax.as_ref()), "pricingSummary.tax", false)?;
    let discount = money.sum(
        [pricing.and_then(|p| p.price_discount.as_ref()), pricing.and_then(|p| p.delivery_discount.as_ref())]
            .into_iter(),
        "pricingSummary's discounts",
        true,
    )?;
    let total = pricing.and_then(|p| p.total.as_ref());
    if let Some(total) = money.read(total, "pricingSummary.total", false)? {
        money.two_places(total, "pricingSummary.total")?;
    }
    let mut record = Map::with_capacity(32);
    let mut put = |key: &str, value: Value| {
        record.insert(key.to_string(), value);
    };
    put("external_id", Value::from(id));
    put("external_display_id", Value::from(id));
    put("ordered_at", Value::from(format_ms(created)));
    put("requested_ship_date", ship_by.map_or(Value::Null, |ms| Value::from(format_ms(ms))));
    put("customer_email", text(to.and_then(|t| given(&t.email))));
    put("external_billing_customer_id", username.clone());
    put("external_shipping_customer_id", username);
    put("payment_type", text(payments.first().and_then(|p| given(&p.payment_method))));
    put("payment_date", paid.map_or(Value::Null, |ms| Value::from(format_ms(ms))));
    put("external_type", Value::from("eBay"));
    put("external_source_id", text(first.and_then(|l| given(&l.purchase_marketplace_id))));
    put("external_tags", if tags.is_empty() { Value::Null } else { Value::from(tags.join(", ")) });
    put("notes", text(given(&order.buyer_checkout_notes)));
    put("currency_code", text(total.and_then(|t| given(&t.currency))));
    put("shipping_amount", money.two_places(shipping.unwrap_or_default(), "pricingSummary.deliveryCost")?);
    put("tax_amount", money.two_places(tax.unwrap_or_default(), "pricingSummary.tax")?);
    put("discount_amount", discount);
    put("shipping_tax_amount", Value::Null);
    put("shipping_carrier_name", text(step.and_then(|s| given(&s.shipping_carrier_code))));
    put("shipping_carrier_service_level", text(step.and_then(|s| given(&s.shipping_service_code))));
    put("signature_required", Value::Bool(false));
    put("gift_message", Value::Null);
    put("billing_address", Value::Null);
    put("shipping_address", to.map_or(Value::Null, shipping_address));
    put("order_items", Value::Array(lines));
    Ok(PulledOrder { record, address_id: None })
}

/// `shipTo` as orderbridge's address: `fullName` split at its last space.
fn shipping_address(to: &wire::ShipTo) -> Value {
    let name = given(&to.full_name).map(str::trim);
    let (first, last) = match name.and_then(|n| n.rsplit_once(' ')) {
        Some((first, last)) => (Some(first.trim()), Some(last)),
        None => (None, name),
    };
    let a = to.contact_address.as_ref();
    let field = |f: fn(&wire::Address) -> &Option<String>| a.and_then(|a| given(f(a)));
    let mut map = Map::with_capacity(9);
    let mut put = |key: &str, value: Option<&str>| {
        map.insert(key.into(), value.filter(|v| !v.trim().is_empty()).map_or(Value::Null, Value::from));
    };
    put("first_name", first);
    put("last_name", last);
    put("street1", field(|a| &a.address_line1));
    put("street2", field(|a| &a.address_line2));
    put("city", field(|a| &a.city));
    put("region", field(|a| &a.state_or_province));
    put("postal_code", field(|a| &a.postal_code));
    put("country", field(|a| &a.country_code));
    put("telephone", to.primary_phone.as_ref().and_then(|p| given(&p.phone_number)));
    Value::Object(map)
}

#[cfg(test)]
#[path = "orders_tests.rs"]
mod tests;
