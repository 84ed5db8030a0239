//! The ShipStation client against the ShipStation simulator: the ping (with and without a
//! warehouse, a revoked key quoting ShipStation's reason), creates in batches (one request per
//! 50 orders, a lost answer looked up before anything is sent again, a refusal in its entry, a
//! whole batch refused and sent again one by one, an order orderbridge cannot send), the
//! labels walk (processing, voided, return and foreign labels), stock over several pages and
//! without the Inventory add-on, cancels that succeed and are refused, and a 429's wait.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Map, Value, json};

use super::ShipStation;
use super::transport::Api;
use crate::platforms::retry::RetryPolicy;
use crate::platforms::seam::{Platform, WarehousePlatform};
use crate::platforms::warehouse::{
    Cancelled, Delivery, HeldOrder, Inbox, OrderReference, OutgoingItem, OutgoingOrder, SendKey, SentOrder,
    ShipTo, ShipmentLine, Since, WarehouseClient, WarehouseSettings, order_feed,
};
use crate::platforms::{PingError, PlatformError, Settings};
use crate::simulate::shipstation::{self, Operation, vendor};

fn settings(base: &str) -> Settings {
    Settings {
        timeout: Duration::from_secs(5),
        shipstation_api_base: base.to_string(),
        ..Settings::default()
    }
}

fn adapter(key: &str, extra: Value) -> Map<String, Value> {
    let mut adapter = json!({"access_token": key}).as_object().cloned().unwrap();
    adapter.extend(extra.as_object().cloned().unwrap_or_default());
    adapter
}

fn client(base: &str, key: &str, extra: Value) -> Box<dyn WarehouseClient> {
    ShipStation.client(&adapter(key, extra), &WarehouseSettings::for_tests(settings(base))).unwrap()
}

fn order(order_id: i64, sku: &str) -> OutgoingOrder {
    OutgoingOrder {
        order_id,
        external_id: Some(format!("10{order_id}")),
        store_id: 1,
        customer_email: Some("ada@example.com".into()),
        ship_to: ShipTo {
            first_name: Some("Ada".into()),
            last_name: Some("Lovelace".into()),
            street1: Some("12 Byron Road".into()),
            city: Some("Austin".into()),
            region: Some("TX".into()),
            postal_code: Some("78701".into()),
            country: Some("US".into()),
            telephone: Some("+1 512 555 0100".into()),
            ..ShipTo::default()
        },
        items: vec![OutgoingItem {
            sku: Some(sku.into()),
            name: Some(format!("Item {sku}")),
            quantity: 2,
            unit_price: Some(1250),
            weight: Some(75),
            ..OutgoingItem::default()
        }],
        ..OutgoingOrder::default()
    }
}

/// Sends `orders` through the client as the engine does: fed from another thread.
async fn deliver(client: &mut dyn WarehouseClient, orders: Vec<OutgoingOrder>) -> Delivery {
    let (feed, stream) = order_feed(SendKey { connection_id: 1, number: 1, created_at: 0 });
    let producer = std::thread::spawn(move || {
        feed.send(orders).ok();
        feed.finish().ok();
    });
    let mut delivery = client.send_orders(stream).await;
    producer.join().unwrap();
    delivery.orders.sort_by_key(|(id, _)| *id);
    delivery
}

async fn send(client: &mut dyn WarehouseClient, orders: Vec<OutgoingOrder>) -> Vec<(i64, SentOrder)> {
    let delivery = deliver(client, orders).await;
    assert!(delivery.failure.is_none(), "{:?}", delivery.failure);
    delivery.orders
}

/// Every exchange the simulator recorded follows ShipStation's file.
fn follows_the_file(sim: &shipstation::Simulator) {
    let exchanges = sim.exchanges();
    assert!(!exchanges.is_empty(), "the exchanges were recorded");
    let problems = vendor::problems(&exchanges);
    assert!(problems.is_empty(), "{problems:#?}");
}

