//! The sync benchmark's Amazon run: one orderbridge pass against a simulated Amazon seller
//! holding `orders` merchant-fulfilled orders waiting to ship, then confirmations for a sample
//! of them and stock levels, measured from inside the pass's own process (Amazon runs in a
//! child process, this program started again with `--amazon-simulator`). Reported:
//! orderbridge's CPU per order pulled, SP-API requests per order (one `searchOrders` per 100),
//! per shipment confirmed (`getOrder` and `confirmShipment`) and per stock level (lookups of
//! 20 and one feed), and the process's peak RSS.
//!
//! The simulated account advertises a generous rate in `x-amzn-RateLimit-Limit`, which the
//! client's buckets take, so the run measures orderbridge rather than Amazon's pace; at
//! Amazon's published `searchOrders` rate (one request every ≈ 179 s after a burst of 20) a
//! real seller's 100,000-order backlog takes about 50 minutes of passes.

use std::io::{BufRead, BufReader};

use orderbridge::config::Config;
use orderbridge::simulate::amazon::{Listing, NewOrder, Operation, Seller, Simulator};
use orderbridge::sync::{Engine, Settings};

use super::common::{SimulatorChild, proc_status_kib};
use super::{add_products, channels_for_stock, order_ids, set_up, timed};

const SELLER: &str = "A2BENCHSELLER1";
const MARKETPLACE: &str = "ATVPDKIKX0DER";
/// Shipments and stock levels sent in the sampled steps.
const SHIPMENTS: usize = 2_000;
const LEVELS: usize = 5_000;
/// The SKUs the orders are of.
const ORDERED_SKUS: usize = 50;

fn seller() -> Seller {
    Seller::new(SELLER, "na", &[MARKETPLACE])
}

fn sku(i: usize) -> String {
    format!("BENCH-SKU-{i:06}")
}

/// The child: a seller with `orders` orders, answering commands on stdin until it closes.
pub async fn serve_simulator(orders: usize) {
    let sim = Simulator::start().await;
    sim.add_seller(seller());
    for i in 0..ORDERED_SKUS {
        sim.add_listing(SELLER, Listing::mfn(&sku(i), "HOME", 1_000));
    }
    for n in 0..orders {
        let first = sku(n % ORDERED_SKUS);
        let second = sku((n * 7 + 3) % ORDERED_SKUS);
        let lines: Vec<(&str, u32)> =
            if n % 3 == 0 { vec![(&first, 1), (&second, 2)] } else { vec![(&first, 1)] };
        let mut order = NewOrder::mfn(&lines);
        order.created_secs_ago = 86_400 + (n % 86_400) as i64;
        sim.add_order(SELLER, order);
    }
    for i in ORDERED_SKUS..LEVELS {
        sim.add_listing(SELLER, Listing::mfn(&sku(i), "HOME", 1_000));
    }
    println!("{}", sim.lwa_base());
    let mut lines = BufReader::new(std::io::stdin()).lines();
    while let Some(Ok(line)) = tokio::task::block_in_place(|| lines.next()) {
        match line.trim() {
            "requests" => println!("{}", sim.sp_api_requests()),
            "confirmations" => println!("{}", sim.requests(Operation::ConfirmShipment)),
            "feeds" => println!("{}", sim.feeds(SELLER).len()),
            _ => println!("?"),
        }
    }
}

fn fail(message: &str) -> ! {
    eprintln!("sync_bench (Amazon): {message}");
    std::process::exit(2);
}

fn requests(amazon: &mut SimulatorChild) -> f64 {
    amazon.ask("requests").parse().unwrap_or(0.0)
}

