//! A BigCommerce store whose orders a ShipStation warehouse (API V2) fulfils, over the HTTP
//! API, against the ShipStation simulator (spec/platforms/shipstation.md): orders created once
//! under their `external_shipment_id` whatever answer is lost, a refusal errored while the
//! rest go, labels read back and told to the store, a voided label keeping its shipment,
//! cancellations carried to ShipStation until a label holds the order, available stock, an
//! account without the Inventory add-on, and the ping quoting ShipStation's refusal.

use orderbridge::simulate::shipstation::{self, Operation};
use serde_json::{Value, json};

use crate::sync_rig::{HASH, Rig};

const KEY: &str = "ss-key-rig-0123456789";

/// A rig whose store's orders go to a ShipStation warehouse.
struct ShipStationRig {
    rig: Rig,
    ss: shipstation::Simulator,
    connection_id: i64,
}

impl ShipStationRig {
    async fn new(orders: usize) -> ShipStationRig {
        ShipStationRig::with_interval(orders, 86_400).await
    }

    /// With passes `sync_interval_secs` apart (a wait up to it is taken inside a pass).
    async fn with_interval(orders: usize, sync_interval_secs: u64) -> ShipStationRig {
        let ss = shipstation::Simulator::start().await;
        ss.add_account(KEY);
        let base = ss.base_url();
        let rig = Rig::with(orders, move |f| {
            f.merge(("shipstation_api_base", base))
                .merge(("ping_mode", "live"))
                .merge(("sync_interval_secs", sync_interval_secs))
        })
        .await;
        let connection_id = rig
            .connect_warehouse(
                json!({"name": "ShipStation", "platform": "shipstation", "adapter": {"access_token": KEY}}),
            )
            .await;
        ShipStationRig { rig, ss, connection_id }
    }

    async fn sync(&self) -> Value {
        self.rig.sync_connection(self.connection_id).await
    }
}

fn id(order: &Value) -> i64 {
    order["id"].as_i64().unwrap()
}

#[rocket::async_test]
async fn orders_go_to_shipstation_once_and_their_labels_come_back_to_the_store() {
    let t = ShipStationRig::new(4).await;
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!((run["orders_pulled"].as_i64(), run["orders_sent"].as_i64()), (Some(4), Some(4)), "{run}");
    assert_eq!(t.ss.shipment_count(KEY), 4);
    assert_eq!(t.ss.requests(Operation::CreateShipments), 1, "one request for the batch");
    for order in t.rig.orders().await {
        assert_eq!(order["fulfillment_state"], "pending_shipment", "{order}");
        let (at, _) = t.ss.shipment(KEY, &format!("ob-{}", id(&order))).expect("held under its reference");
        assert_eq!(order["external_warehouse_order_id"], at, "{order}");
    }

    // ShipStation labels every order; the next pass reads the labels and tells the store.
    let mut tracking = Vec::new();
    for order in t.rig.orders().await {
        tracking.push(t.ss.buy_label(KEY, &format!("ob-{}", id(&order)), None).unwrap());
    }
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(
        (run["shipments_pulled"].as_i64(), run["shipments_notified"].as_i64()),
        (Some(4), Some(4)),
        "{run}"
    );
    let mut told: Vec<String> = t.rig.bc().shipments(HASH).into_iter().map(|s| s.tracking_number).collect();
    told.sort();
    let mut bought: Vec<String> = tracking.iter().map(|l| l.tracking_number.clone()).collect();
    bought.sort();
    assert_eq!(told, bought, "the store heard of each label ShipStation bought");
    for order in t.rig.orders().await {
        assert_eq!(order["fulfillment_state"], "shipped", "{order}");
    }

    // A voided label keeps the shipment already reported; the overlap reads nothing twice.
    assert!(t.ss.void_label(KEY, &tracking[0].label_id));
    let run = t.sync().await;
    assert_eq!((run["orders_sent"].as_i64(), run["shipments_pulled"].as_i64()), (Some(0), Some(0)), "{run}");
    assert_eq!(t.rig.bc().shipments(HASH).len(), 4);
    assert_eq!(t.rig.shipments().await.len(), 4);
    assert!(t.rig.orders().await.iter().all(|o| o["fulfillment_state"] == "shipped"));
    assert_eq!(t.ss.requests(Operation::CreateShipments), 1);
    assert_eq!(t.ss.requests(Operation::ListLabels), 3, "one page a pass");
}

