//! A connection between a simulated store (BigCommerce, Sellbrite, WooCommerce, Shopify,
//! Amazon or eBay) and a `folder` warehouse, switched on, and the calls the sync tests make through the
//! HTTP API. A rig starts only the simulator of its store; only this file and the suites'
//! adapters know the simulators' APIs, so the tests read as what a user does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use orderbridge::simulate::amazon::{self, Listing, Seller};
use orderbridge::simulate::big_commerce::Simulator;
use orderbridge::simulate::{ebay, sellbrite, shopify, woocommerce};
use rocket::figment::Figment;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{Reply, TestApp, spawn_app_with};

pub const HASH: &str = "store-h4sh";
pub const TOKEN: &str = "bc-token-0123456789";
pub const SB_TOKEN: &str = "sb-account-token-42";
pub const SB_SECRET: &str = "sb-secret-key-9f8e7d";
pub const WOO_KEY: &str = "ck_0123456789abcdef0123456789abcdef01234567";
pub const WOO_SECRET: &str = "cs_76543210fedcba9876543210fedcba9876543210";
pub const SHOP: &str = "acme-rig.myshopify.com";
pub const SHOP_TOKEN: &str = "shpat_rig_token_0123456789";
pub const APP_ID: &str = "rig-app-client-id";
pub const APP_SECRET: &str = "rig-app-client-SECRET-42";
pub const MARKETPLACE: &str = "ATVPDKIKX0DER";

/// The store a rig's connection pulls from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StoreKind {
    BigCommerce,
    /// Sellbrite's order list.
    Sellbrite,
    /// Sellbrite's fulfillments of the account's warehouse (`warehouse_uuid` set).
    SellbriteWarehouse,
    /// A WooCommerce shop at `http://127.0.0.1:PORT` (OAuth 1.0a signatures).
    WooCommerce,
    /// A Shopify shop opened with an access token.
    Shopify,
    /// A Shopify shop opened with an app's client credentials.
    ShopifyApp,
    /// An Amazon seller (a seller id of its own, with four listings: see [`amazon_seller`]).
    Amazon,
    /// An eBay seller (a keyset of its own: see [`ebay_seller`]).
    Ebay,
}

/// The one simulator a rig started for its store.
pub enum StoreSimulator {
    BigCommerce(Simulator),
    /// The simulator and the account's warehouse.
    Sellbrite(sellbrite::Simulator, String),
    WooCommerce(woocommerce::Simulator),
    Shopify(shopify::Simulator),
    Amazon(AmazonStore),
    Ebay(EbayStore),
}

/// An eBay simulator and the rig's seller in it.
pub struct EbayStore {
    pub sim: ebay::Simulator,
    pub seller: ebay::Seller,
}

impl EbayStore {
    /// The seller's name in the simulator.
    pub fn name(&self) -> &str {
        &self.seller.username
    }
}

/// A keyset of its own for each rig: eBay's waits are kept per keyset for the whole process,
/// as they are in the server.
pub fn ebay_seller() -> ebay::Seller {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    ebay::Seller::new(&format!("rig_seller_{}", NEXT.fetch_add(1, Ordering::Relaxed)))
}

pub fn ebay_adapter(seller: &ebay::Seller) -> Value {
    json!({"client_id": seller.client_id, "client_secret": seller.client_secret, "refresh_token": seller.refresh_token,
           "environment": if seller.sandbox { "sandbox" } else { "production" }})
}

/// An Amazon simulator and the rig's seller in it.
pub struct AmazonStore {
    pub sim: amazon::Simulator,
    pub seller: Seller,
}

/// A seller id of its own for each rig: the client's rate-limit buckets are kept per
/// account for the whole process, as they are in the server.
pub fn amazon_seller() -> Seller {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    Seller::new(&format!("A2OBTEST{:06}", NEXT.fetch_add(1, Ordering::Relaxed)), "na", &[MARKETPLACE])
}

pub fn amazon_adapter(seller: &Seller) -> Value {
    json!({"region": seller.region.to_uppercase(), "marketplace_ids": [MARKETPLACE], "seller_id": seller.seller_id,
           "client_id": seller.client_id, "client_secret": seller.client_secret, "refresh_token": seller.refresh_token})
}

