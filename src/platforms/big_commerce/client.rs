//! The BigCommerce calls of a sync pass (CONTRACT §11, "BigCommerce"): orders changed since
//! a time, each with its consignments (addresses and lines) in the list itself, mapped to an
//! import record; a shipment reported once; and absolute stock levels. Every request goes
//! through the account's gate and the retry policy; every message is scrubbed of the token.

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::{Rfc2822, Rfc3339};

use super::carriers;
use super::wire::{self, Address, Line, Listed, Scalar};
use crate::platforms::api::{self, Answer, Api, Auth, field};
use crate::platforms::retry::{Created, RetryPolicy};
use crate::platforms::store::{
    self, Disposition, ListedOrder, Notified, PulledOrder, ShipmentNotice, decimal, integer,
};
use crate::platforms::{PlatformError, Settings};

const NAME: &str = "BigCommerce";

/// Statuses whose orders are written by default: 11, Awaiting Fulfillment.
const DEFAULT_IMPORT_STATUS_IDS: [i64; 1] = [11];

/// BigCommerce's "Cancelled".
const CANCELLED: i64 = 5;

/// Levels in one inventory request, BigCommerce's limit.
pub const STOCK_PER_REQUEST: usize = 2_000;

/// The longest `tracking_number` BigCommerce takes (`orderShipment_Post`, `maxLength`).
pub const MAX_TRACKING_NUMBER: usize = 50;

/// What the order list is asked to carry: each order's consignments in their object form,
/// lines included (`order_includes`, `consignment_structure`), so a page of 250 orders is one
/// request instead of 501.
const INCLUDE: [(&str, &str); 2] =
    [("include", "consignments.line_items"), ("consignment_structure", "object")];

pub struct BigCommerce {
    /// `{api_base}/stores/{store_hash}` under `X-Auth-Token`, spending the store's account:
    /// BigCommerce limits each store.
    api: Api,
    store_hash: String,
    import_status_ids: Vec<i64>,
    location_id: i64,
}

/// Where a request is aimed, for what a 404 means.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The store itself: a 404 means an unknown store hash.
    Store,
    /// One order's record: a 404 means that order is gone.
    Order,
}

impl BigCommerce {
    pub const PAGE_SIZE: u32 = 250;

    /// A client for a validated adapter: `access_token`, `store_hash`, and optionally
    /// `import_status_ids` (default `[11]`) and `location_id` (default 1).
    pub fn new(
        settings: &Settings,
        adapter: &Map<String, Value>,
        policy: Option<RetryPolicy>,
    ) -> Result<BigCommerce, PlatformError> {
        let api_base = settings.bigcommerce_api_base.as_str();
        let (secret, store_hash) =
            (field(adapter, "access_token", NAME)?, field(adapter, "store_hash", NAME)?);
        if !super::is_store_hash(store_hash) {
            return Err(PlatformError::Refused(
                "The store's BigCommerce store_hash is not a store hash.".into(),
            ));
        }
        let token = Auth::header("x-auth-token", secret, NAME)?;
        let import_status_ids = match adapter.get("import_status_ids") {
            None | Some(Value::Null) => DEFAULT_IMPORT_STATUS_IDS.to_vec(),
            Some(Value::Array(ids)) => ids.iter().filter_map(integer).collect(),
            Some(other) => integer(other).into_iter().collect(),
        };
        let location_id = adapter.get("location_id").and_then(integer).unwrap_or(1);
        let account = super::account(api_base, store_hash);
        let base = format!("{}/stores/{store_hash}", api_base.trim_end_matches('/'));
        let policy = policy.unwrap_or_else(|| api::one_try(settings.timeout));
        let api = Api::new(NAME, &base, token, account, policy, settings.max_body_bytes);
        let store_hash = store_hash.to_string();
        Ok(BigCommerce { api: api.with_secrets(&[secret]), store_hash, import_status_ids, location_id })
    }

    /// The ping: the token opens the store (`v2/store`), asked once.
    pub async fn ping(&self) -> Result<(), PlatformError> {
        let url = self.api.url("v2/store", &[])?;
        self.api
            .ask_once(self.api.once(Method::GET, &url, None, "v2/store", self.judge(Scope::Store)))
            .await
            .map(|_| ())
    }

