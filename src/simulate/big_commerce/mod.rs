//! A BigCommerce store on loopback, answering the v2/v3 calls orderbridge and the demo make
//! as BigCommerce's own OpenAPI files describe them (`../shared/vendor/bigcommerce/`,
//! `orders.v2.oas2.yml` and `inventory.v3.yml`), quirks included: `204 No Content` for an
//! empty list, money as 4-decimal text, RFC 2822 dates, the `X-Rate-Limit-*` headers of a
//! real request window on every answer and 429 with `X-Rate-Limit-Time-Reset-Ms` when it is
//! spent, v2 errors as `[{"status", "message"}]` and v3 errors as `application/problem+json`.
//! Tests, the sync benchmark and the demo drive the real client against it; a unit test
//! (`vendor_tests.rs`) validates what crosses the wire against the vendor's files.
//!
//! Where BigCommerce would silently ignore a filter it cannot read (a date it cannot parse, an
//! `include` it does not know), the simulator answers 400, so a client bug shows.
//!
//! This module owns the store's state, admission (token, faults, the rate window) and
//! routing; `orders` the orders and their listing, `shipments` and `inventory` the rest.

mod inventory;
mod orders;
mod shipments;
#[cfg(test)]
mod sim_tests;
#[cfg(test)]
mod vendor_tests;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http::{self, Request, Response};
use super::running::Faults;
use super::{CITIES, FIRST, LAST, Rng};
use orders::{Order, Product};

/// A shipment a client posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostedShipment {
    pub order_id: String,
    pub tracking_number: String,
    pub tracking_carrier: String,
    /// (order product id, units).
    pub items: Vec<(i64, i64)>,
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    Status(u16),
    RateLimited(u64),
}

/// BigCommerce's request window: `quota` requests per `window`, counted from the window's
/// first request (the `X-Rate-Limit-*` headers of every answer say where it stands).
#[derive(Debug, Clone, Copy)]
struct RateWindow {
    quota: u32,
    window: Duration,
    started: Instant,
    used: u32,
}

impl Default for RateWindow {
    /// Far above a real plan (150 to 450 per 30 s), so no test or benchmark here meets it by
    /// accident; a test that wants the limit sets a small one.
    fn default() -> Self {
        RateWindow { quota: 10_000, window: Duration::from_secs(30), started: Instant::now(), used: 0 }
    }
}

impl RateWindow {
    /// Counts a request; `false` when the window's quota is spent.
    fn admit(&mut self, now: Instant) -> bool {
        if now.duration_since(self.started) >= self.window {
            self.started = now;
            self.used = 0;
        }
        self.used = self.used.saturating_add(1);
        self.used <= self.quota
    }

    fn reset_ms(&self, now: Instant) -> u128 {
        self.window.saturating_sub(now.duration_since(self.started)).as_millis()
    }

    fn headers(&self, now: Instant, reset_ms: Option<u64>) -> [(String, String); 4] {
        let reset = reset_ms.map_or(self.reset_ms(now), u128::from);
        let left = if reset_ms.is_some() { 0 } else { self.quota.saturating_sub(self.used) };
        [
            ("X-Rate-Limit-Requests-Left".into(), left.to_string()),
            ("X-Rate-Limit-Requests-Quota".into(), self.quota.to_string()),
            ("X-Rate-Limit-Time-Reset-Ms".into(), reset.to_string()),
            ("X-Rate-Limit-Time-Window-Ms".into(), self.window.as_millis().to_string()),
        ]
    }
}

#[derive(Default)]
struct Store {
    token: String,
    orders: orders::Orders,
    /// Faults for the next requests whose path contains the text (empty: any request).
    faults: Faults<Fault>,
    rate: RateWindow,
    delay: Duration,
    refuse_shipments: bool,
    /// Shipment posts still to be applied and then answered 502, their answer lost.
    lost_answers: usize,
    /// Orders come without consignments whatever `include` asks, as from an API (or a proxy)
    /// that drops the parameter.
    ignore_include: bool,
    posted: Vec<PostedShipment>,
    stock: inventory::Stock,
    requests: Vec<String>,
    in_flight: usize,
    max_in_flight: usize,
    /// What crossed the wire, for the test that holds it to the vendor's description.
    #[cfg(test)]
    exchanges: Vec<super::openapi_check::Exchange>,
}