impl StoreSimulator {
    /// Starts the simulator of `kind` with `orders` orders ready to ship; its store's
    /// create body and the configuration that points orderbridge at it.
    pub async fn start(
        kind: StoreKind,
        orders: usize,
    ) -> (StoreSimulator, Value, Vec<(&'static str, String)>) {
        match kind {
            StoreKind::BigCommerce => {
                let sim = Simulator::start().await;
                sim.add_store(HASH, TOKEN);
                sim.add_orders(HASH, orders, 7);
                let config = vec![("bigcommerce_api_base", sim.base_url())];
                let body = json!({"platform": "big_commerce", "adapter": {"access_token": TOKEN, "store_hash": HASH}});
                (StoreSimulator::BigCommerce(sim), body, config)
            }
            StoreKind::Sellbrite | StoreKind::SellbriteWarehouse => {
                let sb = sellbrite::Simulator::start().await;
                let warehouse = sb.add_account(SB_TOKEN, SB_SECRET);
                sb.add_orders(SB_TOKEN, orders, 7);
                let mut adapter = json!({"auth_token": SB_TOKEN, "secret_key": SB_SECRET});
                if kind == StoreKind::SellbriteWarehouse {
                    adapter["warehouse_uuid"] = json!(warehouse);
                }
                let config = vec![("sellbrite_api_base", sb.base_url())];
                (
                    StoreSimulator::Sellbrite(sb, warehouse),
                    json!({"platform": "sellbrite", "adapter": adapter}),
                    config,
                )
            }
            StoreKind::WooCommerce => {
                let woo = woocommerce::Simulator::start(WOO_KEY, WOO_SECRET).await;
                woo.add_orders(orders, 7);
                let body = json!({"platform": "woocommerce", "adapter": {"url": woo.url(), "consumer_key": WOO_KEY,
                                                                         "consumer_secret": WOO_SECRET}});
                (StoreSimulator::WooCommerce(woo), body, vec![])
            }
            StoreKind::Shopify | StoreKind::ShopifyApp => {
                let shop = shopify::Simulator::start().await;
                shop.add_shop(SHOP, SHOP_TOKEN, &shopify::ALL_SCOPES);
                shop.add_app(SHOP, APP_ID, APP_SECRET, &shopify::ALL_SCOPES, 86_399);
                shop.add_orders(SHOP, orders, 7);
                let adapter = if kind == StoreKind::Shopify {
                    json!({"shop": SHOP, "access_token": SHOP_TOKEN})
                } else {
                    json!({"shop": SHOP, "client_id": APP_ID, "client_secret": APP_SECRET})
                };
                let config = vec![("shopify_api_base", shop.base_url())];
                (StoreSimulator::Shopify(shop), json!({"platform": "shopify", "adapter": adapter}), config)
            }
            StoreKind::Amazon => {
                let sim = amazon::Simulator::start().await;
                let seller = amazon_seller();
                sim.add_seller(seller.clone());
                let id = seller.seller_id.as_str();
                for (sku, kind, quantity) in
                    [("MUG-BLU", "DRINKING_CUP", 20), ("TEA-GRN", "TEA", 0), ("MUG,XL", "DRINKING_CUP", 1)]
                {
                    sim.add_listing(id, Listing::mfn(sku, kind, quantity));
                }
                sim.add_listing(id, Listing::fba("FBA-ONLY", "TEA", 12));
                for _ in 0..orders {
                    sim.add_order(id, amazon::NewOrder::mfn(&[("MUG-BLU", 1)]));
                }
                let config = vec![
                    ("amazon_api_base", sim.api_base()),
                    ("amazon_lwa_base", sim.lwa_base()),
                    ("ping_mode", "live".to_string()),
                ];
                let body = json!({"platform": "amazon", "adapter": amazon_adapter(&seller)});
                (StoreSimulator::Amazon(AmazonStore { sim, seller }), body, config)
            }
            StoreKind::Ebay => {
                let sim = ebay::Simulator::start().await;
                let seller = ebay_seller();
                sim.add_seller(&seller);
                sim.add_ready_orders(&seller.username, orders);
                let config = vec![
                    ("ebay_api_base", sim.api_base()),
                    ("ebay_sandbox_api_base", sim.sandbox_base()),
                    ("ping_mode", "live".to_string()),
                ];
                let body = json!({"platform": "ebay", "adapter": ebay_adapter(&seller)});
                (StoreSimulator::Ebay(EbayStore { sim, seller }), body, config)
            }
        }
    }
}

pub struct Rig {
    pub app: TestApp,
    /// The simulator of the rig's store, the only one it started.
    pub store: StoreSimulator,
    /// The folder warehouse's root, inside the configured `folder_warehouse_root`.
    pub root: PathBuf,
    pub customer_id: i64,
    pub store_id: i64,
    pub warehouse_id: i64,
    pub connection_id: i64,
    _folders: TempDir,
}

/// The rig's simulator of one platform (a rig of another store has none: a panic).
macro_rules! simulator {
    ($($name:ident -> $ty:ty: $pattern:pat => $found:expr;)*) => {$(
        pub fn $name(&self) -> &$ty {
            match &self.store {
                $pattern => $found,
                _ => panic!("not a {} rig", stringify!($name)),
            }
        }
    )*};
}

impl Rig {
    simulator! {
        bc -> Simulator: StoreSimulator::BigCommerce(sim) => sim;
        sb -> sellbrite::Simulator: StoreSimulator::Sellbrite(sim, _) => sim;
        sb_warehouse -> str: StoreSimulator::Sellbrite(_, warehouse) => warehouse;
        woo -> woocommerce::Simulator: StoreSimulator::WooCommerce(sim) => sim;
        shop -> shopify::Simulator: StoreSimulator::Shopify(sim) => sim;
        amazon -> amazon::Simulator: StoreSimulator::Amazon(amazon) => &amazon.sim;
        seller -> Seller: StoreSimulator::Amazon(amazon) => &amazon.seller;
        ebay -> EbayStore: StoreSimulator::Ebay(ebay) => ebay;
    }
}

impl Rig {
    /// A switched-on connection over a simulated BigCommerce store with `orders` orders
    /// awaiting fulfillment.
    pub async fn new(orders: usize) -> Rig {
        Rig::with(orders, |f| f).await
    }