#[rocket::async_test]
async fn lost_answers_and_5xx_leave_one_shipment_each_and_a_refusal_errors_only_its_order() {
    let t = ShipStationRig::new(5).await;
    // The batch is applied and its answer lost; the next try is a 500; order 5 (a fresh
    // database numbers the pulled orders 1 to 5) is refused in its answer entry.
    t.ss.lose_creates(KEY, 1);
    t.ss.fail_next(KEY, Some(Operation::CreateShipments), 500, 1);
    t.ss.refuse_reference(KEY, "ob-5", "Invalid postal code for country US");
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "a refusal does not fail the pass: {run}");
    assert_eq!(run["orders_sent"], 4, "{run}");
    for order in t.rig.orders().await {
        let reference = format!("ob-{}", id(&order));
        if id(&order) == 5 {
            assert_eq!(order["fulfillment_state"], "errored", "{order}");
            assert_eq!(t.ss.shipments_under(KEY, &reference), 0);
        } else {
            assert_eq!(order["fulfillment_state"], "pending_shipment", "{order}");
            assert_eq!(t.ss.shipments_under(KEY, &reference), 1, "created once whatever answer was lost");
            assert_eq!(order["external_warehouse_order_id"], t.ss.shipment(KEY, &reference).unwrap().0);
        }
    }
    let problems = run["problems"].to_string();
    assert!(problems.contains("ShipStation refused order 5: Invalid postal code for country US"), "{run}");
}

#[rocket::async_test]
async fn a_store_cancellation_cancels_at_shipstation_until_a_label_is_bought() {
    let t = ShipStationRig::new(2).await;
    assert_eq!(t.sync().await["orders_sent"], 2);
    let orders = t.rig.orders().await;
    let (open, labelled) = (&orders[0], &orders[1]);
    t.ss.buy_label(KEY, &format!("ob-{}", id(labelled)), None).unwrap();
    assert_eq!(t.sync().await["shipments_pulled"], 1);
    for order in [open, labelled] {
        t.rig.bc().cancel_order(HASH, order["external_id"].as_str().unwrap());
    }
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(t.ss.shipment(KEY, &format!("ob-{}", id(open))).unwrap().1, "cancelled");
    let orders = t.rig.orders().await;
    assert_eq!(orders[0]["fulfillment_state"], "canceled", "{}", orders[0]);
    assert_eq!(orders[1]["fulfillment_state"], "shipped", "the conflict is reported, not hidden");
    let cancels = t.ss.requests(Operation::CancelShipment);
    t.sync().await;
    assert_eq!(t.ss.requests(Operation::CancelShipment), cancels, "each order cancelled at most once");
}

#[rocket::async_test]
async fn available_stock_goes_to_the_store_and_an_account_without_inventory_is_a_clear_error() {
    let t = ShipStationRig::new(0).await;
    let admin = t.rig.admin().to_string();
    for sku in ["MUG", "TEA"] {
        t.rig
            .app
            .post_json("/products", &admin, json!({"customer_id": t.rig.customer_id, "sku": sku}))
            .await
            .id();
    }
    t.ss.add_inventory(KEY, "MUG", "iw-1", 9, 2);
    t.ss.add_inventory(KEY, "TEA", "iw-1", 1, 3);
    let path = format!("/connections/{}/channels", t.connection_id);
    let channels = t.rig.app.get(&path, &admin).await;
    let inventory =
        channels.body.as_array().unwrap().iter().find(|c| c["type"] == "inventory").unwrap()["id"]
            .as_i64()
            .unwrap();
    let on = t.rig.app.patch_json(&format!("{path}/{inventory}"), &admin, json!({"enabled_at": "now"})).await;
    assert_eq!(on.status.code, 204);
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let stock = t.rig.bc().stock(HASH);
    assert_eq!((stock.get("MUG"), stock.get("TEA")), (Some(&7), Some(&0)), "{stock:?}");

    t.ss.remove_inventory_add_on(KEY);
    let run = t.sync().await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["error"]["code"], "adapter_authentication_failed", "{run}");
    assert!(run["error"]["message"].as_str().unwrap_or_default().contains("paid add-on"), "{run}");
    assert!(!run.to_string().contains(KEY));
}

