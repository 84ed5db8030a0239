//! A BigCommerce store on loopback, answering the v2/v3 calls orderbridge makes as
//! BigCommerce does, quirks included: `204 No Content` for an empty list, money as
//! 4-decimal text, RFC 2822 dates, `X-Rate-Limit-*` headers on every answer and 429 with
//! `X-Rate-Limit-Time-Reset-Ms`. Unlike the real platform it refuses a date filter it
//! cannot read (BigCommerce silently ignores it and lists everything), so a client bug
//! shows. Tests, the sync benchmark and the demo drive the real client against it.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::{Rfc2822, Rfc3339};

use super::http::{self, Request, Response, Server};
use super::{CITIES, FIRST, LAST, Rng};

/// The most orders one list page holds.
const MAX_LIMIT: usize = 250;

/// A shipment a client posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostedShipment {
    pub order_id: String,
    pub tracking_number: String,
    pub tracking_carrier: String,
    /// (order product id, units).
    pub items: Vec<(i64, i64)>,
}

#[derive(Debug, Clone)]
struct Product {
    id: i64,
    product_id: i64,
    name: String,
    sku: String,
    quantity: i64,
    shipped: i64,
    price: i64,
    weight: i64,
}

#[derive(Debug, Clone)]
struct Order {
    id: i64,
    customer_id: i64,
    created_ms: i64,
    modified_ms: i64,
    status_id: i64,
    first_name: String,
    last_name: String,
    email: String,
    city: String,
    products: Vec<Product>,
    address_id: i64,
    shipments: Vec<Value>,
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    Status(u16),
    RateLimited(u64),
}

#[derive(Default)]
struct Store {
    token: String,
    orders: BTreeMap<i64, Order>,
    /// (modified ms, id): the list's order.
    by_modified: BTreeSet<(i64, i64)>,
    /// Faults for the next requests whose path contains the text (empty: any request).
    faults: VecDeque<(String, Fault)>,
    delay: Duration,
    refuse_shipments: bool,
    posted: Vec<PostedShipment>,
    stock: BTreeMap<String, i64>,
    requests: Vec<String>,
    in_flight: usize,
    max_in_flight: usize,
}

#[derive(Default)]
struct State {
    stores: HashMap<String, Store>,
    next_id: i64,
}

/// A running simulator; dropping it stops it. Its methods are its [`Handle`]'s.
pub struct Simulator {
    handle: Handle,
    server: Server,
}

/// What a simulator's owner (a test, the demo's tasks) uses to change and read its state;
/// cheap to clone, and inert once the simulator stopped.
#[derive(Clone)]
pub struct Handle {
    state: Arc<Mutex<State>>,
}

impl std::ops::Deref for Simulator {
    type Target = Handle;

    fn deref(&self) -> &Handle {
        &self.handle
    }
}

fn now_ms() -> i64 {
    crate::dates::now_ms()
}

impl Simulator {
    pub async fn start() -> Simulator {
        let state = Arc::new(Mutex::new(State { next_id: 100, ..State::default() }));
        let shared = Arc::clone(&state);
        let server = http::serve(move |request| {
            let state = Arc::clone(&shared);
            async move { answer(&state, request).await }
        })
        .await
        .expect("bind a loopback port for the BigCommerce simulator");
        Simulator { handle: Handle { state }, server }
    }

    /// Where orderbridge's `bigcommerce_api_base` should point.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }
}

impl Handle {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn with_store<T>(&self, hash: &str, f: impl FnOnce(&mut Store, &mut i64) -> T) -> T {
        let mut state = self.lock();
        let State { stores, next_id } = &mut *state;
        f(stores.entry(hash.to_string()).or_default(), next_id)
    }

    pub fn add_store(&self, hash: &str, token: &str) {
        self.with_store(hash, |store, _| store.token = token.to_string());
    }

