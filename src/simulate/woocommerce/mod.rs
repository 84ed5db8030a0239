//! A WooCommerce store on loopback, answering the REST API v3 calls orderbridge makes as
//! WordPress and WooCommerce do (annex §3): OAuth 1.0a signatures checked over plain http as
//! WooCommerce checks them (a wrong signature, an unknown key, a stale timestamp or a nonce
//! seen before answer 401), Basic only when told it sits behind TLS, money as text, dates
//! with no zone, `modified_after` exclusive and read in the site's own timezone unless it has
//! none (a filter sent with `Z` is shifted by the site's offset, as WordPress shifts it),
//! `X-WP-Total`/`X-WP-TotalPages`, notes wrapped in HTML as WordPress shows them, the
//! Shipment Tracking extension on or off, products and variations found by SKU, batches of
//! at most 100 that refuse items inside a 200, plain permalinks (`/wp-json/` a 404 web page,
//! the API at `?rest_route=`, found through the front page's `Link` header) and the faults
//! of shared hosting. Tests, benchmarks and the demo drive the real client against it.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use super::running::Faults;
use super::{CITIES, FIRST, LAST, Rng};

mod api;
mod data;

use api::answer;
use data::{WC_DATE, wc_date};

/// The most objects one list page or one batch holds.
const MAX_PER_PAGE: usize = 100;

/// WooCommerce's window for OAuth timestamps (and for remembering nonces).
const OAUTH_WINDOW_SECS: i64 = 15 * 60;

const STATUSES: [&str; 8] =
    ["pending", "processing", "on-hold", "completed", "cancelled", "refunded", "failed", "trash"];

const PROVIDERS: [(&str, &[&str]); 3] = [
    ("Global", &["Aramex", "DHL Express", "FedEx", "UPS"]),
    ("United States", &["USPS", "OnTrac"]),
    ("United Kingdom", &["Royal Mail", "DPD"]),
];

/// A tracking item the store holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackingItem {
    pub order_id: i64,
    pub tracking_number: String,
    /// A provider the store lists, or the custom provider's name.
    pub provider: String,
    pub custom: bool,
    pub date_shipped: String,
}

/// An order note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub order_id: i64,
    pub text: String,
    pub customer_note: bool,
}

#[derive(Debug, Clone)]
struct Line {
    id: i64,
    product_id: i64,
    variation_id: i64,
    name: String,
    sku: Option<String>,
    quantity: i64,
    /// Cents.
    subtotal: i64,
    total: i64,
    tax: i64,
}

#[derive(Debug, Clone)]
struct Order {
    id: i64,
    parent_id: i64,
    status: String,
    created_ms: i64,
    modified_ms: i64,
    customer_id: i64,
    first_name: String,
    last_name: String,
    email: String,
    city: String,
    lines: Vec<Line>,
    coupons: Vec<String>,
}

#[derive(Debug, Clone)]
struct Product {
    id: i64,
    parent_id: i64,
    kind: &'static str,
    sku: String,
    manage_stock: bool,
    stock: Option<i64>,
    /// Its batch update answers an item error.
    refuse: bool,
}

#[derive(Debug, Clone)]
enum Fault {
    /// A JSON error with this status.
    Status(u16),
    /// 429 or 503 with `Retry-After` in seconds.
    RetryAfter(u16, u64),
    /// A web page with this status (a firewall's 403, a host's 500).
    Page(u16),
    /// PHP warnings printed before the JSON of a 200.
    WarningFirst,
    /// Redirected to https.
    Redirect,
    /// Does what was asked, then answers 200 with a JSON list of this many bytes of `0`s
    /// instead (a store or proxy gone wrong: `[0,0,…]`).
    Oversized(usize),
    /// Does what was asked, then answers the status (the answer lost on its way back).
    AnswerLost(u16),
}

