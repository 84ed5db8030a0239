//! The sync benchmark's eBay run: one orderbridge pass against a simulated eBay seller holding
//! `orders` paid orders waiting to ship, then shipping fulfillments for a sample of them and
//! stock levels, measured from inside the pass's own process (eBay runs in a child process,
//! this program started again with `--ebay-simulator`). Reported against the annex's section
//! 6 (`shared/spec/platforms/ebay.md`): orderbridge's CPU per order pulled and `getOrders`
//! requests (one when the window holds at most 200 orders, else ⌈N/200⌉ + 1: page 0 read
//! twice), requests per shipment notified (`getShippingFulfillments`, then
//! `createShippingFulfillment`), per stock step (⌈S/25⌉ lookups + C `getOffers` + ⌈C/25⌉
//! updates), the token exchanges, and the process's peak RSS.
//!
//! The orders were paid over the last day, each at least three minutes ago: a pull's window
//! ends two minutes before the walk starts, so an order made this instant is read only by a
//! later pass.

use std::io::{BufRead, BufReader};

use orderbridge::config::Config;
use orderbridge::simulate::ebay::{NewOrder, Operation, Seller, Simulator};
use orderbridge::sync::{Engine, Settings};

use super::common::{SimulatorChild, proc_status_kib};
use super::{add_products, channels_for_stock, order_ids, set_up, timed};

const SELLER: &str = "bench_seller";
/// Shipments and stock levels sent in the sampled steps.
const SHIPMENTS: usize = 2_000;
const LEVELS: usize = 5_000;
/// The SKUs the orders are of.
const ORDERED_SKUS: usize = 50;
/// Orders a `getOrders` page holds, and SKUs a lookup or an update carries (annex §5).
const PAGE: usize = 200;
const PER_REQUEST: usize = 25;
/// The newest order was paid this long ago (the window ends 2 minutes before the walk).
const NEWEST_AGE_MS: i64 = 3 * 60 * 1000;
const DAY_MS: i64 = 86_400_000;

fn sku(i: usize) -> String {
    format!("BENCH-SKU-{i:06}")
}

/// What eBay holds of the stock file's `i`th SKU: `None` for a SKU that is no Inventory API
/// item (every 20th, a Seller Hub listing say), the file's own level for every 10th (nothing
/// to send), 1,000 for the rest.
fn held(i: usize) -> Option<i64> {
    match i {
        i if i % 20 == 19 => None,
        i if i % 10 == 0 => Some(level(i)),
        _ => Some(1_000),
    }
}

/// The level the stock file gives the `i`th SKU.
fn level(i: usize) -> i64 {
    (i % 97) as i64
}

/// The child: a seller with `orders` orders and `LEVELS` SKUs (some unknown to the Inventory
/// API), answering commands on stdin until it closes.
pub async fn serve_simulator(orders: usize) {
    let sim = Simulator::start().await;
    sim.add_seller(&Seller::new(SELLER));
    for i in 0..LEVELS {
        if let Some(quantity) = held(i) {
            sim.add_item(SELLER, &sku(i), quantity);
        }
    }
    let now = orderbridge::dates::now_ms();
    let spread = DAY_MS / orders.max(1) as i64;
    for n in 0..orders {
        let first = sku(n % ORDERED_SKUS);
        let second = sku((n * 7 + 3) % ORDERED_SKUS);
        let lines: Vec<(&str, i64)> =
            if n % 3 == 0 { vec![(&first, 1), (&second, 2)] } else { vec![(&first, 1)] };
        let mut order = NewOrder::ready(&lines);
        order.created_ms = Some(now - NEWEST_AGE_MS - n as i64 * spread);
        sim.add_order(SELLER, order);
    }
    println!("{}", sim.api_base());
    let mut lines = BufReader::new(std::io::stdin()).lines();
    while let Some(Ok(line)) = tokio::task::block_in_place(|| lines.next()) {
        let line = line.trim();
        match line.split_once(' ') {
            None if line == "requests" => println!("{}", sim.request_count()),
            None if line == "fulfillments" => println!("{}", sim.tracking_numbers(SELLER).len()),
            Some(("op", name)) => match Operation::ALL.iter().find(|op| op.as_str() == name) {
                Some(op) => println!("{}", sim.requests(*op)),
                None => println!("?"),
            },
            Some(("listed", sku)) => {
                println!("{}", sim.listed_quantity(SELLER, sku).map_or("none".into(), |q| q.to_string()))
            }
            _ => println!("?"),
        }
    }
}

fn fail(message: &str) -> ! {
    eprintln!("sync_bench (eBay): {message}");
    std::process::exit(2);
}

