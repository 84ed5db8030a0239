//! A BigCommerce store whose orders a ShipStation warehouse (API V2) fulfils, over the HTTP
//! API, against the ShipStation simulator (spec/platforms/shipstation.md): orders created once
//! under their `external_shipment_id` whatever answer is lost, a refusal errored while the
//! rest go, labels read back and told to the store, a voided label keeping its shipment,
//! cancellations carried to ShipStation until a label holds the order, available stock, an
//! account without the Inventory add-on, and the ping quoting ShipStation's refusal.

use orderbridge::simulate::shipstation::Operation;
use serde_json::json;

use crate::sync_rig::HASH;
use crate::sync_suites::warehouses::{KEY, WarehouseRig, id, shipstation_rig};

async fn shipstation(orders: usize) -> WarehouseRig<orderbridge::simulate::shipstation::Simulator> {
    shipstation_rig(orders, |f| f.merge(("ping_mode", "live"))).await
}

#[rocket::async_test]
async fn orders_go_in_one_batch_and_a_voided_label_keeps_the_shipment_already_reported() {
    let t = shipstation(4).await;
    assert_eq!(t.sync().await["orders_sent"], 4);
    assert_eq!(t.wh.requests(Operation::CreateShipments), 1, "one request for the batch");
    let mut labels = Vec::new();
    for order in t.rig.orders().await {
        labels.push(t.wh.buy_label(KEY, &format!("ob-{}", id(&order)), None).unwrap());
    }
    assert_eq!(t.sync().await["shipments_notified"], 4);
    assert!(t.wh.void_label(KEY, &labels[0].label_id));
    let run = t.sync().await;
    assert_eq!(run["shipments_pulled"], 0, "{run}");
    assert_eq!((t.rig.bc().shipments(HASH).len(), t.rig.shipments().await.len()), (4, 4));
    assert!(t.rig.orders().await.iter().all(|o| o["fulfillment_state"] == "shipped"));
    assert_eq!(t.wh.requests(Operation::ListLabels), 3, "one page a pass");
}

#[rocket::async_test]
async fn lost_answers_and_5xx_leave_one_shipment_each_and_a_refusal_errors_only_its_order() {
    let t = shipstation(5).await;
    // The batch is applied and its answer lost; the next try is a 500; order 5 (a fresh
    // database numbers the pulled orders 1 to 5) is refused in its answer entry.
    t.wh.lose_creates(KEY, 1);
    t.wh.fail_next(KEY, Some(Operation::CreateShipments), 500, 1);
    t.wh.refuse_reference(KEY, "ob-5", "Invalid postal code for country US");
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "a refusal does not fail the pass: {run}");
    assert_eq!(run["orders_sent"], 4, "{run}");
    for order in t.rig.orders().await {
        let reference = format!("ob-{}", id(&order));
        if id(&order) == 5 {
            assert_eq!(order["fulfillment_state"], "errored", "{order}");
            assert_eq!(t.wh.shipments_under(KEY, &reference), 0);
        } else {
            assert_eq!(order["fulfillment_state"], "pending_shipment", "{order}");
            assert_eq!(t.wh.shipments_under(KEY, &reference), 1, "created once whatever answer was lost");
            assert_eq!(order["external_warehouse_order_id"], t.wh.shipment(KEY, &reference).unwrap().0);
        }
    }
    let problems = run["problems"].to_string();
    assert!(problems.contains("ShipStation refused order 5: Invalid postal code for country US"), "{run}");
}

#[rocket::async_test]
async fn an_account_without_the_inventory_add_on_is_a_clear_error() {
    let t = shipstation(0).await;
    crate::sync_rig::enable_channel(&t.rig.app, t.connection_id, "inventory").await;
    t.wh.remove_inventory_add_on(KEY);
    let run = t.sync().await;
    crate::sync_rig::assert_failed(&run, None, "adapter_authentication_failed", &["paid add-on"]);
    assert!(!run.to_string().contains(KEY));
}

/// The suite pings the right and the wrong credentials; each API warehouse's adapter names
/// each bad key.
#[rocket::async_test]
async fn the_adapter_names_what_is_wrong() {
    let t = shipstation(0).await;
    for (platform, adapter, key) in [
        ("shipstation", json!({}), "access_token"),
        ("shipstation", json!({"access_token": KEY, "weight_unit": "lb"}), "weight_unit"),
        ("shipbob", json!({}), "access_token"),
        ("shipbob", json!({"access_token": "pat", "channel_id": "x"}), "channel_id"),
    ] {
        let body =
            json!({"customer_id": t.rig.customer_id, "name": "W", "platform": platform, "adapter": adapter});
        let r = t.rig.app.post_json("/warehouses", t.rig.admin(), body).await;
        assert_eq!(r.status.code, 422, "{platform}: {r:?}");
        assert!(r.text.contains(&format!("adapter[{key}]")), "{platform}: {}", r.body);
    }
}

#[rocket::async_test]
async fn a_label_orderbridge_did_not_cause_is_named_once_and_not_pulled() {
    let t = shipstation(1).await;
    assert_eq!(t.sync().await["orders_sent"], 1);
    let tracking = t.wh.add_foreign_label(KEY, Some("SHOP-77"), false);
    t.wh.add_foreign_label(KEY, None, true);
    let run = t.sync().await;
    assert_eq!(run["shipments_pulled"], 0, "{run}");
    assert!(run["problems"].to_string().contains(&tracking), "{run}");
    let run = t.sync().await;
    assert!(!run["problems"].to_string().contains(&tracking), "named by one pass only: {run}");
}
