//! kill -9 in the middle of passes with a ShipBob warehouse (issue 28): the real binary
//! syncs a BigCommerce store's orders to the ShipBob simulator and is killed six times, at
//! different moments, while ShipBob ships what it holds. Then every order is at ShipBob once,
//! under its reference and with its id kept; every shipment is read once and told once.

use std::collections::BTreeSet;
use std::time::Duration;

use orderbridge::simulate::big_commerce::Simulator;
use orderbridge::simulate::shipbob::{self, Parcel};
use serde_json::{Value, json};

use crate::process::start;
use crate::sync_binary::{Api, ORDERS, envs};
use crate::sync_rig::{HASH, TOKEN};

const PAT: &str = "pat-crash-shipbob-0000000001";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_shipbob_passes_sends_each_order_once_and_tells_each_shipment_once() {
    let store = Simulator::start().await;
    store.add_store(HASH, TOKEN);
    store.add_orders(HASH, ORDERS, 13);
    store.set_delay(HASH, Duration::from_millis(3));
    let sb = shipbob::Simulator::start().await;
    sb.add_account(PAT);
    // ShipBob's 150 requests a minute are not what this test is about.
    sb.set_rate_limit(PAT, usize::MAX);
    // Slow enough that a pass is well under way when the kill comes.
    sb.set_latency(PAT, Duration::from_millis(3));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let folders = dir.path().join("folders").display().to_string();
    let (store_base, sb_base) = (store.base_url(), sb.base_url());
    let mut env: Vec<(String, String)> =
        envs(&folders).into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    env.push(("ORDERBRIDGE_BIGCOMMERCE_API_BASE".into(), store_base));
    env.push(("ORDERBRIDGE_SHIPBOB_API_BASE".into(), sb_base));
    let boot = {
        let db = db.clone();
        move || {
            let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            start(&db, &pairs).0
        }
    };
    let server = tokio::task::spawn_blocking(boot.clone()).await.unwrap();
    let api = Api::new(&server);
    let customer = api.create("/customers", json!({"company_name": "Crash Co"}));
    let store_id = api.create(
        "/stores",
        json!({"customer_id": customer, "name": "Shop", "platform": "big_commerce", "enabled_at": "now",
               "adapter": {"access_token": TOKEN, "store_hash": HASH}}),
    );
    let warehouse = api.create(
        "/warehouses",
        json!({"customer_id": customer, "name": "ShipBob", "platform": "shipbob", "enabled_at": "now",
               "adapter": {"access_token": PAT}}),
    );
    let connection = api.create(
        "/connections",
        json!({"name": "c", "customer_id": customer, "store_id": store_id, "warehouse_id": warehouse, "enabled_at": "now"}),
    );
    let (_, channels) = api.call("GET", &format!("/connections/{connection}/channels"), Value::Null);
    let sales =
        channels.as_array().unwrap().iter().find(|c| c["type"] == "sales").unwrap()["id"].as_i64().unwrap();
    api.call("PATCH", &format!("/connections/{connection}/channels/{sales}"), json!({"enabled_at": "now"}));

    let mut server = Some(server);
    let mut shipped = BTreeSet::new();
    for (round, after_ms) in [400u64, 1_500, 900, 2_500, 300, 1_200].into_iter().enumerate() {
        let running = server.take().unwrap_or_else(|| panic!("round {round}: no server"));
        let api = Api::new(&running);
        if round >= 2 {
            // ShipBob ships some of what it holds, so later kills land in shipment steps too.
            for order in
                api.all("orders").iter().filter(|o| o["fulfillment_state"] == "pending_shipment").take(150)
            {
                let id = order["id"].as_i64().unwrap();
                let at_shipbob =
                    sb.order_by_reference(PAT, &format!("ob-{id}")).expect("held under its reference");
                if shipped.insert(id) {
                    let parcel = sb.ship_order(PAT, at_shipbob, Parcel::default()).unwrap();
                    assert!(!parcel.tracking_number.is_empty());
                }
            }
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
    store.set_delay(HASH, Duration::ZERO);
    sb.set_latency(PAT, Duration::ZERO);
    assert!(api.settle(connection, 8).await, "the passes settle");
    let (_, runs) = api.call("GET", &format!("/connections/{connection}/sync_runs"), Value::Null);
    let interrupted = runs.as_array().unwrap().iter().filter(|r| r["error"]["code"] == "interrupted").count();
    assert!(interrupted >= 2, "{interrupted} of 6 kills interrupted a pass: {runs}");

    // Every order once at ShipBob, under its reference, its id kept.
    let orders = api.all("orders");
    assert_eq!(orders.len(), ORDERS);
    assert_eq!(sb.order_count(PAT), ORDERS, "no order created twice");
    for order in &orders {
        assert_ne!(order["fulfillment_state"], "new", "{order}");
        let id = order["id"].as_i64().unwrap();
        let at = sb.order_by_reference(PAT, &format!("ob-{id}")).expect("at ShipBob");
        assert_eq!(order["external_warehouse_order_id"], at.to_string(), "{order}");
    }
    // Every shipment once, told once.
    let shipments = api.all("shipments");
    assert_eq!(shipments.len(), shipped.len());
    assert!(shipments.iter().all(|s| s["state"] == "notified_shipped"), "{shipments:?}");
    let told: Vec<String> = store.shipments(HASH).into_iter().map(|s| s.tracking_number).collect();
    let unique: BTreeSet<&String> = told.iter().collect();
    assert_eq!((told.len(), unique.len()), (shipped.len(), shipped.len()), "each told once");
    let (out, err) = running.stop();
    assert!(!out.contains(PAT) && !err.contains(PAT), "the token was logged");
}
