//! The sync benchmark: one orderbridge pass against a BigCommerce simulator holding 100,000
//! orders and a `folder` warehouse, measured from inside the pass's own process.
//!
//! ```sh
//! cargo run --release --example sync_bench
//! cargo run --release --example sync_bench -- --orders 20000    # a quicker run
//! cargo run --release --example sync_bench -- --platform shopify  # one platform's run
//! ```
//!
//! After the BigCommerce run come a Shopify run (`sync_bench_shopify/`), a WooCommerce run
//! (`sync_bench_woocommerce/`), an Amazon run (`sync_bench_amazon/`) and an eBay run
//! (`sync_bench_ebay/`), alike in shape, and runs with a ShipBob warehouse
//! (`sync_bench_shipbob/`), a ShipStation warehouse (`sync_bench_shipstation/`) and a folder
//! warehouse speaking X12 (`sync_bench_x12/`);
//! `--platform big_commerce|shopify|woocommerce|amazon|ebay|shipbob|shipstation|x12` runs one.
//!
//! The simulator runs in a child process (this program started again with `--simulator`), so
//! the CPU time and peak memory read from `/proc/self` are orderbridge's alone. Reported:
//! - the pull (the first pass, whose send step finds no warehouse folder yet): orderbridge
//!   CPU per order, and HTTP requests per order pulled (each list page of 250 orders carries
//!   their consignments, so 1/250 = 0.004 and a last short page); then the send of every
//!   order in one file;
//! - an idle pass (nothing new): its CPU time;
//! - shipment rows read from a warehouse file, imported and matched, per second (the store
//!   refuses the first notification, so the pass ends right after);
//! - stock levels: one SKU per order in one file sent to the store, requests and CPU per SKU;
//! - peak RSS of the process over all of it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use orderbridge::config::Config;
use orderbridge::simulate::big_commerce::Simulator;
use orderbridge::sync::{Engine, Settings, Trigger};

/// The allocator the `orderbridge` binary ships with, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
mod sync_bench_amazon;
mod sync_bench_ebay;
mod sync_bench_shipbob;
mod sync_bench_shipstation;
mod sync_bench_shopify;
mod sync_bench_woocommerce;
mod sync_bench_x12;
use common::{SimulatorChild, cpu_secs, proc_status_kib};

const HASH: &str = "bench-store";
const TOKEN: &str = "bench-token-0123456789";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let orders = args
        .iter()
        .position(|a| a == "--orders")
        .and_then(|i| args.get(i + 1))
        .map(|n| n.parse::<usize>().unwrap_or_else(|_| fail("--orders takes a number")))
        .unwrap_or(100_000);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let platform =
        args.iter().position(|a| a == "--platform").and_then(|i| args.get(i + 1)).map(String::as_str);
    if args.iter().any(|a| a == "--simulator") {
        runtime.block_on(serve_simulator(orders));
    } else if args.iter().any(|a| a == "--shopify-simulator") {
        runtime.block_on(sync_bench_shopify::serve_simulator(orders));
    } else if args.iter().any(|a| a == "--woocommerce-simulator") {
        runtime.block_on(sync_bench_woocommerce::serve_simulator(orders));
    } else if args.iter().any(|a| a == "--shipbob-simulator") {
        runtime.block_on(sync_bench_shipbob::serve_simulator(orders));
    } else if args.iter().any(|a| a == "--shipstation-simulator") {
        runtime.block_on(sync_bench_shipstation::serve_simulator(orders));
    } else if args.iter().any(|a| a == "--amazon-simulator") {
        runtime.block_on(sync_bench_amazon::serve_simulator(orders));
    } else if args.iter().any(|a| a == "--ebay-simulator") {
        runtime.block_on(sync_bench_ebay::serve_simulator(orders));
    } else {
        if platform.is_some_and(|p| {
            !["big_commerce", "shopify", "woocommerce", "amazon", "ebay", "shipbob", "shipstation", "x12"]
                .contains(&p)
        }) {
            fail(
                "--platform takes big_commerce, shopify, woocommerce, amazon, ebay, shipbob, shipstation or x12",
            );
        }
        if platform.is_none_or(|p| p == "big_commerce") {
            runtime.block_on(bench(orders));
        }
        if platform.is_none_or(|p| p == "shopify") {
            runtime.block_on(sync_bench_shopify::bench(orders));
        }
        if platform.is_none_or(|p| p == "woocommerce") {
            runtime.block_on(sync_bench_woocommerce::bench(orders));
        }
        if platform.is_none_or(|p| p == "amazon") {
            runtime.block_on(sync_bench_amazon::bench(orders));
        }
        if platform.is_none_or(|p| p == "ebay") {
            runtime.block_on(sync_bench_ebay::bench(orders));
        }
        if platform.is_none_or(|p| p == "shipbob") {
            runtime.block_on(sync_bench_shipbob::bench(orders));
        }
        if platform.is_none_or(|p| p == "shipstation") {
            runtime.block_on(sync_bench_shipstation::bench(orders));
        }
        if platform.is_none_or(|p| p == "x12") {
            runtime.block_on(sync_bench_x12::bench(orders));
        }
    }
}

