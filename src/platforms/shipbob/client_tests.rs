//! The ShipBob client against the ShipBob simulator, every exchange held to ShipBob's own
//! OpenAPI file (`shared/vendor/shipbob/`): each request the client can send (the ping, with
//! and without a channel; creates, the lookups after a 422 and after a lost answer; the
//! shipments walk; stock over several pages; cancels that succeed and fail, with their Get
//! Order check) and each answer the simulator gave it.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::ShipBob;
use crate::platforms::seam::{Platform, WarehousePlatform};
use crate::platforms::warehouse::{
    Cancelled, HeldOrder, Inbox, OutgoingItem, OutgoingOrder, SendKey, SentOrder, ShipTo, Since,
    WarehouseClient, WarehouseSettings, order_feed,
};
use crate::platforms::{PingError, Settings};
use crate::simulate::shipbob::{self, Operation, Parcel, vendor};

const TOKEN: &str = "pat-client-tests-0123456789";

fn settings(base: &str) -> Settings {
    Settings { timeout: Duration::from_secs(5), shipbob_api_base: base.to_string(), ..Settings::default() }
}

fn adapter(extra: Value) -> Map<String, Value> {
    let mut adapter = json!({"access_token": TOKEN}).as_object().cloned().unwrap();
    adapter.extend(extra.as_object().cloned().unwrap_or_default());
    adapter
}

fn client(base: &str, extra: Value) -> Box<dyn WarehouseClient> {
    ShipBob.client(&adapter(extra), &WarehouseSettings::for_tests(settings(base))).unwrap()
}

fn order(order_id: i64, sku: &str, country: &str) -> OutgoingOrder {
    OutgoingOrder {
        order_id,
        external_id: Some(format!("10{order_id}")),
        external_display_id: Some(format!("#10{order_id}")),
        store_id: 1,
        ordered_at: Some(1_795_857_160_000),
        customer_email: Some("jane@example.com".into()),
        ship_to: ShipTo {
            first_name: Some("Jane".into()),
            last_name: Some("Doe".into()),
            street1: Some("455 Main Street".into()),
            city: Some("Austin".into()),
            region: Some("Texas".into()),
            postal_code: Some("78751".into()),
            country: Some(country.into()),
            ..ShipTo::default()
        },
        service_level: Some("UPS Ground".into()),
        gift_message: Some("Happy birthday".into()),
        items: vec![OutgoingItem {
            sku: Some(sku.into()),
            name: Some(format!("Item {sku}")),
            quantity: 2,
            unit_price: Some(1250),
            ..OutgoingItem::default()
        }],
        ..OutgoingOrder::default()
    }
}

/// Sends `orders` through the client as the engine does: fed from another thread.
async fn send(client: &mut dyn WarehouseClient, orders: Vec<OutgoingOrder>) -> Vec<(i64, SentOrder)> {
    let (feed, stream) = order_feed(SendKey { connection_id: 1, number: 1, created_at: 0 });
    let producer = std::thread::spawn(move || {
        feed.send(orders).ok();
        feed.finish().ok();
    });
    let delivery = client.send_orders(stream).await;
    producer.join().unwrap();
    assert!(delivery.failure.is_none(), "{:?}", delivery.failure);
    let mut answered = delivery.orders;
    answered.sort_by_key(|(id, _)| *id);
    answered
}

