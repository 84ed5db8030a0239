//! Orders whose create at an API warehouse is in doubt (its answer lost, the pass failed before
//! a lookup could settle it), and cancellations the warehouse must hear of (issue 35, faults
//! 1, 2, 3, 7 and 8): the doubt is kept in the database, so the next pass looks the order up
//! before it creates anything; a store's cancellation of such an order is carried to the
//! warehouse; a label of it that another connection reads is ours, never a stranger; one
//! cancel that cannot be sent holds back no other order; and a cancellation after the
//! warehouse shipped is reported once.

use orderbridge::simulate::shipbob::{self, Parcel};
use orderbridge::simulate::shipstation::{self, Operation};
use serde_json::{Value, json};

use crate::sync_rig::HASH;
use crate::sync_suites::warehouses::{KEY, PAT, WarehouseRig, id, shipbob_rig, shipstation_rig};

async fn shipstation(orders: usize) -> WarehouseRig<shipstation::Simulator> {
    shipstation_rig(orders, |f| f).await
}

/// A pass of `connection` whose create of every order is applied by ShipStation while its
/// answer is lost, and whose lookups all fail: it ends with the orders `new` and their creates
/// in doubt.
async fn sync_leaving_creates_in_doubt(t: &WarehouseRig<shipstation::Simulator>, connection: i64) {
    t.wh.lose_creates(KEY, 100);
    t.wh.fail_next(KEY, Some(Operation::GetShipmentByExternalId), 503, 1000);
    let run = t.rig.sync_connection(connection).await;
    assert_eq!(run["status"], "failed", "{run}");
    t.wh.clear_faults(KEY);
    t.wh.lose_creates(KEY, 0);
}

/// The problems of the run about order `id`.
fn problems_of(run: &Value, id: i64) -> Vec<Value> {
    let problems = run["problems"].as_array().unwrap().iter();
    problems.filter(|p| p["ref"].as_str() == Some(&*id.to_string())).cloned().collect()
}

#[rocket::async_test]
async fn a_create_in_doubt_is_looked_up_before_the_next_pass_creates_it_again() {
    let t = shipstation(1).await;
    sync_leaving_creates_in_doubt(&t, t.connection_id).await;
    let order = &t.rig.orders().await[0];
    assert_eq!(order["fulfillment_state"], "new", "{order}");
    assert_eq!(t.wh.shipments_under(KEY, "ob-1"), 1, "ShipStation applied the lost create");
    let creates = t.wh.requests(Operation::CreateShipments);

    t.sync_ok().await;
    assert_eq!(t.wh.requests(Operation::CreateShipments), creates, "looked up, not created again");
    assert_eq!(t.wh.shipments_under(KEY, "ob-1"), 1);
    let order = &t.rig.orders().await[0];
    assert_eq!(order["fulfillment_state"], "pending_shipment", "{order}");
    assert_eq!(order["external_warehouse_order_id"], t.wh.shipment(KEY, "ob-1").unwrap().0, "{order}");
}

#[rocket::async_test]
async fn an_order_cancelled_while_its_create_is_in_doubt_is_cancelled_at_shipstation() {
    let t = shipstation(2).await;
    sync_leaving_creates_in_doubt(&t, t.connection_id).await;
    let orders = t.rig.orders().await;
    assert!(orders.iter().all(|o| o["fulfillment_state"] == "new"), "{orders:?}");
    for order in &orders {
        t.rig.bc().cancel_order(HASH, order["external_id"].as_str().unwrap());
    }
    let creates = t.wh.requests(Operation::CreateShipments);

    t.sync_ok().await;
    assert_eq!(t.wh.requests(Operation::CreateShipments), creates, "nothing created for a cancelled order");
    for order in t.rig.orders().await {
        assert_eq!(order["fulfillment_state"], "canceled", "{order}");
        let reference = format!("ob-{}", id(&order));
        let (_, status) = t.wh.shipment(KEY, &reference).expect("the lost create was applied");
        assert_eq!(status, "cancelled", "ShipStation no longer holds {reference} for shipping");
    }
}

