//! A BigCommerce store whose orders a ShipBob warehouse fulfils, over the HTTP API, against the
//! ShipBob simulator (spec/platforms/shipbob.md): orders created once under their reference
//! whatever answer is lost, refusals errored and the rest sent, shipments read back and told to
//! the store, cancellations carried to ShipBob, and fulfillable stock sent to the store.

use orderbridge::simulate::shipbob::{self, AutoShip, Operation, Parcel};
use serde_json::{Value, json};

use crate::sync_rig::{HASH, Rig};

const PAT: &str = "pat-shipbob-rig-0123456789";

/// A rig whose store's orders go to a ShipBob warehouse (the folder warehouse switched off).
struct ShipBobRig {
    rig: Rig,
    sb: shipbob::Simulator,
    connection_id: i64,
}

impl ShipBobRig {
    async fn new(orders: usize) -> ShipBobRig {
        ShipBobRig::with_interval(orders, 86_400).await
    }

    /// With passes `sync_interval_secs` apart (a wait up to it is taken inside a pass).
    async fn with_interval(orders: usize, sync_interval_secs: u64) -> ShipBobRig {
        let sb = shipbob::Simulator::start().await;
        sb.add_account(PAT);
        let base = sb.base_url();
        let rig = Rig::with(orders, move |f| {
            f.merge(("shipbob_api_base", base))
                .merge(("ping_mode", "live"))
                .merge(("sync_interval_secs", sync_interval_secs))
        })
        .await;
        let connection_id = rig
            .connect_warehouse(
                json!({"name": "ShipBob", "platform": "shipbob", "adapter": {"access_token": PAT}}),
            )
            .await;
        ShipBobRig { rig, sb, connection_id }
    }

    async fn sync(&self) -> Value {
        self.rig.sync_connection(self.connection_id).await
    }

    /// The ShipBob order of orderbridge order `id`, by its reference.
    fn at_shipbob(&self, id: i64) -> Option<i64> {
        self.sb.order_by_reference(PAT, &format!("ob-{id}"))
    }
}

fn id(order: &Value) -> i64 {
    order["id"].as_i64().unwrap()
}

#[rocket::async_test]
async fn orders_go_to_shipbob_once_and_their_tracking_comes_back_to_the_store() {
    let t = ShipBobRig::new(4).await;
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!((run["orders_pulled"].as_i64(), run["orders_sent"].as_i64()), (Some(4), Some(4)), "{run}");
    assert_eq!(t.sb.order_count(PAT), 4);
    assert_eq!(t.sb.requests(Operation::CreateOrder), 4, "one create per order");
    for order in t.rig.orders().await {
        assert_eq!(order["fulfillment_state"], "pending_shipment", "{order}");
        let at = t.at_shipbob(id(&order)).expect("held under its reference");
        assert_eq!(order["external_warehouse_order_id"], at.to_string(), "{order}");
    }

    // ShipBob ships every order; the next pass reads the shipments and tells the store.
    let orders = t.rig.orders().await;
    let mut tracking = Vec::new();
    for order in &orders {
        let shipped = t.sb.ship_order(PAT, t.at_shipbob(id(order)).unwrap(), Parcel::default()).unwrap();
        tracking.push(shipped.tracking_number);
    }
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(
        (run["shipments_pulled"].as_i64(), run["shipments_notified"].as_i64()),
        (Some(4), Some(4)),
        "{run}"
    );
    let posted: Vec<String> = t.rig.bc().shipments(HASH).into_iter().map(|s| s.tracking_number).collect();
    tracking.sort();
    let mut told = posted.clone();
    told.sort();
    assert_eq!(told, tracking, "the store heard of each parcel ShipBob shipped");
    for order in t.rig.orders().await {
        assert_eq!(order["fulfillment_state"], "shipped", "{order}");
    }
    let shipments = t.rig.shipments().await;
    assert!(
        shipments.iter().all(|s| s["state"] == "notified_shipped" && s["carrier_name"].is_string()),
        "{shipments:?}"
    );

    // Read again (the overlap): nothing is written or told twice, and nothing is created again.
    let run = t.sync().await;
    assert_eq!((run["orders_sent"].as_i64(), run["shipments_pulled"].as_i64()), (Some(0), Some(0)), "{run}");
    assert_eq!(t.rig.bc().shipments(HASH).len(), 4);
    assert_eq!(t.sb.requests(Operation::CreateOrder), 4);
    assert!(
        t.sb.requests(Operation::GetOrders) <= 3,
        "one page a pass: {}",
        t.sb.requests(Operation::GetOrders)
    );
}

