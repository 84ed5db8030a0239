//! The sync benchmark's ShipStation simulator child (this program started again with
//! `--shipstation-simulator`): one account whose API key is [`KEY`], one inventory row per
//! order the benchmark will send (`SKU-0000`, …), labels bought as soon as the next request
//! arrives, and no limit of its own. It prints its base URL, then answers each command line on
//! stdin with one line until stdin closes:
//! - `requests`: every request so far;
//! - `requests <Operation>` (`CreateShipments`, `ListLabels`, `GetShipmentByExternalId`,
//!   `ListWarehouses`, `GetWarehouse`, `CancelShipment`, `GetInventoryLevels`): that
//!   operation's;
//! - `shipments`: the shipments the account holds.
//!
//! [`bench`] is the ShipStation run: a BigCommerce store's orders sent to a `shipstation`
//! warehouse in batches of 50, their labels read back, and ShipStation requests per order sent
//! and per shipment read. The simulator holds no limit a minute here, but orderbridge keeps
//! the account to 200 requests in any 60 seconds itself (annex §5.1): a large run's wall
//! time includes those waits.

use std::io::{BufRead, BufReader};
use std::time::Duration;

use orderbridge::config::Config;
use orderbridge::simulate::shipstation::{Operation, Simulator};

use super::common::{SimulatorChild, proc_status_kib};
use super::{HASH, TOKEN as STORE_TOKEN, fail, set_up, timed};

pub const KEY: &str = "ss-bench-0123456789abcdef";

pub async fn serve_simulator(orders: usize) {
    let sim = Simulator::start().await;
    sim.add_account(KEY);
    for n in 0..orders {
        sim.add_inventory(KEY, &format!("SKU-{n:04}"), "iw-1", 10 + (n as i64 % 90), 0);
    }
    sim.set_label_after(Some(Duration::ZERO));
    sim.set_rate_limit(KEY, usize::MAX);
    println!("{}", sim.base_url());
    let mut lines = BufReader::new(std::io::stdin()).lines();
    while let Some(Ok(line)) = tokio::task::block_in_place(|| lines.next()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["requests"] => println!("{}", sim.total_requests()),
            ["requests", name] => match Operation::ALL.iter().find(|op| format!("{op:?}") == *name) {
                Some(op) => println!("{}", sim.requests(*op)),
                None => println!("?"),
            },
            ["shipments"] => println!("{}", sim.shipment_count(KEY)),
            ["labels-on-request"] => {
                sim.set_label_after(None);
                println!("ok");
            }
            ["buy-all"] => println!("{}", sim.buy_all(KEY)),
            _ => println!("?"),
        }
    }
}

/// The ShipStation run: the orders of a BigCommerce store pulled first (the warehouse
/// refusing the key, so the pass stops at the send), then sent to ShipStation, which buys a
/// label for each as soon as the next request arrives, so the same pass reads every label
/// back (the store refusing the first notification, so the pass ends there).
pub async fn bench(orders: usize) {
    let mut store = SimulatorChild::start("--simulator", orders).unwrap_or_else(|e| fail(&e));
    let mut ss = SimulatorChild::start("--shipstation-simulator", orders).unwrap_or_else(|e| fail(&e));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("folders/wh");
    std::fs::create_dir_all(&root).unwrap();
    let config = Config {
        database: dir.path().join("sync-bench-shipstation.db"),
        bigcommerce_api_base: store.address.clone(),
        shipstation_api_base: ss.address.clone(),
        folder_warehouse_root: dir.path().join("folders"),
        sync_retry_base_secs: 1,
        ..Config::default()
    };
    let adapter = serde_json::json!({"access_token": STORE_TOKEN, "store_hash": HASH});
    let connection = set_up(&config.database, &root, "big_commerce", &adapter);
    let warehouse = |key: &str| {
        let conn = rusqlite::Connection::open(&config.database).unwrap();
        conn.execute(
            "UPDATE warehouses SET platform = 'shipstation', adapter = ?1 WHERE id = 1",
            [serde_json::json!({"access_token": key}).to_string()],
        )
        .unwrap();
    };
    warehouse("ss-not-this-account");
    let pool = config.open_database(1).unwrap_or_else(|e| fail(&e));
    let engine = orderbridge::sync::Engine::new(pool, orderbridge::sync::Settings::from_config(&config));

    let (_, wall, run) = timed(&engine, connection).await;
    println!(
        "shipstation run: {} orders pulled in {wall:.1} s; the warehouse refused the key",
        run.counts.orders_pulled
    );
    warehouse(KEY);
    store.ask("refuse-shipments");
    // The send alone: ShipStation buys no label until asked.
    ss.ask("labels-on-request");
    let (cpu, wall, run) = timed(&engine, connection).await;
    let mut count = |op: &str| ss.ask(&format!("requests {op}")).parse::<f64>().unwrap_or(0.0);
    let (creates, lookups) = (count("CreateShipments"), count("GetShipmentByExternalId"));
    let sent = run.counts.orders_sent as f64;
    println!(
        "  sent {sent} orders to ShipStation in {wall:.1} s ({} shipments held there)",
        ss.ask("shipments")
    );
    println!(
        "  ShipStation requests per order sent {:.4} ({creates} batch creates, {lookups} lookups; target <= 0.02 + lookups)",
        (creates + lookups) / sent.max(1.0)
    );
    println!(
        "  orderbridge CPU {cpu:.2} s = {:.3} ms per order sent (target <= 0.1)",
        cpu * 1000.0 / sent.max(1.0)
    );
    // The labels: ShipStation buys one for every shipment; the next pass reads them back.
    let bought = ss.ask("buy-all");
    let lists_before = ss.ask("requests ListLabels").parse::<f64>().unwrap_or(0.0);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let lists = ss.ask("requests ListLabels").parse::<f64>().unwrap_or(0.0) - lists_before;
    let read = run.counts.shipments_pulled as f64;
    println!(
        "  read {read} labels back ({bought} bought) in {wall:.1} s = {:.0} a second, {:.3} ms CPU each",
        read / wall,
        cpu * 1000.0 / read.max(1.0)
    );
    println!(
        "  ShipStation requests per shipment read {:.4} ({lists} label pages; target <= 0.02)",
        lists / read.max(1.0)
    );
    println!(
        "  peak RSS of the orderbridge process: {:.0} MiB",
        proc_status_kib("self", "VmHWM:") as f64 / 1024.0
    );
}