fn fail(message: &str) -> ! {
    eprintln!("sync_bench: {message}");
    std::process::exit(2);
}

/// The child: a simulator with `orders` orders, answering commands on stdin until it closes.
async fn serve_simulator(orders: usize) {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    sim.add_orders(HASH, orders, 42);
    println!("{}", sim.base_url());
    let mut lines = BufReader::new(std::io::stdin()).lines();
    while let Some(Ok(line)) = tokio::task::block_in_place(|| lines.next()) {
        match line.trim() {
            "requests" => println!("{}", sim.requests().len()),
            "refuse-shipments" => {
                sim.refuse_shipments(HASH, true);
                println!("ok");
            }
            "accept-shipments" => {
                sim.refuse_shipments(HASH, false);
                println!("ok");
            }
            _ => println!("?"),
        }
    }
}

async fn bench(orders: usize) {
    let mut sim = SimulatorChild::start("--simulator", orders).unwrap_or_else(|e| fail(&e));
    let base = sim.address.clone();

    let dir = tempfile::tempdir().unwrap();
    let folders = dir.path().join("folders");
    let root = folders.join("wh");
    std::fs::create_dir_all(&root).unwrap();
    let config = Config {
        database: dir.path().join("sync-bench.db"),
        bigcommerce_api_base: base,
        folder_warehouse_root: folders.clone(),
        sync_retry_base_secs: 1,
        // The shipment and stock steps are timed for the import, not for the wait for the
        // file to settle.
        file_settle_secs: 0,
        ..Config::default()
    };
    let adapter = serde_json::json!({"access_token": TOKEN, "store_hash": HASH});
    let connection = set_up(&config.database, &root, "big_commerce", &adapter);
    let pool = config.open_database(1).unwrap_or_else(|e| fail(&e));
    let engine = Engine::new(pool, Settings::from_config(&config));

    // 1. The pull: the first pass, whose send step finds no warehouse folder yet, so the
    //    pull is measured alone.
    std::fs::remove_dir(&root).unwrap();
    let (cpu, wall, run) = timed(&engine, connection).await;
    let requests: f64 = sim.ask("requests").parse().unwrap_or(0.0);
    let pulled = run.counts.orders_pulled as f64;
    println!("pull: {} orders in {wall:.1} s", run.counts.orders_pulled);
    println!(
        "  orderbridge CPU {cpu:.2} s = {:.3} ms per order (target <= 0.1)",
        cpu * 1000.0 / pulled.max(1.0)
    );
    println!(
        "  HTTP requests per order pulled {:.4} ({requests} requests; target <= 0.005, one list page per 250 orders)",
        requests / pulled.max(1.0)
    );
    if run.error.as_ref().map(|e| e.step.as_str()) != Some("send_orders") {
        fail(&format!("the first pass should stop at the send step: {run:?}"));
    }

    // 2. The send: every order in one file.
    std::fs::create_dir_all(&root).unwrap();
    let (cpu, wall, run) = timed(&engine, connection).await;
    let file = std::fs::read_dir(root.join("orders")).unwrap().filter_map(Result::ok).next();
    let size = file.and_then(|f| f.metadata().ok()).map_or(0, |m| m.len());
    println!(
        "send: {} orders in one file of {:.1} MiB in {wall:.1} s, {:.3} ms CPU per order",
        run.counts.orders_sent,
        size as f64 / 1048576.0,
        cpu * 1000.0 / (run.counts.orders_sent as f64).max(1.0)
    );

    // 3. Idle passes: nothing new at the store or the warehouse. The kernel counts CPU in
    //    10 ms ticks, so many passes are timed together.
    const IDLE: u32 = 300;
    let (cpu, wall) = (cpu_secs("self"), Instant::now());
    for _ in 0..IDLE {
        let run = engine.run_now(connection, Trigger::Request).await.unwrap_or_else(|e| fail(&e.to_string()));
        if run.counts.orders_pulled + run.counts.orders_sent > 0 {
            fail(&format!("an idle pass did something: {run:?}"));
        }
    }
    println!(
        "idle pass: {:.2} ms CPU, {:.1} ms wall (mean of {IDLE}; target <= 1 ms CPU)",
        (cpu_secs("self") - cpu) * 1000.0 / f64::from(IDLE),
        wall.elapsed().as_secs_f64() * 1000.0 / f64::from(IDLE)
    );

    // 4. Shipment rows read from a file, matched to their orders and queued for the store
    //    (which refuses the first notification, so the pass ends there).
    let mut file = String::from("order_id,tracking_number,carrier_name,sku,quantity\n");
    let ids = order_ids(&config.database);
    for id in &ids {
        file.push_str(&format!("{id},TRK{id},UPS,,\n"));
    }
    std::fs::create_dir_all(root.join("shipments")).unwrap();
    std::fs::write(root.join("shipments/confirm.csv"), file).unwrap();
    sim.ask("refuse-shipments");
    let (cpu, wall, run) = timed(&engine, connection).await;
    println!(
        "shipments: {} rows read, imported and matched in {wall:.2} s = {:.0} rows/s (target >= 20,000), {:.3} ms CPU per row",
        run.counts.shipments_pulled,
        run.counts.shipments_pulled as f64 / wall,
        cpu * 1000.0 / (run.counts.shipments_pulled as f64).max(1.0)
    );

    // 5. Stock: one file with a level for every SKU, the sales channel off.
    let skus = add_products(&config.database, orders);
    let mut file = String::from("sku,quantity\n");
    for (i, sku) in skus.iter().enumerate() {
        file.push_str(&format!("{sku},{}\n", i % 97));
    }
    std::fs::create_dir_all(root.join("inventory")).unwrap();
    std::fs::write(root.join("inventory/stock.csv"), file).unwrap();
    channels_for_stock(&config.database, connection);
    let before = sim.ask("requests").parse::<f64>().unwrap_or(0.0);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let stock_requests = sim.ask("requests").parse::<f64>().unwrap_or(0.0) - before;
    println!(
        "stock: {} levels sent in {wall:.2} s with {stock_requests} requests (target <= 51 for 100,000); {:.4} ms CPU per SKU (target <= 0.05)",
        run.counts.stock_levels_sent,
        cpu * 1000.0 / (run.counts.stock_levels_sent as f64).max(1.0)
    );
    println!(
        "peak RSS of the orderbridge process: {:.0} MiB (target <= 150)",
        proc_status_kib("self", "VmHWM:") as f64 / 1024.0
    );
}