    /// One page (from 1) of the orders changed since `since_ms`, oldest change first. A
    /// `204 No Content` is how v2 says there are none.
    pub async fn orders_page(
        &self,
        since_ms: Option<i64>,
        page: u32,
    ) -> Result<Vec<ListedOrder>, PlatformError> {
        let mut query = vec![
            ("sort".to_string(), "date_modified:asc".to_string()),
            ("limit".to_string(), Self::PAGE_SIZE.to_string()),
            ("page".to_string(), page.to_string()),
        ];
        query.extend(INCLUDE.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        if let Some(since) = since_ms {
            query.insert(0, ("min_date_modified".to_string(), rfc2822(since)));
        }
        let Some(body) =
            self.api.call(Method::GET, ("v2/orders", &query), None, self.judge(Scope::Store)).await?
        else {
            return Ok(Vec::new());
        };
        let orders: Vec<&RawValue> = serde_json::from_slice(&body).map_err(|e| {
            PlatformError::BadData(format!("BigCommerce's order list is not a JSON array of orders: {e}."))
        })?;
        orders.into_iter().map(|raw| self.listed(raw)).collect()
    }

    /// An order as listed: only what the pull decides with is read now; the rest is kept as
    /// the JSON text the list sent (`raw`) and read when the order is wanted whole.
    fn listed(&self, raw: &RawValue) -> Result<ListedOrder, PlatformError> {
        let listed: Listed = serde_json::from_str(raw.get()).map_err(|e| {
            PlatformError::BadData(format!("BigCommerce listed an order that cannot be read: {e}."))
        })?;
        let id = listed.id.integer().ok_or_else(|| {
            PlatformError::BadData("BigCommerce listed an order without a numeric id.".into())
        })?;
        let modified_at_ms = date(&listed.date_modified, "date_modified", id)?
            .ok_or_else(|| bad(id, "date_modified", "is missing"))?;
        let status = listed.status_id.integer().unwrap_or(-1);
        let disposition = if self.import_status_ids.contains(&status) {
            Disposition::Import
        } else if status == CANCELLED {
            Disposition::Cancel
        } else {
            Disposition::Skip
        };
        Ok(ListedOrder {
            external_id: id.to_string(),
            cursor_ms: modified_at_ms,
            version: modified_at_ms,
            disposition,
            listed: store::Listed::Entry(Value::String(raw.get().to_string())),
        })
    }

    /// The whole order: from the consignments the list carried, or, for an order that came
    /// without them (an API that ignored `include`), from its products and shipping
    /// addresses, asked side by side.
    pub async fn order_record(&self, listed: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        let id = &listed.external_id;
        let order: wire::Order = match listed.entry() {
            Value::String(text) => serde_json::from_str(text),
            other => wire::Order::deserialize(other),
        }
        .map_err(|e| PlatformError::BadData(format!("BigCommerce's order {id} cannot be read: {e}.")))?;
        if let Some(shipping) = &order.consignments
            && let Some(lines) = consignment_lines(shipping)
        {
            return map_order(&order, &lines, shipping.first());
        }
        let limit = [("limit".to_string(), "250".to_string())];
        let (products_path, addresses_path) =
            (format!("v2/orders/{id}/products"), format!("v2/orders/{id}/shipping_addresses"));
        let (products, addresses) = futures::try_join!(
            self.api.call(Method::GET, (&products_path, &limit), None, self.judge(Scope::Order)),
            self.api.call(Method::GET, (&addresses_path, &limit), None, self.judge(Scope::Order)),
        )?;
        fn list<T: for<'de> Deserialize<'de>>(
            body: Option<Vec<u8>>,
            what: &str,
            id: &str,
        ) -> Result<Vec<T>, PlatformError> {
            body.map_or(Ok(Vec::new()), |b| serde_json::from_slice(&b)).map_err(|e| {
                PlatformError::BadData(format!("BigCommerce's {what} of order {id} cannot be read: {e}."))
            })
        }
        let products: Vec<Line> = list(products, "products", id)?;
        let addresses: Vec<Address> = list(addresses, "shipping addresses", id)?;
        map_order(&order, &products.iter().collect::<Vec<_>>(), addresses.first())
    }

    /// Reports a shipment, unless the store already has one with its tracking number (a
    /// crash after an earlier post): the customer is mailed once.
    pub async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        let order = &notice.external_order_id;
        let length = notice.tracking_number.chars().count();
        if length > MAX_TRACKING_NUMBER {
            return Err(PlatformError::Rejected {
                status: 0,
                message: format!(
                    "The tracking number of order {order}'s shipment has {length} characters and BigCommerce takes at most {MAX_TRACKING_NUMBER}, so nothing was sent."
                ),
            });
        }
        let path = format!("v2/orders/{order}/shipments");
        let address_id = match notice.address_id.as_deref().and_then(|a| a.parse::<i64>().ok()) {
            Some(id) => id,
            None => self.first_address_id(order).await?,
        };
        let mut items = Vec::with_capacity(notice.items.len());
        for item in &notice.items {
            let Some(line) = &item.line else {
                return Err(PlatformError::Rejected {
                    status: 0,
                    message: format!(
                        "A line of order {order} has no external_order_item_id, so BigCommerce cannot be told which line shipped."
                    ),
                });
            };
            let line_id = line.parse::<i64>().map_err(|_| PlatformError::Rejected {
                status: 0,
                message: format!("Order line {line:?} is not a BigCommerce order product id."),
            })?;
            items.push(json!({"order_product_id": line_id, "quantity": item.quantity}));
        }
        let mut body = json!({
            "order_address_id": address_id,
            "tracking_number": notice.tracking_number,
            "tracking_carrier": notice.carrier.as_deref().map_or("", carriers::tracking_carrier),
            "shipping_provider": "",
            "items": items,
        });
        if let Some(method) = &notice.shipping_method {
            body["shipping_method"] = Value::from(method.as_str());
        }
        // A shipment there with the same tracking number means an earlier try reached the
        // store (its answer lost, or a crash before its commit): the customer is mailed once.
        let url = self.api.url(&path, &[])?;
        let look = || async {
            let existing = self.api.value(
                self.api.once(Method::GET, &url, None, &path, self.judge(Scope::Order)).await?,
                &path,
            )?;
            let there = matches!(&existing, Some(Value::Array(shipments)) if shipments
                .iter()
                .any(|s| s.get("tracking_number").and_then(Value::as_str) == Some(&notice.tracking_number)));
            Ok(there.then_some(None))
        };
        let post = || self.api.once(Method::POST, &url, Some(&body), &path, self.judge(Scope::Order));
        match self.api.create(look, post).await? {
            Created::AlreadyThere(_) => Ok(Notified::AlreadyThere),
            Created::Now(_) => Ok(Notified::Posted),
        }
    }