fn accepted(sent: &SentOrder) -> String {
    match sent {
        SentOrder::Accepted { warehouse_order_id: Some(id) } => id.clone(),
        other => panic!("not taken: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_the_client_sends_and_every_answer_it_gets_follow_shipbobs_file() {
    let sim = shipbob::Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    sim.generate_inventory(TOKEN, 600, 7);
    sim.record_exchanges();
    let base = sim.base_url();

    // The ping, with and without a channel; a channel that may not create orders is refused.
    assert!(ShipBob.check(&settings(&base), &adapter(json!({}))).await.is_ok());
    assert!(ShipBob.check(&settings(&base), &adapter(json!({"channel_id": channels.sma}))).await.is_ok());
    let refused = ShipBob.check(&settings(&base), &adapter(json!({"channel_id": channels.default}))).await;
    let Err(PingError::AuthenticationFailed(why)) = refused else { panic!("{refused:?}") };
    assert!(
        why.contains(&format!("channel {} is not one of this token's channels", channels.default)),
        "{why}"
    );

    // Creates: a lost answer is looked up before a second create, a duplicate is found by its
    // lookup, a refusal quotes ShipBob, and an order ShipBob cannot take sends nothing.
    let mut shipbob = client(&base, json!({}));
    sim.lose_answers(TOKEN, Operation::CreateOrder, 1);
    sim.duplicate_next_create(TOKEN);
    sim.refuse_create(TOKEN, "ob-4", 400);
    let mut no_sku = order(5, "X", "US");
    no_sku.items[0].sku = None;
    let answered = send(
        shipbob.as_mut(),
        vec![
            order(1, "MUG", "US"),
            order(2, "TEA", "US"),
            order(3, "MUG", "GB"),
            order(4, "CUP", "US"),
            no_sku,
        ],
    )
    .await;
    let ids: Vec<String> = answered[..3].iter().map(|(_, sent)| accepted(sent)).collect();
    assert_eq!(sim.order_count(TOKEN), 3, "one order each, whatever answer was lost");
    let SentOrder::Refused(why) = &answered[3].1 else { panic!("{:?}", answered[3]) };
    assert!(why.starts_with("ShipBob refused order 4 (external id 104): "), "{why}");
    let SentOrder::Refused(why) = &answered[4].1 else { panic!("{:?}", answered[4]) };
    assert!(why.contains("has no SKU"), "{why}");

    // Shipments: one order shipped whole, one in part; the walk reads them.
    sim.ship_order(TOKEN, ids[0].parse().unwrap(), Parcel::default()).unwrap();
    sim.ship_units(TOKEN, ids[1].parse().unwrap(), &[("TEA", 1)], Parcel::default()).unwrap();
    shipbob
        .open_inbox(Inbox::Shipments, Since { cursor: None, created_at: 1_795_000_000_000, walk: None })
        .await
        .unwrap();
    let page = shipbob.next_shipments().await.unwrap().expect("a page");
    let rows = page.records.unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(page.cursor.is_some(), "a walk of one page ends with its cursor");
    assert!(shipbob.next_shipments().await.unwrap().is_none());

    // Stock: every page of inventory levels.
    shipbob.open_inbox(Inbox::Stock, Since { cursor: None, created_at: 0, walk: None }).await.unwrap();
    let levels = shipbob.next_stock().await.unwrap().expect("levels").records.unwrap();
    assert!(levels.len() >= 500, "{} SKUs over three pages", levels.len());
    assert!(sim.requests(Operation::GetInventoryLevels) >= 3);

    // Cancels: one with nothing shipped, one already shipped (refused, then Get Order).
    let cancel = |order_id: i64, id: &str| HeldOrder {
        order_id,
        external_id: Some(format!("10{order_id}")),
        warehouse_order_id: id.to_string(),
    };
    assert_eq!(shipbob.cancel(&cancel(3, &ids[2])).await.unwrap(), Cancelled::Done);
    let Cancelled::Refused(why) = shipbob.cancel(&cancel(1, &ids[0])).await.unwrap() else { panic!() };
    assert!(!why.is_empty());

    let problems = vendor::problems(&sim.exchanges());
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(sim.exchanges().len() > 15, "the exchanges were recorded");
}

/// A server on loopback that answers every request with `status` and `body` (as ShipBob
/// never should), until dropped.
struct Hostile(tokio::task::JoinHandle<()>, String);

impl Hostile {
    async fn start(status: &'static str, content_type: &'static str, body: Vec<u8>) -> Hostile {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let body = body.clone();
                tokio::spawn(async move {
                    let mut request = vec![0u8; 8192];
                    let _ = socket.read(&mut request).await;
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(&body).await;
                });
            }
        });
        Hostile(task, base)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[tokio::test]
async fn what_shipbob_should_never_answer_is_refused_by_name_and_never_panics() {
    let ping = |base: String| async move { ShipBob.check(&settings(&base), &adapter(json!({}))).await };
    // HTML where JSON was expected: no verdict on the token.
    let html = Hostile::start("200 OK", "text/html", b"<html>maintenance</html>".to_vec()).await;
    let Err(PingError::Unreachable(why)) = ping(html.1.clone()).await else { panic!() };
    assert!(why.contains("/2026-01/channel") && why.contains("cannot be read"), "{why}");
    // A channel id past ShipBob's int32.
    let big = br#"{"items": [{"id": 99999999999, "application_name": "SMA", "scopes": ["orders_write"]}], "next": null}"#;
    let big = Hostile::start("200 OK", "application/json", big.to_vec()).await;
    assert!(matches!(ping(big.1.clone()).await, Err(PingError::Unreachable(_))));
    // An answer past max_platform_body_mib is not read.
    let huge = Hostile::start("200 OK", "application/json", vec![b' '; 17 << 20]).await;
    let Err(PingError::Unreachable(why)) = ping(huge.1.clone()).await else { panic!() };
    assert!(why.contains("larger than 16 MiB"), "{why}");
    // A next link to another path is not followed.
    let elsewhere = br#"{"items": [], "next": "https://evil.example/2026-01/order?x=1"}"#;
    let elsewhere = Hostile::start("200 OK", "application/json", elsewhere.to_vec()).await;
    let Err(PingError::Unreachable(why)) = ping(elsewhere.1.clone()).await else { panic!() };
    assert!(why.contains("leads elsewhere"), "{why}");
    // A 404 names the status and the path: a wrong base, or a version ShipBob no longer serves.
    let gone = Hostile::start("404 Not Found", "application/json", b"{}".to_vec()).await;
    let Err(PingError::AuthenticationFailed(why)) = ping(gone.1.clone()).await else { panic!() };
    assert!(why.contains("404") && why.contains("/2026-01/channel"), "{why}");
    // A walk page whose quantity is not a number fails the step naming the operation.
    let page = br#"[{"id": 1, "reference_id": "ob-1", "shipments": [{"status": "Completed",
        "tracking": {"tracking_number": "T"}, "products": [{"sku": "A", "inventory_items": [{"quantity": "many"}]}]}]}]"#;
    let page = Hostile::start("200 OK", "application/json", page.to_vec()).await;
    let mut shipbob = client(&page.1, json!({"channel_id": 5}));
    shipbob.open_inbox(Inbox::Shipments, Since { cursor: None, created_at: 0, walk: None }).await.unwrap();
    let Err(e) = shipbob.next_shipments().await else { panic!() };
    assert_eq!(e.code(), "bad_data", "{e}");
    assert!(e.message().contains("/2026-01/order"), "{e}");
}
