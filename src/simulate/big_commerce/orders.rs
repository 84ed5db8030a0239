//! The simulated store's orders and the v2 calls that read them (`orders.v2.oas2.yml`):
//! `GET v2/orders` with the filters, `sort` (with `:asc`/`:desc`, as BigCommerce's prose
//! documents), pages and `include=consignments[.line_items]&consignment_structure=object`;
//! `GET v2/orders/{id}`; and an order's `products` and `shipping_addresses`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::{Rfc2822, Rfc3339};

use super::http::Response;
use super::{Call, number_param, paging, v2_page};

/// BigCommerce's "Cancelled", "Shipped", "Partially Shipped" and "Awaiting Fulfillment".
pub const CANCELLED: i64 = 5;
pub const SHIPPED: i64 = 2;
pub const PARTIALLY_SHIPPED: i64 = 3;
pub const AWAITING_FULFILLMENT: i64 = 11;

/// The most orders, products or addresses one v2 page holds, and how many without `limit`.
const MAX_LIMIT: i64 = 250;
const DEFAULT_LIMIT: i64 = 50;

#[derive(Debug, Clone)]
pub struct Product {
    pub id: i64,
    pub product_id: i64,
    pub name: String,
    pub sku: String,
    pub quantity: i64,
    pub shipped: i64,
    /// In hundredths.
    pub price: i64,
    pub weight: i64,
}

#[derive(Debug, Clone)]
pub struct Order {
    pub id: i64,
    pub customer_id: i64,
    pub created_ms: i64,
    pub modified_ms: i64,
    pub status_id: i64,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub city: String,
    pub products: Vec<Product>,
    /// The one shipping address's id, which is also its shipping consignment's.
    pub address_id: i64,
    pub shipments: Vec<Value>,
}

/// The orders by id, with the index the list's usual sort walks.
#[derive(Default)]
pub struct Orders {
    by_id: BTreeMap<i64, Order>,
    /// (modified ms, id).
    by_modified: BTreeSet<(i64, i64)>,
}

impl Orders {
    pub fn insert(&mut self, order: Order) {
        if let Some(old) = self.by_id.get(&order.id) {
            self.by_modified.remove(&(old.modified_ms, old.id));
        }
        self.by_modified.insert((order.modified_ms, order.id));
        self.by_id.insert(order.id, order);
    }

    /// Changes an order as the store does: its modification time becomes `now_ms`.
    pub fn change<T>(&mut self, id: i64, now_ms: i64, f: impl FnOnce(&mut Order) -> T) -> Option<T> {
        let order = self.by_id.get_mut(&id)?;
        self.by_modified.remove(&(order.modified_ms, id));
        let out = f(order);
        order.modified_ms = now_ms;
        self.by_modified.insert((order.modified_ms, id));
        Some(out)
    }

    pub fn get(&self, id: &str) -> Option<&Order> {
        id.parse::<i64>().ok().and_then(|id| self.by_id.get(&id))
    }

    pub fn ids(&self) -> impl Iterator<Item = i64> + '_ {
        self.by_id.keys().copied()
    }

    /// The latest modification time, 0 with no orders.
    pub fn last_modified(&self) -> i64 {
        self.by_modified.iter().next_back().map_or(0, |(m, _)| *m)
    }
}

fn money(hundredths: i64) -> String {
    format!("{}.{:02}00", hundredths / 100, hundredths % 100)
}

pub fn rfc2822(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .format(&Rfc2822)
        .unwrap_or_default()
}

/// What an order carries besides its own fields (`include`, `consignment_structure`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Include {
    /// Consignments in their object form; without `consignment_structure=object` BigCommerce
    /// answers its older array form, which the file does not describe and nothing here asks
    /// for, so the simulator then gives the link as without `include`.
    consignments: bool,
    /// The consignments' lines as whole order products, not links.
    line_items: bool,
    fees: bool,
}