/// The simulator's stores, by hash; reached through a [`Handle`].
#[derive(Default)]
pub struct State {
    stores: HashMap<String, Store>,
    next_id: i64,
}

/// A running BigCommerce simulator; dropping it stops it. Its methods are its [`Handle`]'s.
pub type Simulator = super::Simulator<State>;

/// What a simulator's owner (a test, the demo's tasks) uses to change and read its stores.
pub type Handle = super::Handle<State>;

fn now_ms() -> i64 {
    crate::dates::now_ms() / 1000 * 1000
}

impl Simulator {
    pub async fn start() -> Simulator {
        let state = State { next_id: 100, ..State::default() };
        Simulator::serve(state, "BigCommerce", |state, request| async move { answer(&state, request).await })
            .await
    }

    /// Where orderbridge's `bigcommerce_api_base` should point.
    pub fn base_url(&self) -> String {
        self.origin()
    }
}

impl Handle {
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
        let end = now_ms();
        self.with_store(hash, |store, next_id| {
            let last = store.orders.last_modified();
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
                store.orders.insert(Order {
                    id,
                    customer_id: if rng.below(5) == 0 { 0 } else { 1 + rng.below(5000) as i64 },
                    created_ms: modified - 1000,
                    modified_ms: modified,
                    status_id: orders::AWAITING_FULFILLMENT,
                    first_name: FIRST[rng.below(8) as usize].to_string(),
                    last_name: LAST[rng.below(8) as usize].to_string(),
                    email: format!("buyer{}@example.com", rng.below(100_000)),
                    city: CITIES[rng.below(6) as usize].to_string(),
                    products,
                    address_id: id * 10,
                    shipments: Vec::new(),
                });
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
            store.orders.insert(Order {
                id,
                customer_id: 0,
                created_ms: placed,
                modified_ms: placed,
                status_id: orders::AWAITING_FULFILLMENT,
                first_name: "Demo".into(),
                last_name: "Buyer".into(),
                email: "buyer@example.com".into(),
                city: "Austin".into(),
                products,
                address_id: id * 10,
                shipments: Vec::new(),
            });
        });
    }

    /// The ids of the store's orders, oldest first, as BigCommerce gives them (text).
    pub fn order_ids(&self, hash: &str) -> Vec<String> {
        self.with_store(hash, |store, _| store.orders.ids().map(|id| id.to_string()).collect())
    }

    fn change(&self, hash: &str, id: &str, f: impl FnOnce(&mut Order)) {
        let Ok(id) = id.parse::<i64>() else { return };
        self.with_store(hash, |store, _| store.orders.change(id, now_ms(), f));
    }

    /// Changes an order (its customer's e-mail), as a merchant editing it would.
    pub fn touch_order(&self, hash: &str, id: &str) {
        self.change(hash, id, |order| order.email = format!("changed-{}", order.email));
    }

    pub fn cancel_order(&self, hash: &str, id: &str) {
        self.change(hash, id, |order| order.status_id = orders::CANCELLED);
    }

    /// The next `count` requests to the store whose path contains `path` (empty: any)
    /// answer `status` (500, 503, 401...). Replaces the faults set before.
    pub fn fail_next(&self, hash: &str, path: &str, status: u16, count: usize) {
        self.with_store(hash, |store, _| {
            store.faults.set(path, Fault::Status(status), count);
        });
    }

    /// The next `count` shipment posts are applied and then answered 502, as when the answer
    /// is lost behind a load balancer or a timeout: the store has the shipment, the client
    /// cannot know it.
    pub fn lose_shipment_answers(&self, hash: &str, count: usize) {
        self.with_store(hash, |store, _| store.lost_answers = count);
    }

    /// The next `count` requests answer 429 with `X-Rate-Limit-Time-Reset-Ms: reset_ms`.
    pub fn rate_limit_next(&self, hash: &str, count: usize, reset_ms: u64) {
        self.with_store(hash, |store, _| {
            store.faults.set("", Fault::RateLimited(reset_ms), count);
        });
    }

    /// The store's plan: `quota` requests per `window`, the window starting now.
    pub fn set_rate_limit(&self, hash: &str, quota: u32, window: Duration) {
        self.with_store(hash, |store, _| {
            store.rate = RateWindow { quota, window, started: Instant::now(), used: 0 };
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

    /// While on, the order list and an order ignore `include`: consignments come as a link.
    pub fn ignore_include(&self, hash: &str, ignore: bool) {
        self.with_store(hash, |store, _| store.ignore_include = ignore);
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

    /// The stock level of each SKU, as absolute adjustments set them (summed over locations).
    pub fn stock(&self, hash: &str) -> BTreeMap<String, i64> {
        self.with_store(hash, |store, _| store.stock.totals())
    }

    /// The requests the store received and its answers, in order, since the last call.
    #[cfg(test)]
    pub fn take_exchanges(&self, hash: &str) -> Vec<super::openapi_check::Exchange> {
        self.with_store(hash, |store, _| std::mem::take(&mut store.exchanges))
    }
}

/// Which of BigCommerce's API families a path belongs to: it decides the error body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    V2,
    V3,
}

impl Family {
    fn of(rest: &[String]) -> Family {
        if rest.first().is_some_and(|s| s == "v3") { Family::V3 } else { Family::V2 }
    }

    /// An error as the family declares it: v2's `[{"status", "message"}]` (the
    /// `404_Resp` schema of `orders.v2.oas2.yml`), v3's `application/problem+json`
    /// (`ErrorResponse` of `inventory.v3.yml`).
    fn error(self, status: u16, message: &str) -> Response {
        match self {
            Family::V2 => Response::json(status, &json!([{"status": status, "message": message}])),
            Family::V3 => {
                let mut r = Response::json(
                    status,
                    &json!({"status": status, "title": message,
                            "type": "https://developer.bigcommerce.com/api-docs/getting-started/api-status-codes",
                            "errors": {}}),
                );
                r.headers = vec![("Content-Type".into(), "application/problem+json".into())];
                r
            }
        }
    }
}

/// What a route needs of a request: the request itself, the store's base URL (for the links
/// BigCommerce puts in its answers) and the error form of the path's family.
struct Call<'a> {
    request: &'a Request,
    base: String,
    family: Family,
}

impl Call<'_> {
    fn error(&self, status: u16, message: &str) -> Response {
        self.family.error(status, message)
    }
}