fn accepted(sent: &SentOrder) -> String {
    match sent {
        SentOrder::Accepted { warehouse_order_id: Some(id) } => id.clone(),
        other => panic!("not taken: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ping_asks_for_the_warehouse_and_quotes_shipstations_refusal() {
    let sim = shipstation::Simulator::start().await;
    sim.record_exchanges();
    let warehouse = sim.add_account("key-ping");
    let base = sim.base_url();
    let ping = |extra| {
        let (settings, adapter) = (settings(&base), adapter("key-ping", extra));
        async move { ShipStation.check(&settings, &adapter).await }
    };
    assert!(ping(json!({})).await.is_ok());
    assert!(ping(json!({"warehouse_id": warehouse})).await.is_ok());
    let Err(PingError::AuthenticationFailed(why)) = ping(json!({"warehouse_id": "se-9"})).await else {
        panic!()
    };
    assert_eq!(why, "ShipStation has no warehouse se-9 for this API key.");
    assert_eq!(sim.requests(Operation::ListWarehouses), 1);
    assert_eq!(sim.requests(Operation::GetWarehouse), 2);
    sim.revoke("key-ping");
    let Err(PingError::AuthenticationFailed(why)) = ping(json!({})).await else { panic!() };
    assert!(why.contains("The API key is invalid. [unauthorized]") && !why.contains("key-ping"), "{why}");
    follows_the_file(&sim);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orders_go_in_batches_of_fifty_and_each_is_created_once() {
    let sim = shipstation::Simulator::start().await;
    sim.record_exchanges();
    let key = "key-batches";
    sim.add_account(key);
    let base = sim.base_url();
    let mut ss = client(&base, key, json!({"carrier_id": "se-1001"}));

    // 120 orders without a fault: three requests.
    let answered = send(ss.as_mut(), (1..=120).map(|id| order(id, "MUG")).collect()).await;
    assert_eq!(answered.len(), 120);
    answered.iter().for_each(|(_, sent)| drop(accepted(sent)));
    assert_eq!(sim.requests(Operation::CreateShipments), 3);
    assert_eq!(sim.requests(Operation::GetShipmentByExternalId), 0, "no lookup without doubt");

    // A lost answer: the create was applied; each order is looked up, found, never re-created.
    sim.lose_creates(key, 1);
    let answered = send(ss.as_mut(), (121..=123).map(|id| order(id, "TEA")).collect()).await;
    assert_eq!(answered.len(), 3);
    for (id, sent) in &answered {
        let (held, _) = sim.shipment(key, &format!("ob-{id}")).unwrap();
        assert_eq!(accepted(sent), held);
        assert_eq!(sim.shipments_under(key, &format!("ob-{id}")), 1);
    }
    assert_eq!(sim.requests(Operation::GetShipmentByExternalId), 3);

    // Sending orders again (a crash after the create): found by their lookup, not doubled.
    let again = send(ss.as_mut(), vec![order(1, "MUG"), order(2, "MUG")]).await;
    for (id, sent) in &again {
        assert_eq!(accepted(sent), sim.shipment(key, &format!("ob-{id}")).unwrap().0);
    }
    assert_eq!(sim.shipments_under(key, "ob-1"), 1);

    // A refusal in its entry errors only its order; one without a phone sends nothing.
    sim.refuse_reference(key, "ob-201", "Invalid postal code for country US");
    let mut no_phone = order(203, "CUP");
    no_phone.ship_to.telephone = None;
    let answered = send(ss.as_mut(), vec![order(201, "CUP"), order(202, "CUP"), no_phone]).await;
    assert_eq!(
        answered[0].1,
        SentOrder::Refused("ShipStation refused order 201: Invalid postal code for country US".into())
    );
    accepted(&answered[1].1);
    let SentOrder::Refused(why) = &answered[2].1 else { panic!() };
    assert_eq!(
        why,
        "ShipStation requires ship_to.phone; order 203 has none in its shipping or billing address"
    );
    assert!(sim.shipment(key, "ob-203").is_none());

    // A batch refused whole (400) goes again one by one.
    sim.refuse_batches(key, 1);
    let before = sim.requests(Operation::CreateShipments);
    let answered = send(ss.as_mut(), vec![order(301, "A"), order(302, "B"), order(303, "C")]).await;
    answered.iter().for_each(|(_, sent)| drop(accepted(sent)));
    assert_eq!(sim.requests(Operation::CreateShipments) - before, 4);

    // 5xx then a success: the batch is looked up (nothing there) and created once.
    sim.fail_next(key, Some(Operation::CreateShipments), 500, 1);
    let answered = send(ss.as_mut(), vec![order(401, "A")]).await;
    accepted(&answered[0].1);
    assert_eq!(sim.shipments_under(key, "ob-401"), 1);

    // A revoked key fails the step, naming no key.
    sim.revoke(key);
    let delivery = deliver(ss.as_mut(), vec![order(501, "A")]).await;
    let Some(PlatformError::Refused(why)) = delivery.failure else { panic!("{:?}", delivery.failure) };
    assert!(why.contains("The API key is invalid.") && !why.contains(key), "{why}");
    follows_the_file(&sim);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_become_shipments_and_the_cursor_waits_for_a_label_in_progress() {
    let sim = shipstation::Simulator::start().await;
    sim.record_exchanges();
    let key = "key-labels";
    let warehouse = sim.add_account(key);
    let base = sim.base_url();
    let mut ss = client(&base, key, json!({"warehouse_id": warehouse}));
    let answered = send(ss.as_mut(), (1..=4).map(|id| order(id, "MUG")).collect()).await;
    assert_eq!(sim.requests(Operation::GetWarehouse), 1, "the ship-from address, read once");
    let first = sim.buy_label(key, "ob-1", Some(0)).unwrap();
    let voided = sim.buy_label(key, "ob-2", Some(1)).unwrap();
    assert!(sim.void_label(key, &voided.label_id));
    let in_progress = sim.add_processing_label(key, "ob-3");
    let foreign = sim.add_foreign_label(key, Some("SHOP-77"), false);
    sim.add_foreign_label(key, None, true);

    let since = Since { cursor: None, created_at: crate::dates::now_ms() - 60_000, walk: None };
    ss.open_inbox(Inbox::Shipments, since).await.unwrap();
    let page = ss.next_shipments().await.unwrap().expect("a page");
    let rows: Vec<ShipmentLine> = page.records.unwrap().into_iter().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2, "ours and the foreign one: {rows:?}");
    let ours = OrderReference::Warehouse { warehouse_order_id: accepted(&answered[0].1), order_id: 1 };
    assert_eq!((&rows[0].order, rows[0].tracking_number.as_str()), (&ours, first.tracking_number.as_str()));
    assert_eq!(
        (rows[0].carrier_name.as_deref(), rows[0].service_level.as_deref()),
        (Some("USPS"), Some("usps_priority_mail"))
    );
    assert_eq!(
        (&rows[1].order, rows[1].tracking_number.as_str()),
        (&OrderReference::Stranger, foreign.as_str())
    );
    assert_eq!(page.cursor, Some(in_progress), "the cursor stops at the label still in progress");
    assert!(ss.next_shipments().await.unwrap().is_none());
    assert_eq!(sim.requests(Operation::ListLabels), 1);

    // Cancels: one still pending, one with a label.
    let held = |order_id: i64, id: String| HeldOrder { order_id, external_id: None, warehouse_order_id: id };
    assert_eq!(ss.cancel(&held(4, accepted(&answered[3].1))).await.unwrap(), Cancelled::Done);
    assert_eq!(sim.shipment(key, "ob-4").unwrap().1, "cancelled");
    let Cancelled::Refused(why) = ss.cancel(&held(1, accepted(&answered[0].1))).await.unwrap() else {
        panic!()
    };
    assert_eq!(why, "Any label associated with the shipment needs to be voided first.");
    // An id not of ShipStation's shape never goes into a path.
    let cancels = sim.requests(Operation::CancelShipment);
    let Err(PlatformError::BadData(why)) = ss.cancel(&held(1, "se-1/../../warehouses".into())).await else {
        panic!()
    };
    assert!(why.contains("not a ShipStation shipment id"), "{why}");
    assert_eq!(sim.requests(Operation::CancelShipment), cancels);
    follows_the_file(&sim);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_page_of_labels_walks_on_by_creation_time() {
    let sim = shipstation::Simulator::start().await;
    sim.record_exchanges();
    let key = "key-walk";
    sim.add_account(key);
    let base = sim.base_url();
    let mut ss = client(&base, key, json!({}));
    let answered = send(ss.as_mut(), (1..=130).map(|id| order(id, "MUG")).collect()).await;
    assert_eq!(answered.len(), 130);
    for id in 1..=130 {
        sim.buy_label(key, &format!("ob-{id}"), None).unwrap();
    }
    ss.open_inbox(
        Inbox::Shipments,
        Since { cursor: None, created_at: crate::dates::now_ms() - 60_000, walk: None },
    )
    .await
    .unwrap();
    let mut orders = std::collections::BTreeSet::new();
    let mut cursor = None;
    for _ in 0..10 {
        let Some(page) = ss.next_shipments().await.unwrap() else { break };
        orders.extend(page.records.unwrap().into_iter().map(|r| match r.unwrap().order {
            OrderReference::Warehouse { order_id, .. } => Some(order_id),
            _ => None,
        }));
        cursor = cursor.or(page.cursor);
    }
    assert_eq!(orders.len(), 130, "every label read, some twice");
    assert!(cursor.is_some());
    assert!(sim.requests(Operation::ListLabels) <= 3);
    follows_the_file(&sim);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stock_sums_available_over_pages_and_an_account_without_inventory_is_a_clear_error() {
    let sim = shipstation::Simulator::start().await;
    sim.record_exchanges();
    let key = "key-stock";
    sim.add_account(key);
    for n in 0..150 {
        sim.add_inventory(key, &format!("SKU-{n:03}"), "iw-1", 10 + n, 3);
    }
    sim.add_inventory(key, "SKU-000", "iw-2", 5, 0);
    sim.add_inventory(key, "SKU-NEG", "iw-1", 0, 4);
    let base = sim.base_url();
    let mut ss = client(&base, key, json!({}));
    ss.open_inbox(Inbox::Stock, Since { cursor: None, created_at: 0, walk: None }).await.unwrap();
    let rows = ss.next_stock().await.unwrap().expect("levels").records.unwrap();
    assert_eq!(sim.requests(Operation::GetInventoryLevels), 2);
    let level = |sku: &str| rows.iter().find(|r| r.sku == sku).map(|r| r.quantity);
    assert_eq!((level("SKU-000"), level("SKU-149"), level("SKU-NEG")), (Some(12), Some(156), Some(0)));

    let mut one = client(&base, key, json!({"inventory_warehouse_id": "iw-2"}));
    one.open_inbox(Inbox::Stock, Since { cursor: None, created_at: 0, walk: None }).await.unwrap();
    let rows = one.next_stock().await.unwrap().expect("levels").records.unwrap();
    assert_eq!(rows.len(), 1);

    sim.remove_inventory_add_on(key);
    let Err(PlatformError::Refused(why)) =
        ss.open_inbox(Inbox::Stock, Since { cursor: None, created_at: 0, walk: None }).await
    else {
        panic!()
    };
    assert!(why.starts_with("ShipStation refused GET /v2/inventory (HTTP 403: "), "{why}");
    assert!(why.contains("the Inventory API is a paid add-on"), "{why}");
    follows_the_file(&sim);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_longer_than_the_pass_allows_ends_the_step_and_is_kept_for_the_account() {
    let sim = shipstation::Simulator::start().await;
    sim.record_exchanges();
    let key = "key-429";
    sim.add_account(key);
    let base = sim.base_url();
    let mut ss = client(&base, key, json!({}));
    sim.rate_limit_next(key, Some(Operation::ListLabels), 1, 600);
    ss.open_inbox(Inbox::Shipments, Since { cursor: None, created_at: 0, walk: None }).await.unwrap();
    let Err(e) = ss.next_shipments().await else { panic!() };
    assert!(e.is_passing() && e.message().contains("not to call again before"), "{e:?}");
    assert_eq!(sim.requests(Operation::ListLabels), 1, "the wait is not taken inside the pass");
    let before = sim.total_requests();
    let mut next = client(&base, key, json!({}));
    next.open_inbox(Inbox::Shipments, Since { cursor: None, created_at: 0, walk: None }).await.unwrap();
    assert!(next.next_shipments().await.is_err());
    assert_eq!(sim.total_requests(), before, "the next pass sends nothing before the wait ends");
    follows_the_file(&sim);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_is_not_json_is_bad_data_naming_the_operation() {
    let sim = shipstation::Simulator::start().await;
    let key = "key-html";
    sim.add_account(key);
    let base = sim.base_url();
    let mut ss = client(&base, key, json!({}));
    sim.answer_html_next(key, Operation::ListLabels, 1);
    ss.open_inbox(Inbox::Shipments, Since { cursor: None, created_at: 0, walk: None }).await.unwrap();
    let Err(PlatformError::BadData(why)) = ss.next_shipments().await else { panic!() };
    assert!(why.contains("GET /v2/labels"), "{why}");

    // A create answered with a page: the step fails and the order keeps waiting; the next send
    // creates it, once.
    sim.answer_html_next(key, Operation::CreateShipments, 1);
    let delivery = deliver(ss.as_mut(), vec![order(1, "MUG")]).await;
    assert!(matches!(delivery.failure, Some(PlatformError::BadData(_))), "{:?}", delivery.failure);
    let again = send(ss.as_mut(), vec![order(1, "MUG")]).await;
    accepted(&again[0].1);
    assert_eq!(sim.shipments_under(key, "ob-1"), 1);
}

/// Annex §5.1: at most 200 requests in any 60 seconds, counted across the account's
/// connections (its key): two clients of one key share the minute, and the 201st request is
/// not sent when the wait for the minute is longer than the pass may wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_more_than_200_requests_a_minute_leave_for_one_account_across_its_connections() {
    let sim = shipstation::Simulator::start().await;
    sim.add_account("key-window");
    // The simulator's own 429s are not what is tested: orderbridge must stay under the limit.
    sim.set_rate_limit("key-window", usize::MAX);
    let policy = RetryPolicy {
        tries: 1,
        base: Duration::from_millis(10),
        request_timeout: Duration::from_secs(1),
        longest_wait: Duration::from_secs(1),
    };
    let adapter = adapter("key-window", json!({}));
    let one = Api::new(&settings(&sim.base_url()), &adapter, Some(policy)).unwrap();
    let two = Api::new(&settings(&sim.base_url()), &adapter, Some(policy)).unwrap();
    for n in 0..200 {
        let api = if n % 2 == 0 { &one } else { &two };
        assert!(api.send(Method::GET, "/v2/warehouses").await.is_ok(), "request {n}");
    }
    let Err(e) = two.send(Method::GET, "/v2/warehouses").await else { panic!("a 201st request went") };
    assert!(e.is_passing() && e.message().contains("200 requests in the last 60 seconds"), "{e:?}");
    assert_eq!(sim.total_requests(), 200, "the 201st was not sent");
    // The wait is kept for the account: a ping of the key sends nothing either.
    assert!(crate::platforms::retry::may_ask_now(&one.account).is_err());
    assert_eq!(sim.total_requests(), 200);
}
