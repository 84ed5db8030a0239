//! A Sellbrite account on loopback, answering the v1 calls orderbridge makes as Sellbrite's
//! documentation describes them: HTTP Basic with the account token and secret key (a wrong
//! one answers 401 `HTTP Basic: Access denied.`), bare JSON arrays paged 100 at a time
//! (a larger `limit` is cut to 100), ISO 8601 dates, `sb_status` spelled `cancelled` in
//! records but `canceled` in the filter, and its rate limit as **403 with the body `Rate
//! Limit Exceeded`**. Lists come newest first, which the documentation does not promise
//! either way, so a client that trusts an order shows. Tests, the demo and benchmarks
//! drive the real client against it.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::http::{Request, Response};
use super::running::Faults;
use super::{CITIES, FIRST, LAST, Rng};

/// The most orders one list page holds.
const MAX_LIMIT: usize = 100;

/// The most levels one inventory request may set.
const MAX_INVENTORY: usize = 50;

const CARRIERS: [&str; 12] = [
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
    "Other",
];

/// A shipment a client posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostedShipment {
    pub sb_order_seq: i64,
    pub carrier_name: String,
    pub tracking_number: String,
    pub shipping_method: Option<String>,
    pub warehouse_uuid: Option<String>,
    /// (sku, units).
    pub items: Vec<(String, i64)>,
}

#[derive(Debug, Clone)]
struct Item {
    order_item_ref: String,
    sku: String,
    title: String,
    quantity: i64,
    fulfilled: i64,
    unit_price: i64,
}

#[derive(Debug, Clone)]
struct Order {
    seq: i64,
    ordered_ms: i64,
    status: &'static str,
    name: String,
    email: String,
    city: String,
    items: Vec<Item>,
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    Status(u16),
    RateLimited,
    /// Does what was asked, then answers the status (the answer lost on its way back).
    AnswerLost(u16),
}

#[derive(Default)]
struct Account {
    secret: String,
    warehouses: Vec<String>,
    orders: BTreeMap<i64, Order>,
    faults: Faults<Fault>,
    posted: Vec<PostedShipment>,
    /// (warehouse uuid, sku) -> available.
    stock: BTreeMap<(String, String), i64>,
    inventory_requests: usize,
}

/// The simulator's accounts, by token; reached through a [`Handle`].
#[derive(Default)]
pub struct State {
    accounts: HashMap<String, Account>,
    next_seq: i64,
    requests: Vec<String>,
}

/// A running Sellbrite simulator; dropping it stops it. Its methods are its [`Handle`]'s.
pub type Simulator = super::Simulator<State>;

/// What a simulator's owner (a test, the demo's tasks) uses to change and read its state.
pub type Handle = super::Handle<State>;

fn now_ms() -> i64 {
    crate::dates::now_ms() / 1000 * 1000
}

impl Simulator {
    pub async fn start() -> Simulator {
        let state = State { next_seq: 5000, ..State::default() };
        Simulator::serve(state, "Sellbrite", |state, request| async move { answer(&state, &request) }).await
    }

    /// Where orderbridge's `sellbrite_api_base` should point.
    pub fn base_url(&self) -> String {
        self.origin()
    }
}

impl Handle {
    fn with_account<T>(&self, token: &str, f: impl FnOnce(&mut Account, &mut i64) -> T) -> T {
        let mut state = self.lock();
        let State { accounts, next_seq, .. } = &mut *state;
        f(accounts.entry(token.to_string()).or_default(), next_seq)
    }

    /// An account with one warehouse, whose uuid is returned.
    pub fn add_account(&self, token: &str, secret: &str) -> String {
        self.with_account(token, |account, _| {
            account.secret = secret.to_string();
            if account.warehouses.is_empty() {
                let n = account.secret.len() + token.len();
                account.warehouses.push(format!("5b1e0c2a-0000-4000-8000-{n:012}"));
            }
            account.warehouses[0].clone()
        })
    }

