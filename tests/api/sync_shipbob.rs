//! A BigCommerce store whose orders a ShipBob warehouse fulfils, over the HTTP API, against the
//! ShipBob simulator (spec/platforms/shipbob.md): orders created once under their reference
//! whatever answer is lost, refusals errored and the rest sent, shipments read back and told to
//! the store, cancellations carried to ShipBob, and fulfillable stock sent to the store.

use orderbridge::simulate::shipbob::Operation;
use serde_json::json;

use crate::sync_suites::warehouses::{PAT, WarehouseRig, id, shipbob_rig};

type ShipBobRig = WarehouseRig<orderbridge::simulate::shipbob::Simulator>;

async fn shipbob(orders: usize) -> ShipBobRig {
    shipbob_rig(orders, |f| f.merge(("ping_mode", "live"))).await
}

/// The ShipBob order of orderbridge order `id`, by its reference.
fn at_shipbob(t: &ShipBobRig, id: i64) -> Option<i64> {
    t.wh.order_by_reference(PAT, &format!("ob-{id}"))
}

#[rocket::async_test]
async fn lost_answers_duplicates_and_5xx_leave_one_order_each_and_a_refusal_errors_only_its_order() {
    let t = shipbob(5).await;
    // One create applied and its answer lost, one that finds its reference already there, one
    // 503, and order 5 (a fresh database numbers the pulled orders 1 to 5) refused.
    t.wh.lose_answers(PAT, Operation::CreateOrder, 1);
    t.wh.duplicate_next_create(PAT);
    t.wh.fail_next(PAT, Some(Operation::CreateOrder), 503, 1);
    t.wh.refuse_create(PAT, "ob-5", 400);
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "a refusal does not fail the pass: {run}");
    assert_eq!(run["orders_sent"], 4, "{run}");
    assert_eq!(t.wh.order_count(PAT), 4, "each order once at ShipBob, the refused one not at all");
    for order in t.rig.orders().await {
        if id(&order) == 5 {
            assert_eq!(order["fulfillment_state"], "errored", "{order}");
            assert!(order["external_warehouse_order_id"].is_null(), "{order}");
        } else {
            assert_eq!(order["fulfillment_state"], "pending_shipment", "{order}");
            assert_eq!(order["external_warehouse_order_id"], at_shipbob(&t, id(&order)).unwrap().to_string());
        }
    }
    // A retry puts the order back; ShipBob refuses it again, and nothing else is created.
    let retry = t.rig.app.post_json("/orders/5/retry", t.rig.admin(), json!({})).await;
    assert_eq!(retry.status.code, 204, "{retry:?}");
    let run = t.sync().await;
    assert_eq!(run["orders_sent"], 0, "{run}");
    assert_eq!(t.wh.order_count(PAT), 4);
}

#[rocket::async_test]
async fn a_5xx_listing_is_tried_again() {
    let t = shipbob(2).await;
    t.wh.fail_next(PAT, Some(Operation::GetOrders), 503, 1);
    let run = t.sync().await;
    assert_eq!((run["status"].as_str(), run["orders_sent"].as_i64()), (Some("succeeded"), Some(2)), "{run}");
    assert_eq!(t.wh.order_count(PAT), 2);
}

/// The amended annex §4: a walk of shipments reads at most 1,000 pages in a pass; one that goes
/// on stops there without an error, keeps its place in the database, and the next pass goes on
/// from its next page (a backlog after an outage used to fail every pass at page 1,000).
#[rocket::async_test]
async fn a_walk_past_1000_pages_stops_keeps_its_place_in_the_database_and_goes_on_next_pass() {
    let t = shipbob(2).await;
    // The 150 requests a minute are not what this test is about.
    t.wh.set_rate_limit(PAT, usize::MAX);
    let run = t.sync().await;
    assert_eq!(run["orders_sent"], 2, "{run}");
    assert_eq!(t.wh.ship_all(PAT), 2);
    // A thousand pages of 250 orders come before the two shipped ones.
    t.wh.list_backlog_first(PAT, 1_000 * 250);
    let listed = t.wh.requests(Operation::GetOrders);
    let run = t.sync_ok().await;
    assert_eq!(run["shipments_pulled"], 0, "{run}");
    assert_eq!(t.wh.requests(Operation::GetOrders) - listed, 1_000, "a thousand pages, then it stopped");
    // The place is in the database, not in the process's memory.
    let config = t.rig.app.client.rocket().state::<orderbridge::config::Config>().unwrap().clone();
    let pool = orderbridge::db::open(&config.database).unwrap();
    let kept = || -> i64 {
        pool.get().unwrap().query_row("SELECT COUNT(*) FROM warehouse_walks", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(kept(), 1, "the walk's place is kept in the database");

    let listed = t.wh.requests(Operation::GetOrders);
    let run = t.sync_ok().await;
    assert_eq!(run["shipments_pulled"], 2, "{run}");
    assert_eq!(t.wh.requests(Operation::GetOrders) - listed, 1, "it went on from page 1,001");
    for order in t.rig.orders().await {
        assert_eq!(order["fulfillment_state"], "shipped", "{order}");
    }
    assert_eq!(kept(), 0, "a walk that ended keeps no place");
}
