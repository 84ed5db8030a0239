//! The eBay client against the eBay simulator, every exchange held to eBay's own files
//! (`shared/vendor/ebay/`, and eBay's `validate_requests.py` when python3 with jsonschema is
//! here): each request the client can send (the token exchange, the ping's two reads, a walk
//! of several pages read last page first, a window moved to eBay's clock, the fulfillment look
//! and create with a table carrier, `Other` and a shipment without items, the bulk lookup,
//! offers of a SKU that needs encoding, the bulk update with many SKUs and with one) and each
//! answer the simulator gave it.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::transport::Seller;
use super::{Client, check};
use crate::platforms::retry::RetryPolicy;
use crate::platforms::store::{Ask, Disposition, Listing, NoticeItem, Notified, ShipmentNotice, StoreClient};
use crate::platforms::{PlatformError, Settings};
use crate::simulate::ebay::{self, NewOrder, vendor};

fn settings(sim: &ebay::Simulator) -> Settings {
    Settings {
        timeout: Duration::from_secs(5),
        ebay_api_base: sim.api_base(),
        ebay_sandbox_api_base: sim.sandbox_base(),
        ..Settings::default()
    }
}

fn adapter(seller: &ebay::Seller) -> Map<String, Value> {
    let environment = if seller.sandbox { "sandbox" } else { "production" };
    json!({"client_id": seller.client_id, "client_secret": seller.client_secret,
           "refresh_token": seller.refresh_token, "environment": environment})
    .as_object()
    .cloned()
    .unwrap()
}

fn policy() -> RetryPolicy {
    RetryPolicy {
        tries: 3,
        base: Duration::from_millis(10),
        request_timeout: Duration::from_secs(5),
        longest_wait: Duration::from_secs(5),
    }
}

fn client(sim: &ebay::Simulator, seller: &ebay::Seller) -> Client {
    Client { seller: Seller::new(&settings(sim), &adapter(seller), Some(policy())).unwrap() }
}

/// Reads a whole walk; the orders listed and the pages' cursors.
async fn walk(
    client: &Client,
    since_ms: Option<i64>,
) -> (Vec<crate::platforms::store::ListedOrder>, Vec<Option<i64>>) {
    let (mut at, mut listed, mut cursors) = (None::<String>, Vec::new(), Vec::new());
    for _ in 0..20 {
        let page = client.page(Ask { listing: Listing::Orders, since_ms, at: at.as_deref() }).await.unwrap();
        listed.extend(page.orders);
        cursors.push(page.cursor);
        at = page.next;
        if at.is_none() {
            break;
        }
    }
    (listed, cursors)
}

fn notice(
    order: &str,
    lines: &[(&str, i64)],
    order_lines: &[(&str, i64)],
    tracking: &str,
    carrier: &str,
) -> ShipmentNotice {
    let items = |lines: &[(&str, i64)]| -> Vec<NoticeItem> {
        lines.iter().map(|(l, q)| NoticeItem { line: Some(l.to_string()), sku: None, quantity: *q }).collect()
    };
    ShipmentNotice {
        carrier: Some(carrier.to_string()),
        // Shipped a minute before the order was placed, as a warehouse's clock may say: sent
        // as the order's time, which eBay takes.
        shipped_at: Some(crate::dates::now_ms() - 60_000),
        ordered_at: Some(crate::dates::now_ms()),
        order_items: items(order_lines),
        ..ShipmentNotice::new(order, tracking, items(lines))
    }
}

