//! The demo that flows (`serve --demo`): the other side of every demo connection, simulated
//! inside the process on loopback, so a new user watches orders arrive at the stores, go to
//! the warehouse, ship and get their tracking back, on a machine with no network.
//!
//! - A simulated BigCommerce and a simulated Sellbrite answer for the demo's stores (their
//!   adapters' credentials), holding the orders the demo data says they had, and take a new
//!   order every few seconds.
//! - A simulated WooCommerce shop answers for the demo's WooCommerce store, which the demo
//!   adds to a database it has just seeded (its address is the shop's loopback port, known
//!   only once the shop listens), and takes a new order now and then.
//! - A simulated Shopify shop answers for the demo's Shopify store and also holds an inventory
//!   item per product of its customer, so stock sent to it shows.
//! - A simulated warehouse worker serves every `folder` warehouse: each order file that has
//!   waited a few seconds is "picked", a shipment file with a tracking number per order is
//!   dropped in `shipments/`, and the order file moves to `orders/received/`. Two of them are
//!   3PLs with a language of their own (`demo_formats`): Landmark-like CSV, and X12.
//!
//! Only the other side is simulated: orderbridge's engine and platform clients do the real
//! work over real HTTP and real files.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::demo_rows::{connect, customer_skus};
use super::{amazon, big_commerce, ebay, sellbrite, shipbob, shipstation, shopify, woocommerce};

/// The demo WooCommerce store's REST API key (simulated: it opens nothing real).
const WOO_KEY: &str = "ck_demo0000000000000000000000000000000woo1";
const WOO_SECRET: &str = "cs_demo0000000000000000000000000000000woo1";

/// The demo ShipBob warehouse's Personal Access Token (simulated: it opens nothing real).
const SHIPBOB_TOKEN: &str = "pat-demo-shipbob-0000000000000000";

/// How the demo's ShipBob ships: within a minute of an order's arrival, now and then in two
/// parcels or after a wait for stock, so a newcomer sees tracking come back while watching.
fn shipbob_pace() -> shipbob::AutoShip {
    shipbob::AutoShip {
        after: Duration::from_secs(15),
        spread: Duration::from_secs(30),
        split_one_in: 5,
        split_gap: Duration::from_secs(20),
        exception_one_in: 8,
        exception_wait: Duration::from_secs(60),
    }
}

/// The demo ShipStation warehouse's API key (simulated: it opens nothing real), and how long
/// after a shipment arrives its label is bought.
const SHIPSTATION_KEY: &str = "ss-demo-shipstation-000000000000";
const SHIPSTATION_LABEL_AFTER: Duration = Duration::from_secs(20);

/// How often a simulated store takes a new order (one store at a time, in turn).
const ORDER_EVERY: Duration = Duration::from_secs(4);

/// How often the warehouse worker looks for order files, and how long a file waits first.
const WORKER_EVERY: Duration = Duration::from_secs(2);
const SHIP_AFTER: Duration = Duration::from_secs(6);

/// A demo store: the simulator that answers for it and the account that names it there.
#[derive(Debug, Clone)]
enum DemoStore {
    BigCommerce { hash: String },
    Sellbrite { token: String },
    Shopify { shop: String },
}