async fn answer(state: &Arc<Mutex<State>>, request: Request) -> Response {
    let parts: Vec<&str> = request.path.trim_matches('/').split('/').collect();
    let (hash, rest) = match parts.as_slice() {
        ["stores", hash, rest @ ..] => {
            (hash.to_string(), rest.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        }
        _ => return Family::V2.error(404, "The requested resource was not found."),
    };
    let family = Family::of(&rest);
    let now = Instant::now();
    // Admission: the store, its token, any fault, the request window, the log and the
    // in-flight count.
    let admitted = {
        let mut state = super::running::lock(state);
        let Some(store) = state.stores.get_mut(&hash) else {
            return family.error(404, "No store has this hash.");
        };
        let query: Vec<String> = request.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let query = if query.is_empty() { String::new() } else { format!("?{}", query.join("&")) };
        store.requests.push(format!("{} {}{query}", request.method, request.path));
        let admitted = admit(store, &request, family, now);
        if admitted.is_ok() {
            store.in_flight += 1;
            store.max_in_flight = store.max_in_flight.max(store.in_flight);
        }
        admitted.map(|()| store.delay)
    };
    let response = match admitted {
        Err(response) => response,
        Ok(delay) => {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            let mut state = super::running::lock(state);
            match state.stores.get_mut(&hash) {
                Some(store) => {
                    store.in_flight -= 1;
                    let host = request.header("host").unwrap_or("127.0.0.1");
                    let call =
                        Call { request: &request, base: format!("http://{host}/stores/{hash}"), family };
                    let mut response = route(store, &call, &rest);
                    if response.status == 201
                        && request.method == "POST"
                        && request.path.ends_with("/shipments")
                        && store.lost_answers > 0
                    {
                        // Applied, and the answer lost on its way back (a proxy's 502).
                        store.lost_answers -= 1;
                        response = family.error(502, "Bad Gateway");
                    }
                    response.headers.extend(store.rate.headers(Instant::now(), None));
                    response
                }
                None => family.error(404, "No store has this hash."),
            }
        }
    };
    #[cfg(test)]
    record(state, &hash, &request, &response);
    response
}

/// Whether the store takes the request: its token, then a fault set for it, then the window.
fn admit(store: &mut Store, request: &Request, family: Family, now: Instant) -> Result<(), Response> {
    if request.header("x-auth-token") != Some(store.token.as_str()) {
        return Err(family.error(401, "You are not authorized to access this resource."));
    }
    match store.faults.take(|path| request.path.contains(path)) {
        Some(Fault::Status(status)) => {
            let mut response = family.error(status, "Simulated failure");
            response.headers.extend(store.rate.headers(now, None));
            Err(response)
        }
        Some(Fault::RateLimited(ms)) => Err(too_many(store, family, now, Some(ms))),
        None if !store.rate.admit(now) => Err(too_many(store, family, now, None)),
        None => Ok(()),
    }
}

/// A 429: the quota spent (`reset_ms` from the window) or a fault's (`reset_ms` given).
fn too_many(store: &Store, family: Family, now: Instant, reset_ms: Option<u64>) -> Response {
    let mut response =
        family.error(429, "Too many requests: the store's request quota for this window is spent.");
    let reset = reset_ms.unwrap_or_else(|| u64::try_from(store.rate.reset_ms(now)).unwrap_or(u64::MAX));
    response.headers.extend(store.rate.headers(now, Some(reset)));
    response
}

#[cfg(test)]
fn record(state: &Arc<Mutex<State>>, hash: &str, request: &Request, response: &Response) {
    let mut state = super::running::lock(state);
    if let Some(store) = state.stores.get_mut(hash) {
        store.exchanges.push(super::openapi_check::Exchange::between(request, response));
    }
}

fn route(store: &mut Store, call: &Call, rest: &[String]) -> Response {
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    match (call.request.method.as_str(), rest.as_slice()) {
        ("GET", ["v2", "store"]) => Response::json(
            200,
            &json!({"id": "sim", "domain": "shop.example.com", "name": "Simulated store"}),
        ),
        ("GET", ["v2", "orders"]) => orders::list(&store.orders, call, !store.ignore_include),
        ("GET", ["v2", "orders", id]) => orders::one(&store.orders, call, id, !store.ignore_include),
        ("GET", ["v2", "orders", id, "products"]) => orders::products(&store.orders, call, id),
        ("GET", ["v2", "orders", id, "shipping_addresses"]) => orders::addresses(&store.orders, call, id),
        ("GET", ["v2", "orders", id, "shipments"]) => shipments::list(&store.orders, call, id),
        ("POST", ["v2", "orders", id, "shipments"]) => {
            if store.refuse_shipments {
                return call.error(403, "This token lacks the scope to create shipments.");
            }
            shipments::post(store, call, id)
        }
        ("PUT", ["v3", "inventory", "adjustments", "absolute"]) => {
            inventory::set_absolute(&mut store.stock, call)
        }
        ("GET", ["v3", "inventory", "items"]) => inventory::items(&store.stock, call),
        ("GET", ["v3", "inventory", "locations", location, "items"]) => {
            inventory::location_items(&store.stock, call, location)
        }
        _ => call.error(404, "The requested resource was not found."),
    }
}

/// A whole-number query parameter: `Ok(None)` when absent, `Err` with a 400 when not one.
fn number_param(call: &Call, name: &str) -> Result<Option<i64>, Response> {
    match call.request.param(name) {
        None => Ok(None),
        Some(text) => text.trim().parse::<i64>().map(Some).map_err(|_| {
            call.error(400, &format!("The query parameter {name} must be a whole number, not {text:?}."))
        }),
    }
}

/// `page` and `limit` (at most `max`, `default` when absent), as a range of a list.
fn paging(call: &Call, default: i64, max: i64) -> Result<(usize, usize), Response> {
    let page = number_param(call, "page")?.unwrap_or(1);
    let limit = number_param(call, "limit")?.unwrap_or(default);
    if page < 1 || limit < 1 || limit > max {
        return Err(call.error(400, &format!("page must be at least 1 and limit from 1 to {max}.")));
    }
    Ok((usize::try_from(page).unwrap_or(usize::MAX), usize::try_from(limit).unwrap_or(usize::MAX)))
}

/// One page of a list that has one, as v2 answers lists: `204 No Content` for an empty page.
/// Only the page's items are rendered: a deep page of a large store skips the rest unseen.
fn v2_page<T>(
    items: impl Iterator<Item = T>,
    (page, limit): (usize, usize),
    render: impl Fn(T) -> Value,
) -> Response {
    let items: Vec<Value> = items.skip((page - 1).saturating_mul(limit)).take(limit).map(render).collect();
    if items.is_empty() { Response::empty(204) } else { Response::json(200, &Value::Array(items)) }
}
