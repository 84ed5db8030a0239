//! The crash round (CONTRACT §11), written once: the real binary syncs a simulated store's
//! orders to a warehouse and is killed with SIGKILL six times, at different moments, while the
//! warehouse ships what it holds; then passes run until one finds nothing to do. Nothing is
//! lost or doubled: every order once at the warehouse, every shipment read once and the store
//! told of it once, and no credential in the last server's debug log.

use std::collections::BTreeSet;
use std::time::Duration;

use orderbridge::simulate::amazon::Operation;
use serde_json::{Value, json};

use crate::sync_binary::{Api, ORDERS, boot, env_of};
use crate::sync_rig::{StoreKind, StoreSimulator};
use crate::sync_suites::warehouses::{Files, WarehouseSim, X12Files, shipbob_sim};

/// A customer with the store `store` (its create body), the warehouse `warehouse` and a
/// connection between them whose sales channel is on; the connection's id.
fn connect(api: &Api, mut store: Value, mut warehouse: Value) -> i64 {
    let customer = api.create("/customers", json!({"company_name": "Crash Co"}));
    for body in [&mut store, &mut warehouse] {
        body["customer_id"] = json!(customer);
        body["name"] = json!("Crash");
        body["enabled_at"] = json!("now");
    }
    let (store, warehouse) = (api.create("/stores", store), api.create("/warehouses", warehouse));
    let connection = api.create(
        "/connections",
        json!({"name": "c", "customer_id": customer, "store_id": store, "warehouse_id": warehouse, "enabled_at": "now"}),
    );
    let (_, channels) = api.call("GET", &format!("/connections/{connection}/channels"), Value::Null);
    let sales = channels.as_array().unwrap().iter().find(|c| c["type"] == "sales").unwrap()["id"].clone();
    api.call("PATCH", &format!("/connections/{connection}/channels/{sales}"), json!({"enabled_at": "now"}));
    connection
}

/// The warehouse of a crash round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Destination {
    Folder,
    X12Folder,
    ShipBob,
}

