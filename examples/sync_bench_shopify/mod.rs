//! The sync benchmark's Shopify run: one orderbridge pass against a simulated shop holding
//! `orders` orders of one to three lines, then notifications and stock, measured from inside
//! the pass's own process (the shop runs in a child process, this program started again
//! with `--shopify-simulator`). Reported: orderbridge's CPU per order pulled, HTTP requests
//! per order, and the query cost Shopify would charge per order, from the simulated shop's
//! accounting (Shopify's published rules); the same for a sample of shipments and of stock
//! levels.
//!
//! The shop's bucket never runs dry here: Shopify's pace (100 points a second on the
//! Standard plan) is what it is, and the cost per order says how long a real shop takes.

use std::io::{BufRead, BufReader};

use orderbridge::config::Config;
use orderbridge::simulate::shopify::{ALL_SCOPES, Simulator};
use orderbridge::sync::{Engine, Settings};

use super::common::{SimulatorChild, proc_status_kib};
use super::{add_products, channels_for_stock, order_ids, set_up, timed};

const SHOP: &str = "bench.myshopify.com";
const TOKEN: &str = "shpat_bench_token_0123456789";
/// Shipments and stock levels sent in the sampled steps.
const SHIPMENTS: usize = 2_000;
const LEVELS: usize = 5_000;

/// The child: a shop with `orders` orders, answering commands on stdin until it closes.
pub async fn serve_simulator(orders: usize) {
    let sim = Simulator::start().await;
    sim.add_shop(SHOP, TOKEN, &ALL_SCOPES);
    sim.set_bucket(SHOP, 1e12, 1e12, 1e12);
    sim.add_orders(SHOP, orders, 42);
    for i in 0..LEVELS {
        sim.add_item(SHOP, &format!("BENCH-SKU-{i:06}"), true, true);
    }
    println!("{}", sim.base_url());
    let mut lines = BufReader::new(std::io::stdin()).lines();
    while let Some(Ok(line)) = tokio::task::block_in_place(|| lines.next()) {
        let log = sim.log(SHOP);
        match line.trim() {
            "requests" => println!("{}", log.len()),
            // Requested and actual cost of every request so far.
            "cost" => {
                let requested: u64 = log.iter().filter_map(|l| l.requested_cost).map(u64::from).sum();
                let actual: u64 = log.iter().filter_map(|l| l.actual_cost).map(u64::from).sum();
                println!("{requested} {actual}");
            }
            "fulfillments" => println!("{}", sim.fulfillments(SHOP).len()),
            _ => println!("?"),
        }
    }
}

fn fail(message: &str) -> ! {
    eprintln!("sync_bench (Shopify): {message}");
    std::process::exit(2);
}

/// (requests, requested cost, actual cost) so far.
fn shop_counts(shop: &mut SimulatorChild) -> (f64, f64, f64) {
    let requests = shop.ask("requests").parse().unwrap_or(0.0);
    let cost = shop.ask("cost");
    let mut parts = cost.split_whitespace().map(|n| n.parse::<f64>().unwrap_or(0.0));
    (requests, parts.next().unwrap_or(0.0), parts.next().unwrap_or(0.0))
}

pub async fn bench(orders: usize) {
    let mut shop = SimulatorChild::start("--shopify-simulator", orders).unwrap_or_else(|e| fail(&e));
    let base = shop.address.clone();

    let dir = tempfile::tempdir().unwrap();
    let folders = dir.path().join("folders");
    let root = folders.join("wh");
    std::fs::create_dir_all(&root).unwrap();
    let config = Config {
        database: dir.path().join("sync-bench-shopify.db"),
        shopify_api_base: base,
        folder_warehouse_root: folders.clone(),
        sync_retry_base_secs: 1,
        ..Config::default()
    };
    let connection =
        set_up(&config.database, &root, "shopify", &serde_json::json!({"shop": SHOP, "access_token": TOKEN}));
    let pool = config.open_database(1).unwrap_or_else(|e| fail(&e));
    let engine = Engine::new(pool, Settings::from_config(&config));

    // 1. The pull alone: the send step finds no warehouse folder yet.
    std::fs::remove_dir(&root).unwrap();
    let (cpu, wall, run) = timed(&engine, connection).await;
    let (requests, requested, actual) = shop_counts(&mut shop);
    let pulled = (run.counts.orders_pulled as f64).max(1.0);
    println!("Shopify pull: {} orders in {wall:.1} s", run.counts.orders_pulled);
    println!("  orderbridge CPU {cpu:.2} s = {:.3} ms per order (target <= 0.2)", cpu * 1000.0 / pulled);
    println!(
        "  HTTP requests per order {:.4} (target <= 0.05: 20 orders a page, their lines inside)",
        requests / pulled
    );
    println!(
        "  query cost per order: {:.1} points charged ({:.1} requested before refunds); at the Standard plan's 100 points/s that is {:.0} orders a minute",
        actual / pulled,
        requested / pulled,
        6000.0 / (actual / pulled).max(1e-9)
    );
    if run.error.as_ref().map(|e| e.step.as_str()) != Some("send_orders") {
        fail(&format!("the first pass should stop at the send step: {run:?}"));
    }

    // 2. The send, then shipments for a sample of the orders, told to the shop.
    std::fs::create_dir_all(&root).unwrap();
    let run = timed(&engine, connection).await.2;
    println!("send: {} orders", run.counts.orders_sent);
    let mut file = String::from("order_id,tracking_number,carrier_name\n");
    for id in order_ids(&config.database).into_iter().take(SHIPMENTS) {
        file.push_str(&format!("{id},TRK{id},UPS\n"));
    }
    std::fs::create_dir_all(root.join("shipments")).unwrap();
    std::fs::write(root.join("shipments/confirm.csv"), file).unwrap();
    let before = shop_counts(&mut shop);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let after = shop_counts(&mut shop);
    let told = (run.counts.shipments_notified as f64).max(1.0);
    println!(
        "Shopify notify: {} shipments in {wall:.1} s, {:.2} requests and {:.1} cost points each (read first, then fulfillmentCreate), {:.3} ms CPU each; the shop made {} fulfillments",
        run.counts.shipments_notified,
        (after.0 - before.0) / told,
        (after.2 - before.2) / told,
        cpu * 1000.0 / told,
        shop.ask("fulfillments")
    );

    // 3. Stock: a level for each of the shop's inventory items, the sales channel off.
    add_products(&config.database, LEVELS);
    let mut file = String::from("sku,quantity\n");
    for i in 0..LEVELS {
        file.push_str(&format!("BENCH-SKU-{i:06},{}\n", i % 97));
    }
    std::fs::create_dir_all(root.join("inventory")).unwrap();
    std::fs::write(root.join("inventory/stock.csv"), file).unwrap();
    channels_for_stock(&config.database, connection);
    let before = shop_counts(&mut shop);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let after = shop_counts(&mut shop);
    let sent = (run.counts.stock_levels_sent as f64).max(1.0);
    println!(
        "Shopify stock: {} levels in {wall:.1} s with {} requests ({:.3} per level: SKU searches of 50, mutations of 250), {:.2} cost points and {:.4} ms CPU per level",
        run.counts.stock_levels_sent,
        after.0 - before.0,
        (after.0 - before.0) / sent,
        (after.2 - before.2) / sent,
        cpu * 1000.0 / sent
    );
    println!(
        "peak RSS of the orderbridge process: {:.0} MiB",
        proc_status_kib("self", "VmHWM:") as f64 / 1024.0
    );
}