/// The simulated store; reached through a [`Handle`].
#[derive(Default)]
pub struct Store {
    key: String,
    secret: String,
    read_only: bool,
    /// PHP sees the request as https (a proxy that says so): Basic and query-string keys work.
    behind_tls: bool,
    plain_permalinks: bool,
    /// WooCommerce is deactivated: WordPress answers, without its routes.
    inactive: bool,
    extension: bool,
    /// WooCommerce older than 5.8 ignores `modified_after`.
    ignores_modified_after: bool,
    /// The site's timezone, which a `modified_after` with a zone is converted into.
    site_offset: i32,
    orders: BTreeMap<i64, Order>,
    notes: Vec<Note>,
    trackings: Vec<TrackingItem>,
    products: BTreeMap<i64, Product>,
    /// Product ids by SKU, as WooCommerce's SKU lookup table keeps them.
    skus: HashMap<String, Vec<i64>>,
    faults: Faults<Fault>,
    /// After this many order list pages, the order is changed (an edit during a pull).
    touch_after_page: Option<(usize, i64)>,
    list_pages: usize,
    nonces: HashMap<String, i64>,
    requests: Vec<String>,
    batches: Vec<usize>,
    in_flight: usize,
    max_in_flight: usize,
    delay: Duration,
    next_id: i64,
}

/// A running simulator of one store; dropping it stops it. Its methods are its [`Handle`]'s.
pub type Simulator = super::Simulator<Store>;

/// What a simulator's owner uses to change and read its state.
pub type Handle = super::Handle<Store>;

fn now_ms() -> i64 {
    crate::dates::now_ms() / 1000 * 1000
}

impl Simulator {
    /// A store whose REST API key is `key`/`secret` (Read/Write), with pretty permalinks, the
    /// Shipment Tracking extension active and its clock in UTC+2.
    pub async fn start(key: &str, secret: &str) -> Simulator {
        let store = Store {
            key: key.to_string(),
            secret: secret.to_string(),
            extension: true,
            site_offset: 2 * 3600,
            next_id: 700,
            ..Store::default()
        };
        Simulator::serve(store, "WooCommerce", |state, request| async move { answer(&state, request).await })
            .await
    }

    /// The store's address: what its adapter's `url` should be.
    pub fn url(&self) -> String {
        self.origin()
    }
}

impl Handle {
    /// Adds `count` processing orders, modified a minute apart and ending a minute ago on a
    /// first load, at the present second after it; one to three lines each, whose SKUs are
    /// products of the store. The same seed gives the same orders. Returns their ids.
    pub fn add_orders(&self, count: usize, seed: u64) -> Vec<i64> {
        let end = now_ms() - 60_000;
        let mut store = self.lock();
        let first_load = store.orders.is_empty();
        (0..count)
            .map(|i| {
                let at = if first_load { end - (count - i) as i64 * 60_000 } else { now_ms() };
                store.add_order(seed.wrapping_add(i as u64), at)
            })
            .collect()
    }

    /// Adds `count` processing orders all modified in the same second.
    pub fn add_orders_at_once(&self, count: usize, seed: u64) -> Vec<i64> {
        let at = now_ms() - 60_000;
        let mut store = self.lock();
        (0..count).map(|i| store.add_order(seed.wrapping_add(i as u64), at)).collect()
    }

    /// Takes in an order the store had before the simulator started (the demo's history):
    /// processing and last changed when placed. `lines` are (line id, sku, units).
    pub fn adopt_order(&self, id: i64, placed_ms: i64, lines: &[(i64, String, i64)]) {
        let mut store = self.lock();
        store.next_id = store.next_id.max(id);
        let placed = placed_ms / 1000 * 1000;
        let lines = lines
            .iter()
            .map(|(line, sku, quantity)| {
                let product = store.product_for(sku);
                Line {
                    id: *line,
                    product_id: product,
                    variation_id: 0,
                    name: format!("Product {sku}"),
                    sku: Some(sku.clone()),
                    quantity: *quantity,
                    subtotal: 1000 * quantity,
                    total: 1000 * quantity,
                    tax: 0,
                }
            })
            .collect();
        let order = Order {
            id,
            parent_id: 0,
            status: "processing".into(),
            created_ms: placed,
            modified_ms: placed,
            customer_id: 0,
            first_name: "Demo".into(),
            last_name: "Buyer".into(),
            email: "buyer@example.com".into(),
            city: "Austin".into(),
            lines,
            coupons: Vec::new(),
        };
        store.orders.insert(id, order);
    }