pub struct Demo {
    pub big_commerce: big_commerce::Simulator,
    pub sellbrite: sellbrite::Simulator,
    pub woocommerce: woocommerce::Simulator,
    pub shopify: shopify::Simulator,
    pub shipbob: shipbob::Simulator,
    pub shipstation: shipstation::Simulator,
    pub amazon: amazon::Simulator,
    pub ebay: ebay::Simulator,
    stores: usize,
    warehouses: usize,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Demo {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// What the demo data says the simulated side holds, read before anything runs.
pub struct Plan {
    /// Each store, its credentials (token, secret), its orders and its customer's SKUs.
    stores: Vec<(DemoStore, String, Vec<Adopted>, Vec<String>)>,
    /// Each `folder` warehouse's folder and adapter (which files its 3PL speaks).
    warehouses: Vec<(PathBuf, Value)>,
}

/// An order the store had: its number there, when it was placed, and its lines (line id,
/// sku, units).
struct Adopted {
    number: i64,
    placed_ms: i64,
    lines: Vec<(String, String, i64)>,
}

impl Plan {
    /// Reads the demo's stores, their orders and its `folder` warehouses (those inside
    /// `folder_root`, the configured `folder_warehouse_root`).
    pub fn read(conn: &Connection, folder_root: &Path) -> Result<Plan, String> {
        let db = |e: rusqlite::Error| format!("database: {e}");
        let mut listed = conn
            .prepare(
                "SELECT id, platform, ob_open(adapter), customer_id FROM stores
                 WHERE platform IN ('big_commerce', 'bigcommerce', 'sellbrite', 'shopify') ORDER BY id",
            )
            .map_err(db)?;
        let rows = listed
            .query_map([], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?))
            })
            .map_err(db)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(db)?;
        let mut stores = Vec::with_capacity(rows.len());
        for (id, platform, adapter, customer_id) in rows {
            let adapter: Value = serde_json::from_str(&adapter).unwrap_or(Value::Null);
            let field = |key: &str| adapter.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
            let (store, secret) = match platform.as_str() {
                "sellbrite" => (DemoStore::Sellbrite { token: field("auth_token") }, field("secret_key")),
                "shopify" => (DemoStore::Shopify { shop: field("shop") }, field("access_token")),
                _ => (DemoStore::BigCommerce { hash: field("store_hash") }, field("access_token")),
            };
            let skus = if platform == "shopify" {
                customer_skus(conn, customer_id).map_err(db)?
            } else {
                Vec::new()
            };
            stores.push((store, secret, store_orders(conn, id).map_err(db)?, skus));
        }
        let warehouses = warehouse_folders(conn, folder_root).map_err(db)?;
        Ok(Plan { stores, warehouses })
    }
}

impl Demo {
    /// Starts the simulated platforms holding what `plan` read, and the tasks that keep the
    /// demo moving.
    pub async fn start(plan: Plan) -> Result<Demo, String> {
        let big_commerce = big_commerce::Simulator::start().await;
        let sellbrite = sellbrite::Simulator::start().await;
        let woocommerce = woocommerce::Simulator::start(WOO_KEY, WOO_SECRET).await;
        let shopify = shopify::Simulator::start().await;
        let shipbob = shipbob::Simulator::start().await;
        shipbob.set_auto_ship(Some(shipbob_pace()));
        let shipstation = shipstation::Simulator::start().await;
        shipstation.set_label_after(Some(SHIPSTATION_LABEL_AFTER));
        let amazon = amazon::Simulator::start().await;
        let ebay = ebay::Simulator::start().await;
        let mut stores = Vec::with_capacity(plan.stores.len());
        for (store, secret, orders, skus) in plan.stores {
            match &store {
                DemoStore::BigCommerce { hash } => {
                    big_commerce.add_store(hash, &secret);
                    for order in orders {
                        let lines: Vec<(i64, String, i64)> = order
                            .lines
                            .into_iter()
                            .filter_map(|(line, sku, quantity)| Some((line.parse().ok()?, sku, quantity)))
                            .collect();
                        big_commerce.adopt_order(hash, order.number, order.placed_ms, &lines);
                    }
                }
                DemoStore::Sellbrite { token } => {
                    sellbrite.add_account(token, &secret);
                    for order in orders {
                        sellbrite.adopt_order(token, order.number, order.placed_ms, &order.lines);
                    }
                }
                DemoStore::Shopify { shop } => {
                    shopify.add_shop(shop, &secret, &shopify::ALL_SCOPES);
                    for order in orders {
                        let lines: Vec<(i64, String, i64)> = order
                            .lines
                            .into_iter()
                            .filter_map(|(line, sku, quantity)| Some((line.parse().ok()?, sku, quantity)))
                            .collect();
                        shopify.adopt_order(shop, order.number, order.placed_ms, &lines);
                    }
                    for sku in &skus {
                        shopify.add_item(shop, sku, true, true);
                    }
                }
            }
            stores.push(store);
        }
        for (folder, _) in &plan.warehouses {
            for dir in ["orders", "shipments"] {
                std::fs::create_dir_all(folder.join(dir)).map_err(|e| {
                    format!("cannot create the demo warehouse folder {}: {e}", folder.display())
                })?;
            }
        }
        let mut demo = Demo {
            big_commerce,
            sellbrite,
            woocommerce,
            shopify,
            shipbob,
            shipstation,
            amazon,
            ebay,
            stores: stores.len(),
            warehouses: plan.warehouses.len(),
            tasks: Vec::new(),
        };
        demo.tasks.push(tokio::spawn(take_orders(
            stores,
            demo.big_commerce.handle(),
            demo.sellbrite.handle(),
            demo.shopify.handle(),
        )));
        demo.tasks.push(tokio::spawn(work_warehouses(plan.warehouses)));
        Ok(demo)
    }