#[rocket::async_test]
async fn an_order_cancelled_while_a_create_that_never_arrived_is_in_doubt_is_cancelled_with_no_request() {
    let t = shipstation(1).await;
    // The create is refused before ShipStation applies it, and every lookup fails.
    t.wh.fail_next(KEY, Some(Operation::CreateShipments), 503, 3);
    t.wh.fail_next(KEY, Some(Operation::GetShipmentByExternalId), 503, 1000);
    assert_eq!(t.sync().await["status"], "failed");
    t.wh.clear_faults(KEY);
    let order = &t.rig.orders().await[0];
    t.rig.bc().cancel_order(HASH, order["external_id"].as_str().unwrap());
    let creates = t.wh.requests(Operation::CreateShipments);

    t.sync_ok().await;
    assert_eq!(t.rig.orders().await[0]["fulfillment_state"], "canceled");
    assert_eq!(t.wh.shipment_count(KEY), 0, "never created");
    assert_eq!(t.wh.requests(Operation::CreateShipments), creates);
    assert_eq!(t.wh.requests(Operation::CancelShipment), 0, "nothing to cancel");
}

#[rocket::async_test]
async fn a_label_of_an_order_in_doubt_read_by_another_connection_is_ours_and_comes_back() {
    // Two stores of one customer share one ShipStation warehouse.
    let t = shipstation(0).await;
    let (second_hash, second_token) = ("second-h4sh", "bc-token-second-0123");
    t.rig.bc().add_store(second_hash, second_token);
    t.rig.bc().add_orders(second_hash, 1, 11);
    let adapter = json!({"access_token": second_token, "store_hash": second_hash});
    let second =
        t.rig.connect_store(json!({"platform": "big_commerce", "adapter": adapter}), t.warehouse_id).await;
    let admin = t.rig.admin();

    // The second connection's create is in doubt; ShipStation has the order and labels it.
    sync_leaving_creates_in_doubt(&t, second).await;
    let order = t.rig.orders().await.into_iter().next().expect("the second shop's order");
    assert_eq!(order["fulfillment_state"], "new", "{order}");
    let label = t.wh.buy_label(KEY, &format!("ob-{}", id(&order)), None).unwrap();
    // The second shop now fails at its pull, pass after pass.
    t.rig.bc().fail_next(second_hash, "", 500, 1000);

    // The first connection reads the warehouse's labels: the order is ours.
    let run = t.sync_ok().await;
    assert!(run["problems"].as_array().unwrap().is_empty(), "not named a stranger: {run}");
    assert_eq!(run["shipments_pulled"], 1, "{run}");
    let order = t.rig.app.get(&format!("/orders/{}", id(&order)), admin).await.body["order"].clone();
    assert_eq!(order["fulfillment_state"], "shipped", "{order}");
    assert_eq!(
        order["external_warehouse_order_id"],
        t.wh.shipment(KEY, &format!("ob-{}", id(&order))).unwrap().0
    );
    let shipments = t.rig.shipments().await;
    assert_eq!(shipments.len(), 1, "{shipments:?}");
    assert_eq!(shipments[0]["tracking_number"], label.tracking_number.as_str());

    // The second shop recovers: nothing is created again, and its store hears of the parcel.
    t.rig.bc().fail_next(second_hash, "", 500, 0);
    let creates = t.wh.requests(Operation::CreateShipments);
    let run = t.rig.sync_connection_ok(second).await;
    assert_eq!(run["shipments_notified"], 1, "{run}");
    assert_eq!(t.wh.requests(Operation::CreateShipments), creates);
    assert_eq!(t.wh.shipments_under(KEY, &format!("ob-{}", id(&order))), 1);
}