impl Include {
    /// What the request asks; nothing when the store does not `honor` it.
    fn parse(call: &Call, honor: bool) -> Result<Include, Response> {
        let mut include = Include::default();
        if !honor {
            return Ok(include);
        }
        let structure = match call.request.param("consignment_structure") {
            None => false,
            Some("object") => true,
            Some(other) => {
                return Err(
                    call.error(400, &format!("consignment_structure takes only object, not {other:?}."))
                );
            }
        };
        for part in call.request.param("include").unwrap_or_default().split(',').filter(|p| !p.is_empty()) {
            match part {
                "consignments" => include.consignments = structure,
                "consignments.line_items" => {
                    include.consignments = structure;
                    include.line_items = structure;
                }
                "fees" => include.fees = true,
                other => {
                    return Err(call.error(
                        400,
                        &format!(
                            "include takes consignments, consignments.line_items and fees, not {other:?}."
                        ),
                    ));
                }
            }
        }
        Ok(include)
    }
}

impl Order {
    fn units(&self) -> i64 {
        self.products.iter().map(|p| p.quantity).sum()
    }

    fn shipped(&self) -> i64 {
        self.products.iter().map(|p| p.shipped).sum()
    }

    /// In hundredths: the lines, shipping 7.50 and its tax 0.75.
    fn total(&self) -> i64 {
        self.products.iter().map(|p| p.price * p.quantity).sum::<i64>() + 825
    }