    /// Adds `count` orders awaiting fulfillment, a minute apart and ending a minute ago, with
    /// one to three lines each; the same seed gives the same orders.
    pub fn add_orders(&self, hash: &str, count: usize, seed: u64) {
        let mut rng = Rng::new(seed);
        let end = now_ms() / 1000 * 1000;
        self.with_store(hash, |store, next_id| {
            let last = store.by_modified.iter().next_back().map_or(0, |(m, _)| *m);
            for i in 0..count {
                // A first load spreads its orders a minute apart; later ones are changed now.
                let modified = if last == 0 { end - (count - i) as i64 * 60_000 } else { end.max(last) };
                *next_id += 1;
                let id = *next_id;
                let lines = 1 + rng.below(3) as usize;
                let products = (0..lines)
                    .map(|line| {
                        let sku = rng.below(200);
                        Product {
                            id: id * 10 + line as i64,
                            product_id: 1000 + sku as i64,
                            name: format!("Product {sku}"),
                            sku: format!("SKU-{sku:04}"),
                            quantity: 1 + rng.below(3) as i64,
                            shipped: 0,
                            price: 500 + rng.below(20_000) as i64,
                            weight: 10 + rng.below(500) as i64,
                        }
                    })
                    .collect();
                let order = Order {
                    id,
                    customer_id: if rng.below(5) == 0 { 0 } else { 1 + rng.below(5000) as i64 },
                    created_ms: modified - 1000,
                    modified_ms: modified,
                    status_id: 11,
                    first_name: FIRST[rng.below(8) as usize].to_string(),
                    last_name: LAST[rng.below(8) as usize].to_string(),
                    email: format!("buyer{}@example.com", rng.below(100_000)),
                    city: CITIES[rng.below(6) as usize].to_string(),
                    products,
                    address_id: id * 10,
                    shipments: Vec::new(),
                };
                store.by_modified.insert((modified, id));
                store.orders.insert(id, order);
            }
        });
    }

    /// Takes in an order the store had before the simulator started (the demo's history),
    /// awaiting fulfillment and last changed when it was placed, so a pull from a later
    /// cursor does not list it but its shipments can be reported. `lines` are (order
    /// product id, sku, units).
    pub fn adopt_order(&self, hash: &str, id: i64, placed_ms: i64, lines: &[(i64, String, i64)]) {
        self.with_store(hash, |store, next_id| {
            *next_id = (*next_id).max(id);
            let placed = placed_ms / 1000 * 1000;
            let products = lines
                .iter()
                .map(|(line, sku, quantity)| Product {
                    id: *line,
                    product_id: 1000 + line % 200,
                    name: format!("Product {sku}"),
                    sku: sku.clone(),
                    quantity: *quantity,
                    shipped: 0,
                    price: 1000,
                    weight: 100,
                })
                .collect();
            let order = Order {
                id,
                customer_id: 0,
                created_ms: placed,
                modified_ms: placed,
                status_id: 11,
                first_name: "Demo".into(),
                last_name: "Buyer".into(),
                email: "buyer@example.com".into(),
                city: "Austin".into(),
                products,
                address_id: id * 10,
                shipments: Vec::new(),
            };
            if let Some(old) = store.orders.insert(id, order) {
                store.by_modified.remove(&(old.modified_ms, id));
            }
            store.by_modified.insert((placed, id));
        });
    }

    /// The ids of the store's orders, oldest first, as BigCommerce gives them (text).
    pub fn order_ids(&self, hash: &str) -> Vec<String> {
        self.with_store(hash, |store, _| store.orders.keys().map(i64::to_string).collect())
    }

    fn change(&self, hash: &str, id: &str, f: impl FnOnce(&mut Order)) {
        let Ok(id) = id.parse::<i64>() else { return };
        self.with_store(hash, |store, _| {
            if let Some(order) = store.orders.get_mut(&id) {
                store.by_modified.remove(&(order.modified_ms, id));
                f(order);
                order.modified_ms = now_ms() / 1000 * 1000;
                store.by_modified.insert((order.modified_ms, id));
            }
        });
    }

    /// Changes an order (its customer's e-mail), as a merchant editing it would.
    pub fn touch_order(&self, hash: &str, id: &str) {
        self.change(hash, id, |order| order.email = format!("changed-{}", order.email));
    }

    pub fn cancel_order(&self, hash: &str, id: &str) {
        self.change(hash, id, |order| order.status_id = 5);
    }

    /// The next `count` requests to the store whose path contains `path` (empty: any)
    /// answer `status` (500, 503, 401...). Replaces the faults set before.
    pub fn fail_next(&self, hash: &str, path: &str, status: u16, count: usize) {
        self.with_store(hash, |store, _| {
            store.faults = std::iter::repeat_n((path.to_string(), Fault::Status(status)), count).collect();
        });
    }

    /// The next `count` requests answer 429 with `X-Rate-Limit-Time-Reset-Ms: reset_ms`.
    pub fn rate_limit_next(&self, hash: &str, count: usize, reset_ms: u64) {
        self.with_store(hash, |store, _| {
            store.faults =
                std::iter::repeat_n((String::new(), Fault::RateLimited(reset_ms)), count).collect();
        });
    }