#[rocket::async_test]
async fn lost_answers_duplicates_and_5xx_leave_one_order_each_and_a_refusal_errors_only_its_order() {
    let t = ShipBobRig::new(5).await;
    // One create applied and its answer lost, one that finds its reference already there, one
    // 503, and order 5 (a fresh database numbers the pulled orders 1 to 5) refused.
    t.sb.lose_answers(PAT, Operation::CreateOrder, 1);
    t.sb.duplicate_next_create(PAT);
    t.sb.fail_next(PAT, Some(Operation::CreateOrder), 503, 1);
    t.sb.refuse_create(PAT, "ob-5", 400);
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "a refusal does not fail the pass: {run}");
    assert_eq!(run["orders_sent"], 4, "{run}");
    assert_eq!(t.sb.order_count(PAT), 4, "each order once at ShipBob, the refused one not at all");
    for order in t.rig.orders().await {
        if id(&order) == 5 {
            assert_eq!(order["fulfillment_state"], "errored", "{order}");
            assert!(order["external_warehouse_order_id"].is_null(), "{order}");
        } else {
            assert_eq!(order["fulfillment_state"], "pending_shipment", "{order}");
            assert_eq!(order["external_warehouse_order_id"], t.at_shipbob(id(&order)).unwrap().to_string());
        }
    }
    // A retry puts the order back; ShipBob refuses it again, and nothing else is created.
    let retry = t.rig.app.post_json("/orders/5/retry", t.rig.admin(), json!({})).await;
    assert_eq!(retry.status.code, 204, "{retry:?}");
    let run = t.sync().await;
    assert_eq!(run["orders_sent"], 0, "{run}");
    assert_eq!(t.sb.order_count(PAT), 4);
}

#[rocket::async_test]
async fn a_store_cancellation_cancels_at_shipbob_until_it_has_shipped() {
    let t = ShipBobRig::new(2).await;
    assert_eq!(t.sync().await["orders_sent"], 2);
    let orders = t.rig.orders().await;
    let (open, shipped) = (&orders[0], &orders[1]);
    t.sb.ship_order(PAT, t.at_shipbob(id(shipped)).unwrap(), Parcel::default()).unwrap();
    assert_eq!(t.sync().await["shipments_pulled"], 1);
    for order in [open, shipped] {
        t.rig.bc().cancel_order(HASH, order["external_id"].as_str().unwrap());
    }
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let at = t.at_shipbob(id(open)).unwrap();
    assert_eq!(t.sb.order_status(PAT, at), Some("Cancelled"));
    let orders = t.rig.orders().await;
    assert_eq!(orders[0]["fulfillment_state"], "canceled", "{}", orders[0]);
    assert_eq!(
        orders[1]["fulfillment_state"], "shipped",
        "ShipBob had shipped it: the conflict is reported, not hidden"
    );
    // The conflict is settled once: no cancel is tried again.
    let cancels = t.sb.requests(Operation::CancelOrder);
    t.sync().await;
    assert_eq!(t.sb.requests(Operation::CancelOrder), cancels);
}

#[rocket::async_test]
async fn fulfillable_stock_goes_to_the_store_and_a_refused_token_fails_the_step() {
    let t = ShipBobRig::new(0).await;
    let admin = t.rig.admin().to_string();
    for sku in ["MUG", "TEA"] {
        t.rig
            .app
            .post_json("/products", &admin, json!({"customer_id": t.rig.customer_id, "sku": sku}))
            .await
            .id();
    }
    t.sb.add_inventory(PAT, "MUG", "Mug", 7);
    t.sb.add_inventory(PAT, "TEA", "Tea", 0);
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

    t.sb.revoke_token(PAT);
    let run = t.sync().await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["error"]["code"], "adapter_authentication_failed", "{run}");
    assert!(!run.to_string().contains(PAT));
}

#[rocket::async_test]
async fn the_ping_and_the_adapter_name_what_is_wrong() {
    let t = ShipBobRig::new(0).await;
    let admin = t.rig.admin().to_string();
    let create = |adapter: Value| json!({"customer_id": t.rig.customer_id, "name": "SB", "platform": "shipbob", "adapter": adapter});
    let r = t.rig.app.post_json("/warehouses", &admin, create(json!({}))).await;
    assert_eq!(r.status.code, 422, "{r:?}");
    assert!(r.body.to_string().contains("adapter[access_token]"), "{}", r.body);
    let r = t
        .rig
        .app
        .post_json("/warehouses", &admin, create(json!({"access_token": PAT, "channel_id": "x"})))
        .await;
    assert_eq!(r.status.code, 422, "{r:?}");
    assert!(r.body.to_string().contains("adapter[channel_id]"), "{}", r.body);

    let ping = t.rig.app.post_json("/warehouses/ping", &admin, create(json!({"access_token": PAT}))).await;
    assert_eq!(ping.status.code, 204, "{ping:?}");
    let ping =
        t.rig.app.post_json("/warehouses/ping", &admin, create(json!({"access_token": "pat-unknown"}))).await;
    assert_eq!(ping.status.code, 422, "{ping:?}");
    assert_eq!(ping.body["error"]["code"], "adapter_authentication_failed", "{}", ping.body);
    assert!(ping.body.to_string().contains("ShipBob refused the token (HTTP 401)"), "{}", ping.body);
    assert!(!ping.body.to_string().contains("pat-unknown"));
}