    async fn first_address_id(&self, order: &str) -> Result<i64, PlatformError> {
        let limit = [("limit".to_string(), "250".to_string())];
        let path = format!("v2/orders/{order}/shipping_addresses");
        let addresses = self.api.value(
            self.api.call(Method::GET, (&path, &limit), None, self.judge(Scope::Order)).await?,
            &path,
        )?;
        addresses.as_ref().and_then(|a| a.get(0)).and_then(|a| a.get("id")).and_then(integer).ok_or_else(
            || PlatformError::BadData(format!("BigCommerce's order {order} has no shipping address.")),
        )
    }

    /// Sends absolute levels, `STOCK_PER_REQUEST` at a time; returns the requests made.
    pub async fn set_stock(&self, levels: &[(String, i64)]) -> Result<usize, PlatformError> {
        let mut requests = 0;
        for chunk in levels.chunks(STOCK_PER_REQUEST) {
            let items: Vec<Value> = chunk
                .iter()
                .map(|(sku, quantity)| json!({"location_id": self.location_id, "sku": sku, "quantity": quantity}))
                .collect();
            let body = json!({"reason": "orderbridge: warehouse stock", "items": items});
            self.api
                .call(
                    Method::PUT,
                    ("v3/inventory/adjustments/absolute", &[]),
                    Some(&body),
                    self.judge(Scope::Store),
                )
                .await?;
            requests += 1;
        }
        Ok(requests)
    }

    /// What a status of BigCommerce's own means: a 404 of the store's own requests is an
    /// unknown store hash (an order's is that order gone).
    fn judge(&self, scope: Scope) -> impl Fn(&Answer) -> Option<PlatformError> + Sync + '_ {
        move |answer| {
            (answer.status == StatusCode::NOT_FOUND && scope == Scope::Store).then(|| {
                PlatformError::Refused(format!(
                    "BigCommerce has no store with hash '{}' (HTTP 404 Not Found).",
                    self.store_hash
                ))
            })
        }
    }
}

/// BigCommerce's date filters take RFC 2822 (`Tue, 20 Nov 2012 00:00:00 +0000`), in UTC.
fn rfc2822(ms: i64) -> String {
    let t = OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    t.format(&Rfc2822).unwrap_or_default()
}

fn bad(order: i64, field: &str, problem: &str) -> PlatformError {
    PlatformError::BadData(format!("BigCommerce's order {order} cannot be read: {field} {problem}."))
}

/// A date field (RFC 2822, or ISO 8601 as some stores send), in ms; `None` when empty.
fn date(value: &Scalar, field: &str, order: i64) -> Result<Option<i64>, PlatformError> {
    let text = match value {
        Scalar::Absent => return Ok(None),
        Scalar::Text(s) if s.trim().is_empty() => return Ok(None),
        Scalar::Text(s) => s.trim(),
        _ => return Err(bad(order, field, "is not a date string")),
    };
    let parsed = OffsetDateTime::parse(text, &Rfc2822)
        .or_else(|_| OffsetDateTime::parse(text, &Rfc3339))
        .map_err(|_| bad(order, field, &format!("is not an RFC 2822 date: {text:?}")))?;
    Ok(Some(crate::dates::to_ms(parsed)))
}