    /// Adds `count` open orders, a minute apart and ending a minute ago on a first load, at
    /// the present time after it, with one to three lines each; the same seed gives the
    /// same orders. Returns their `sb_order_seq`s.
    pub fn add_orders(&self, token: &str, count: usize, seed: u64) -> Vec<i64> {
        let mut rng = Rng::new(seed);
        let end = now_ms() - 60_000;
        self.with_account(token, |account, next_seq| {
            let first_load = account.orders.is_empty();
            (0..count)
                .map(|i| {
                    *next_seq += 1;
                    let seq = *next_seq;
                    let ordered_ms = if first_load { end - (count - i) as i64 * 60_000 } else { now_ms() };
                    let lines = 1 + rng.below(3) as usize;
                    let items = (0..lines)
                        .map(|line| {
                            let sku = rng.below(200);
                            Item {
                                order_item_ref: format!("{seq}-{line}"),
                                sku: format!("SKU-{sku:04}"),
                                title: format!("Product {sku}"),
                                quantity: 1 + rng.below(3) as i64,
                                fulfilled: 0,
                                unit_price: 500 + rng.below(20_000) as i64,
                            }
                        })
                        .collect();
                    let name = format!("{} {}", FIRST[rng.below(8) as usize], LAST[rng.below(8) as usize]);
                    let order = Order {
                        seq,
                        ordered_ms,
                        status: "open",
                        email: format!("buyer{}@example.com", rng.below(100_000)),
                        city: CITIES[rng.below(6) as usize].to_string(),
                        name,
                        items,
                    };
                    account.orders.insert(seq, order);
                    seq
                })
                .collect()
        })
    }

    /// Takes in an open order the account had before the simulator started (the demo's
    /// history), so its shipments can be reported. `lines` are (order item ref, sku, units).
    pub fn adopt_order(&self, token: &str, seq: i64, placed_ms: i64, lines: &[(String, String, i64)]) {
        self.with_account(token, |account, next_seq| {
            *next_seq = (*next_seq).max(seq);
            let items = lines
                .iter()
                .map(|(reference, sku, quantity)| Item {
                    order_item_ref: reference.clone(),
                    sku: sku.clone(),
                    title: format!("Product {sku}"),
                    quantity: *quantity,
                    fulfilled: 0,
                    unit_price: 1000,
                })
                .collect();
            let order = Order {
                seq,
                ordered_ms: placed_ms / 1000 * 1000,
                status: "open",
                name: "Demo Buyer".into(),
                email: "buyer@example.com".into(),
                city: "Austin".into(),
                items,
            };
            account.orders.insert(seq, order);
        });
    }

    /// The `sb_order_seq` of every order of the account, oldest first.
    pub fn order_seqs(&self, token: &str) -> Vec<i64> {
        self.with_account(token, |account, _| account.orders.keys().copied().collect())
    }

    /// Cancels an order, as a buyer or the channel would.
    pub fn cancel_order(&self, token: &str, seq: i64) {
        self.with_account(token, |account, _| {
            if let Some(order) = account.orders.get_mut(&seq) {
                order.status = "cancelled";
            }
        });
    }

    /// Changes an order's city, as a buyer correcting the address would.
    pub fn change_address(&self, token: &str, seq: i64, city: &str) {
        self.with_account(token, |account, _| {
            if let Some(order) = account.orders.get_mut(&seq) {
                order.city = city.to_string();
            }
        });
    }

    /// The next `count` requests whose path contains `path` (empty: any) answer `status`.
    pub fn fail_next(&self, token: &str, path: &str, status: u16, count: usize) {
        self.with_account(token, |account, _| {
            account.faults.set(path, Fault::Status(status), count);
        });
    }

    /// The next `count` requests whose path contains `path` are carried out, but answer
    /// `status`, as when a gateway times out after Sellbrite did the work.
    pub fn lose_answers(&self, token: &str, path: &str, status: u16, count: usize) {
        self.with_account(token, |account, _| {
            account.faults.set(path, Fault::AnswerLost(status), count);
        });
    }

    /// After the faults already set, the next `count` requests whose path contains `path`
    /// answer `status` without being carried out: a second failure queued behind a first.
    pub fn then_fail_next(&self, token: &str, path: &str, status: u16, count: usize) {
        self.with_account(token, |account, _| {
            account.faults.add(path, Fault::Status(status), count);
        });
    }

    /// The next `count` requests answer Sellbrite's rate limit: 403 `Rate Limit Exceeded`.
    pub fn rate_limit_next(&self, token: &str, count: usize) {
        self.with_account(token, |account, _| {
            account.faults.set("", Fault::RateLimited, count);
        });
    }

