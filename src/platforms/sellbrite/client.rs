//! The Sellbrite calls of a sync pass (CONTRACT §11, "Sellbrite"): open orders since a time
//! (or the open fulfillments of the adapter's warehouse), canceled orders since the same
//! time, a shipment reported once, and available stock levels. Every request goes through
//! the account's gate and the retry policy; Sellbrite's 403 `Rate Limit Exceeded` is waited
//! out like a 429; every message is scrubbed of the token and secret.
//!
//! What the documentation (the `Sellbrite/Sellbrite-API` repository) leaves open and what
//! we chose is in the README's Sellbrite section.

use reqwest::{Method, StatusCode};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::OnceCell;

use crate::platforms::api::{self, Answer, Api, Auth, field};
use crate::platforms::retry::{Created, RetryPolicy};
use crate::platforms::store::{
    Disposition, Listed, ListedOrder, Listing, Notified, PulledOrder, ShipmentNotice, decimal, integer, text,
};
use crate::platforms::{PlatformError, Settings};

use super::NAME;

/// Levels in one inventory request, Sellbrite's limit.
pub const STOCK_PER_REQUEST: usize = 50;

/// The carrier names Sellbrite accepts; anything else is reported as `Other`.
const CARRIERS: [&str; 11] = [
    "USPS",
    "UPS",
    "FedEx",
    "Australia Post",
    "Canada Post",
    "Deutsche Post",
    "DHL eCommerce",
    "DHL Express",
    "Lasership",
    "OnTrac",
    "Royal Mail",
];

pub struct Sellbrite {
    /// `{api_base}/v1` under HTTP Basic, spending the account of the token.
    api: Api,
    warehouse_uuid: Option<String>,
    /// The warehouse stock is sent to: the adapter's, or the account's first.
    stock_warehouse: OnceCell<String>,
}

impl Sellbrite {
    pub const PAGE_SIZE: u32 = 100;