    pub async fn with(orders: usize, adjust: impl FnOnce(Figment) -> Figment) -> Rig {
        Rig::with_store(StoreKind::BigCommerce, orders, adjust).await
    }

    /// A switched-on connection over a simulated store of `kind` with `orders` orders ready to ship.
    pub async fn of(kind: StoreKind, orders: usize) -> Rig {
        Rig::with_store(kind, orders, |f| f).await
    }

    /// Changes the store's adapter (a PATCH merging `adapter` into it).
    pub async fn patch_store_adapter(&self, adapter: Value) {
        let path = format!("/stores/{}", self.store_id);
        let mut merged = self.app.get(&path, self.admin()).await.body["adapter"].clone();
        for (key, value) in adapter.as_object().unwrap() {
            merged[key] = value.clone();
        }
        let r = self.app.patch_json(&path, self.admin(), json!({"adapter": merged})).await;
        assert_eq!(r.status.code, 204, "{r:?}");
    }

    pub async fn with_store(kind: StoreKind, orders: usize, adjust: impl FnOnce(Figment) -> Figment) -> Rig {
        let (store_sim, store, config) = StoreSimulator::start(kind, orders).await;
        let folders = tempfile::tempdir().expect("temp dir");
        let root = folders.path().join("wh");
        std::fs::create_dir_all(&root).unwrap();
        let folder_root = folders.path().to_path_buf();
        let app = spawn_app_with(move |f| {
            let f = config.into_iter().fold(f, |f, (key, value)| f.merge((key, value)));
            adjust(
                f.merge(("folder_warehouse_root", folder_root))
                    .merge(("sync_retry_base_secs", 1))
                    .merge(("sync_interval_secs", 86_400))
                    .merge(("ping_timeout_secs", 5)),
            )
        })
        .await;
        let customer_id = create(&app, "/customers", json!({"company_name": "Acme"})).await;
        let store = json!({"customer_id": customer_id, "name": "Acme shop", "platform": store["platform"],
                           "adapter": store["adapter"], "enabled_at": "now"});
        let store_id = create(&app, "/stores", store).await;
        let adapter = json!({"connection_string": format!("file://{}", root.display())});
        let warehouse = json!({"customer_id": customer_id, "name": "Main", "platform": "folder",
                               "adapter": adapter, "enabled_at": "now"});
        let warehouse_id = create(&app, "/warehouses", warehouse).await;
        let connection = json!({"name": "Acme to Main", "customer_id": customer_id, "store_id": store_id,
                                "warehouse_id": warehouse_id, "enabled_at": "now"});
        let connection_id = create(&app, "/connections", connection).await;
        let (store, _folders) = (store_sim, folders);
        let rig = Rig { app, store, root, customer_id, store_id, warehouse_id, connection_id, _folders };
        rig.enable_channel("sales").await;
        rig
    }