    /// Every request received, as `METHOD /path?query`.
    pub fn requests(&self) -> Vec<String> {
        self.lock().requests.clone()
    }

    /// The shipments clients posted, in order.
    pub fn shipments(&self, token: &str) -> Vec<PostedShipment> {
        self.with_account(token, |account, _| account.posted.clone())
    }

    /// The available level of each SKU of the account's warehouses, as clients set them.
    pub fn stock(&self, token: &str) -> BTreeMap<String, i64> {
        self.with_account(token, |account, _| {
            account.stock.iter().map(|((_, sku), level)| (sku.clone(), *level)).collect()
        })
    }

    /// How many inventory requests were accepted.
    pub fn inventory_requests(&self, token: &str) -> usize {
        self.with_account(token, |account, _| account.inventory_requests)
    }
}

fn iso(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp(ms / 1000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .format(&Rfc3339)
        .unwrap_or_default()
}

fn money(hundredths: i64) -> f64 {
    hundredths as f64 / 100.0
}

fn error(status: u16, message: &str) -> Response {
    Response::json(status, &json!({"error": message}))
}

fn text(status: u16, body: &str) -> Response {
    Response {
        status,
        headers: vec![("Content-Type".into(), "text/plain".into())],
        body: body.as_bytes().to_vec(),
    }
}

impl Order {
    fn json(&self, warehouse: Option<&str>) -> Value {
        let shipped_units: i64 = self.items.iter().map(|i| i.fulfilled).sum();
        let units: i64 = self.items.iter().map(|i| i.quantity).sum();
        let subtotal: i64 = self.items.iter().map(|i| i.unit_price * i.quantity).sum();
        let items: Vec<Value> = self
            .items
            .iter()
            .filter(|i| warehouse.is_none() || i.fulfilled < i.quantity)
            .map(|i| {
                let mut item = json!({
                    "order_item_ref": i.order_item_ref, "quantity": i.quantity, "title": i.title,
                    "sku": i.sku, "inventory_sku": i.sku, "unit_price": money(i.unit_price),
                    "total": money(i.unit_price * i.quantity), "quantity_fulfilled": i.fulfilled,
                    "tax": 0.0, "cancelled_at": null, "status": "Completed",
                });
                if warehouse.is_some() {
                    item["fulfillment_quantity"] = json!(i.quantity - i.fulfilled);
                }
                item
            })
            .collect();
        json!({
            "sb_order_seq": self.seq, "display_ref": format!("112-{:07}", self.seq),
            "channel_uuid": "0f6c7a3e-1111-4000-8000-000000000001", "channel_type_display_name": "eBay",
            "channel_name": "My eBay", "ordered_at": iso(self.ordered_ms), "paid_at": iso(self.ordered_ms + 60_000),
            "shipped_at": null, "cancelled_at": if self.status == "cancelled" { json!(iso(self.ordered_ms)) } else { Value::Null },
            "sb_status": self.status, "sb_payment_status": "all",
            "shipment_status": if shipped_units == 0 { "none" } else if shipped_units < units { "partial" } else { "all" },
            "shipping_contact_name": self.name, "shipping_email": self.email, "shipping_company_name": null,
            "shipping_address_1": "1 Main Street", "shipping_address_2": null, "shipping_address_3": null,
            "shipping_city": self.city, "shipping_state_region": "TX", "shipping_postal_code": "78701",
            "shipping_country_code": "US", "shipping_phone_number": "555-0100",
            "requested_shipping_service": "Standard", "requested_shipping_provider": "USPS",
            "ship_by_date": iso(self.ordered_ms + 2 * 86_400_000), "subtotal": money(subtotal), "tax": 0.0,
            "shipping_cost": 4.5, "discount": 0.0, "total": money(subtotal + 450),
            "customer_notes": null, "merchant_notes": null,
            "items": items,
        })
    }
}

/// The account a request's HTTP Basic credentials open.
fn authenticate(state: &State, request: &Request) -> Option<String> {
    let encoded = request.header("authorization")?.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (token, secret) = decoded.split_once(':')?;
    let account = state.accounts.get(token)?;
    (account.secret == secret).then(|| token.to_string())
}

fn answer(state: &Arc<Mutex<State>>, request: &Request) -> Response {
    let mut state = super::running::lock(state);
    let query: Vec<String> = request.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let query = if query.is_empty() { String::new() } else { format!("?{}", query.join("&")) };
    state.requests.push(format!("{} {}{query}", request.method, request.path));
    let Some(token) = authenticate(&state, request) else {
        return text(401, "HTTP Basic: Access denied.\n");
    };
    let Some(account) = state.accounts.get_mut(&token) else {
        return text(401, "HTTP Basic: Access denied.\n");
    };
    match account.faults.take(|path| request.path.contains(path)) {
        Some(Fault::Status(status)) => error(status, "Simulated failure"),
        Some(Fault::RateLimited) => text(403, "Rate Limit Exceeded"),
        Some(Fault::AnswerLost(status)) => {
            route(account, request);
            error(status, "Simulated gateway timeout")
        }
        None => route(account, request),
    }
}

fn route(account: &mut Account, request: &Request) -> Response {
    let parts: Vec<&str> = request.path.trim_matches('/').split('/').collect();
    match (request.method.as_str(), parts.as_slice()) {
        ("GET", ["v1", "warehouses"]) => Response::json(
            200,
            &Value::Array(
                account
                    .warehouses
                    .iter()
                    .map(|uuid| json!({"uuid": uuid, "name": "Main", "inventory_master": "Sellbrite", "archived": false}))
                    .collect(),
            ),
        ),
        ("GET", ["v1", "orders"]) => list_orders(account, request, None),
        ("GET", ["v1", "warehouses", "fulfillments", uuid]) => {
            if !account.warehouses.iter().any(|w| w == uuid) {
                return error(404, "Warehouse not found");
            }
            let uuid = uuid.to_string();
            list_orders(account, request, Some(&uuid))
        }
        ("GET", ["v1", "orders", seq]) => match seq.parse::<i64>().ok().and_then(|s| account.orders.get(&s)) {
            Some(order) => Response::json(200, &order.json(None)),
            None => error(404, "Order not found"),
        },
        ("POST", ["v1", "shipments"]) => post_shipment(account, &request.body),
        ("PUT", ["v1", "inventory"]) => set_inventory(account, &request.body),
        _ => error(404, "Not found"),
    }
}

fn list_orders(account: &Account, request: &Request, warehouse: Option<&str>) -> Response {
    let date = |name: &str| match request.param(name) {
        None => Ok(None),
        Some(text) => OffsetDateTime::parse(text, &Rfc3339)
            .map(|t| Some(crate::dates::to_ms(t)))
            .map_err(|_| error(400, &format!("{name} is not an ISO 8601 date"))),
    };
    let (min, max) = match (date("min_ordered_at"), date("max_ordered_at")) {
        (Ok(min), Ok(max)) => (min, max),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let status = match request.param("sb_status") {
        None => None,
        Some("open") => Some("open"),
        Some("completed") => Some("completed"),
        Some("canceled") => Some("cancelled"),
        Some(other) => {
            return error(400, &format!("sb_status must be open, completed or canceled, not {other}"));
        }
    };
    let limit = request.param("limit").map_or(Ok(MAX_LIMIT), str::parse::<usize>);
    let page = request.param("page").map_or(Ok(1), str::parse::<usize>);
    let (Ok(limit), Ok(page)) = (limit, page) else {
        return error(400, "limit and page must be whole numbers");
    };
    let (limit, page) = (limit.clamp(1, MAX_LIMIT), page.max(1));
    let orders: Vec<Value> = account
        .orders
        .values()
        .rev()
        .filter(|o| min.is_none_or(|m| o.ordered_ms >= m) && max.is_none_or(|m| o.ordered_ms <= m))
        .filter(|o| status.is_none_or(|s| o.status == s))
        // A warehouse's fulfillments are the open orders with units left to ship.
        .filter(|o| {
            warehouse.is_none() || (o.status == "open" && o.items.iter().any(|i| i.fulfilled < i.quantity))
        })
        .skip((page - 1) * limit)
        .take(limit)
        .map(|o| o.json(warehouse))
        .collect();
    Response::json(200, &Value::Array(orders))
}

fn post_shipment(account: &mut Account, body: &[u8]) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(body) else { return error(400, "The body is not JSON") };
    let Some(shipment) = body.get("shipment") else { return error(400, "shipment is required") };
    let Some(seq) = shipment.get("sb_order_seq").and_then(Value::as_i64) else {
        return error(400, "sb_order_seq is required and must be an integer");
    };
    let Some(carrier) = shipment.get("carrier_name").and_then(Value::as_str) else {
        return error(400, "carrier_name is required");
    };
    if !CARRIERS.contains(&carrier) {
        return error(422, &format!("carrier_name {carrier:?} is not a carrier Sellbrite knows"));
    }
    let Some(tracking) = shipment.get("tracking_number").and_then(Value::as_str).filter(|t| !t.is_empty())
    else {
        return error(400, "tracking_number is required");
    };
    let warehouse_uuid = shipment.get("warehouse_uuid").and_then(Value::as_str).map(str::to_string);
    if let Some(uuid) = &warehouse_uuid
        && !account.warehouses.contains(uuid)
    {
        return error(422, "warehouse_uuid is not a warehouse of this account");
    }
    let Some(order) = account.orders.get_mut(&seq) else { return error(404, "Order not found") };
    let Some(items) = shipment.get("items").and_then(Value::as_array).filter(|i| !i.is_empty()) else {
        return error(400, "items are required");
    };
    let mut lines = Vec::new();
    for item in items {
        let (Some(sku), Some(quantity)) =
            (item.get("sku").and_then(Value::as_str), item.get("quantity").and_then(Value::as_i64))
        else {
            return error(400, "each item needs a sku and a quantity");
        };
        let Some(index) = order.items.iter().position(|i| i.sku == sku) else {
            return error(422, &format!("sku {sku} is not an item of order {seq}"));
        };
        let line = &order.items[index];
        if quantity < 1 || line.fulfilled + quantity > line.quantity {
            return error(422, &format!("sku {sku} has fewer units left to ship than {quantity}"));
        }
        lines.push((index, sku.to_string(), quantity));
    }
    for (index, _, quantity) in &lines {
        order.items[*index].fulfilled += quantity;
    }
    if order.items.iter().all(|i| i.fulfilled >= i.quantity) {
        order.status = "completed";
    }
    account.posted.push(PostedShipment {
        sb_order_seq: seq,
        carrier_name: carrier.to_string(),
        tracking_number: tracking.to_string(),
        shipping_method: shipment.get("shipping_method").and_then(Value::as_str).map(str::to_string),
        warehouse_uuid,
        items: lines.into_iter().map(|(_, sku, q)| (sku, q)).collect(),
    });
    crate::logging::notice(format_args!(
        "simulated Sellbrite: order {seq} was told it shipped, tracking {tracking}"
    ));
    Response::json(200, &json!({"sb_order_seq": seq, "tracking_number": tracking}))
}

fn set_inventory(account: &mut Account, body: &[u8]) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(body) else { return error(400, "The body is not JSON") };
    let Some(inventory) = body.get("inventory").and_then(Value::as_array) else {
        return error(400, "inventory is required");
    };
    if inventory.len() > MAX_INVENTORY {
        return error(422, "Only 50 inventory records can be updated per API call");
    }
    let mut levels = Vec::with_capacity(inventory.len());
    for record in inventory {
        let (Some(sku), Some(uuid)) =
            (record.get("sku").and_then(Value::as_str), record.get("warehouse_uuid").and_then(Value::as_str))
        else {
            return error(422, "each inventory needs a sku and a warehouse_uuid");
        };
        if !account.warehouses.iter().any(|w| w == uuid) {
            return error(422, &format!("warehouse_uuid {uuid} is not a warehouse of this account"));
        }
        let level = match (record.get("available").and_then(Value::as_i64), record.get("on_hand")) {
            (Some(level), None) => level,
            _ => return error(422, "exactly one of on_hand or available must be given"),
        };
        levels.push(((uuid.to_string(), sku.to_string()), level));
    }
    account.stock.extend(levels);
    account.inventory_requests += 1;
    crate::logging::notice(format_args!(
        "simulated Sellbrite: stock set for {} SKUs: {}",
        inventory.len(),
        super::levels(inventory, "available")
    ));
    Response::json(200, &json!({"message": "Inventory adjustments queued"}))
}