    /// A client for a validated adapter: `auth_token`, `secret_key`, and optionally
    /// `warehouse_uuid`.
    pub fn new(
        settings: &Settings,
        adapter: &Map<String, Value>,
        policy: Option<RetryPolicy>,
    ) -> Result<Sellbrite, PlatformError> {
        let api_base = settings.sellbrite_api_base.as_str();
        let (token, secret) = (field(adapter, "auth_token", NAME)?, field(adapter, "secret_key", NAME)?);
        let warehouse_uuid = field(adapter, "warehouse_uuid", NAME).ok().map(str::to_string);
        if let Some(uuid) = &warehouse_uuid
            && !uuid.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            // It goes into the URL path; anything else could walk to another endpoint.
            return Err(PlatformError::Refused(
                "The store's Sellbrite warehouse_uuid is not a warehouse uuid (letters, digits and '-')."
                    .into(),
            ));
        }
        let base = format!("{}/v1", api_base.trim_end_matches('/'));
        let policy = policy.unwrap_or_else(|| api::one_try(settings.timeout));
        let account = super::account(api_base, token);
        let api = Api::new(NAME, &base, Auth::basic(token, secret), account, policy, settings.max_body_bytes);
        Ok(Sellbrite {
            api: api.with_secrets(&[token, secret]),
            warehouse_uuid,
            stock_warehouse: OnceCell::new(),
        })
    }

    /// The ping: the token and secret may list the warehouses, asked once.
    pub async fn ping(&self) -> Result<(), PlatformError> {
        let url = self.api.url("warehouses", &[])?;
        self.api
            .ask_once(self.api.once(Method::GET, &url, None, "warehouses", self.judge("warehouses")))
            .await
            .map(|_| ())
    }

    /// One page (from 1) of a listing of the orders placed since `since_ms`: the open orders
    /// (the warehouse's open fulfillments with a `warehouse_uuid`), or the canceled ones.
    pub async fn orders_page(
        &self,
        listing: Listing,
        since_ms: Option<i64>,
        page: u32,
    ) -> Result<Vec<ListedOrder>, PlatformError> {
        let (path, status) = match (listing, &self.warehouse_uuid) {
            (Listing::Orders, Some(uuid)) => (format!("warehouses/fulfillments/{uuid}"), "open"),
            (Listing::Orders, None) => ("orders".to_string(), "open"),
            (Listing::Cancellations, _) => ("orders".to_string(), "canceled"),
        };
        let mut query = vec![
            ("sb_status".to_string(), status.to_string()),
            ("limit".to_string(), Self::PAGE_SIZE.to_string()),
            ("page".to_string(), page.to_string()),
        ];
        if let Some(since) = since_ms {
            query.insert(0, ("min_ordered_at".to_string(), iso8601(since)));
        }
        let body = self.call(Method::GET, &path, &query, None).await?;
        let orders = match body {
            None => Vec::new(),
            Some(Value::Array(orders)) => orders,
            Some(_) => {
                return Err(PlatformError::BadData("Sellbrite's order list is not a JSON array.".into()));
            }
        };
        orders.into_iter().map(listed).collect()
    }

    /// The whole order: Sellbrite's list carries the items, so this asks nothing.
    pub fn order_record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        map_order(order.entry())
    }

    /// Reports a shipment. When an earlier try may have reached Sellbrite, the order is read
    /// first: if its lines already count this shipment's units as fulfilled, nothing is posted.
    pub async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        let seq = notice.external_order_id.trim().parse::<i64>().map_err(|_| PlatformError::Rejected {
            status: 0,
            message: format!(
                "Order {:?} is not a Sellbrite order (its external_id is not an sb_order_seq).",
                notice.external_order_id
            ),
        })?;
        let mut items = Vec::with_capacity(notice.items.len());
        for item in &notice.items {
            let Some(sku) = item.sku.as_deref().filter(|s| !s.trim().is_empty()) else {
                return Err(PlatformError::Rejected {
                    status: 0,
                    message: format!(
                        "A line of order {seq} has no sku, and Sellbrite is told what shipped by sku."
                    ),
                });
            };
            items.push(json!({"sku": sku, "quantity": item.quantity}));
        }
        let mut shipment = json!({
            "sb_order_seq": seq,
            "carrier_name": carrier_name(notice.carrier.as_deref()),
            "tracking_number": notice.tracking_number,
            "items": items,
        });
        if let Some(method) = notice.shipping_method.as_deref().filter(|m| !m.trim().is_empty()) {
            shipment["shipping_method"] = Value::from(method);
        }
        if let Some(uuid) = &self.warehouse_uuid {
            shipment["warehouse_uuid"] = Value::from(uuid.as_str());
        }
        let body = json!({"shipment": shipment});
        // Sellbrite cannot be asked for a shipment by tracking number; its order's lines say
        // how many units were fulfilled. They are read whenever an earlier try may have
        // reached Sellbrite: a crash after a post, or a try whose answer was lost.
        let sure = std::sync::atomic::AtomicBool::new(!notice.in_doubt);
        let look = || {
            let first_and_sure = sure.swap(false, std::sync::atomic::Ordering::Relaxed);
            async move {
                if first_and_sure {
                    return Ok(None);
                }
                Ok(self.already_fulfilled(seq, notice).await?.then_some(None))
            }
        };
        let url = self.api.url("shipments", &[])?;
        let post = || self.api.once(Method::POST, &url, Some(&body), "shipments", self.judge("shipments"));
        match self.api.create(look, post).await? {
            Created::AlreadyThere(_) => Ok(Notified::AlreadyThere),
            Created::Now(_) => Ok(Notified::Posted),
        }
    }

    /// Whether Sellbrite's order already counts every unit of the shipment as fulfilled, on
    /// top of what other shipments told it.
    async fn already_fulfilled(&self, seq: i64, notice: &ShipmentNotice) -> Result<bool, PlatformError> {
        let order = match self.call(Method::GET, &format!("orders/{seq}"), &[], None).await? {
            Some(Value::Array(mut list)) if !list.is_empty() => list.swap_remove(0),
            Some(order @ Value::Object(_)) => order,
            _ => return Ok(false),
        };
        let lines = order.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
        let fulfilled = |sku: &str| -> i64 {
            lines
                .iter()
                .filter(|l| {
                    l.get("sku").and_then(Value::as_str) == Some(sku)
                        || l.get("inventory_sku").and_then(Value::as_str) == Some(sku)
                })
                .filter_map(|l| l.get("quantity_fulfilled").and_then(integer))
                .fold(0, i64::saturating_add)
        };
        let before = |sku: &str| -> i64 {
            notice.units_told_before.iter().filter(|(s, _)| s == sku).map(|(_, units)| units).sum()
        };
        Ok(notice.items.iter().all(|item| {
            let sku = item.sku.as_deref().unwrap_or_default();
            fulfilled(sku) >= before(sku).saturating_add(item.quantity)
        }))
    }

    /// Sends absolute available levels, `STOCK_PER_REQUEST` at a time, to the adapter's
    /// warehouse (or the account's first active one); returns the requests made.
    pub async fn set_stock(&self, levels: &[(String, i64)]) -> Result<usize, PlatformError> {
        let warehouse = self.stock_warehouse.get_or_try_init(|| self.first_warehouse()).await?.clone();
        let mut requests = 0;
        for chunk in levels.chunks(STOCK_PER_REQUEST) {
            let inventory: Vec<Value> = chunk
                .iter()
                .map(
                    |(sku, quantity)| json!({"sku": sku, "warehouse_uuid": warehouse, "available": quantity}),
                )
                .collect();
            self.call(Method::PUT, "inventory", &[], Some(&json!({"inventory": inventory}))).await?;
            requests += 1;
        }
        Ok(requests)
    }

    async fn first_warehouse(&self) -> Result<String, PlatformError> {
        if let Some(uuid) = &self.warehouse_uuid {
            return Ok(uuid.clone());
        }
        let listed = self.call(Method::GET, "warehouses", &[], None).await?;
        listed
            .as_ref()
            .and_then(Value::as_array)
            .and_then(|all| all.iter().find(|w| w.get("archived").and_then(Value::as_bool) != Some(true)))
            .and_then(|w| w.get("uuid").and_then(Value::as_str))
            .map(str::to_string)
            .ok_or_else(|| {
                PlatformError::BadData(
                    "Sellbrite lists no active warehouse to send stock to; set the store's warehouse_uuid."
                        .into(),
                )
            })
    }

    /// One request that reads, or writes what stays the same however often it arrives,
    /// through the gate and the retry policy: its JSON, `None` for an empty answer.
    async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<Option<Value>, PlatformError> {
        self.api.value(self.api.call(method, (path, query), body, self.judge(path)).await?, path)
    }

    /// What a status of Sellbrite's own means: a 404 under the adapter's warehouse is an
    /// unknown `warehouse_uuid`.
    fn judge(&self, path: &str) -> impl Fn(&Answer) -> Option<PlatformError> + Sync + '_ {
        let unknown = self.warehouse_uuid.as_deref().filter(|_| path.starts_with("warehouses/"));
        move |answer| {
            let uuid = unknown.filter(|_| answer.status == StatusCode::NOT_FOUND)?;
            Some(PlatformError::Refused(format!(
                "Sellbrite has no warehouse '{uuid}' (HTTP 404 Not Found); check the store's warehouse_uuid."
            )))
        }
    }
}