    /// Points the demo's WooCommerce store at the simulated shop. On a database just seeded
    /// the store is added, for the first customer with a `folder` warehouse, with a switched-on
    /// connection to that warehouse; on a later start, the store added then is pointed at the
    /// shop's new port. The shop then takes a new order every few passes.
    pub fn attach_woocommerce(&mut self, conn: &Connection, seeded: bool) -> Result<(), String> {
        let db = |e: rusqlite::Error| format!("database: {e}");
        let adapter =
            json!({"url": self.woocommerce.url(), "consumer_key": WOO_KEY, "consumer_secret": WOO_SECRET});
        let adapter = adapter.to_string();
        let now = crate::dates::now_ms();
        let attached = if seeded {
            let found: Option<(i64, i64)> = conn
                .query_row(
                    "SELECT customer_id, id FROM warehouses WHERE platform = 'folder' ORDER BY customer_id, id LIMIT 1",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(db)?;
            let Some((customer, warehouse)) = found else { return Ok(()) };
            let tx = conn.unchecked_transaction().map_err(db)?;
            tx.execute(
                "INSERT INTO stores (customer_id, name, description, url, platform, adapter, created_at, enabled_at)
                 VALUES (?1, 'Web Shop (WooCommerce)', 'woocommerce store of the demo', ?2, 'woocommerce', ob_seal(?3), ?4, ?4)",
                params![customer, self.woocommerce.url(), adapter, now],
            )
            .map_err(db)?;
            let store = tx.last_insert_rowid();
            tx.execute("INSERT INTO store_cursors (store_id, cursor) VALUES (?1, ?2)", params![store, now])
                .map_err(db)?;
            connect(&tx, (customer, store, warehouse), "WooCommerce fulfillment", false, now).map_err(db)?;
            tx.commit().map_err(db)?;
            1
        } else {
            conn.execute(
                "UPDATE stores SET adapter = ob_seal(?1)
                 WHERE platform = 'woocommerce' AND json_extract(ob_open(adapter), '$.consumer_key') = ?2",
                params![adapter, WOO_KEY],
            )
            .map_err(db)?
        };
        if attached > 0 {
            self.stores += 1;
            let shop = self.woocommerce.handle();
            self.tasks.push(tokio::spawn(async move {
                let mut ticker = tokio::time::interval(ORDER_EVERY * 3);
                ticker.tick().await;
                for n in 0u64.. {
                    ticker.tick().await;
                    shop.add_orders(1, 7_000 + n);
                }
            }));
        }
        Ok(())
    }

    /// Gives one demo customer a ShipBob warehouse. On a database just seeded, the customer of
    /// the last BigCommerce store gets a `shipbob` warehouse, and that store's orders go there
    /// (its other connections are switched off, sales and stock switched on); on a later start,
    /// the simulated ShipBob account is opened again for it. Its inventory holds the customer's
    /// products, so stock flows to the store too.
    pub fn attach_shipbob(&mut self, conn: &Connection, seeded: bool) -> Result<(), String> {
        let customers = api_warehouse(conn, seeded, ("shipbob", "ShipBob (3PL)", SHIPBOB_TOKEN))?;
        if customers.is_empty() {
            return Ok(());
        }
        self.shipbob.add_account(SHIPBOB_TOKEN);
        for customer in customers {
            let skus = customer_skus(conn, customer).map_err(|e| format!("database: {e}"))?;
            for (n, sku) in skus.iter().enumerate() {
                self.shipbob.add_inventory(SHIPBOB_TOKEN, sku, sku, 20 + (n as i64 * 7) % 60);
            }
        }
        self.warehouses += 1;
        Ok(())
    }

    /// Gives another demo customer a ShipStation warehouse, as [`Demo::attach_shipbob`] does:
    /// on a database just seeded, the last BigCommerce store not sending to ShipBob sends its
    /// orders to a `shipstation` warehouse whose labels are bought 20 s after each order
    /// arrives; on a later start, the simulated account is opened again with its inventory.
    pub fn attach_shipstation(&mut self, conn: &Connection, seeded: bool) -> Result<(), String> {
        let warehouse = ("shipstation", "ShipStation (own warehouse)", SHIPSTATION_KEY);
        let customers = api_warehouse(conn, seeded, warehouse)?;
        if customers.is_empty() {
            return Ok(());
        }
        self.shipstation.add_account(SHIPSTATION_KEY);
        for customer in customers {
            let skus = customer_skus(conn, customer).map_err(|e| format!("database: {e}"))?;
            for (n, sku) in skus.iter().enumerate() {
                self.shipstation.add_inventory(SHIPSTATION_KEY, sku, "iw-demo", 30 + (n as i64 * 5) % 50, 0);
            }
        }
        self.warehouses += 1;
        Ok(())
    }

    /// Gives one demo customer an Amazon store ([`super::demo_amazon`]).
    pub fn attach_amazon(&mut self, conn: &Connection, seeded: bool) -> Result<(), String> {
        if super::demo_amazon::attach(&self.amazon, conn, seeded)? {
            self.stores += 1;
        }
        Ok(())
    }

    /// Gives one demo customer an eBay store ([`super::demo_ebay`]).
    pub fn attach_ebay(&mut self, conn: &Connection, seeded: bool) -> Result<(), String> {
        if let Some(task) = super::demo_ebay::attach(&self.ebay, conn, seeded)? {
            self.stores += 1;
            self.tasks.extend(task);
        }
        Ok(())
    }

    /// One line for the person who started it.
    pub fn describe(&self) -> String {
        format!(
            "simulated BigCommerce at {}, Sellbrite at {}, Shopify at {}, WooCommerce at {}, Amazon at {} and eBay at {} answer for the {} demo stores (a new order every {} s); a simulated ShipBob at {}, a simulated ShipStation at {} and a simulated worker at the warehouse folders ship what reaches the {} demo warehouses",
            self.big_commerce.base_url(),
            self.sellbrite.base_url(),
            self.shopify.base_url(),
            self.woocommerce.url(),
            self.amazon.lwa_base(),
            self.ebay.api_base(),
            self.stores,
            ORDER_EVERY.as_secs(),
            self.shipbob.base_url(),
            self.shipstation.base_url(),
            self.warehouses
        )
    }
}

/// A demo warehouse reached by API, (`platform`, name, credential): on a database just seeded,
/// the last BigCommerce store not yet sending to one gets it, with its other connections
/// switched off and a connection with sales and stock on. Returns the customers whose
/// warehouses of `platform` hold the credential (none: nothing to simulate).
fn api_warehouse(
    conn: &Connection,
    seeded: bool,
    (platform, name, token): (&str, &str, &str),
) -> Result<Vec<i64>, String> {
    let db = |e: rusqlite::Error| format!("database: {e}");
    let now = crate::dates::now_ms();
    if seeded {
        let found: Option<(i64, i64)> = conn
            .query_row(
                "SELECT customer_id, id FROM stores WHERE platform IN ('big_commerce', 'bigcommerce')
                   AND id NOT IN (SELECT c.store_id FROM connections c JOIN warehouses w ON w.id = c.warehouse_id
                                  WHERE w.platform IN ('shipbob', 'shipstation'))
                 ORDER BY id DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(db)?;
        if let Some((customer, store)) = found {
            let adapter = json!({"access_token": token}).to_string();
            let tx = conn.unchecked_transaction().map_err(db)?;
            tx.execute(
                "INSERT INTO warehouses (customer_id, name, platform, adapter, created_at, enabled_at)
                 VALUES (?1, ?2, ?3, ob_seal(?4), ?5, ?5)",
                params![customer, name, platform, adapter, now],
            )
            .map_err(db)?;
            let warehouse = tx.last_insert_rowid();
            tx.execute("UPDATE connections SET enabled_at = NULL WHERE store_id = ?1", [store])
                .map_err(db)?;
            let connection = format!("{} fulfillment", name.split(' ').next().unwrap_or(name));
            connect(&tx, (customer, store, warehouse), &connection, true, now).map_err(db)?;
            tx.commit().map_err(db)?;
        }
    }
    conn.prepare(
        "SELECT customer_id FROM warehouses WHERE platform = ?1 AND json_extract(ob_open(adapter), '$.access_token') = ?2",
    )
    .and_then(|mut s| s.query_map([platform, token], |r| r.get::<_, i64>(0))?.collect::<rusqlite::Result<Vec<_>>>())
    .map_err(db)
}

/// The orders the demo data says the store had, so their shipments can be reported there;
/// changed an hour ago at the latest, so a pull from the demo's cursor does not list them.
fn store_orders(conn: &Connection, store_id: i64) -> rusqlite::Result<Vec<Adopted>> {
    let latest = crate::dates::now_ms() - 3_600_000;
    let mut orders = conn.prepare_cached(
        "SELECT id, external_id, COALESCE(ordered_at, 0) FROM orders WHERE store_id = ?1 AND external_id IS NOT NULL",
    )?;
    let mut items = conn.prepare_cached(
        "SELECT COALESCE(external_order_item_id, ''), COALESCE(sku, ''), quantity FROM order_items
         WHERE order_id = ?1 ORDER BY position",
    )?;
    let rows = orders
        .query_map([store_id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut adopted = Vec::with_capacity(rows.len());
    for (id, external_id, ordered_at) in rows {
        let Ok(number) = external_id.parse::<i64>() else { continue };
        let lines = items
            .query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        adopted.push(Adopted { number, placed_ms: ordered_at.min(latest), lines });
    }
    Ok(adopted)
}

/// The demo's `folder` warehouses: their folders, if inside the root, with their adapters.
fn warehouse_folders(conn: &Connection, root: &Path) -> rusqlite::Result<Vec<(PathBuf, Value)>> {
    let mut stmt =
        conn.prepare("SELECT ob_open(adapter) FROM warehouses WHERE platform = 'folder' ORDER BY id")?;
    let adapters = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(adapters
        .iter()
        .filter_map(|adapter| {
            let adapter: Value = serde_json::from_str(adapter).ok()?;
            let url = adapter.get("connection_string")?.as_str()?;
            crate::platforms::files::folder::check_inside_root(url, root).ok()?;
            Some((crate::platforms::files::folder::parse(url).ok()?, adapter))
        })
        .collect())
}

/// A new order at one store after another, forever.
async fn take_orders(
    stores: Vec<DemoStore>,
    big_commerce: big_commerce::Handle,
    sellbrite: sellbrite::Handle,
    shopify: shopify::Handle,
) {
    if stores.is_empty() {
        return;
    }
    let mut ticker = tokio::time::interval(ORDER_EVERY);
    ticker.tick().await;
    for n in 0u64.. {
        ticker.tick().await;
        match &stores[(n % stores.len() as u64) as usize] {
            DemoStore::BigCommerce { hash } => big_commerce.add_orders(hash, 1, n + 1),
            DemoStore::Sellbrite { token } => {
                sellbrite.add_orders(token, 1, n + 1);
            }
            DemoStore::Shopify { shop } => {
                shopify.add_orders(shop, 1, n + 1);
            }
        }
    }
}

/// The warehouse worker: ships each order file that has waited `SHIP_AFTER`.
async fn work_warehouses(folders: Vec<(PathBuf, Value)>) {
    let mut ticker = tokio::time::interval(WORKER_EVERY);
    loop {
        ticker.tick().await;
        let folders = folders.clone();
        let worked = tokio::task::spawn_blocking(move || {
            for (folder, adapter) in &folders {
                let worked =
                    super::demo_formats::serve(folder, adapter).unwrap_or_else(|| ship_waiting_files(folder));
                if let Err(e) = worked {
                    log::warn!("demo warehouse worker: {}: {e}", folder.display());
                }
            }
        })
        .await;
        if worked.is_err() {
            return;
        }
    }
}

/// Answers every order file in `folder/orders` older than `SHIP_AFTER` with a shipment file.
pub fn ship_waiting_files(folder: &Path) -> std::io::Result<usize> {
    let (orders, shipments) = (folder.join("orders"), folder.join("shipments"));
    let mut shipped = 0;
    let mut names: Vec<String> = std::fs::read_dir(&orders)?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|at| SystemTime::now().duration_since(at).unwrap_or_default() >= SHIP_AFTER)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n.ends_with(".csv"))
        .collect();
    names.sort();
    for name in names {
        let mut reader = csv::Reader::from_path(orders.join(&name)).map_err(std::io::Error::other)?;
        let headers = reader.headers().map_err(std::io::Error::other)?.clone();
        let at = |column: &str| headers.iter().position(|h| h == column);
        let (Some(order_at), carrier_at, level_at) = (at("order_id"), at("carrier"), at("service_level"))
        else {
            continue;
        };
        let mut out = csv::Writer::from_writer(Vec::new());
        out.write_record(["order_id", "tracking_number", "carrier_name", "service_level"])
            .map_err(std::io::Error::other)?;
        let mut seen = std::collections::BTreeSet::new();
        for record in reader.records() {
            let record = record.map_err(std::io::Error::other)?;
            let order = record.get(order_at).unwrap_or_default().to_string();
            if order.is_empty() || !seen.insert(order.clone()) {
                continue;
            }
            let carrier = carrier_at.and_then(|i| record.get(i)).filter(|c| !c.is_empty()).unwrap_or("UPS");
            let level = level_at.and_then(|i| record.get(i)).unwrap_or_default();
            let tracking = format!(
                "1ZDEMO{:010}",
                order.parse::<u64>().unwrap_or(0).wrapping_mul(7_919) % 10_000_000_000
            );
            out.write_record([order.as_str(), tracking.as_str(), carrier, level])
                .map_err(std::io::Error::other)?;
        }
        let bytes = out.into_inner().map_err(|e| std::io::Error::other(e.to_string()))?;
        // Written under a dot name and renamed, as orderbridge writes its own files.
        let temp = shipments.join(format!(".ship-{name}"));
        std::fs::write(&temp, bytes)?;
        std::fs::rename(&temp, shipments.join(format!("ship-{name}")))?;
        std::fs::create_dir_all(orders.join("received"))?;
        std::fs::rename(orders.join(&name), orders.join("received").join(&name))?;
        shipped += seen.len();
    }
    Ok(shipped)
}