    fn status(&self) -> &'static str {
        match self.status_id {
            CANCELLED => "Cancelled",
            SHIPPED => "Shipped",
            PARTIALLY_SHIPPED => "Partially Shipped",
            _ => "Awaiting Fulfillment",
        }
    }

    /// The address fields shared by the billing address, the shipping addresses and the
    /// shipping consignments.
    pub(super) fn address(&self) -> serde_json::Map<String, Value> {
        let Value::Object(fields) = json!({
            "first_name": self.first_name, "last_name": self.last_name, "company": "",
            "street_1": "1 Main Street", "street_2": "", "city": self.city, "state": "Texas",
            "zip": "12345", "country": "United States", "country_iso2": "US", "phone": "555-0100",
            "email": self.email,
        }) else {
            unreachable!("an object literal")
        };
        fields
    }

    fn link(base: &str, resource: String) -> Value {
        json!({"url": format!("{base}/v2{resource}"), "resource": resource})
    }

    /// The order as `order_Resp` has it.
    fn json(&self, base: &str, include: Include) -> Value {
        let subtotal = self.total() - 825;
        let id = self.id;
        let mut billing = self.address();
        billing.insert("form_fields".into(), json!([]));
        let mut order = json!({
            "id": id, "customer_id": self.customer_id, "date_created": rfc2822(self.created_ms),
            "date_modified": rfc2822(self.modified_ms), "date_shipped": "", "status_id": self.status_id,
            "status": self.status(), "subtotal_ex_tax": money(subtotal), "subtotal_inc_tax": money(subtotal),
            "subtotal_tax": "0.0000", "base_shipping_cost": "7.5000", "shipping_cost_ex_tax": "7.5000",
            "shipping_cost_inc_tax": "8.2500", "shipping_cost_tax": "0.7500", "total_ex_tax": money(subtotal + 750),
            "total_inc_tax": money(subtotal + 825), "total_tax": "0.7500", "items_total": self.units(),
            "items_shipped": self.shipped(), "payment_method": "Credit Card", "payment_status": "captured",
            "currency_code": "USD", "default_currency_code": "USD", "discount_amount": "0.0000",
            "coupon_discount": "0.0000", "customer_message": "", "staff_notes": "", "shipping_address_count": 1,
            "is_deleted": false, "billing_address": billing, "channel_id": 1, "order_source": "www",
            "products": Order::link(base, format!("/orders/{id}/products")),
            "shipping_addresses": Order::link(base, format!("/orders/{id}/shipping_addresses")),
            "coupons": Order::link(base, format!("/orders/{id}/coupons")),
            "consignments": Order::link(base, format!("/orders/{id}/consignments")),
            "fees": Order::link(base, format!("/orders/{id}/fees")),
        });
        if include.consignments {
            order["consignments"] = self.consignments(base, include.line_items);
        }
        if include.fees {
            order["fees"] = json!([]);
        }
        order
    }

    /// The order's lines as `orderProducts` has them.
    fn products_json(&self) -> impl Iterator<Item = Value> + '_ {
        self.products.iter().map(|p| {
            json!({"id": p.id, "order_id": self.id, "product_id": p.product_id, "variant_id": p.product_id,
                   "order_address_id": self.address_id, "name": p.name, "sku": p.sku, "upc": "", "type": "physical",
                   "quantity": p.quantity, "quantity_shipped": p.shipped, "base_price": money(p.price),
                   "price_ex_tax": money(p.price), "price_inc_tax": money(p.price), "price_tax": "0.0000",
                   "total_ex_tax": money(p.price * p.quantity), "total_inc_tax": money(p.price * p.quantity),
                   "total_tax": "0.0000", "weight": money(p.weight), "is_refunded": false,
                   "is_bundled_product": false, "parent_order_product_id": null, "product_options": [],
                   "applied_discounts": []})
        })
    }

    /// The one shipping address as `orderShippingAddress` has it.
    fn address_json(&self, base: &str) -> Value {
        let mut address = self.address();
        let id = self.id;
        let more = json!({
            "id": self.address_id, "order_id": id, "items_total": self.units(), "items_shipped": self.shipped(),
            "shipping_method": "Ground", "base_cost": "7.5000", "cost_ex_tax": "7.5000", "cost_inc_tax": "8.2500",
            "cost_tax": "0.7500", "cost_tax_class_id": 2, "base_handling_cost": "0.0000",
            "handling_cost_ex_tax": "0.0000", "handling_cost_inc_tax": "0.0000", "handling_cost_tax": "0.0000",
            "handling_cost_tax_class_id": 2, "shipping_zone_id": 1, "shipping_zone_name": "United States",
            "form_fields": [],
            "shipping_quotes": Order::link(base, format!("/orders/{id}/shipping_addresses/{}/shipping_quotes", self.address_id)),
        });
        address.extend(more.as_object().into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())));
        Value::Object(address)
    }

    /// The consignments in their object form (`orderConsignment_Get`): one shipping
    /// consignment, the shipping address, holding every line, whole or as links.
    fn consignments(&self, base: &str, line_items: bool) -> Value {
        let id = self.id;
        let lines: Vec<Value> = if line_items {
            self.products_json().collect()
        } else {
            self.products
                .iter()
                .map(|p| Order::link(base, format!("/orders/{id}/products/{}", p.id)))
                .collect()
        };
        let mut shipping = self.address();
        let more = json!({
            "id": self.address_id, "form_fields": [], "shipping_method": "Ground", "line_items": lines,
            "items_total": self.units(), "items_shipped": self.shipped(), "base_cost": 7.5, "cost_ex_tax": 7.5,
            "cost_inc_tax": 8.25, "cost_tax": 0.75, "cost_tax_class_id": 2, "base_handling_cost": 0,
            "handling_cost_ex_tax": 0, "handling_cost_inc_tax": 0, "handling_cost_tax": 0,
            "handling_cost_tax_class_id": 2, "shipping_zone_id": 1, "shipping_zone_name": "United States",
            "shipping_quotes": Order::link(base, format!("/orders/{id}/consignments/shipping/{}/shipping_quotes", self.address_id)),
        });
        shipping.extend(more.as_object().into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())));
        json!({"pickups": [], "shipping": [shipping], "downloads": [], "email": {"gift_certificates": []}})
    }
}

/// When a date filter says, or why it cannot be read.
fn date_param(call: &Call, name: &str) -> Result<Option<i64>, Response> {
    let Some(text) = call.request.param(name) else { return Ok(None) };
    OffsetDateTime::parse(text, &Rfc2822)
        .or_else(|_| OffsetDateTime::parse(text, &Rfc3339))
        .map(|t| Some(crate::dates::to_ms(t)))
        .map_err(|_| {
            call.error(400, &format!("The filter {name} is not a date (RFC 2822 or ISO 8601): {text:?}."))
        })
}