/// Sellbrite's date filters and dates: ISO 8601 in UTC, whole seconds (`2017-01-06T22:28:42Z`).
fn iso8601(ms: i64) -> String {
    let t = OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    t.format(&Rfc3339).unwrap_or_default()
}

fn bad(order: &str, field: &str, problem: &str) -> PlatformError {
    PlatformError::BadData(format!("Sellbrite's order {order} cannot be read: {field} {problem}."))
}

/// A date field (ISO 8601), in ms; `None` when empty.
fn date(v: &Value, field: &str, order: &str) -> Result<Option<i64>, PlatformError> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => OffsetDateTime::parse(s.trim(), &Rfc3339)
            .map(|t| Some(crate::dates::to_ms(t)))
            .map_err(|_| bad(order, field, &format!("is not an ISO 8601 date: {:?}", s.trim()))),
        Some(_) => Err(bad(order, field, "is not a date string")),
    }
}

/// Money (a JSON number or text), rounded half-even to 2 places, as text.
fn money(v: &Value, field: &str, order: &str) -> Result<Value, PlatformError> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(Value::Null),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Null),
        Some(value) => decimal(value).map(Value::String).ok_or_else(|| bad(order, field, "is not a decimal")),
    }
}

/// A listed order: keyed by `sb_order_seq`, cursor `ordered_at`, version a fingerprint of
/// what was listed (Sellbrite has no modification time).
fn listed(raw: Value) -> Result<ListedOrder, PlatformError> {
    let seq = raw.get("sb_order_seq").and_then(integer).ok_or_else(|| {
        PlatformError::BadData("Sellbrite listed an order without a numeric sb_order_seq.".into())
    })?;
    let id = seq.to_string();
    let ordered_at = date(&raw, "ordered_at", &id)?.ok_or_else(|| bad(&id, "ordered_at", "is missing"))?;
    let disposition =
        match raw.get("sb_status").and_then(Value::as_str).map(str::to_ascii_lowercase).as_deref() {
            Some("open") => Disposition::Import,
            // The documentation spells the status both ways.
            Some("canceled" | "cancelled") => Disposition::Cancel,
            _ => Disposition::Skip,
        };
    Ok(ListedOrder {
        external_id: id,
        cursor_ms: ordered_at,
        version: fingerprint(&raw),
        disposition,
        listed: Listed::Entry(raw),
    })
}

