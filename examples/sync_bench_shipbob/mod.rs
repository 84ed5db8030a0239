//! The sync benchmark's ShipBob simulator child (this program started again with
//! `--shipbob-simulator`): one account whose token is [`TOKEN`], one inventory item per order
//! the benchmark will send (`SKU-0000`, …), orders that ship as soon as they are listed, and a
//! window wide enough for a benchmark. It prints its base URL, then answers each command line
//! on stdin with one line until stdin closes:
//! - `channel`: the token's `SMA` channel id;
//! - `requests`: every request so far;
//! - `requests <Operation>` (`CreateOrder`, `GetOrders`, `GetChannels`, `GetOrder`,
//!   `CancelOrder`, `GetInventoryLevels`): that operation's;
//! - `orders`: the orders the account holds.
//!
//! [`bench`] is the ShipBob run: a BigCommerce store's orders sent to a `shipbob` warehouse,
//! their shipments read back, and ShipBob requests per order sent and per shipment read.

use std::io::{BufRead, BufReader};

use orderbridge::config::Config;
use orderbridge::simulate::shipbob::{AutoShip, Operation, Simulator};

use super::common::{SimulatorChild, proc_status_kib};
use super::{HASH, TOKEN as STORE_TOKEN, fail, set_up, timed};

pub const TOKEN: &str = "pat-bench-0123456789abcdef";

pub async fn serve_simulator(orders: usize) {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    sim.generate_inventory(TOKEN, orders, 42);
    sim.set_auto_ship(Some(AutoShip::immediately()));
    sim.set_rate_limit(TOKEN, usize::MAX);
    println!("{}", sim.base_url());
    let mut lines = BufReader::new(std::io::stdin()).lines();
    while let Some(Ok(line)) = tokio::task::block_in_place(|| lines.next()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["channel"] => println!("{}", channels.sma),
            ["requests"] => println!("{}", sim.total_requests()),
            ["requests", name] => match Operation::ALL.iter().find(|op| format!("{op:?}") == *name) {
                Some(op) => println!("{}", sim.requests(*op)),
                None => println!("?"),
            },
            ["orders"] => println!("{}", sim.order_count(TOKEN)),
            ["ship-on-request"] => {
                sim.set_auto_ship(None);
                println!("ok");
            }
            ["ship-all"] => println!("{}", sim.ship_all(TOKEN)),
            _ => println!("?"),
        }
    }
}

/// The ShipBob run: the orders of a BigCommerce store pulled first (the warehouse refusing
/// the token, so the pass stops at the send), then sent to ShipBob, which ships each as soon
/// as it is listed, so the same pass reads every shipment back (the store refusing the first
/// notification, so the pass ends there).
pub async fn bench(orders: usize) {
    let mut store = SimulatorChild::start("--simulator", orders).unwrap_or_else(|e| fail(&e));
    let mut shipbob = SimulatorChild::start("--shipbob-simulator", orders).unwrap_or_else(|e| fail(&e));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("folders/wh");
    std::fs::create_dir_all(&root).unwrap();
    let config = Config {
        database: dir.path().join("sync-bench-shipbob.db"),
        bigcommerce_api_base: store.address.clone(),
        shipbob_api_base: shipbob.address.clone(),
        folder_warehouse_root: dir.path().join("folders"),
        sync_retry_base_secs: 1,
        ..Config::default()
    };
    let adapter = serde_json::json!({"access_token": STORE_TOKEN, "store_hash": HASH});
    let connection = set_up(&config.database, &root, "big_commerce", &adapter);
    let warehouse = |token: &str| {
        let conn = rusqlite::Connection::open(&config.database).unwrap();
        conn.execute(
            "UPDATE warehouses SET platform = 'shipbob', adapter = ?1 WHERE id = 1",
            [serde_json::json!({"access_token": token}).to_string()],
        )
        .unwrap();
    };
    warehouse("pat-not-this-account");
    let pool = config.open_database(1).unwrap_or_else(|e| fail(&e));
    let engine = orderbridge::sync::Engine::new(pool, orderbridge::sync::Settings::from_config(&config));

    let (_, wall, run) = timed(&engine, connection).await;
    println!(
        "shipbob run: {} orders pulled in {wall:.1} s; the warehouse refused the token",
        run.counts.orders_pulled
    );
    warehouse(TOKEN);
    store.ask("refuse-shipments");
    // The send alone: ShipBob ships nothing until asked.
    shipbob.ask("ship-on-request");
    let (cpu, wall, run) = timed(&engine, connection).await;
    let mut count = |op: &str| shipbob.ask(&format!("requests {op}")).parse::<f64>().unwrap_or(0.0);
    let (creates, lists, channels) = (count("CreateOrder"), count("GetOrders"), count("GetChannels"));
    let sent = run.counts.orders_sent as f64;
    println!("  sent {sent} orders to ShipBob in {wall:.1} s ({} orders held there)", shipbob.ask("orders"));
    println!(
        "  ShipBob requests per order sent {:.4} ({creates} creates, {channels} Get Channels, {lists} Get Orders: the walk that found nothing shipped yet, and any lookup; target <= 1.02)",
        (creates + channels + lists) / sent.max(1.0)
    );
    println!(
        "  orderbridge CPU {cpu:.2} s = {:.3} ms per order sent (target <= 0.1)",
        cpu * 1000.0 / sent.max(1.0)
    );
    // The shipments: ShipBob ships everything; the next pass reads them back.
    let shipped = shipbob.ask("ship-all");
    let lists_before = shipbob.ask("requests GetOrders").parse::<f64>().unwrap_or(0.0);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let lists = shipbob.ask("requests GetOrders").parse::<f64>().unwrap_or(0.0) - lists_before;
    let read = run.counts.shipments_pulled as f64;
    println!(
        "  read {read} shipments back ({shipped} shipped) in {wall:.1} s = {:.0} shipments/s, {:.3} ms CPU per shipment",
        read / wall,
        cpu * 1000.0 / read.max(1.0)
    );
    println!(
        "  ShipBob requests per shipment read {:.4} ({lists} Get Orders; target <= 0.02)",
        lists / read.max(1.0)
    );
    println!(
        "  peak RSS of the orderbridge process: {:.0} MiB",
        proc_status_kib("self", "VmHWM:") as f64 / 1024.0
    );
}