#[rocket::async_test]
async fn the_ping_and_the_adapter_name_what_is_wrong() {
    let t = ShipStationRig::new(0).await;
    let admin = t.rig.admin().to_string();
    let create = |adapter: Value| json!({"customer_id": t.rig.customer_id, "name": "SS", "platform": "shipstation", "adapter": adapter});
    let r = t.rig.app.post_json("/warehouses", &admin, create(json!({}))).await;
    assert_eq!(r.status.code, 422, "{r:?}");
    assert!(r.body.to_string().contains("adapter[access_token]"), "{}", r.body);
    let r = t
        .rig
        .app
        .post_json("/warehouses", &admin, create(json!({"access_token": KEY, "weight_unit": "lb"})))
        .await;
    assert_eq!(r.status.code, 422, "{r:?}");
    assert!(r.body.to_string().contains("adapter[weight_unit]"), "{}", r.body);

    let ping = t.rig.app.post_json("/warehouses/ping", &admin, create(json!({"access_token": KEY}))).await;
    assert_eq!(ping.status.code, 204, "{ping:?}");
    let ping =
        t.rig.app.post_json("/warehouses/ping", &admin, create(json!({"access_token": "ss-unknown"}))).await;
    assert_eq!(ping.status.code, 422, "{ping:?}");
    assert_eq!(ping.body["error"]["code"], "adapter_authentication_failed", "{}", ping.body);
    assert!(ping.body.to_string().contains("The API key is invalid."), "{}", ping.body);
    assert!(!ping.body.to_string().contains("ss-unknown"));
}

#[rocket::async_test]
async fn a_label_shipstation_buys_by_itself_comes_back_in_the_pass_that_sent_it() {
    // The other tests buy labels on request; the demo and the benchmark let ShipStation buy them.
    let t = ShipStationRig::new(1).await;
    t.ss.set_label_after(Some(std::time::Duration::ZERO));
    // Bought by the time the same pass lists the labels, after it sent the order.
    let run = t.sync().await;
    assert_eq!((run["orders_sent"].as_i64(), run["shipments_pulled"].as_i64()), (Some(1), Some(1)), "{run}");
    assert_eq!(t.rig.orders().await[0]["fulfillment_state"], "shipped");
}

#[rocket::async_test]
async fn a_long_wait_ends_the_pass_and_the_next_pass_keeps_it() {
    // 600 s is longer than the pass may wait (sync_interval_secs).
    let t = ShipStationRig::with_interval(0, 60).await;
    t.ss.rate_limit_next(KEY, Some(Operation::ListLabels), 1, 600);
    let run = t.sync().await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["error"]["code"], "adapter_unreachable", "{run}");
    let asked = t.ss.total_requests();
    let run = t.sync().await;
    assert_eq!(run["error"]["code"], "adapter_unreachable", "{run}");
    assert_eq!(t.ss.total_requests(), asked, "no request before ShipStation's wait ends");
}

#[rocket::async_test]
async fn a_label_orderbridge_did_not_cause_is_named_once_and_not_pulled() {
    let t = ShipStationRig::new(1).await;
    assert_eq!(t.sync().await["orders_sent"], 1);
    let tracking = t.ss.add_foreign_label(KEY, Some("SHOP-77"), false);
    t.ss.add_foreign_label(KEY, None, true);
    let run = t.sync().await;
    assert_eq!(run["shipments_pulled"], 0, "{run}");
    assert!(run["problems"].to_string().contains(&tracking), "{run}");
    let run = t.sync().await;
    assert!(!run["problems"].to_string().contains(&tracking), "named by one pass only: {run}");
}

/// CONTRACT §11 and annex §5.1: a `Retry-After` longer than `sync_interval_secs` is not waited
/// out inside the pass (it used to be bounded by `ping_timeout_secs` and slept through).
#[rocket::async_test]
async fn a_wait_longer_than_the_sync_interval_fails_the_step_instead_of_sleeping() {
    let t = ShipStationRig::with_interval(1, 1).await;
    t.ss.rate_limit_next(KEY, None, 1, 3);
    let run = t.sync().await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["error"]["code"], "adapter_unreachable", "{run}");
    assert!(run["error"]["message"].as_str().unwrap().contains("not to call again before"), "{run}");
}