async fn timed(engine: &Arc<Engine>, connection: i64) -> (f64, f64, orderbridge::sync::Run) {
    let (cpu, wall) = (cpu_secs("self"), Instant::now());
    let run = engine.run_now(connection, Trigger::Request).await.unwrap_or_else(|e| fail(&e.to_string()));
    (cpu_secs("self") - cpu, wall.elapsed().as_secs_f64().max(1e-6), run)
}

/// A customer, a store of `platform` with `adapter` (the simulator's), a folder warehouse at
/// `root`, and a switched-on connection with its sales channel on and its inventory channel
/// off; returns the connection's id. Every platform's run sets up the same.
fn set_up(db: &Path, root: &Path, platform: &str, adapter: &serde_json::Value) -> i64 {
    let pool = orderbridge::db::open(db).unwrap_or_else(|e| fail(&e));
    let conn = pool.get().unwrap();
    let now = orderbridge::dates::now_ms();
    let warehouse = serde_json::json!({"connection_string": format!("file://{}", root.display())});
    let rows: [(&str, Vec<rusqlite::types::Value>); 6] = [
        ("INSERT INTO customers (id, company_name, created_at) VALUES (1, 'Bench', ?1)", vec![now.into()]),
        (
            "INSERT INTO stores (id, customer_id, name, platform, adapter, created_at, enabled_at)
             VALUES (1, 1, 'Bench store', ?2, ?3, ?1, ?1)",
            vec![now.into(), platform.to_string().into(), adapter.to_string().into()],
        ),
        (
            "INSERT INTO warehouses (id, customer_id, name, platform, adapter, created_at, enabled_at)
             VALUES (1, 1, 'Bench folder', 'folder', ?2, ?1, ?1)",
            vec![now.into(), warehouse.to_string().into()],
        ),
        (
            "INSERT INTO connections (id, customer_id, store_id, warehouse_id, name, connection_type, created_at, enabled_at)
             VALUES (1, 1, 1, 1, 'bench', 'fulfillment', ?1, ?1)",
            vec![now.into()],
        ),
        ("INSERT INTO channels (connection_id, type, created_at, enabled_at) VALUES (1, 'sales', ?1, ?1)", vec![now.into()]),
        (
            "INSERT INTO channels (connection_id, type, created_at, enabled_at) VALUES (1, 'inventory', ?1, NULL)",
            vec![now.into()],
        ),
    ];
    for (sql, params) in rows {
        conn.execute(sql, rusqlite::params_from_iter(params))
            .unwrap_or_else(|e| fail(&format!("setting up: {e}")));
    }
    1
}

fn order_ids(db: &Path) -> Vec<i64> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT id FROM orders ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

/// One product per SKU, `count` of them.
fn add_products(db: &Path, count: usize) -> Vec<String> {
    let mut conn = rusqlite::Connection::open(db).unwrap();
    let tx = conn.transaction().unwrap();
    let now = orderbridge::dates::now_ms();
    let skus: Vec<String> = (0..count).map(|i| format!("BENCH-SKU-{i:06}")).collect();
    {
        let mut insert =
            tx.prepare("INSERT INTO products (customer_id, sku, created_at) VALUES (1, ?1, ?2)").unwrap();
        for sku in &skus {
            insert.execute(rusqlite::params![sku, now]).unwrap();
        }
    }
    tx.commit().unwrap();
    skus
}

/// The inventory channel on, the sales channel off: the pass sends stock only.
fn channels_for_stock(db: &Path, connection: i64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute(
        "UPDATE channels SET enabled_at = CASE type WHEN 'inventory' THEN ?2 ELSE NULL END WHERE connection_id = ?1",
        rusqlite::params![connection, orderbridge::dates::now_ms()],
    )
    .unwrap();
}