/// FNV-1a of the order's JSON (keys sorted, so the same order gives the same number).
fn fingerprint(raw: &Value) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in raw.to_string().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}

/// `Ann Marie Smith` is first name `Ann Marie`, last name `Smith`; one word is a first name.
fn split_name(full: &str) -> (Value, Value) {
    let full = full.trim();
    match full.rsplit_once(char::is_whitespace) {
        Some((first, last)) => (Value::from(first.trim()), Value::from(last.trim())),
        None if full.is_empty() => (Value::Null, Value::Null),
        None => (Value::from(full), Value::Null),
    }
}

/// The carrier as Sellbrite names it: its own spelling of a carrier it knows (case, spaces
/// and punctuation aside; `DHL` alone is DHL Express), else `Other`.
fn carrier_name(carrier: Option<&str>) -> &'static str {
    let squash =
        |s: &str| s.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase();
    let wanted = squash(carrier.unwrap_or_default());
    if wanted == "dhl" {
        return "DHL Express";
    }
    CARRIERS.iter().find(|known| squash(known) == wanted).copied().unwrap_or("Other")
}

/// The §11 mapping of a Sellbrite order (with its items).
fn map_order(order: &Value) -> Result<PulledOrder, PlatformError> {
    let id = order.get("sb_order_seq").and_then(integer).unwrap_or_default().to_string();
    let (first_name, last_name) =
        split_name(order.get("shipping_contact_name").and_then(Value::as_str).unwrap_or_default());
    let (billing_first, billing_last) =
        split_name(order.get("billing_contact_name").and_then(Value::as_str).unwrap_or_default());
    let country = |field: &str| match order.get(field).and_then(Value::as_str) {
        Some(code) if code.trim().len() == 2 => Value::String(code.trim().to_ascii_uppercase()),
        _ => Value::Null,
    };
    let shipping_address = json!({
        "first_name": first_name, "last_name": last_name,
        "street1": text(order, "shipping_address_1"), "street2": text(order, "shipping_address_2"),
        "city": text(order, "shipping_city"), "region": text(order, "shipping_state_region"),
        "postal_code": text(order, "shipping_postal_code"), "country": country("shipping_country_code"),
        "telephone": text(order, "shipping_phone_number"),
    });
    let billing_address = if order.get("billing_address_1").is_some_and(|v| !v.is_null()) {
        json!({
            "first_name": billing_first, "last_name": billing_last,
            "street1": text(order, "billing_address_1"), "street2": text(order, "billing_address_2"),
            "city": text(order, "billing_city"), "region": text(order, "billing_state_region"),
            "postal_code": text(order, "billing_postal_code"), "country": country("billing_country_code"),
            "telephone": text(order, "billing_phone_number"),
        })
    } else {
        Value::Null
    };
    let lines = match order.get("items") {
        Some(Value::Array(items)) => items.as_slice(),
        None | Some(Value::Null) => &[],
        Some(_) => return Err(bad(&id, "items", "is not a list")),
    };
    let mut items = Vec::with_capacity(lines.len());
    for (n, item) in lines.iter().enumerate() {
        // The fulfillments list says how many units this warehouse ships.
        let quantity = item
            .get("fulfillment_quantity")
            .and_then(integer)
            .or_else(|| item.get("quantity").and_then(integer))
            .ok_or_else(|| bad(&id, &format!("items[{n}].quantity"), "is not a whole number"))?;
        items.push(json!({
            "name": text(item, "title"),
            "sku": text(item, "sku"),
            "quantity": quantity,
            "unit_price": money(item, "unit_price", &id)?,
            "tax_amount": money(item, "tax", &id)?,
            "external_order_item_id": text(item, "order_item_ref"),
        }));
    }
    let ordered_at = date(order, "ordered_at", &id)?.map(crate::dates::format_ms);
    let paid_at = date(order, "paid_at", &id)?.map(crate::dates::format_ms);
    let record = json!({
        "external_id": id,
        "external_display_id": text(order, "display_ref"),
        "ordered_at": ordered_at,
        "payment_date": paid_at,
        "customer_email": text(order, "shipping_email"),
        "tax_amount": money(order, "tax", &id)?,
        "shipping_amount": money(order, "shipping_cost", &id)?,
        "discount_amount": money(order, "discount", &id)?,
        "notes": text(order, "customer_notes"),
        "shipping_carrier_name": text(order, "requested_shipping_provider"),
        "shipping_carrier_service_level": text(order, "requested_shipping_service"),
        "external_type": text(order, "channel_type_display_name"),
        "shipping_address": shipping_address,
        "billing_address": billing_address,
        "order_items": items,
    });
    let Value::Object(record) = record else { return Err(bad(&id, "record", "could not be built")) };
    Ok(PulledOrder { record, address_id: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_the_last_space_and_carriers_take_sellbrites_spelling() {
        assert_eq!(split_name("Ann Marie Smith"), (json!("Ann Marie"), json!("Smith")));
        assert_eq!(split_name("Cher"), (json!("Cher"), Value::Null));
        assert_eq!(split_name("  "), (Value::Null, Value::Null));
        assert_eq!(carrier_name(Some("fedex")), "FedEx");
        assert_eq!(carrier_name(Some("Fed-Ex")), "FedEx");
        assert_eq!(carrier_name(Some("ups")), "UPS");
        assert_eq!(carrier_name(Some("DHL")), "DHL Express");
        assert_eq!(carrier_name(Some("royal mail")), "Royal Mail");
        assert_eq!(carrier_name(Some("Pigeon")), "Other");
        assert_eq!(carrier_name(None), "Other");
    }

    #[test]
    fn an_order_maps_as_the_contract_says() {
        let order = json!({
            "sb_order_seq": 1042, "display_ref": "112-998", "ordered_at": "2026-11-20T10:00:00Z",
            "paid_at": "2026-11-20T10:05:00Z", "sb_status": "open", "shipping_email": "ann@example.com",
            "tax": 1.005, "shipping_cost": "4.5", "channel_type_display_name": "eBay",
            "requested_shipping_provider": "USPS", "requested_shipping_service": "Priority",
            "shipping_contact_name": "Ann Marie Smith", "shipping_address_1": "1 Main St",
            "shipping_address_2": "", "shipping_city": "Austin", "shipping_state_region": "TX",
            "shipping_postal_code": "78701", "shipping_country_code": "us", "shipping_phone_number": "555",
            "items": [{"order_item_ref": "A1", "sku": "MUG", "title": "Mug", "quantity": 3,
                       "fulfillment_quantity": 2, "unit_price": 12.5, "tax": 0.125}],
        });
        let listed = listed(order).unwrap();
        assert_eq!((listed.external_id.as_str(), listed.disposition), ("1042", Disposition::Import));
        let r = map_order(listed.entry()).unwrap().record;
        assert_eq!(r["external_display_id"], "112-998");
        assert_eq!(r["ordered_at"], "2026-11-20T10:00:00.000Z");
        assert_eq!(r["payment_date"], "2026-11-20T10:05:00.000Z");
        assert_eq!(r["tax_amount"], "1.00");
        assert_eq!(r["shipping_amount"], "4.50");
        assert_eq!(r["shipping_address"]["first_name"], "Ann Marie");
        assert_eq!(r["shipping_address"]["street2"], Value::Null);
        assert_eq!(r["shipping_address"]["country"], "US");
        assert_eq!(r["billing_address"], Value::Null);
        assert_eq!(r["order_items"][0]["quantity"], 2, "the warehouse's share");
        assert_eq!(r["order_items"][0]["unit_price"], "12.50");
        assert_eq!(r["order_items"][0]["tax_amount"], "0.12");
        assert_eq!(r["order_items"][0]["external_order_item_id"], "A1");
    }

    #[test]
    fn the_same_order_has_the_same_version_and_a_change_another() {
        let a = json!({"sb_order_seq": 1, "ordered_at": "2026-11-20T10:00:00Z", "sb_status": "cancelled"});
        let mut b = a.clone();
        assert_eq!(listed(a.clone()).unwrap().version, listed(b.clone()).unwrap().version);
        assert_eq!(listed(a.clone()).unwrap().disposition, Disposition::Cancel);
        b["shipping_city"] = json!("Lyon");
        assert_ne!(listed(a).unwrap().version, listed(b).unwrap().version);
        assert!(listed(json!({"sb_order_seq": 2})).unwrap_err().message().contains("ordered_at"));
    }
}