    pub fn admin(&self) -> &str {
        &self.app.admin
    }

    pub async fn enable_channel(&self, kind: &str) {
        enable_channel(&self.app, self.connection_id, kind).await;
    }

    pub async fn disable_channel(&self, kind: &str) {
        switch_channel(&self.app, self.connection_id, kind, Value::Null).await;
    }

    /// Asks for a pass and waits until it has finished; returns the run.
    pub async fn sync(&self) -> Value {
        self.sync_connection(self.connection_id).await
    }

    pub async fn sync_connection(&self, connection_id: i64) -> Value {
        pass(&self.app, connection_id).await
    }

    /// A pass that must succeed; the run.
    pub async fn sync_ok(&self) -> Value {
        self.sync_connection_ok(self.connection_id).await
    }

    pub async fn sync_connection_ok(&self, connection_id: i64) -> Value {
        let run = pass(&self.app, connection_id).await;
        assert_eq!(run["status"], "succeeded", "{run}");
        run
    }

    /// A second warehouse (`warehouse` is its create body, less the customer) with its own
    /// switched-on connection, which the store's orders now go through: the first
    /// connection is switched off. Returns the new connection's id.
    pub async fn connect_warehouse(&self, mut warehouse: Value) -> i64 {
        warehouse["customer_id"] = json!(self.customer_id);
        warehouse["enabled_at"] = json!("now");
        let warehouse_id = create(&self.app, "/warehouses", warehouse).await;
        let connection = json!({"name": "second", "customer_id": self.customer_id, "store_id": self.store_id,
                                "warehouse_id": warehouse_id, "enabled_at": "now"});
        let connection = create(&self.app, "/connections", connection).await;
        let first = format!("/connections/{}", self.connection_id);
        let off = self.app.patch_json(&first, self.admin(), json!({"enabled_at": null})).await;
        assert_eq!(off.status.code, 204, "{off:?}");
        enable_channel(&self.app, connection, "sales").await;
        connection
    }

    /// A second folder warehouse at the rig's folder `name`, connected as [`Rig::connect_warehouse`]
    /// does; the connection's id and the folder.
    pub async fn connect_folder(&self, name: &str) -> (i64, PathBuf) {
        let dir = self.dir(name);
        std::fs::create_dir_all(&dir).unwrap();
        let adapter = json!({"connection_string": format!("file://{}", dir.display())});
        (self.connect_warehouse(json!({"name": name, "platform": "folder", "adapter": adapter})).await, dir)
    }

    /// A token of another tenant's user and one of a user of the rig's customer.
    pub async fn tokens(&self) -> (String, String) {
        let (_, other) = self.app.tenant("Other Co").await;
        let role = orderbridge::http::users::Role::Customer;
        (other, self.app.user_token("acme-user", role, Some(self.customer_id)).await)
    }

    /// Asks to retry `what` (`orders/ID`, `shipments/ID`); the answer.
    pub async fn retry(&self, what: &str) -> Reply {
        self.app.post_json(&format!("/{what}/retry"), self.admin(), json!({})).await
    }

    /// The warehouse of connection `connection_id`.
    pub async fn warehouse_of(&self, connection_id: i64) -> i64 {
        let connection = self.app.get(&format!("/connections/{connection_id}"), self.admin()).await;
        connection.body["warehouse_id"].as_i64().unwrap()
    }