fn line_ids(sim: &ebay::Simulator, seller: &str, order: &str) -> Vec<(String, i64)> {
    let order = sim.order(seller, order).unwrap();
    order["lineItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["lineItemId"].as_str().unwrap().to_string(), l["quantity"].as_i64().unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_and_answer_follows_ebays_files() {
    let sim = ebay::Simulator::start().await;
    let seller = ebay::Seller::new("client_tests_seller");
    let name = seller.username.clone();
    sim.add_seller(&seller);
    sim.add_orders(&name, 150, 4);
    sim.add_ready_orders(&name, 300);
    let client = client(&sim, &seller);

    // The ping: a fresh token, one order, one inventory item.
    let pinged = check(&Seller::new(&settings(&sim), &adapter(&seller), None).unwrap()).await;
    assert!(pinged.is_ok(), "{pinged:?}");

    // A first pull: page 0, then the last page back to page 1, then page 0 again.
    let pinged = sim.requests(ebay::Operation::GetOrders);
    let (listed, cursors) = walk(&client, None).await;
    assert_eq!(sim.requests(ebay::Operation::GetOrders) - pinged, 4, "450 orders: ceil(450/200) + 1");
    assert!(cursors[..cursors.len() - 1].iter().all(Option::is_none), "{cursors:?}");
    assert!(cursors.last().unwrap().is_some(), "the walk's last page moves the cursor");
    assert!(listed.iter().filter(|o| o.disposition == Disposition::Import).count() >= 300);

    // eBay's clock behind ours: the window ends by its `Date`.
    sim.set_clock_offset(-10 * 60_000);
    let (_, cursors) = walk(&client, Some(crate::dates::now_ms() - 3_600_000)).await;
    assert!(cursors.last().unwrap().is_some_and(|c| c < crate::dates::now_ms() - 11 * 60_000), "{cursors:?}");
    sim.set_clock_offset(0);

    // Notify: a table carrier, `Other`, the same shipment again, one without items.
    let order = sim.add_order(&name, NewOrder::ready(&[("MUG-BLU", 2), ("TEA-GRN", 1), ("MUG,RED", 1)]));
    let lines = line_ids(&sim, &name, &order);
    let all: Vec<(&str, i64)> = lines.iter().map(|(l, q)| (l.as_str(), *q)).collect();
    let ups = notice(&order, &[(&lines[0].0, 2)], &all, "1Z 999AA1-0123456784", "UPS");
    assert_eq!(client.notify(&ups).await.unwrap(), Notified::Posted);
    let other = notice(&order, &[(&lines[1].0, 1)], &all, "SF000123", "Speedy Freight");
    assert_eq!(client.notify(&other).await.unwrap(), Notified::Posted);
    assert_eq!(client.notify(&ups).await.unwrap(), Notified::AlreadyThere);
    let rest = notice(&order, &[], &all, "RM123456789GB", "Royal Mail");
    assert_eq!(client.notify(&rest).await.unwrap(), Notified::Posted);
    let fulfilled = sim.fulfillments(&name, &order);
    assert_eq!(fulfilled.len(), 3);
    assert_eq!(
        fulfilled[2]["lineItems"],
        json!([{"lineItemId": lines[2].0, "quantity": 1}]),
        "what was left"
    );
    let nothing = notice(&order, &[], &all, "EMPTY1", "UPS");
    let refused = client.notify(&nothing).await.unwrap_err();
    assert!(refused.message().contains("nothing left to ship"), "{refused:?}");
    let unknown = notice("99-99999-99999", &[("1", 1)], &[("1", 1)], "X1", "UPS");
    assert!(client.notify(&unknown).await.unwrap_err().message().contains("eBay has no order"));
    // A lost answer: the next look finds the fulfillment, nothing is created twice.
    let second = sim.add_order(&name, NewOrder::ready(&[("MUG-BLU", 1)]));
    let lines = line_ids(&sim, &name, &second);
    sim.lose_next_fulfillment_answers(&name, 1);
    let lost = notice(&second, &[(&lines[0].0, 1)], &[(&lines[0].0, 1)], "LOST1", "USPS");
    assert_eq!(client.notify(&lost).await.unwrap(), Notified::AlreadyThere);
    assert_eq!(sim.fulfillments(&name, &second).len(), 1);

    // Stock: a lookup of 25 and one more, offers (a SKU with a comma), updates of many and one.
    let mut levels = Vec::new();
    for i in 0..26 {
        let sku = format!("SKU-{i:02}");
        sim.add_item(&name, &sku, 5);
        levels.push((sku, if i % 2 == 0 { 5 } else { 7 }));
    }
    sim.add_item(&name, "MUG,XL", 1);
    levels.push(("MUG,XL".into(), 3));
    sim.add_seller_hub_listing(&name, "LEGACY-1", 2);
    levels.push(("LEGACY-1".into(), 4));
    let sent = client.set_stock(&levels).await.unwrap();
    assert_eq!(sent.accepted, 14, "{sent:?}");
    assert_eq!(sent.skipped.len(), 1, "{sent:?}");
    assert_eq!(sent.requests, 2 + 14 + 1, "{sent:?}");
    assert_eq!(sim.listed_quantity(&name, "MUG,XL"), Some(3));
    sim.one_sku_per_call(true);
    let again: Vec<(String, i64)> = vec![("SKU-01".into(), 1), ("SKU-03".into(), 1)];
    let sent = client.set_stock(&again).await.unwrap();
    assert_eq!(sent.accepted, 2, "{sent:?}");

    let exchanges = sim.take_exchanges();
    let found = vendor::problems(&exchanges, true);
    assert!(found.is_empty(), "{}", found.join("\n"));
    if let Some(Err(found)) = vendor::python_problems(&exchanges, true) {
        panic!("validate_requests.py:\n{found}");
    }
    let operations: std::collections::BTreeSet<String> = exchanges
        .iter()
        .map(|e| format!("{} {}", e.method, e.path.split('/').take(5).collect::<Vec<_>>().join("/")))
        .collect();
    assert!(operations.len() >= 5, "{operations:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_named_and_never_carry_a_credential() {
    let sim = ebay::Simulator::start().await;
    let seller = ebay::Seller::sandbox("client_tests_refusals");
    sim.add_seller(&seller);
    let secrets = [seller.client_secret.as_str(), seller.refresh_token.as_str()];
    let client = client(&sim, &seller);
    // A sandbox seller is reached under the sandbox base.
    assert!(client.page(Ask { listing: Listing::Orders, since_ms: None, at: None }).await.is_ok());
    sim.revoke(&seller.username);
    sim.expire_tokens();
    let refused = client.page(Ask { listing: Listing::Orders, since_ms: None, at: None }).await.unwrap_err();
    assert!(matches!(refused, PlatformError::Refused(_)), "{refused:?}");
    assert!(refused.message().contains("invalid_grant"), "{refused:?}");
    assert!(secrets.iter().all(|s| !refused.message().contains(s)));
    let pinged = check(&Seller::new(&settings(&sim), &adapter(&seller), None).unwrap()).await.unwrap_err();
    assert!(pinged.to_string().contains("invalid_grant"), "{pinged}");
    // A consent without sell.inventory: the ping's token exchange names the scope.
    let narrow = ebay::Seller::new("client_tests_narrow");
    sim.add_seller(&narrow);
    sim.set_scopes(&narrow.username, &[ebay::SCOPE_FULFILLMENT]);
    let pinged = check(&Seller::new(&settings(&sim), &adapter(&narrow), None).unwrap()).await.unwrap_err();
    assert!(pinged.to_string().contains("invalid_scope"), "{pinged}");
    let exchanges = sim.take_exchanges();
    let found = vendor::problems(&exchanges, true);
    assert!(found.is_empty(), "{}", found.join("\n"));
}
