//! The BigCommerce client against the simulated store (CONTRACT §11, "BigCommerce"): a pull
//! that costs one request per page, the fallback for orders without consignments, carriers
//! sent as slugs, and the 50-character tracking cap.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::client::BigCommerce;
use crate::platforms::retry::RetryPolicy;
use crate::platforms::store::{NoticeItem, Notified, PulledOrder, ShipmentNotice};
use crate::platforms::{PlatformError, Settings};
use crate::simulate::big_commerce::Simulator;

const HASH: &str = "clienttest";
const TOKEN: &str = "client-test-token-0123";

async fn store(orders: usize) -> (Simulator, BigCommerce) {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    sim.add_orders(HASH, orders, 9);
    let Value::Object(adapter) = json!({"access_token": TOKEN, "store_hash": HASH}) else { unreachable!() };
    let adapter: Map<String, Value> = adapter;
    let policy = RetryPolicy {
        tries: 1,
        base: Duration::from_millis(10),
        request_timeout: Duration::from_secs(10),
        longest_wait: Duration::from_secs(10),
    };
    let settings = Settings { bigcommerce_api_base: sim.base_url(), ..Settings::default() };
    let client = BigCommerce::new(&settings, &adapter, Some(policy));
    (sim, client.unwrap())
}

async fn pull(client: &BigCommerce) -> Vec<PulledOrder> {
    let mut pulled = Vec::new();
    for order in client.orders_page(None, 1).await.unwrap() {
        pulled.push(client.order_record(&order).await.unwrap());
    }
    pulled
}

fn notice(order: &PulledOrder, line: usize, tracking: &str, carrier: &str) -> ShipmentNotice {
    let line = order.record["order_items"][line]["external_order_item_id"].as_str().map(str::to_string);
    let items = vec![NoticeItem { line, sku: None, quantity: 1 }];
    ShipmentNotice {
        address_id: order.address_id.clone(),
        carrier: Some(carrier.to_string()),
        ..ShipmentNotice::new(order.record["external_id"].as_str().unwrap(), tracking, items)
    }
}

#[tokio::test]
async fn a_page_of_orders_is_one_request_carrying_each_orders_lines_and_address() {
    let (sim, client) = store(4).await;
    let pulled = pull(&client).await;
    let requests = sim.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(
        requests[0].contains("include=consignments.line_items")
            && requests[0].contains("consignment_structure=object")
            && requests[0].contains("sort=date_modified:asc")
            && requests[0].contains("limit=250"),
        "{}",
        requests[0]
    );
    assert_eq!(pulled.len(), 4);
    for order in &pulled {
        let id: i64 = order.record["external_id"].as_str().unwrap().parse().unwrap();
        assert_eq!(order.address_id, Some((id * 10).to_string()), "the shipping consignment's id");
        assert_eq!(order.record["shipping_carrier_service_level"], "Ground");
        assert_eq!(order.record["shipping_address"]["street1"], "1 Main Street");
        let items = order.record["order_items"].as_array().unwrap();
        assert!(!items.is_empty() && items.iter().all(|i| i["sku"].is_string() && i["quantity"].is_i64()));
    }
}

#[tokio::test]
async fn orders_that_arrive_without_consignments_are_read_with_two_calls_each_to_the_same_record() {
    let (sim, client) = store(3).await;
    let with = pull(&client).await;
    sim.ignore_include(HASH, true);
    let before = sim.requests().len();
    let without = pull(&client).await;
    let asked: Vec<String> = sim.requests().split_off(before);
    assert_eq!(asked.len(), 1 + 2 * 3, "{asked:?}");
    assert_eq!(asked.iter().filter(|r| r.contains("/products?limit=250")).count(), 3);
    assert_eq!(asked.iter().filter(|r| r.contains("/shipping_addresses?limit=250")).count(), 3);
    for (a, b) in with.iter().zip(&without) {
        assert_eq!((&a.record, &a.address_id), (&b.record, &b.address_id));
    }
}

#[tokio::test]
async fn a_carrier_goes_as_its_tracking_slug_and_an_unknown_one_as_empty_text() {
    let (sim, client) = store(3).await;
    let pulled = pull(&client).await;
    let cases = [("Royal Mail", "royal-mail"), ("DHL Express", "dhl"), ("Pigeon Post", "")];
    for ((name, slug), order) in cases.into_iter().zip(&pulled) {
        let sent = notice(order, 0, &format!("TRK-{slug}"), name);
        assert_eq!(client.notify(&sent).await.unwrap(), Notified::Posted, "{name}");
        let posted = sim.shipments(HASH).pop().unwrap();
        assert_eq!(
            (posted.tracking_number.as_str(), posted.tracking_carrier.as_str()),
            (sent.tracking_number.as_str(), slug)
        );
    }
}

#[tokio::test]
async fn a_tracking_number_over_fifty_characters_is_refused_for_good_and_nothing_is_sent() {
    let (sim, client) = store(1).await;
    let order = &pull(&client).await[0];
    let before = sim.requests().len();
    let long = "1".repeat(51);
    let refused = client.notify(&notice(order, 0, &long, "UPS")).await.unwrap_err();
    assert!(matches!(refused, PlatformError::Rejected { .. }) && !refused.is_passing(), "{refused:?}");
    assert!(
        refused.message().contains("51 characters") && refused.message().contains("at most 50"),
        "{refused}"
    );
    assert_eq!(sim.requests().len(), before, "nothing was sent");
    // Fifty is within the cap, counted in characters, not bytes.
    let fifty = "é".repeat(50);
    assert_eq!(client.notify(&notice(order, 0, &fifty, "UPS")).await.unwrap(), Notified::Posted);
    assert_eq!(sim.shipments(HASH)[0].tracking_carrier, "ups");
}
