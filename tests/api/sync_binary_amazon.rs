//! kill -9 in the middle of passes with an Amazon store (issue 31): the real binary pulls a
//! simulated seller's orders into a `folder` warehouse and confirms the warehouse's shipments
//! back, and is killed six times, at different moments, while shipments keep arriving. Then
//! every order ready to ship was written once, every shipment is `notified_shipped`, and
//! Amazon holds one package per shipment, confirmed once, keyed by the shipment's id: a crash
//! between a confirmation and its commit is found by the `getOrder` check, never sent again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use orderbridge::simulate::amazon::{Operation, Seller, Simulator};
use serde_json::{Value, json};

use crate::process::start;
use crate::sync_binary::{Api, ORDERS, envs};

const SELLER: &str = "A2CRASHSELLER1";
const MARKETPLACE: &str = "ATVPDKIKX0DER";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_amazon_passes_writes_each_order_once_and_confirms_each_shipment_once() {
    let amazon = Simulator::start().await;
    let seller = Seller::new(SELLER, "na", &[MARKETPLACE]);
    amazon.add_seller(seller.clone());
    amazon.generate_listings(SELLER, 16, 3);
    amazon.generate_ready_orders(SELLER, ORDERS, 13);
    // Slow enough that a pass is well under way when the kill comes: pages and confirmations
    // a few dozen a second.
    amazon.set_rate(SELLER, Operation::SearchOrders, 20.0, 2);
    amazon.set_rate(SELLER, Operation::GetOrder, 40.0, 2);
    amazon.set_rate(SELLER, Operation::ConfirmShipment, 40.0, 2);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let folders = dir.path().join("folders");
    let root = folders.join("wh");
    std::fs::create_dir_all(root.join("shipments")).unwrap();
    let folders = folders.display().to_string();
    let mut env: Vec<(String, String)> =
        envs(&folders).into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    env.push(("ORDERBRIDGE_AMAZON_API_BASE".into(), amazon.api_base()));
    env.push(("ORDERBRIDGE_AMAZON_LWA_BASE".into(), amazon.lwa_base()));
    let boot = {
        let db = db.clone();
        move || {
            let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            start(&db, &pairs).0
        }
    };
    let server = tokio::task::spawn_blocking(boot.clone()).await.unwrap();
    let api = Api::new(&server);
    let connection = connect(&api, &seller, &root);

    let mut server = Some(server);
    // Shipped order id -> its tracking number.
    let mut shipped: BTreeMap<i64, String> = BTreeMap::new();
    for (round, after_ms) in [400u64, 1_500, 900, 2_500, 300, 1_200].into_iter().enumerate() {
        let running = server.take().unwrap_or_else(|| panic!("round {round}: no server"));
        let api = Api::new(&running);
        if round >= 2 {
            // The warehouse ships some of what it holds, so later kills land in notify too.
            let mut file = String::from("order_id,tracking_number,carrier_name\n");
            // On a loaded machine the kills may come before any order reached the warehouse:
            // passes are asked for (bounded) until some have.
            let mut due: Vec<i64> = Vec::new();
            for _ in 0..300 {
                due = api
                    .all("orders")
                    .iter()
                    .filter(|o| o["fulfillment_state"] == "pending_shipment")
                    .map(|o| o["id"].as_i64().unwrap())
                    .filter(|id| !shipped.contains_key(id))
                    .take(120)
                    .collect();
                if due.len() >= 120 {
                    break;
                }
                api.call("POST", &format!("/connections/{connection}/sync"), json!({}));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            for id in due {
                let tracking = format!("1ZCRASH{id:08}");
                file.push_str(&format!("{id},{tracking},UPS\n"));
                shipped.insert(id, tracking);
            }
            std::fs::write(root.join(format!("shipments/round-{round}.csv")), file).unwrap();
            // The file settles (file_settle_secs = 1) before a pass may read it.
            tokio::time::sleep(Duration::from_millis(1_100)).await;
        }
        let (status, started) = api.call("POST", &format!("/connections/{connection}/sync"), json!({}));
        assert_eq!(status, 202, "{started}");
        tokio::time::sleep(Duration::from_millis(after_ms)).await;
        let mut dead = running;
        dead.child.kill().expect("SIGKILL");
        let _ = dead.child.wait();
        server = Some(tokio::task::spawn_blocking(boot.clone()).await.unwrap());
    }

    // Caught up: passes until one finds nothing to do (bounded).
    let running = server.take().unwrap();
    let api = Api::new(&running);
    for op in [Operation::SearchOrders, Operation::GetOrder, Operation::ConfirmShipment] {
        amazon.set_rate(SELLER, op, 1_000.0, 1_000);
    }
    assert!(api.settle(connection, 10).await, "the passes settle");
    let (_, runs) = api.call("GET", &format!("/connections/{connection}/sync_runs"), Value::Null);
    let interrupted = runs.as_array().unwrap().iter().filter(|r| r["error"]["code"] == "interrupted").count();
    assert!(interrupted >= 2, "{interrupted} of 6 kills interrupted a pass: {runs}");
    assert!(shipped.len() >= 240, "the warehouse shipped in several rounds: {}", shipped.len());

    // Every order ready to ship written once.
    let orders = api.all("orders");
    assert_eq!(orders.len(), ORDERS, "every order once");
    let ids: BTreeSet<&str> = orders.iter().map(|o| o["external_id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), ORDERS);
    // Every shipment told once: one package per shipment at Amazon, confirmed once.
    let shipments = api.all("shipments");
    assert_eq!(shipments.len(), shipped.len());
    assert!(shipments.iter().all(|s| s["state"] == "notified_shipped"), "{shipments:?}");
    let by_order: BTreeMap<i64, &Value> = orders.iter().map(|o| (o["id"].as_i64().unwrap(), o)).collect();
    for shipment in &shipments {
        let order = by_order[&shipment["order_id"].as_i64().unwrap()];
        let view = amazon.order(SELLER, order["external_id"].as_str().unwrap()).expect("at Amazon");
        assert_eq!(view.packages.len(), 1, "one package for the one shipment: {view:?}");
        let package = &view.packages[0];
        assert_eq!(package.package_reference_id, shipment["id"].to_string(), "{view:?}");
        assert_eq!(package.tracking_number, shipment["tracking_number"].as_str().unwrap());
        assert_eq!(package.confirmations, 1, "confirmed once: {view:?}");
    }
    let (out, err) = running.stop();
    for secret in [&seller.client_secret, &seller.refresh_token] {
        assert!(!out.contains(secret.as_str()) && !err.contains(secret.as_str()), "a credential was logged");
    }
}

/// A customer with the seller's Amazon store, a `folder` warehouse at `root` and a connection
/// between them whose sales channel is on; the connection's id.
fn connect(api: &Api, seller: &Seller, root: &Path) -> i64 {
    let customer = api.create("/customers", json!({"company_name": "Crash Co"}));
    let store_id = api.create(
        "/stores",
        json!({"customer_id": customer, "name": "Amazon", "platform": "amazon", "enabled_at": "now",
               "adapter": {"region": "na", "marketplace_ids": [MARKETPLACE], "seller_id": seller.seller_id,
                           "client_id": seller.client_id, "client_secret": seller.client_secret,
                           "refresh_token": seller.refresh_token}}),
    );
    let warehouse = api.create(
        "/warehouses",
        json!({"customer_id": customer, "name": "Main", "platform": "folder", "enabled_at": "now",
               "adapter": {"connection_string": format!("file://{}", root.display())}}),
    );
    let connection = api.create(
        "/connections",
        json!({"name": "c", "customer_id": customer, "store_id": store_id, "warehouse_id": warehouse, "enabled_at": "now"}),
    );
    let (_, channels) = api.call("GET", &format!("/connections/{connection}/channels"), Value::Null);
    let sales =
        channels.as_array().unwrap().iter().find(|c| c["type"] == "sales").unwrap()["id"].as_i64().unwrap();
    api.call("PATCH", &format!("/connections/{connection}/channels/{sales}"), json!({"enabled_at": "now"}));
    connection
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_paced_out_then_killed_goes_on_in_a_new_process_from_the_page_it_stopped_at() {
    const PACED: &str = "A2PACEDSELLER1";
    let amazon = Simulator::start().await;
    let seller = Seller::new(PACED, "na", &[MARKETPLACE]);
    amazon.add_seller(seller.clone());
    amazon.generate_listings(PACED, 16, 3);
    amazon.generate_orders(PACED, 1_200, 11);
    // Two requests at once, then one every 2 s: the third page waits longer than a pass may.
    amazon.set_rate(PACED, Operation::SearchOrders, 0.5, 2);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("paced.db");
    let folders = dir.path().join("folders");
    let root = folders.join("wh");
    std::fs::create_dir_all(&root).unwrap();
    let folders = folders.display().to_string();
    let mut env: Vec<(String, String)> =
        envs(&folders).into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    env.push(("ORDERBRIDGE_AMAZON_API_BASE".into(), amazon.api_base()));
    env.push(("ORDERBRIDGE_AMAZON_LWA_BASE".into(), amazon.lwa_base()));
    env.push(("ORDERBRIDGE_PING_TIMEOUT_SECS".into(), "1".into()));
    let server = {
        let (db, env) = (db.clone(), env.clone());
        tokio::task::spawn_blocking(move || {
            let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            start(&db, &pairs).0
        })
        .await
        .unwrap()
    };
    let api = Api::new(&server);
    let connection = connect(&api, &seller, &root);
    let run = api.sync(connection).await;
    assert_eq!(run["status"], "succeeded", "a paced pull is not a failure: {run}");
    let searches = amazon.searches();
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
    amazon.set_rate(PACED, Operation::SearchOrders, 100.0, 1_000);
    let out = crate::process::command(&db)
        .arg("sync")
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed} {}", String::from_utf8_lossy(&out.stderr));

    let matching = amazon
        .order_ids(PACED)
        .iter()
        .filter_map(|o| amazon.order(PACED, o))
        .filter(|o| !o.fulfilled_by_amazon && matches!(o.status, "UNSHIPPED" | "PARTIALLY_SHIPPED"))
        .count();
    let went_on = &amazon.searches()[3..];
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