    /// Every answer waits this long first.
    pub fn set_delay(&self, hash: &str, delay: Duration) {
        self.with_store(hash, |store, _| store.delay = delay);
    }

    /// Posting a shipment answers 403 (a token without the scope for it) while on.
    pub fn refuse_shipments(&self, hash: &str, refuse: bool) {
        self.with_store(hash, |store, _| store.refuse_shipments = refuse);
    }

    /// Every request the store received, as `METHOD /path?query`.
    pub fn requests(&self) -> Vec<String> {
        let state = self.lock();
        state.stores.values().flat_map(|s| s.requests.iter().cloned()).collect()
    }

    pub fn max_in_flight(&self, hash: &str) -> usize {
        self.with_store(hash, |store, _| store.max_in_flight)
    }

    /// The shipments clients posted, in order.
    pub fn shipments(&self, hash: &str) -> Vec<PostedShipment> {
        self.with_store(hash, |store, _| store.posted.clone())
    }

    /// The stock level of each SKU, as absolute adjustments set them.
    pub fn stock(&self, hash: &str) -> BTreeMap<String, i64> {
        self.with_store(hash, |store, _| store.stock.clone())
    }
}

fn money(hundredths: i64) -> String {
    format!("{}.{:02}00", hundredths / 100, hundredths % 100)
}

fn rfc2822(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp(ms / 1000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .format(&Rfc2822)
        .unwrap_or_default()
}

fn error(status: u16, message: &str) -> Response {
    Response::json(status, &json!([{"status": status, "message": message}]))
}

impl Order {
    fn address(&self) -> Value {
        json!({"first_name": self.first_name, "last_name": self.last_name, "company": "", "street_1": "1 Main Street",
               "street_2": "", "city": self.city, "state": "State", "zip": "12345", "country": "United States",
               "country_iso2": "US", "phone": "555-0100", "email": self.email})
    }

    fn json(&self) -> Value {
        let subtotal: i64 = self.products.iter().map(|p| p.price * p.quantity).sum();
        let units: i64 = self.products.iter().map(|p| p.quantity).sum();
        let shipped: i64 = self.products.iter().map(|p| p.shipped).sum();
        json!({
            "id": self.id, "customer_id": self.customer_id, "date_created": rfc2822(self.created_ms),
            "date_modified": rfc2822(self.modified_ms), "date_shipped": "", "status_id": self.status_id,
            "status": match self.status_id { 5 => "Cancelled", 2 => "Shipped", 3 => "Partially Shipped", _ => "Awaiting Fulfillment" },
            "subtotal_ex_tax": money(subtotal), "subtotal_inc_tax": money(subtotal), "shipping_cost_ex_tax": "7.5000",
            "shipping_cost_inc_tax": "8.2500", "shipping_cost_tax": "0.7500", "total_ex_tax": money(subtotal + 750),
            "total_inc_tax": money(subtotal + 825), "total_tax": "0.7500", "items_total": units, "items_shipped": shipped,
            "payment_method": "Credit Card", "payment_status": "captured", "currency_code": "USD",
            "default_currency_code": "USD", "discount_amount": "0.0000", "coupon_discount": "0.0000",
            "customer_message": "", "staff_notes": "", "billing_address": self.address(),
            "products": {"url": format!("/v2/orders/{}/products", self.id), "resource": format!("/orders/{}/products", self.id)},
            "shipping_addresses": {"url": format!("/v2/orders/{}/shipping_addresses", self.id), "resource": format!("/orders/{}/shipping_addresses", self.id)},
            "channel_id": 1, "external_id": null, "order_source": "www",
        })
    }

    fn products_json(&self) -> Value {
        Value::Array(
            self.products
                .iter()
                .map(|p| {
                    json!({"id": p.id, "order_id": self.id, "product_id": p.product_id, "variant_id": p.product_id,
                           "order_address_id": self.address_id, "name": p.name, "sku": p.sku, "upc": "", "type": "physical",
                           "quantity": p.quantity, "quantity_shipped": p.shipped, "price_ex_tax": money(p.price),
                           "price_inc_tax": money(p.price), "total_tax": "0.0000", "weight": money(p.weight),
                           "is_bundled_product": false, "parent_order_product_id": null, "product_options": []})
                })
                .collect(),
        )
    }

    fn addresses_json(&self) -> Value {
        let mut address = self.address();
        address["id"] = json!(self.address_id);
        address["order_id"] = json!(self.id);
        address["shipping_method"] = json!("Ground");
        address["items_total"] = json!(self.products.iter().map(|p| p.quantity).sum::<i64>());
        json!([address])
    }
}

/// When a `min_date_modified` says, or why it cannot be read.
fn parse_filter_date(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc2822)
        .or_else(|_| OffsetDateTime::parse(text, &Rfc3339))
        .ok()
        .map(crate::dates::to_ms)
}

