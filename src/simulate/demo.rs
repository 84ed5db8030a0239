//! The demo that flows (`serve --demo`): the other side of every demo connection, simulated
//! inside the process on loopback, so a new user watches orders arrive at the stores, go to
//! the warehouse, ship and get their tracking back, on a machine with no network.
//!
//! - A simulated BigCommerce and a simulated Sellbrite answer for the demo's stores (their
//!   adapters' credentials), holding the orders the demo data says they had, and take a new
//!   order every few seconds.
//! - A simulated warehouse worker serves every `folder` warehouse: each order file that has
//!   waited a few seconds is "picked", a shipment file with a tracking number per order is
//!   dropped in `shipments/`, and the order file moves to `orders/received/`.
//!
//! Only the other side is simulated: orderbridge's engine and platform clients do the real
//! work over real HTTP and real files.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rusqlite::Connection;
use serde_json::Value;
use tokio::task::JoinHandle;

use super::{big_commerce, sellbrite};

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
}

pub struct Demo {
    pub big_commerce: big_commerce::Simulator,
    pub sellbrite: sellbrite::Simulator,
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
    /// Each store, its credentials (token, secret) and its orders.
    stores: Vec<(DemoStore, String, Vec<Adopted>)>,
    warehouses: Vec<PathBuf>,
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
                "SELECT id, platform, ob_open(adapter) FROM stores
                 WHERE platform IN ('big_commerce', 'bigcommerce', 'sellbrite') ORDER BY id",
            )
            .map_err(db)?;
        let rows = listed
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))
            .map_err(db)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(db)?;
        let mut stores = Vec::with_capacity(rows.len());
        for (id, platform, adapter) in rows {
            let adapter: Value = serde_json::from_str(&adapter).unwrap_or(Value::Null);
            let field = |key: &str| adapter.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
            let (store, secret) = if platform == "sellbrite" {
                (DemoStore::Sellbrite { token: field("auth_token") }, field("secret_key"))
            } else {
                (DemoStore::BigCommerce { hash: field("store_hash") }, field("access_token"))
            };
            stores.push((store, secret, store_orders(conn, id).map_err(db)?));
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
        let mut stores = Vec::with_capacity(plan.stores.len());
        for (store, secret, orders) in plan.stores {
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
            }
            stores.push(store);
        }
        for folder in &plan.warehouses {
            for dir in ["orders", "shipments"] {
                std::fs::create_dir_all(folder.join(dir)).map_err(|e| {
                    format!("cannot create the demo warehouse folder {}: {e}", folder.display())
                })?;
            }
        }
        let mut demo = Demo {
            big_commerce,
            sellbrite,
            stores: stores.len(),
            warehouses: plan.warehouses.len(),
            tasks: Vec::new(),
        };
        demo.tasks.push(tokio::spawn(take_orders(
            stores,
            demo.big_commerce.handle(),
            demo.sellbrite.handle(),
        )));
        demo.tasks.push(tokio::spawn(work_warehouses(plan.warehouses)));
        Ok(demo)
    }

    /// One line for the person who started it.
    pub fn describe(&self) -> String {
        format!(
            "simulated BigCommerce at {} and Sellbrite at {} answer for the {} demo stores (a new order every {} s); a simulated worker ships what reaches the {} warehouse folders",
            self.big_commerce.base_url(),
            self.sellbrite.base_url(),
            self.stores,
            ORDER_EVERY.as_secs(),
            self.warehouses
        )
    }
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

/// The demo's `folder` warehouses: their folders, if inside the root.
fn warehouse_folders(conn: &Connection, root: &Path) -> rusqlite::Result<Vec<PathBuf>> {
    let mut stmt =
        conn.prepare("SELECT ob_open(adapter) FROM warehouses WHERE platform = 'folder' ORDER BY id")?;
    let adapters = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(adapters
        .iter()
        .filter_map(|adapter| {
            let adapter: Value = serde_json::from_str(adapter).ok()?;
            let url = adapter.get("connection_string")?.as_str()?;
            crate::platforms::files::folder::check_inside_root(url, root).ok()?;
            crate::platforms::files::folder::parse(url).ok()
        })
        .collect())
}

/// A new order at one store after another, forever.
async fn take_orders(
    stores: Vec<DemoStore>,
    big_commerce: big_commerce::Handle,
    sellbrite: sellbrite::Handle,
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
        }
    }
}

/// The warehouse worker: ships each order file that has waited `SHIP_AFTER`.
async fn work_warehouses(folders: Vec<PathBuf>) {
    let mut ticker = tokio::time::interval(WORKER_EVERY);
    loop {
        ticker.tick().await;
        let folders = folders.clone();
        let worked = tokio::task::spawn_blocking(move || {
            for folder in &folders {
                if let Err(e) = ship_waiting_files(folder) {
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