/// A decimal filter (`min_total=12.50`), in hundredths.
fn total_param(call: &Call, name: &str) -> Result<Option<i64>, Response> {
    let Some(text) = call.request.param(name) else { return Ok(None) };
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| Some((v * 100.0).round() as i64))
        .ok_or_else(|| call.error(400, &format!("The filter {name} must be a number, not {text:?}.")))
}

/// The list's filters (`getOrders`), each `None` when not asked.
#[derive(Debug, Default)]
struct Filters {
    min_id: Option<i64>,
    max_id: Option<i64>,
    min_total: Option<i64>,
    max_total: Option<i64>,
    customer_id: Option<i64>,
    email: Option<String>,
    status_id: Option<i64>,
    payment_method: Option<String>,
    min_created: Option<i64>,
    max_created: Option<i64>,
    min_modified: Option<i64>,
    max_modified: Option<i64>,
    channel_id: Option<i64>,
    /// `cart_id` and `external_order_id`: no simulated order has either, so asking for one
    /// lists nothing.
    unmatched: bool,
}

impl Filters {
    fn parse(call: &Call) -> Result<Filters, Response> {
        let text = |name: &str| call.request.param(name).map(str::to_string);
        Ok(Filters {
            min_id: number_param(call, "min_id")?,
            max_id: number_param(call, "max_id")?,
            min_total: total_param(call, "min_total")?,
            max_total: total_param(call, "max_total")?,
            customer_id: number_param(call, "customer_id")?,
            email: text("email"),
            status_id: number_param(call, "status_id")?,
            payment_method: text("payment_method"),
            min_created: date_param(call, "min_date_created")?,
            max_created: date_param(call, "max_date_created")?,
            min_modified: date_param(call, "min_date_modified")?,
            max_modified: date_param(call, "max_date_modified")?,
            channel_id: number_param(call, "channel_id")?,
            unmatched: call.request.param("cart_id").is_some()
                || call.request.param("external_order_id").is_some(),
        })
    }

    fn admits(&self, o: &Order) -> bool {
        let at_least = |bound: Option<i64>, v: i64| bound.is_none_or(|b| v >= b);
        let at_most = |bound: Option<i64>, v: i64| bound.is_none_or(|b| v <= b);
        !self.unmatched
            && at_least(self.min_id, o.id)
            && at_most(self.max_id, o.id)
            && at_least(self.min_total, o.total())
            && at_most(self.max_total, o.total())
            && self.customer_id.is_none_or(|c| c == o.customer_id)
            && self.email.as_deref().is_none_or(|e| e.eq_ignore_ascii_case(&o.email))
            && self.status_id.is_none_or(|s| s == o.status_id)
            && self.payment_method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case("Credit Card"))
            && at_least(self.min_created, o.created_ms)
            && at_most(self.max_created, o.created_ms)
            && at_least(self.min_modified, o.modified_ms)
            && at_most(self.max_modified, o.modified_ms)
            && self.channel_id.is_none_or(|c| c == 1)
    }
}

/// The list's sort keys (`sort`'s enum), each with its value for an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SortKey {
    Id,
    CustomerId,
    DateCreated,
    DateModified,
    StatusId,
    ChannelId,
    ExternalId,
}

impl SortKey {
    const ALL: [(&str, SortKey); 7] = [
        ("id", SortKey::Id),
        ("customer_id", SortKey::CustomerId),
        ("date_created", SortKey::DateCreated),
        ("date_modified", SortKey::DateModified),
        ("status_id", SortKey::StatusId),
        ("channel_id", SortKey::ChannelId),
        ("external_id", SortKey::ExternalId),
    ];

    /// `field`, `field:asc` or `field:desc`: the key and whether it is descending.
    fn parse(call: &Call) -> Result<(SortKey, bool), Response> {
        let Some(text) = call.request.param("sort") else { return Ok((SortKey::Id, false)) };
        let (field, desc) = match text.split_once(':') {
            None => (text, false),
            Some((field, "asc")) => (field, false),
            Some((field, "desc")) => (field, true),
            Some(_) => {
                return Err(call.error(400, &format!("sort's direction is :asc or :desc, not {text:?}.")));
            }
        };
        SortKey::ALL.iter().find(|(name, _)| *name == field).map(|(_, key)| (*key, desc)).ok_or_else(|| {
            call.error(400, &format!("Orders sort by id, customer_id, date_created, date_modified, status_id, channel_id or external_id, not {field:?}."))
        })
    }