/// Money as BigCommerce sends it (`"12.5000"`), rounded half-even to 2 places, as text.
fn money(value: &Scalar, field: &str, order: i64) -> Result<Value, PlatformError> {
    match value {
        Scalar::Absent => Ok(Value::Null),
        Scalar::Text(s) if s.trim().is_empty() => Ok(Value::Null),
        value => decimal(&value.json())
            .map(Value::String)
            .ok_or_else(|| bad(order, field, &format!("is not a decimal: {}", value.json()))),
    }
}

/// A BigCommerce address in the import's shape.
fn address(a: &Address) -> Value {
    let country = match &a.country_iso2 {
        Scalar::Text(code) if code.len() == 2 => Value::String(code.clone()),
        _ => Value::Null,
    };
    json!({
        "first_name": a.first_name.text(),
        "last_name": a.last_name.text(),
        "street1": a.street_1.text(),
        "street2": a.street_2.text(),
        "city": a.city.text(),
        "region": a.state.text(),
        "postal_code": a.zip.text(),
        "country": country,
        "telephone": a.phone.text(),
    })
}

/// The lines of every shipping consignment, as `products` lists them (an order shipped to
/// two addresses keeps all its lines); `None` when a consignment carries its lines as links
/// (`{"url", "resource"}`) or not at all, which only the per-order calls can follow.
fn consignment_lines(shipping: &[Address]) -> Option<Vec<&Line>> {
    let mut lines = Vec::new();
    for consignment in shipping {
        for line in consignment.line_items.as_ref()? {
            if line.id == Scalar::Absent {
                return None;
            }
            lines.push(line);
        }
    }
    Some(lines)
}

/// The §11 mapping of an order, its product lines and its (first) shipping address, which
/// is a shipping consignment or an entry of `shipping_addresses`: the same fields and `id`.
fn map_order(
    order: &wire::Order,
    products: &[&Line],
    shipping: Option<&Address>,
) -> Result<PulledOrder, PlatformError> {
    let id = order.id.integer().unwrap_or_default();
    let customer = order.customer_id.integer().filter(|c| *c != 0).map(|c| c.to_string());
    let billing = order.billing_address.as_ref();
    let ordered_at = date(&order.date_created, "date_created", id)?.map(crate::dates::format_ms);
    let currency = match &order.currency_code {
        Scalar::Text(code) if code.len() == 3 => Value::String(code.clone()),
        _ => Value::Null,
    };
    let mut items = Vec::with_capacity(products.len());
    for &p in products {
        let quantity =
            p.quantity.integer().ok_or_else(|| bad(id, "products[].quantity", "is not a whole number"))?;
        items.push(json!({
            "name": p.name.text(),
            "sku": p.sku.text(),
            "upc": p.upc.text(),
            "quantity": quantity,
            "unit_price": money(&p.price_ex_tax, "price_ex_tax", id)?,
            "weight": money(&p.weight, "weight", id)?,
            "tax_amount": money(&p.total_tax, "total_tax", id)?,
            "external_order_item_id": p.id.text(),
            "external_product_id": p.product_id.text(),
        }));
    }
    let record = json!({
        "external_id": id.to_string(),
        "external_display_id": id.to_string(),
        "ordered_at": ordered_at,
        "customer_email": billing.map_or(Value::Null, |b| b.email.text()),
        "external_billing_customer_id": customer,
        "external_shipping_customer_id": customer,
        "payment_type": order.payment_method.text(),
        "currency_code": currency,
        "shipping_amount": money(&order.shipping_cost_ex_tax, "shipping_cost_ex_tax", id)?,
        "shipping_tax_amount": money(&order.shipping_cost_tax, "shipping_cost_tax", id)?,
        "tax_amount": money(&order.total_tax, "total_tax", id)?,
        "discount_amount": money(&order.discount_amount, "discount_amount", id)?,
        "notes": order.customer_message.text(),
        "shipping_carrier_service_level": shipping.map_or(Value::Null, |a| a.shipping_method.text()),
        "billing_address": billing.map_or(Value::Null, address),
        "shipping_address": shipping.map_or(Value::Null, address),
        "order_items": items,
    });
    let Value::Object(record) = record else { return Err(bad(id, "record", "could not be built")) };
    let address_id = shipping.and_then(|a| a.id.integer()).map(|a| a.to_string());
    Ok(PulledOrder { record, address_id })
}

#[cfg(test)]
#[path = "client_mapping_tests.rs"]
mod tests;