    /// Adds a child order of `parent` (as marketplace plugins make), processing.
    pub fn add_child_order(&self, parent: i64) -> i64 {
        let mut store = self.lock();
        let id = store.add_order(parent as u64, now_ms());
        if let Some(order) = store.orders.get_mut(&id) {
            order.parent_id = parent;
        }
        id
    }

    /// Every order's id, oldest first.
    pub fn order_ids(&self) -> Vec<i64> {
        self.lock().orders.keys().copied().collect()
    }

    /// An order's status now.
    pub fn status(&self, id: i64) -> Option<String> {
        self.lock().orders.get(&id).map(|o| o.status.clone())
    }

    /// Sets an order's status, as the merchant would; it is modified now.
    pub fn set_status(&self, id: i64, status: &str) {
        self.change(id, |order| order.status = status.to_string());
    }

    /// Changes an order (its customer's e-mail); it is modified now.
    pub fn touch_order(&self, id: i64) {
        self.change(id, |order| order.email = format!("changed-{}", order.email));
    }

    /// Deletes an order for good: it leaves every list.
    pub fn delete_order(&self, id: i64) {
        self.lock().orders.remove(&id);
    }

    fn change(&self, id: i64, f: impl FnOnce(&mut Order)) {
        if let Some(order) = self.lock().orders.get_mut(&id) {
            f(order);
            order.modified_ms = now_ms().max(order.modified_ms + 1000);
        }
    }

    /// After `pages` order list pages have been served, order `id` is changed.
    pub fn touch_after_pages(&self, pages: usize, id: i64) {
        let mut store = self.lock();
        store.touch_after_page = Some((store.list_pages + pages, id));
    }

    /// A simple product with this SKU and stock level (`None`: stock not managed).
    pub fn add_product(&self, sku: &str, level: Option<i64>) -> i64 {
        self.lock().add_simple(sku, level)
    }

    /// A variable product and its variations (SKU, level); returns the variations' ids.
    pub fn add_variable_product(&self, sku: &str, variations: &[(&str, Option<i64>)]) -> Vec<i64> {
        let mut store = self.lock();
        store.next_id += 1;
        let parent = store.next_id;
        let product = Product {
            id: parent,
            parent_id: 0,
            kind: "variable",
            sku: sku.into(),
            manage_stock: false,
            stock: None,
            refuse: false,
        };
        store.insert_product(product);
        variations
            .iter()
            .map(|(sku, level)| {
                store.next_id += 1;
                let id = store.next_id;
                let variation = Product {
                    id,
                    parent_id: parent,
                    kind: "variation",
                    sku: sku.to_string(),
                    manage_stock: level.is_some(),
                    stock: *level,
                    refuse: false,
                };
                store.insert_product(variation);
                id
            })
            .collect()
    }

    /// A batch update of this SKU's product answers an item error while on.
    pub fn refuse_stock(&self, sku: &str) {
        for product in self.lock().products.values_mut().filter(|p| p.sku == sku) {
            product.refuse = true;
        }
    }

    /// The managed stock level of each SKU.
    pub fn stock(&self) -> BTreeMap<String, i64> {
        self.lock()
            .products
            .values()
            .filter_map(|p| Some((p.sku.clone(), p.stock.filter(|_| p.manage_stock)?)))
            .collect()
    }

    /// The items of each batch request received, in order.
    pub fn batch_sizes(&self) -> Vec<usize> {
        self.lock().batches.clone()
    }