pub async fn bench(orders: usize) {
    let mut amazon = SimulatorChild::start("--amazon-simulator", orders).unwrap_or_else(|e| fail(&e));
    let origin = amazon.address.clone();

    let dir = tempfile::tempdir().unwrap();
    let folders = dir.path().join("folders");
    let root = folders.join("wh");
    std::fs::create_dir_all(&root).unwrap();
    let config = Config {
        database: dir.path().join("sync-bench-amazon.db"),
        amazon_api_base: format!("{origin}/{{region}}"),
        amazon_lwa_base: origin,
        folder_warehouse_root: folders.clone(),
        sync_retry_base_secs: 1,
        ..Config::default()
    };
    let s = seller();
    let adapter = serde_json::json!({"region": "na", "marketplace_ids": [MARKETPLACE], "seller_id": SELLER,
        "client_id": s.client_id, "client_secret": s.client_secret, "refresh_token": s.refresh_token});
    let connection = set_up(&config.database, &root, "amazon", &adapter);
    // The engine's own database, as `serve` opens it.
    let pool = config.open_engine_database().unwrap_or_else(|e| fail(&e));
    let engine = Engine::new(pool, Settings::from_config(&config));

    // 1. The pull alone: the send step finds no warehouse folder yet.
    std::fs::remove_dir(&root).unwrap();
    let (cpu, wall, run) = timed(&engine, connection).await;
    let pulled = (run.counts.orders_pulled as f64).max(1.0);
    println!("Amazon pull: {} orders in {wall:.1} s", run.counts.orders_pulled);
    println!("  orderbridge CPU {cpu:.2} s = {:.4} ms per order (target <= 0.1)", cpu * 1000.0 / pulled);
    println!(
        "  SP-API requests per order {:.4} (target <= 0.01: 100 orders a page, items, address and money inside)",
        requests(&mut amazon) / pulled
    );
    if run.error.as_ref().map(|e| e.step.as_str()) != Some("send_orders") {
        fail(&format!("the first pass should stop at the send step: {run:?}"));
    }

    // 2. The send, then shipments for a sample of the orders, confirmed to Amazon.
    std::fs::create_dir_all(&root).unwrap();
    let run = timed(&engine, connection).await.2;
    println!("send: {} orders", run.counts.orders_sent);
    let mut file = String::from("order_id,tracking_number,carrier_name,service_level\n");
    for id in order_ids(&config.database).into_iter().take(SHIPMENTS) {
        file.push_str(&format!("{id},1ZBENCH{id:010},UPS,UPS Ground\n"));
    }
    std::fs::create_dir_all(root.join("shipments")).unwrap();
    std::fs::write(root.join("shipments/confirm.csv"), file).unwrap();
    let before = requests(&mut amazon);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let told = (run.counts.shipments_notified as f64).max(1.0);
    println!(
        "Amazon notify: {} shipments in {wall:.1} s, {:.2} SP-API requests each (target <= 2: getOrder, then confirmShipment), {:.3} ms CPU each; Amazon took {} confirmations",
        run.counts.shipments_notified,
        (requests(&mut amazon) - before) / told,
        cpu * 1000.0 / told,
        amazon.ask("confirmations")
    );

    // 3. Stock: a level for each listing, the sales channel off.
    add_products(&config.database, LEVELS);
    let mut file = String::from("sku,quantity\n");
    for i in 0..LEVELS {
        file.push_str(&format!("{},{}\n", sku(i), i % 97));
    }
    std::fs::create_dir_all(root.join("inventory")).unwrap();
    std::fs::write(root.join("inventory/stock.csv"), file).unwrap();
    channels_for_stock(&config.database, connection);
    let before = requests(&mut amazon);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let sent = (run.counts.stock_levels_sent as f64).max(1.0);
    let spent = requests(&mut amazon) - before;
    println!(
        "Amazon stock: {} levels in {wall:.1} s with {spent} SP-API requests ({:.4} per level: lookups of 20, then one JSON_LISTINGS_FEED in {} feed(s)), {:.4} ms CPU per level",
        run.counts.stock_levels_sent,
        spent / sent,
        amazon.ask("feeds"),
        cpu * 1000.0 / sent
    );
    println!(
        "peak RSS of the orderbridge process: {:.0} MiB",
        proc_status_kib("self", "VmHWM:") as f64 / 1024.0
    );
}