async fn answer(state: &Arc<Mutex<State>>, request: Request) -> Response {
    let parts: Vec<&str> = request.path.trim_matches('/').split('/').collect();
    let (hash, rest) = match parts.as_slice() {
        ["stores", hash, rest @ ..] => {
            (hash.to_string(), rest.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        }
        _ => return error(404, "Not found"),
    };
    // Admission: the store, its token, any fault, the log and the in-flight count.
    let delay = {
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(store) = state.stores.get_mut(&hash) else { return error(404, "Store not found") };
        let query: Vec<String> = request.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let query = if query.is_empty() { String::new() } else { format!("?{}", query.join("&")) };
        store.requests.push(format!("{} {}{query}", request.method, request.path));
        if request.header("x-auth-token") != Some(store.token.as_str()) {
            return Response::json(
                401,
                &json!({"status": 401, "title": "You are not authorized to access this resource."}),
            );
        }
        let due = store.faults.front().is_some_and(|(path, _)| request.path.contains(path.as_str()));
        if let Some((_, fault)) = due.then(|| store.faults.pop_front()).flatten() {
            return match fault {
                Fault::Status(status) => error(status, "Simulated failure"),
                Fault::RateLimited(ms) => {
                    let mut r = error(429, "Too many requests");
                    r.headers.push(("X-Rate-Limit-Time-Reset-Ms".into(), ms.to_string()));
                    r
                }
            };
        }
        store.in_flight += 1;
        store.max_in_flight = store.max_in_flight.max(store.in_flight);
        store.delay
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut response = {
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        match state.stores.get_mut(&hash) {
            Some(store) => {
                store.in_flight -= 1;
                route(store, &request, &rest)
            }
            None => error(404, "Store not found"),
        }
    };
    response.headers.extend([
        ("X-Rate-Limit-Requests-Left".to_string(), "149".to_string()),
        ("X-Rate-Limit-Requests-Quota".to_string(), "150".to_string()),
        ("X-Rate-Limit-Time-Reset-Ms".to_string(), "30000".to_string()),
        ("X-Rate-Limit-Time-Window-Ms".to_string(), "30000".to_string()),
    ]);
    response
}

fn route(store: &mut Store, request: &Request, rest: &[String]) -> Response {
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    match (request.method.as_str(), rest.as_slice()) {
        ("GET", ["v2", "store"]) => Response::json(
            200,
            &json!({"id": "sim", "domain": "shop.example.com", "name": "Simulated store"}),
        ),
        ("GET", ["v2", "orders"]) => list_orders(store, request),
        ("GET", ["v2", "orders", id, what]) => {
            let Some(order) = id.parse::<i64>().ok().and_then(|id| store.orders.get(&id)) else {
                return error(404, "The requested resource was not found.");
            };
            match *what {
                "products" => Response::json(200, &order.products_json()),
                "shipping_addresses" => Response::json(200, &order.addresses_json()),
                "shipments" if order.shipments.is_empty() => Response::empty(204),
                "shipments" => Response::json(200, &Value::Array(order.shipments.clone())),
                _ => error(404, "Not found"),
            }
        }
        ("POST", ["v2", "orders", id, "shipments"]) => {
            if store.refuse_shipments {
                return Response::json(
                    403,
                    &json!({"status": 403, "title": "This token lacks the scope to create shipments."}),
                );
            }
            post_shipment(store, id, &request.body)
        }
        ("PUT", ["v3", "inventory", "adjustments", "absolute"]) => set_stock(store, &request.body),
        _ => error(404, "Not found"),
    }
}

fn list_orders(store: &Store, request: &Request) -> Response {
    let since = match request.param("min_date_modified") {
        None => None,
        Some(text) => match parse_filter_date(text) {
            Some(ms) => Some(ms),
            None => return error(400, "The filter min_date_modified is not a date (RFC 2822 or ISO 8601)."),
        },
    };
    match request.param("sort") {
        None | Some("date_modified:asc") => {}
        Some(other) => {
            return error(400, &format!("The simulator sorts only by date_modified:asc, not {other}."));
        }
    }
    let limit = request.param("limit").map_or(Ok(50), str::parse::<usize>);
    let page = request.param("page").map_or(Ok(1), str::parse::<usize>);
    let (Ok(limit), Ok(page)) = (limit, page) else {
        return error(400, "limit and page must be whole numbers");
    };
    if limit == 0 || limit > MAX_LIMIT || page == 0 {
        return error(400, "limit must be 1 to 250 and page at least 1");
    }
    let from = since.map_or((i64::MIN, i64::MIN), |ms| (ms, i64::MIN));
    let orders: Vec<Value> = store
        .by_modified
        .range(from..)
        .skip((page - 1) * limit)
        .take(limit)
        .filter_map(|(_, id)| store.orders.get(id))
        .map(Order::json)
        .collect();
    if orders.is_empty() { Response::empty(204) } else { Response::json(200, &Value::Array(orders)) }
}

fn post_shipment(store: &mut Store, id: &str, body: &[u8]) -> Response {
    let Some(order) = id.parse::<i64>().ok().and_then(|id| store.orders.get_mut(&id)) else {
        return error(404, "The requested resource was not found.");
    };
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return error(400, "The request body is not JSON.");
    };
    if body.get("order_address_id").and_then(Value::as_i64) != Some(order.address_id) {
        return error(400, "order_address_id is not an address of this order.");
    }
    let Some(items) = body.get("items").and_then(Value::as_array).filter(|i| !i.is_empty()) else {
        return error(400, "items are required.");
    };
    let mut lines = Vec::new();
    for item in items {
        let (Some(line), Some(quantity)) = (
            item.get("order_product_id").and_then(Value::as_i64),
            item.get("quantity").and_then(Value::as_i64),
        ) else {
            return error(400, "Each item needs order_product_id and quantity.");
        };
        let Some(product) = order.products.iter().find(|p| p.id == line) else {
            return error(400, &format!("order_product_id {line} is not a line of this order."));
        };
        if quantity < 1 || product.shipped + quantity > product.quantity {
            return error(422, &format!("Line {line} has fewer units left to ship than {quantity}."));
        }
        lines.push((line, quantity));
    }
    for (line, quantity) in &lines {
        if let Some(product) = order.products.iter_mut().find(|p| p.id == *line) {
            product.shipped += quantity;
        }
    }
    let everything = order.products.iter().all(|p| p.shipped >= p.quantity);
    order.status_id = if everything { 2 } else { 3 };
    store.by_modified.remove(&(order.modified_ms, order.id));
    order.modified_ms = now_ms() / 1000 * 1000;
    store.by_modified.insert((order.modified_ms, order.id));
    let tracking = body.get("tracking_number").and_then(Value::as_str).unwrap_or_default().to_string();
    let carrier = body.get("tracking_carrier").and_then(Value::as_str).unwrap_or_default().to_string();
    let shipment = json!({"id": order.shipments.len() + 1, "order_id": order.id, "tracking_number": tracking,
                          "tracking_carrier": carrier, "order_address_id": order.address_id,
                          "items": lines.iter().map(|(l, q)| json!({"order_product_id": l, "quantity": q})).collect::<Vec<_>>()});
    order.shipments.push(shipment.clone());
    crate::logging::notice(format_args!(
        "simulated BigCommerce: order {} was told it shipped, tracking {tracking}",
        order.id
    ));
    store.posted.push(PostedShipment {
        order_id: order.id.to_string(),
        tracking_number: tracking,
        tracking_carrier: carrier,
        items: lines,
    });
    Response::json(201, &shipment)
}

fn set_stock(store: &mut Store, body: &[u8]) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return error(400, "The request body is not JSON.");
    };
    let Some(items) = body.get("items").and_then(Value::as_array) else {
        return error(422, "items are required.");
    };
    if items.len() > 2000 {
        return error(422, "At most 2000 items may be adjusted at once.");
    }
    for item in items {
        let (Some(sku), Some(quantity)) =
            (item.get("sku").and_then(Value::as_str), item.get("quantity").and_then(Value::as_i64))
        else {
            return error(422, "Each item needs a sku and a quantity.");
        };
        if item.get("location_id").and_then(Value::as_i64).is_none() {
            return error(422, "Each item needs a location_id.");
        }
        store.stock.insert(sku.to_string(), quantity);
    }
    crate::logging::notice(format_args!(
        "simulated BigCommerce: stock set for {} SKUs: {}",
        items.len(),
        super::levels(items, "quantity")
    ));
    Response::json(200, &json!({"transaction_id": format!("sim-{}", store.stock.len())}))
}