async fn crash_round(kind: StoreKind, into: Destination) {
    let (store, store_body, mut config) = StoreSimulator::start(kind, ORDERS).await;
    let sim = store.sim();
    let dir = tempfile::tempdir().unwrap();
    let (db, folders) = (dir.path().join("crash.db"), dir.path().join("folders"));
    std::fs::create_dir_all(folders.join("wh")).unwrap();
    let wh: Box<dyn WarehouseSim> = match into {
        Destination::ShipBob => shipbob_sim().await,
        Destination::Folder => Box::new(Files::folder(&folders.join("wh"))),
        Destination::X12Folder => Box::new(X12Files::folder(&folders.join("wh"))),
    };
    // Slow enough that a pass is well under way when the kill comes.
    sim.slow_down(true);
    wh.slow_down(true);
    config.extend(wh.config());
    let boot = boot(&db, &env_of(&folders.display().to_string(), &config));
    let mut server = tokio::task::spawn_blocking(boot.clone()).await.unwrap();
    let connection = connect(&Api::new(&server), store_body, wh.body());

    let mut shipped = BTreeSet::new();
    // Kills at different moments: during the pull, the send, the shipment read and the notify.
    for (round, after_ms) in [400u64, 1_500, 900, 2_500, 300, 1_200].into_iter().enumerate() {
        let api = Api::new(&server);
        if round >= 2 {
            // The warehouse ships some of what it holds, so later kills land in shipment steps
            // too. On a loaded machine the kills may come before any order reached the
            // warehouse: passes are asked for (bounded) until some have.
            let mut due: Vec<i64> = Vec::new();
            for _ in 0..300 {
                let orders = api.all("orders");
                let pending = orders.iter().filter(|o| o["fulfillment_state"] == "pending_shipment");
                due = pending.map(|o| o["id"].as_i64().unwrap()).filter(|id| !shipped.contains(id)).collect();
                due.truncate(120);
                if due.len() >= 120 {
                    break;
                }
                api.call("POST", &format!("/connections/{connection}/sync"), json!({}));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            wh.ship(&due);
            shipped.extend(due);
            // A shipment file settles (file_settle_secs = 1) before a pass may read it.
            tokio::time::sleep(Duration::from_millis(1_100)).await;
        }
        let (status, started) = api.call("POST", &format!("/connections/{connection}/sync"), json!({}));
        assert_eq!(status, 202, "{started}");
        tokio::time::sleep(Duration::from_millis(after_ms)).await;
        server.child.kill().expect("SIGKILL"); // Child::kill sends SIGKILL on Unix.
        let _ = server.child.wait();
        server = tokio::task::spawn_blocking(boot.clone()).await.unwrap();
    }

    // Caught up: passes until one finds nothing to do (bounded).
    let api = Api::new(&server);
    sim.slow_down(false);
    wh.slow_down(false);
    assert!(api.settle(connection, 10).await, "{kind:?}: the passes settle");
    let (_, runs) = api.call("GET", &format!("/connections/{connection}/sync_runs"), Value::Null);
    let interrupted = runs.as_array().unwrap().iter().filter(|r| r["error"]["code"] == "interrupted").count();
    assert!(interrupted >= 2, "{kind:?}: {interrupted} of 6 kills interrupted a pass: {runs}");
    assert!(shipped.len() >= 240, "{kind:?}: the warehouse shipped in several rounds: {}", shipped.len());

    // Every order once, at the warehouse once (in exactly one order file).
    let orders = api.all("orders");
    let external: BTreeSet<&str> = orders.iter().map(|o| o["external_id"].as_str().unwrap()).collect();
    assert_eq!((orders.len(), external.len()), (ORDERS, ORDERS), "{kind:?}: every order once");
    assert!(
        orders.iter().all(|o| o["fulfillment_state"] != "new"),
        "{kind:?}: every order reached the warehouse"
    );
    assert_eq!(wh.orders_held(), ORDERS, "{kind:?}: no order created twice");
    assert!(orders.iter().all(|o| wh.held(o["id"].as_i64().unwrap()) == 1), "{kind:?}");
    // Every shipment once, the store told of each once.
    let shipments = api.all("shipments");
    assert_eq!(shipments.len(), shipped.len(), "{kind:?}");
    assert!(shipments.iter().all(|s| s["state"] == "notified_shipped"), "{kind:?}: {shipments:?}");
    let told = sim.told();
    let unique: BTreeSet<&String> = told.iter().collect();
    assert_eq!((told.len(), unique.len()), (shipped.len(), shipped.len()), "{kind:?}: each told once");
    // Nothing the last server logged, at debug level over several passes, carries a credential.
    let (out, err) = server.stop();
    assert!(out.len() + err.len() > 1000, "the server logged at debug level");
    for secret in sim.wrong_credentials().2 {
        assert!(!out.contains(&secret) && !err.contains(&secret), "{kind:?}: a credential was logged");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_bigcommerce_passes_loses_and_doubles_nothing() {
    crash_round(StoreKind::BigCommerce, Destination::Folder).await;
}

/// X12: every order in exactly one 940 set, a 940 written again after a crash the same bytes
/// under the same name, and no control number used for two documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_x12_passes_puts_each_order_in_one_940_set() {
    crash_round(StoreKind::BigCommerce, Destination::X12Folder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_shopify_passes_loses_and_doubles_nothing() {
    crash_round(StoreKind::Shopify, Destination::Folder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_woocommerce_passes_loses_and_doubles_nothing() {
    crash_round(StoreKind::WooCommerce, Destination::Folder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_amazon_passes_writes_each_order_once_and_confirms_each_shipment_once() {
    crash_round(StoreKind::Amazon, Destination::Folder).await;
}

/// eBay: 1,200 orders are six pages, read last page first; a kill mid-walk keeps nothing of
/// the walk but what its pages committed, and a fulfillment whose answer a kill lost is found
/// by the next try's look, never created twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_ebay_passes_loses_and_doubles_nothing() {
    crash_round(StoreKind::Ebay, Destination::Folder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_shipbob_passes_sends_each_order_once_and_tells_each_shipment_once() {
    crash_round(StoreKind::BigCommerce, Destination::ShipBob).await;
}

/// Issue 31: an Amazon walk paced out (the third page waits longer than a pass may) and then
/// killed goes on in another process from the page it stopped at, not from page 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_paced_out_then_killed_goes_on_in_a_new_process_from_the_page_it_stopped_at() {
    let (store, body, config) = StoreSimulator::start(StoreKind::Amazon, 0).await;
    let StoreSimulator::Amazon(amazon) = &store else { unreachable!() };
    let (sim, paced) = (&amazon.sim, amazon.seller.seller_id.as_str());
    sim.generate_listings(paced, 16, 3);
    sim.generate_orders(paced, 1_200, 11);
    // Two requests at once, then one every 2 s: the third page waits longer than a pass may.
    sim.set_rate(paced, Operation::SearchOrders, 0.5, 2);
    let dir = tempfile::tempdir().unwrap();
    let (db, folders) = (dir.path().join("paced.db"), dir.path().join("folders"));
    std::fs::create_dir_all(folders.join("wh")).unwrap();
    let mut env = env_of(&folders.display().to_string(), &config);
    env.push(("ORDERBRIDGE_PING_TIMEOUT_SECS".into(), "1".into()));
    let server = tokio::task::spawn_blocking(boot(&db, &env)).await.unwrap();
    let api = Api::new(&server);
    let connection = connect(&api, body, Files::folder(&folders.join("wh")).body());
    let run = api.sync(connection).await;
    assert_eq!(run["status"], "succeeded", "a paced pull is not a failure: {run}");
    let searches = sim.searches();
    let statuses: Vec<u16> = searches.iter().map(|s| s.status).collect();
    assert_eq!(statuses, [200, 200, 429], "two pages and a 429: {searches:?}");
    assert!(searches[0].token.is_none() && searches[1].token.is_some(), "{searches:?}");
    let stopped_at = searches[2].token.clone().expect("the third page's token");
    let mut dead = server;
    dead.child.kill().expect("SIGKILL");
    let _ = dead.child.wait();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let cursor = |conn: &rusqlite::Connection| -> Option<i64> {
        conn.query_row("SELECT cursor FROM store_cursors", [], |r| r.get(0)).ok()
    };
    assert_eq!(cursor(&conn), None, "the cursor moves only when the walk ends");

    // Another process, with the rate limit lifted: `orderbridge sync`.
    sim.set_rate(paced, Operation::SearchOrders, 100.0, 1_000);
    let out = crate::process::command(&db)
        .arg("sync")
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed} {}", String::from_utf8_lossy(&out.stderr));

    let matching = sim
        .order_ids(paced)
        .iter()
        .filter_map(|o| sim.order(paced, o))
        .filter(|o| !o.fulfilled_by_amazon && matches!(o.status, "UNSHIPPED" | "PARTIALLY_SHIPPED"))
        .count();
    let went_on = &sim.searches()[3..];
    assert_eq!(went_on[0].token.as_deref(), Some(stopped_at.as_str()), "the page it stopped at: {printed}");
    assert!(went_on.iter().all(|s| s.token.is_some() && s.status == 200), "no walk from page 1: {went_on:?}");
    assert_eq!(went_on.len(), matching.div_ceil(100) - 2, "the walk's remaining pages, each once");
    let (orders, pulled): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM orders), (SELECT SUM(orders_pulled) FROM sync_runs)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // Some matching orders are not for a warehouse (in-store pick-up, nothing to ship).
    assert!(orders > 0 && orders <= i64::try_from(matching).unwrap(), "{orders} of {matching}");
    assert_eq!(pulled, orders, "nothing written twice");
    assert!(cursor(&conn).is_some(), "the walk ended and moved the cursor");
}