    /// A second store of the customer (`store` is its platform and adapter) with its own
    /// switched-on connection to the warehouse `warehouse_id`; the connection's id.
    pub async fn connect_store(&self, store: Value, warehouse_id: i64) -> i64 {
        let mut body = json!({"customer_id": self.customer_id, "name": "Second shop", "enabled_at": "now"});
        body.as_object_mut().unwrap().extend(store.as_object().unwrap().clone());
        let store_id = create(&self.app, "/stores", body).await;
        let connection = json!({"name": "second shop", "customer_id": self.customer_id, "store_id": store_id,
                                "warehouse_id": warehouse_id, "enabled_at": "now"});
        let connection_id = create(&self.app, "/connections", connection).await;
        enable_channel(&self.app, connection_id, "sales").await;
        connection_id
    }

    pub async fn wait_for(&self, connection_id: i64, run_id: i64) -> Value {
        wait_for(&self.app, connection_id, run_id).await
    }

    /// Every order, oldest first (session mode, so there is no cap).
    pub async fn orders(&self) -> Vec<Value> {
        self.list("orders").await
    }

    /// Every order by its id at the store.
    pub async fn orders_by_external(&self) -> BTreeMap<String, Value> {
        let orders = self.orders().await.into_iter();
        orders.map(|o| (o["external_id"].as_str().unwrap().to_string(), o)).collect()
    }

    pub async fn shipments(&self) -> Vec<Value> {
        self.list("shipments").await
    }

