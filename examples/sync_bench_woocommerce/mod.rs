//! The sync benchmark's WooCommerce run: one orderbridge pass against a WooCommerce simulator
//! holding 100,000 processing orders (OAuth 1.0a signed over loopback http, one request at a
//! time) and a `folder` warehouse, measured from inside the pass's own process.
//!
//! ```sh
//! cargo run --release --example sync_bench -- --platform woocommerce
//! cargo run --release --example sync_bench -- --platform woocommerce --orders 20000   # quicker
//! ```
//!
//! As for BigCommerce, the simulator runs in a child process (this program started again
//! with `--woocommerce-simulator`), so the CPU time and peak memory read from `/proc/self` are orderbridge's
//! alone. Reported: the pull (the first pass, whose send step finds no warehouse folder yet):
//! orderbridge CPU per order and requests per order (keyset paging reads 100 orders a page and
//! the last of each page again: about 1/99); an idle pass; stock levels for one SKU per order
//! (looked up 50 at a time, sent 100 at a time); peak RSS.

use std::io::{BufRead, BufReader};
use std::time::Instant;

use orderbridge::config::Config;
use orderbridge::simulate::woocommerce::Simulator;
use orderbridge::sync::{Engine, Settings, Trigger};

use super::common::{SimulatorChild, cpu_secs, proc_status_kib};
use super::{add_products, channels_for_stock, set_up, timed};

const KEY: &str = "ck_bench0123456789abcdef0123456789abcdef01";
const SECRET: &str = "cs_bench0123456789abcdef0123456789abcdef01";

fn fail(message: &str) -> ! {
    eprintln!("sync_bench (woocommerce): {message}");
    std::process::exit(2);
}

/// The child: a shop with `orders` orders and one product per order for the stock step,
/// answering commands on stdin until it closes.
pub async fn serve_simulator(orders: usize) {
    let sim = Simulator::start(KEY, SECRET).await;
    sim.add_orders(orders, 42);
    for i in 0..orders {
        sim.add_product(&format!("BENCH-SKU-{i:06}"), Some(0));
    }
    println!("{}", sim.url());
    let mut lines = BufReader::new(std::io::stdin()).lines();
    while let Some(Ok(line)) = tokio::task::block_in_place(|| lines.next()) {
        match line.trim() {
            "requests" => println!("{}", sim.requests().len()),
            "in-flight" => println!("{}", sim.max_in_flight()),
            _ => println!("?"),
        }
    }
}

pub async fn bench(orders: usize) {
    let mut sim = SimulatorChild::start("--woocommerce-simulator", orders).unwrap_or_else(|e| fail(&e));
    let url = sim.address.clone();

    let dir = tempfile::tempdir().unwrap();
    let folders = dir.path().join("folders");
    let root = folders.join("wh");
    std::fs::create_dir_all(&root).unwrap();
    let config = Config {
        database: dir.path().join("sync-bench.db"),
        folder_warehouse_root: folders.clone(),
        sync_retry_base_secs: 1,
        file_settle_secs: 0,
        ..Config::default()
    };
    let adapter = serde_json::json!({"url": url, "consumer_key": KEY, "consumer_secret": SECRET});
    let connection = set_up(&config.database, &root, "woocommerce", &adapter);
    let pool = config.open_database(1).unwrap_or_else(|e| fail(&e));
    let engine = Engine::new(pool, Settings::from_config(&config));

    // 1. The pull, alone: the send step of the first pass finds no warehouse folder.
    std::fs::remove_dir(&root).unwrap();
    let (cpu, wall, run) = timed(&engine, connection).await;
    let requests: f64 = sim.ask("requests").parse().unwrap_or(0.0);
    let pulled = run.counts.orders_pulled as f64;
    println!("WooCommerce pull: {} orders in {wall:.1} s", run.counts.orders_pulled);
    println!(
        "  orderbridge CPU {cpu:.2} s = {:.3} ms per order (target <= 0.2)",
        cpu * 1000.0 / pulled.max(1.0)
    );
    println!("  requests per order {:.4} (target <= 0.011)", requests / pulled.max(1.0));
    if run.error.as_ref().map(|e| e.step.as_str()) != Some("send_orders") {
        fail(&format!("the first pass should stop at the send step: {run:?}"));
    }
    std::fs::create_dir_all(&root).unwrap();
    let (_, wall, run) = timed(&engine, connection).await;
    println!("send: {} orders in {wall:.1} s", run.counts.orders_sent);

    // 2. Idle passes: nothing new at the store or the warehouse.
    const IDLE: u32 = 50;
    let (cpu, wall) = (cpu_secs("self"), Instant::now());
    for _ in 0..IDLE {
        let run = engine.run_now(connection, Trigger::Request).await.unwrap_or_else(|e| fail(&e.to_string()));
        if run.counts.orders_pulled + run.counts.orders_sent > 0 {
            fail(&format!("an idle pass did something: {run:?}"));
        }
    }
    println!(
        "idle pass: {:.2} ms CPU, {:.1} ms wall (mean of {IDLE}; one list request each)",
        (cpu_secs("self") - cpu) * 1000.0 / f64::from(IDLE),
        wall.elapsed().as_secs_f64() * 1000.0 / f64::from(IDLE)
    );

    // 3. Stock: a level for every SKU, the sales channel off.
    let skus = add_products(&config.database, orders);
    let mut file = String::from("sku,quantity\n");
    for (i, sku) in skus.iter().enumerate() {
        file.push_str(&format!("{sku},{}\n", 1 + i % 97));
    }
    std::fs::create_dir_all(root.join("inventory")).unwrap();
    std::fs::write(root.join("inventory/stock.csv"), file).unwrap();
    channels_for_stock(&config.database, connection);
    let before = sim.ask("requests").parse::<f64>().unwrap_or(0.0);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let stock_requests = sim.ask("requests").parse::<f64>().unwrap_or(0.0) - before;
    println!(
        "stock: {} levels sent in {wall:.2} s with {stock_requests} requests (lookups of 50, batches of 100); {:.4} ms CPU per SKU",
        run.counts.stock_levels_sent,
        cpu * 1000.0 / (run.counts.stock_levels_sent as f64).max(1.0)
    );
    println!("most requests in flight at the store: {}", sim.ask("in-flight"));
    println!(
        "peak RSS of the orderbridge process: {:.0} MiB (target <= 150)",
        proc_status_kib("self", "VmHWM:") as f64 / 1024.0
    );
}