/// Requests of each operation so far, in [`Operation::ALL`]'s order.
fn counts(ebay: &mut SimulatorChild) -> [usize; 8] {
    Operation::ALL.map(|op| ebay.ask(&format!("op {}", op.as_str())).parse().unwrap_or(0))
}

/// Requests of `op` between two [`counts`].
fn spent(before: &[usize; 8], after: &[usize; 8], op: Operation) -> usize {
    let i = Operation::ALL.iter().position(|o| *o == op).unwrap_or(0);
    after[i] - before[i]
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

pub async fn bench(orders: usize) {
    let mut ebay = SimulatorChild::start("--ebay-simulator", orders).unwrap_or_else(|e| fail(&e));
    let base = ebay.address.clone();

    let dir = tempfile::tempdir().unwrap();
    let folders = dir.path().join("folders");
    let root = folders.join("wh");
    std::fs::create_dir_all(&root).unwrap();
    let config = Config {
        database: dir.path().join("sync-bench-ebay.db"),
        ebay_sandbox_api_base: format!("{base}/sandbox"),
        ebay_api_base: base,
        folder_warehouse_root: folders.clone(),
        sync_retry_base_secs: 1,
        ..Config::default()
    };
    let s = Seller::new(SELLER);
    let adapter = serde_json::json!({"client_id": s.client_id, "client_secret": s.client_secret,
        "refresh_token": s.refresh_token});
    let connection = set_up(&config.database, &root, "ebay", &adapter);
    // The engine's own database, as `serve` opens it.
    let pool = config.open_engine_database().unwrap_or_else(|e| fail(&e));
    let engine = Engine::new(pool, Settings::from_config(&config));
    let mut rows: Vec<[String; 4]> = Vec::new();

    // 1. The pull alone: the send step finds no warehouse folder yet.
    std::fs::remove_dir(&root).unwrap();
    let start = counts(&mut ebay);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let after = counts(&mut ebay);
    let pulled = run.counts.orders_pulled as usize;
    let per_order = cpu * 1000.0 / (pulled as f64).max(1.0);
    let pages = spent(&start, &after, Operation::GetOrders);
    let expected = if orders <= PAGE { 1 } else { orders.div_ceil(PAGE) + 1 };
    let tokens = spent(&start, &after, Operation::Token);
    println!("eBay pull: {pulled} orders in {wall:.1} s");
    println!("  orderbridge CPU {cpu:.2} s = {per_order:.4} ms per order (target <= 0.1)");
    println!(
        "  getOrders requests {pages}, {:.4} per order; annex ⌈N/200⌉ + 1 = {expected} ({}); token exchanges {tokens}",
        pages as f64 / (pulled as f64).max(1.0),
        if pages == expected { "equal" } else { "DIFFERENT" }
    );
    if run.error.as_ref().map(|e| e.step.as_str()) != Some("send_orders") {
        fail(&format!("the first pass should stop at the send step: {run:?}"));
    }
    if pulled != orders {
        fail(&format!("{pulled} orders pulled of {orders}"));
    }
    rows.push([
        "pull: orderbridge CPU per order".into(),
        format!("{per_order:.4} ms ({cpu:.2} s, {wall:.1} s wall)"),
        "<= 0.1 ms".into(),
        met(per_order <= 0.1).into(),
    ]);
    rows.push([
        "pull: getOrders requests".into(),
        format!("{pages} = {:.4} per order (annex: {expected})", pages as f64 / (pulled as f64).max(1.0)),
        "= ⌈N/200⌉ + 1".into(),
        met(pages == expected).into(),
    ]);

    // 2. The send, then shipments for a sample of the orders, reported to eBay.
    std::fs::create_dir_all(&root).unwrap();
    let run = timed(&engine, connection).await.2;
    println!("send: {} orders", run.counts.orders_sent);
    let mut file = String::from("order_id,tracking_number,carrier_name,service_level\n");
    for id in order_ids(&config.database).into_iter().take(SHIPMENTS) {
        file.push_str(&format!("{id},1ZBENCH{id:010},UPS,UPS Ground\n"));
    }
    std::fs::create_dir_all(root.join("shipments")).unwrap();
    std::fs::write(root.join("shipments/confirm.csv"), file).unwrap();
    let before = counts(&mut ebay);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let after = counts(&mut ebay);
    let told = run.counts.shipments_notified as usize;
    let looks = spent(&before, &after, Operation::GetShippingFulfillments);
    let creates = spent(&before, &after, Operation::CreateShippingFulfillment);
    let per_shipment = (looks + creates) as f64 / (told as f64).max(1.0);
    let cpu_each = cpu * 1000.0 / (told as f64).max(1.0);
    let held_now: usize = ebay.ask("fulfillments").parse().unwrap_or(0);
    println!(
        "eBay notify: {told} shipments in {wall:.1} s, {per_shipment:.2} requests each ({looks} getShippingFulfillments, {creates} createShippingFulfillment; target <= 2), {cpu_each:.3} ms CPU each; eBay holds {held_now} fulfillments"
    );
    if told != SHIPMENTS.min(orders) || held_now != told {
        fail(&format!("{told} shipments notified, eBay holds {held_now}: {run:?}"));
    }
    rows.push([
        format!("notify: requests per shipment ({told})"),
        format!(
            "{per_shipment:.2} ({looks} getShippingFulfillments + {creates} createShippingFulfillment); eBay holds {held_now} fulfillments"
        ),
        "<= 2".into(),
        met(per_shipment <= 2.0).into(),
    ]);
    rows.push([
        "notify: CPU per shipment".into(),
        format!("{cpu_each:.3} ms ({wall:.1} s wall)"),
        "".into(),
        "".into(),
    ]);

    // 3. Stock: a level for each SKU, the sales channel off; eBay knows most of them and
    //    already holds some of the levels.
    add_products(&config.database, LEVELS);
    let mut file = String::from("sku,quantity\n");
    for i in 0..LEVELS {
        file.push_str(&format!("{},{}\n", sku(i), level(i)));
    }
    std::fs::create_dir_all(root.join("inventory")).unwrap();
    std::fs::write(root.join("inventory/stock.csv"), file).unwrap();
    channels_for_stock(&config.database, connection);
    let before = counts(&mut ebay);
    let (cpu, wall, run) = timed(&engine, connection).await;
    let after = counts(&mut ebay);
    let sent = run.counts.stock_levels_sent as usize;
    let (lookups, offers, updates) = (
        spent(&before, &after, Operation::BulkGetInventoryItem),
        spent(&before, &after, Operation::GetOffers),
        spent(&before, &after, Operation::BulkUpdatePriceQuantity),
    );
    let changed: Vec<bool> = (0..LEVELS).map(|i| held(i).is_some_and(|q| q != level(i))).collect();
    let c = changed.iter().filter(|c| **c).count();
    let unknown = (0..LEVELS).filter(|i| held(*i).is_none()).count();
    let annex = (LEVELS.div_ceil(PER_REQUEST), c, c.div_ceil(PER_REQUEST));
    let cpu_level = cpu * 1000.0 / LEVELS as f64;
    println!(
        "eBay stock: {LEVELS} levels ({unknown} SKUs unknown to the Inventory API, {} already held) in {wall:.1} s: {sent} sent with {lookups} lookups, {offers} getOffers, {updates} updates; {cpu_level:.4} ms CPU per level",
        LEVELS - unknown - c
    );
    println!(
        "  annex ⌈S/25⌉ + C + ⌈C/25⌉ for S = {LEVELS}, C = {c}: {} + {} + {} ({})",
        annex.0,
        annex.1,
        annex.2,
        if (lookups, offers, updates) == annex { "equal" } else { "DIFFERENT" }
    );
    let probe = (0..LEVELS).find(|i| changed[*i]).unwrap_or(1);
    let listed = ebay.ask(&format!("listed {}", sku(probe)));
    if sent != c || listed != level(probe).to_string() {
        fail(&format!("{sent} levels sent of {c}; {} listed {listed}: {run:?}", sku(probe)));
    }
    rows.push([
        format!("stock: {LEVELS} levels, {c} changed, {unknown} unknown"),
        format!(
            "{lookups} lookups + {offers} getOffers + {updates} updates (annex {} + {} + {})",
            annex.0, annex.1, annex.2
        ),
        "= annex §6".into(),
        met((lookups, offers, updates) == annex).into(),
    ]);
    rows.push([
        "stock: CPU per level".into(),
        format!("{cpu_level:.4} ms ({wall:.1} s wall)"),
        "".into(),
        "".into(),
    ]);

    let all = counts(&mut ebay);
    let tokens = spent(&start, &all, Operation::Token);
    rows.push([
        "token exchanges, whole run".into(),
        format!("{tokens} ({} requests in all)", ebay.ask("requests")),
        "1 per 115 minutes".into(),
        met(tokens == 1).into(),
    ]);
    let rss = proc_status_kib("self", "VmHWM:") as f64 / 1024.0;
    println!("peak RSS of the orderbridge process: {rss:.0} MiB (target <= 150)");
    rows.push([
        "peak RSS of the process".into(),
        format!("{rss:.0} MiB"),
        "<= 150 MiB".into(),
        met(rss <= 150.0).into(),
    ]);

    println!("\neBay, {orders} orders:\n| measure | result | target | |\n|---|---|---|---|");
    for row in rows {
        println!("| {} |", row.join(" | "));
    }
}