#[rocket::async_test]
async fn one_cancel_that_cannot_be_sent_holds_back_no_other_order() {
    let t = shipstation(1).await;
    let run = t.sync().await;
    assert_eq!(run["orders_sent"], 1, "{run}");
    let held = &t.rig.orders().await[0];
    t.rig.bc().cancel_order(HASH, held["external_id"].as_str().unwrap());
    t.rig.bc().add_orders(HASH, 2, 23);
    t.wh.fail_next(KEY, Some(Operation::CancelShipment), 500, 1000);

    let run = t.sync().await;
    assert_eq!(run["orders_sent"], 2, "the other orders still go: {run}");
    let problems = problems_of(&run, id(held));
    let problem = problems.first().unwrap_or_else(|| panic!("{run}"));
    assert_eq!((problem["step"].as_str(), problem["kind"].as_str()), (Some("send_orders"), Some("order")));
    let sync = t.rig.app.get(&format!("/orders/{}/sync", id(held)), t.rig.admin()).await.body;
    assert!(sync["last_error"]["message"].as_str().is_some_and(|m| m.contains("cancel")), "{sync}");

    // ShipStation answers again: the cancel goes, once.
    t.wh.clear_faults(KEY);
    t.sync_ok().await;
    let order = t.rig.app.get(&format!("/orders/{}", id(held)), t.rig.admin()).await.body["order"].clone();
    assert_eq!(order["fulfillment_state"], "canceled", "{order}");
    assert_eq!(t.wh.shipment(KEY, &format!("ob-{}", id(held))).unwrap().1, "cancelled");
}

#[rocket::async_test]
async fn an_order_cancelled_while_its_shipbob_create_is_in_doubt_is_cancelled_at_shipbob() {
    let t = shipbob_rig(1, |f| f).await;
    t.wh.lose_answers(PAT, shipbob::Operation::CreateOrder, 1);
    t.wh.fail_next(PAT, Some(shipbob::Operation::GetOrders), 503, 1000);
    assert_eq!(t.sync().await["status"], "failed");
    t.wh.clear_faults(PAT);
    let order = &t.rig.orders().await[0];
    assert_eq!(order["fulfillment_state"], "new", "{order}");
    let at = t.wh.order_by_reference(PAT, "ob-1").expect("the lost create was applied");
    t.rig.bc().cancel_order(HASH, order["external_id"].as_str().unwrap());

    t.sync_ok().await;
    assert_eq!(t.rig.orders().await[0]["fulfillment_state"], "canceled");
    assert_eq!(t.wh.order_status(PAT, at), Some("Cancelled"), "ShipBob will not ship it");
    assert_eq!(t.wh.order_count(PAT), 1, "created once");
}

#[rocket::async_test]
async fn a_cancellation_after_shipbob_shipped_is_reported_once() {
    let t = shipbob_rig(1, |f| f).await;
    let run = t.sync().await;
    assert_eq!(run["orders_sent"], 1, "{run}");
    let order = t.rig.orders().await.remove(0);
    let at = t.wh.order_by_reference(PAT, "ob-1").unwrap();
    t.wh.ship_order(PAT, at, Parcel::default()).unwrap();
    let run = t.sync().await;
    assert_eq!(run["shipments_pulled"], 1, "{run}");
    assert_eq!(t.rig.orders().await[0]["fulfillment_state"], "shipped");

    t.rig.bc().cancel_order(HASH, order["external_id"].as_str().unwrap());
    let run = t.sync().await;
    let conflicts = problems_of(&run, id(&order));
    assert_eq!(conflicts.len(), 1, "{run}");
    assert_eq!(conflicts[0]["step"], "send_orders");
    assert!(conflicts[0]["message"].as_str().unwrap().contains("has shipped it"), "{run}");
    assert_eq!(t.rig.orders().await[0]["fulfillment_state"], "shipped", "the order keeps its state");
    let run = t.sync().await;
    assert!(problems_of(&run, id(&order)).is_empty(), "reported once: {run}");
}