    async fn list(&self, key: &str) -> Vec<Value> {
        let mut rows = Vec::new();
        let mut r: Reply = self.app.get(&format!("/{key}?limit=1000&sort=id"), self.admin()).await;
        for _ in 0..100 {
            assert_eq!(r.status.code, 200, "{r:?}");
            let page = r.body[key].as_array().cloned().unwrap_or_default();
            if page.is_empty() {
                break;
            }
            rows.extend(page);
            let session = r.body["session_id"].as_str().expect("session_id").to_string();
            r = self.app.get(&format!("/{key}?session_id={session}"), self.admin()).await;
        }
        rows
    }

    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// The names of the files in a folder of the warehouse, sorted.
    pub fn files(&self, name: &str) -> Vec<String> {
        files_in(&self.dir(name))
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Puts a shipment file where the warehouse would.
    pub fn drop_shipments(&self, name: &str, text: &str) {
        let dir = self.dir("shipments");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }

    /// Ships the whole of each (order, tracking, carrier) through the shipment file `name`.
    pub fn ship_whole(&self, name: &str, orders: &[(i64, &str, &str)]) {
        let mut file = String::from("order_id,tracking_number,carrier_name,service_level,shipped_at\n");
        for (order, tracking, carrier) in orders {
            file.push_str(&format!("{order},{tracking},{carrier},Priority,2024-03-05T10:00:00Z\n"));
        }
        self.drop_shipments(name, &file);
    }

    /// A pass, then the warehouse ships the first order whole through `s.csv`; the order.
    pub async fn ship_first(&self, tracking: &str, carrier: &str) -> Value {
        self.sync().await;
        let order = self.orders().await.remove(0);
        self.ship_whole("s.csv", &[(order["id"].as_i64().unwrap(), tracking, carrier)]);
        order
    }

    /// Products of the rig's customer with these SKUs; their ids.
    pub async fn add_products(&self, skus: &[impl AsRef<str>]) -> Vec<i64> {
        let mut ids = Vec::new();
        for sku in skus {
            let body = json!({"customer_id": self.customer_id, "sku": sku.as_ref()});
            ids.push(create(&self.app, "/products", body).await);
        }
        ids
    }

    /// A bundle product `sku` of (component product id, quantity) pairs; its id.
    pub async fn add_bundle(&self, sku: &str, components: &[(i64, i64)]) -> i64 {
        let bundle: Vec<Value> =
            components.iter().map(|(id, qty)| json!({"product_id": id, "qty": qty})).collect();
        create(&self.app, "/products", json!({"customer_id": self.customer_id, "sku": sku, "bundle": bundle}))
            .await
    }

    /// orderbridge's order for the store's order `external`.
    pub async fn order_of(&self, external: impl ToString) -> Value {
        let external = external.to_string();
        let orders = self.orders().await;
        orders.into_iter().find(|o| o["external_id"].as_str() == Some(external.as_str())).expect("the order")
    }

    pub fn drop_stock(&self, name: &str, text: &str) {
        let dir = self.dir("inventory");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }

    /// The stock levels recorded as sent for the connection, by SKU.
    pub fn stock_sent(&self) -> BTreeMap<String, i64> {
        let conn = self.app.pool().get().unwrap();
        let mut stmt = conn.prepare("SELECT sku, quantity FROM stock_sent WHERE connection_id = ?1").unwrap();
        stmt.query_map([self.connection_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// Every data row of every order file, as (file, order_id, line, sku).
    pub fn order_file_rows(&self) -> Vec<(String, i64, String, String)> {
        let mut rows = Vec::new();
        for name in self.files("orders") {
            let mut reader = csv::Reader::from_path(self.dir("orders").join(&name)).unwrap();
            let headers = reader.headers().unwrap().clone();
            let at = |n: &str| headers.iter().position(|h| h == n).unwrap();
            for record in reader.records() {
                let record = record.unwrap();
                rows.push((
                    name.clone(),
                    record[at("order_id")].parse().unwrap(),
                    record[at("line")].to_string(),
                    record[at("sku")].to_string(),
                ));
            }
        }
        rows
    }
}

/// Creates what `body` says at `path`, as an admin; its id.
async fn create(app: &TestApp, path: &str, body: Value) -> i64 {
    app.post_json(path, &app.admin, body).await.id()
}

/// The ids of `orders`.
pub fn ids(orders: &[Value]) -> Vec<i64> {
    orders.iter().map(|o| o["id"].as_i64().unwrap()).collect()
}

/// Asserts that `run` failed with `code`, at `step` when one is named, its message saying
/// each of `says`.
pub fn assert_failed(run: &Value, step: Option<&str>, code: &str, says: &[&str]) {
    assert_eq!(run["status"], "failed", "{run}");
    if let Some(step) = step {
        assert_eq!(run["error"]["step"], step, "{run}");
    }
    assert_eq!(run["error"]["code"], code, "{run}");
    let message = run["error"]["message"].as_str().unwrap_or_default();
    for part in says {
        assert!(message.contains(part), "{part:?} not in {run}");
    }
}

/// Asserts that no secret of `secrets` is in any text `shown`.
pub fn assert_hidden(shown: &[String], secrets: &[String]) {
    for (text, secret) in shown.iter().flat_map(|text| secrets.iter().map(move |secret| (text, secret))) {
        assert!(!text.contains(secret.as_str()), "a credential shown: {text}");
    }
}

/// Switches on the connection's channel of `kind` (`sales`, `inventory`), as an admin.
pub async fn enable_channel(app: &TestApp, connection_id: i64, kind: &str) {
    switch_channel(app, connection_id, kind, json!("now")).await;
}

async fn switch_channel(app: &TestApp, connection_id: i64, kind: &str, enabled_at: Value) {
    let path = format!("/connections/{connection_id}/channels");
    let channels = app.get(&path, &app.admin).await;
    let id = channels.body.as_array().unwrap().iter().find(|c| c["type"] == kind).expect("channel")["id"]
        .as_i64()
        .unwrap();
    let r = app.patch_json(&format!("{path}/{id}"), &app.admin, json!({"enabled_at": enabled_at})).await;
    assert_eq!(r.status.code, 204, "{r:?}");
}

/// Asks for a pass of the connection and waits until it has finished; returns the run.
pub async fn pass(app: &TestApp, connection_id: i64) -> Value {
    let started = app.post_json(&format!("/connections/{connection_id}/sync"), &app.admin, json!({})).await;
    assert_eq!(started.status.code, 202, "{started:?}");
    let run_id = started.body["run_id"].as_i64().expect("run_id");
    wait_for(app, connection_id, run_id).await
}

/// Waits (bounded) until run `run_id` of the connection has finished; returns it.
pub async fn wait_for(app: &TestApp, connection_id: i64, run_id: i64) -> Value {
    let path = format!("/connections/{connection_id}/sync_runs/{run_id}");
    for _ in 0..600 {
        let run = app.get(&path, &app.admin).await;
        assert_eq!(run.status.code, 200, "{run:?}");
        if !run.body["finished_at"].is_null() {
            return run.body;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {run_id} did not finish within 30 s");
}

pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