    fn of(self, o: &Order) -> i64 {
        match self {
            SortKey::Id => o.id,
            SortKey::CustomerId => o.customer_id,
            SortKey::DateCreated => o.created_ms,
            SortKey::DateModified => o.modified_ms,
            SortKey::StatusId => o.status_id,
            SortKey::ChannelId => 1,
            SortKey::ExternalId => 0,
        }
    }
}

type ListQuery = (Filters, (SortKey, bool), (usize, usize), Include);

fn list_query(call: &Call, honor_include: bool) -> Result<ListQuery, Response> {
    let include = Include::parse(call, honor_include)?;
    Ok((Filters::parse(call)?, SortKey::parse(call)?, paging(call, DEFAULT_LIMIT, MAX_LIMIT)?, include))
}

/// `GET v2/orders`: the filtered orders in the asked order, one page; `204` for none.
pub fn list(orders: &Orders, call: &Call, honor_include: bool) -> Response {
    let (filters, (key, desc), paging, include) = match list_query(call, honor_include) {
        Ok(query) => query,
        Err(response) => return response,
    };
    // The usual walks (by modification time from a cursor, by id) use the indexes; any other
    // sort orders the matching orders whole. Ties go by id.
    let by_id = |id: &i64| &orders.by_id[id];
    let walk: Box<dyn Iterator<Item = &Order>> = match (key, desc) {
        (SortKey::DateModified, false) => {
            let from = (filters.min_modified.unwrap_or(i64::MIN), i64::MIN);
            Box::new(orders.by_modified.range(from..).map(move |(_, id)| by_id(id)))
        }
        (SortKey::DateModified, true) => {
            Box::new(orders.by_modified.iter().rev().map(move |(_, id)| by_id(id)))
        }
        (SortKey::Id, false) => {
            Box::new(orders.by_id.range(filters.min_id.unwrap_or(i64::MIN)..).map(|(_, o)| o))
        }
        (SortKey::Id, true) => Box::new(orders.by_id.values().rev()),
        (key, desc) => {
            let mut all: Vec<&Order> = orders.by_id.values().filter(|o| filters.admits(o)).collect();
            all.sort_by(|a, b| {
                let order = key.of(a).cmp(&key.of(b));
                if desc { order.reverse() } else { order }.then(a.id.cmp(&b.id))
            });
            Box::new(all.into_iter())
        }
    };
    v2_page(walk.filter(|o| filters.admits(o)), paging, |o| o.json(&call.base, include))
}

/// `GET v2/orders/{id}`.
pub fn one(orders: &Orders, call: &Call, id: &str, honor_include: bool) -> Response {
    let include = match Include::parse(call, honor_include) {
        Ok(include) => include,
        Err(response) => return response,
    };
    match orders.get(id) {
        Some(order) => Response::json(200, &order.json(&call.base, include)),
        None => call.error(404, "The requested resource was not found."),
    }
}

/// `GET v2/orders/{id}/products`.
pub fn products(orders: &Orders, call: &Call, id: &str) -> Response {
    let Some(order) = orders.get(id) else { return call.error(404, "The requested resource was not found.") };
    match paging(call, DEFAULT_LIMIT, MAX_LIMIT) {
        Ok(paging) => v2_page(order.products_json(), paging, |p| p),
        Err(response) => response,
    }
}

/// `GET v2/orders/{id}/shipping_addresses`.
pub fn addresses(orders: &Orders, call: &Call, id: &str) -> Response {
    let Some(order) = orders.get(id) else { return call.error(404, "The requested resource was not found.") };
    match paging(call, DEFAULT_LIMIT, MAX_LIMIT) {
        Ok(paging) => v2_page(std::iter::once(order), paging, |o| o.address_json(&call.base)),
        Err(response) => response,
    }
}