#[rocket::async_test]
async fn an_order_shipbob_ships_by_itself_comes_back_in_the_pass_that_sent_it() {
    // The other tests ship on request; the demo and the benchmark let ShipBob ship by itself.
    let t = ShipBobRig::new(1).await;
    t.sb.set_auto_ship(Some(AutoShip::immediately()));
    // Shipped by the time the same pass walks the shipments, after it sent the order.
    let run = t.sync().await;
    assert_eq!((run["orders_sent"].as_i64(), run["shipments_pulled"].as_i64()), (Some(1), Some(1)), "{run}");
    assert_eq!(t.rig.orders().await[0]["fulfillment_state"], "shipped");
}

#[rocket::async_test]
async fn a_429_is_waited_out_for_shipbobs_x_retry_after_and_a_5xx_tried_again() {
    let t = ShipBobRig::new(2).await;
    t.sb.rate_limit_next(PAT, 1, 1);
    t.sb.fail_next(PAT, Some(Operation::GetOrders), 503, 1);
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["orders_sent"], 2, "{run}");
    assert_eq!(t.sb.order_count(PAT), 2);
}

/// The amended annex §4: a walk of shipments reads at most 1,000 pages in a pass; one that goes
/// on stops there without an error, keeps its place in the database, and the next pass goes on
/// from its next page (a backlog after an outage used to fail every pass at page 1,000).
#[rocket::async_test]
async fn a_walk_past_1000_pages_stops_keeps_its_place_in_the_database_and_goes_on_next_pass() {
    let t = ShipBobRig::new(2).await;
    // The 150 requests a minute are not what this test is about.
    t.sb.set_rate_limit(PAT, usize::MAX);
    let run = t.sync().await;
    assert_eq!(run["orders_sent"], 2, "{run}");
    assert_eq!(t.sb.ship_all(PAT), 2);
    // A thousand pages of 250 orders come before the two shipped ones.
    t.sb.list_backlog_first(PAT, 1_000 * 250);
    let listed = t.sb.requests(Operation::GetOrders);
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["shipments_pulled"], 0, "{run}");
    assert_eq!(t.sb.requests(Operation::GetOrders) - listed, 1_000, "a thousand pages, then it stopped");
    // The place is in the database, not in the process's memory.
    let config = t.rig.app.client.rocket().state::<orderbridge::config::Config>().unwrap().clone();
    let pool = orderbridge::db::open(&config.database).unwrap();
    let kept: i64 =
        pool.get().unwrap().query_row("SELECT COUNT(*) FROM warehouse_walks", [], |r| r.get(0)).unwrap();
    assert_eq!(kept, 1, "the walk's place is kept in the database");

    let listed = t.sb.requests(Operation::GetOrders);
    let run = t.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["shipments_pulled"], 2, "{run}");
    assert_eq!(t.sb.requests(Operation::GetOrders) - listed, 1, "it went on from page 1,001");
    for order in t.rig.orders().await {
        assert_eq!(order["fulfillment_state"], "shipped", "{order}");
    }
    let kept: i64 =
        pool.get().unwrap().query_row("SELECT COUNT(*) FROM warehouse_walks", [], |r| r.get(0)).unwrap();
    assert_eq!(kept, 0, "a walk that ended keeps no place");
}

/// CONTRACT §11 and annex §4: a wait longer than `sync_interval_secs` is not taken inside the
/// pass (it used to be bounded by `ping_timeout_secs` and slept through): the step fails
/// `adapter_unreachable` naming until when, and the wait is kept for the token.
#[rocket::async_test]
async fn a_wait_longer_than_the_sync_interval_fails_the_step_instead_of_sleeping() {
    let t = ShipBobRig::with_interval(1, 1).await;
    t.sb.rate_limit_next(PAT, 1, 3);
    let run = t.sync().await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["error"]["code"], "adapter_unreachable", "{run}");
    assert!(run["error"]["message"].as_str().unwrap().contains("not to call again before"), "{run}");
}