    pub fn trackings(&self) -> Vec<TrackingItem> {
        self.lock().trackings.clone()
    }

    /// The notes orderbridge (or anyone but the store itself) added.
    pub fn notes(&self) -> Vec<Note> {
        self.lock().notes.iter().filter(|n| !n.text.starts_with("Order status changed")).cloned().collect()
    }

    /// The Shipment Tracking extension is active (or not).
    pub fn set_extension(&self, active: bool) {
        self.lock().extension = active;
    }

    /// WordPress with plain permalinks: `/wp-json/` is a 404 web page, the API is at
    /// `/?rest_route=`.
    pub fn set_plain_permalinks(&self, plain: bool) {
        self.lock().plain_permalinks = plain;
    }

    /// WooCommerce is active (or WordPress runs without it).
    pub fn set_woocommerce_active(&self, active: bool) {
        self.lock().inactive = !active;
    }

    /// The key has Read permission only.
    pub fn set_read_only(&self, read_only: bool) {
        self.lock().read_only = read_only;
    }

    /// A store older than WooCommerce 5.8, which ignores `modified_after`.
    pub fn set_ignores_modified_after(&self, ignores: bool) {
        self.lock().ignores_modified_after = ignores;
    }

    /// PHP sees requests as https (Basic and query-string keys are read).
    pub fn set_behind_tls(&self, behind: bool) {
        self.lock().behind_tls = behind;
    }

    /// Every answer waits this long first.
    pub fn set_delay(&self, delay: Duration) {
        self.lock().delay = delay;
    }

    fn fault(&self, path: &str, fault: Fault, count: usize) {
        self.lock().faults.set(path, fault, count);
    }

    /// The next `count` requests whose `METHOD route` contains `path` (empty: any; e.g.
    /// `POST wc/v3/orders/701/notes`) answer a JSON error with `status`. Replaces the faults
    /// set before. A fault waits at the head of the queue until a request matches it.
    pub fn fail_next(&self, path: &str, status: u16, count: usize) {
        self.fault(path, Fault::Status(status), count);
    }

    /// As [`Handle::fail_next`], after the faults already set.
    pub fn then_fail_next(&self, path: &str, status: u16, count: usize) {
        self.lock().faults.add(path, Fault::Status(status), count);
    }

    /// The next request whose method and route contain `path` answers 200 with a JSON list
    /// `[0,0,…]` of `bytes` bytes.
    pub fn oversize_next(&self, path: &str, bytes: usize) {
        self.fault(path, Fault::Oversized(bytes), 1);
    }

    /// The next `count` requests answer `status` (429 or 503) with `Retry-After: secs`.
    pub fn retry_after_next(&self, status: u16, secs: u64, count: usize) {
        self.fault("", Fault::RetryAfter(status, secs), count);
    }

    /// The next `count` requests whose `METHOD route` contains `path` answer a web page with
    /// `status`.
    pub fn page_next(&self, path: &str, status: u16, count: usize) {
        self.fault(path, Fault::Page(status), count);
    }

    /// The next `count` answers carry PHP warnings before their JSON.
    pub fn warn_next(&self, count: usize) {
        self.fault("", Fault::WarningFirst, count);
    }

    /// The next `count` requests are redirected to https.
    pub fn redirect_next(&self, count: usize) {
        self.fault("", Fault::Redirect, count);
    }

    /// The next `count` requests whose `METHOD route` contains `path` are carried out, but answer
    /// `status`, as when a proxy times out after WordPress did the work.
    pub fn lose_answers(&self, path: &str, status: u16, count: usize) {
        self.fault(path, Fault::AnswerLost(status), count);
    }

    /// Every request received, as `METHOD /path?query` without the OAuth parameters.
    pub fn requests(&self) -> Vec<String> {
        self.lock().requests.clone()
    }

    /// The most requests it ever had in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.lock().max_in_flight
    }
}
