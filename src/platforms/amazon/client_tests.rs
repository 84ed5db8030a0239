//! The Amazon client against the Amazon simulator, every exchange held to Amazon's own models
//! (`shared/vendor/amazon/`): each request the client can send (the token exchange, the
//! ping's two checks, a walk of several pages by token, the `getOrder` check and
//! `confirmShipment` with a carrier of the table and with `Other`, the listings lookups in a
//! batch and alone, the feed's document, upload and submission, its status, report document
//! and download) and each answer the simulator gave it, the feed document included.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::transport::Seller;
use super::{Client, check};
use crate::platforms::retry::RetryPolicy;
use crate::platforms::store::Listing as StoreListing;
use crate::platforms::store::{
    Ask, Disposition, Listed, NoticeItem, Notified, Receipt, ShipmentNotice, StoreClient,
};
use crate::platforms::{PingError, Settings};
use crate::simulate::amazon::vendor as amazon_vendor;
use crate::simulate::amazon::{self, Listing, NewOrder, OrderStatus};

const MARKETPLACE: &str = "ATVPDKIKX0DER";

fn settings(sim: &amazon::Simulator) -> Settings {
    Settings {
        timeout: Duration::from_secs(5),
        amazon_api_base: sim.api_base(),
        amazon_lwa_base: sim.lwa_base(),
        ..Settings::default()
    }
}

fn adapter(seller: &amazon::Seller) -> Map<String, Value> {
    json!({"region": seller.region, "marketplace_ids": [MARKETPLACE], "seller_id": seller.seller_id,
           "client_id": seller.client_id, "client_secret": seller.client_secret, "refresh_token": seller.refresh_token})
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

fn notice(
    shipment_id: i64,
    order: &str,
    lines: &[(&str, i64)],
    tracking: &str,
    carrier: Option<&str>,
) -> ShipmentNotice {
    let items =
        lines.iter().map(|(line, q)| NoticeItem { line: Some(line.to_string()), sku: None, quantity: *q });
    ShipmentNotice {
        shipment_id,
        carrier: carrier.map(str::to_string),
        shipping_method: Some("Ground".into()),
        shipped_at: Some(1_795_000_000_000),
        ..ShipmentNotice::new(order, tracking, items.collect())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_and_answer_follows_amazons_models() {
    let sim = amazon::Simulator::start().await;
    let seller = amazon::Seller::new("A2CLIENTTESTS1", "na", &[MARKETPLACE]);
    let id = seller.seller_id.clone();
    sim.add_seller(seller.clone());
    sim.generate_listings(&id, 24, 5);
    sim.add_listing(&id, Listing::mfn("MUG,XL", "DRINKING_CUP", 1));
    sim.generate_orders(&id, 260, 9);
    sim.record_exchanges();
    let settings = settings(&sim);

    // The ping.
    let pinged = check(&Seller::new(&settings, &adapter(&seller), None).unwrap()).await;
    assert!(pinged.is_ok(), "{pinged:?}");

    // A walk by token, from a first pull.
    let client = Client { seller: Seller::new(&settings, &adapter(&seller), Some(policy())).unwrap() };
    let mut after: Option<String> = None;
    let mut listed = Vec::new();
    for _ in 0..20 {
        let page = client
            .page(Ask { listing: StoreListing::Orders, since_ms: None, at: after.as_deref() })
            .await
            .unwrap();
        listed.extend(page.orders);
        after = page.next;
        // The cursor moves at the walk's end only, to a change read, capped at Amazon's clock.
        assert_eq!(page.cursor.is_some(), after.is_none(), "{after:?}");
        if after.is_none() {
            break;
        }
    }
    assert!(listed.len() > 100, "more than one page: {}", listed.len());
    let importable: Vec<_> = listed.iter().filter(|o| o.disposition == Disposition::Import).collect();
    for order in &importable {
        let Listed::Whole(made) = &order.listed else { panic!("listed whole") };
        made.as_ref().unwrap();
    }

    // Notify: a table carrier, `Other`, then the same shipment again (Amazon has it).
    let mine = sim.add_order(&id, NewOrder::mfn(&[("SKU-0001", 2), ("SKU-0002", 1)]));
    let view = sim.order(&id, &mine).unwrap();
    let (first, second) = (view.items[0].0.clone(), view.items[1].0.clone());
    let ups = notice(57, &mine, &[(&first, 2)], "1Z999AA10123456784", Some("UPS"));
    assert_eq!(client.notify(&ups).await.unwrap(), Notified::Posted);
    let other = notice(58, &mine, &[(&second, 1)], "SF-000123", Some("Speedy Freight Ltd"));
    assert_eq!(client.notify(&other).await.unwrap(), Notified::Posted);
    assert_eq!(client.notify(&ups).await.unwrap(), Notified::AlreadyThere);
    let view = sim.order(&id, &mine).unwrap();
    assert_eq!(view.status, "SHIPPED");
    let carriers: BTreeSet<String> = view.packages.iter().map(|p| p.carrier.clone()).collect();
    assert_eq!(carriers, BTreeSet::from(["UPS".to_string(), "Speedy Freight Ltd".to_string()]));
    // A cancelled order is caught by the check, and Amazon's 400 is quoted.
    let gone = sim.add_order(&id, NewOrder::mfn(&[("SKU-0003", 1)]).status(OrderStatus::Cancelled));
    let item = sim.order(&id, &gone).unwrap().items[0].0.clone();
    let refused = client.notify(&notice(59, &gone, &[(&item, 1)], "1Z2", Some("UPS"))).await.unwrap_err();
    assert!(refused.message().contains("cancelled"), "{refused:?}");

    // Stock: 21 SKUs in one lookup and one more, a comma SKU alone, one feed.
    let mut levels: Vec<(String, i64)> = (0..22).map(|i| (format!("SKU-{i:04}"), 3)).collect();
    levels.push(("MUG,XL".into(), 4));
    levels.push(("NOPE-1".into(), 2));
    let sent = client.set_stock(&levels).await.unwrap();
    assert_eq!(sent.receipts.len(), 1, "{sent:?}");
    // Every eighth generated listing is FBA-…, so SKU-0007 and SKU-0015 have none.
    let skipped: Vec<&str> = sent.skipped.iter().map(|(sku, _)| sku.as_str()).collect();
    assert_eq!(skipped, ["SKU-0007", "SKU-0015", "NOPE-1"], "{sent:?}");
    assert_eq!(sent.requests, 6, "2 lookups of 20, MUG,XL alone, document, upload, feed");
    assert_eq!(client.read_receipts(&sent.receipts).await.unwrap()[0].1, Receipt::Pending);
    sim.process_feeds(&id);
    let read = client.read_receipts(&sent.receipts).await.unwrap();
    assert_eq!(read[0].1, Receipt::Applied, "{read:?}");

    // Held to the models: every exchange, both sides.
    let exchanges = sim.exchanges();
    let problems = amazon_vendor::problems(&exchanges);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Amazon's own validator agrees, where it can run.
    if let Some(verdict) = amazon_vendor::python_problems(&exchanges) {
        assert_eq!(
            verdict,
            Ok(()),
            "validate_requests.py refused what the client sent or the simulator answered"
        );
    }
    for op in amazon::Operation::ALL {
        assert!(sim.requests(op) > 0, "the client never sent {}", op.as_str());
    }
}

#[tokio::test]
async fn each_refusal_of_the_ping_is_named_without_a_credential() {
    let sim = amazon::Simulator::start().await;
    let seller = amazon::Seller::new("A2CLIENTTESTS2", "eu", &["A1PA6795UKMFR9"]);
    let id = seller.seller_id.clone();
    sim.add_seller(seller.clone());
    sim.record_exchanges();
    let settings = settings(&sim);
    let ping = |adapter: Map<String, Value>| {
        let settings = settings.clone();
        async move { check(&Seller::new(&settings, &adapter, None).unwrap()).await }
    };
    let words = |e: PingError| {
        let text = e.to_string();
        assert!(!text.contains(&seller.client_secret) && !text.contains(&seller.refresh_token), "{text}");
        text
    };
    // Another seller's id: Amazon refuses the listings path.
    let mut wrong = adapter(&seller);
    wrong["marketplace_ids"] = json!(["A1PA6795UKMFR9"]);
    wrong["seller_id"] = json!("A2SOMEONEELSE1");
    let Err(e @ PingError::AuthenticationFailed(_)) = ping(wrong).await else { panic!("accepted") };
    assert!(words(e).contains("wrong seller_id, or the application lacks the Product Listing role"));
    let mut good = adapter(&seller);
    good["marketplace_ids"] = json!(["A1PA6795UKMFR9"]);
    sim.set_participation(&id, "A1PA6795UKMFR9", false);
    let Err(e @ PingError::AuthenticationFailed(_)) = ping(good.clone()).await else { panic!("accepted") };
    assert_eq!(words(e), "A1PA6795UKMFR9 is not a marketplace of this seller in region eu.");
    let mut secretless = good.clone();
    secretless["client_secret"] = json!("wrong-secret");
    let Err(e @ PingError::AuthenticationFailed(_)) = ping(secretless).await else { panic!("accepted") };
    assert!(words(e).contains("invalid_client"));
    sim.set_participation(&id, "A1PA6795UKMFR9", true);
    sim.fail_next(&id, Some(amazon::Operation::GetMarketplaceParticipations), 500, 1);
    assert!(matches!(ping(good.clone()).await, Err(PingError::Unreachable(_))));
    assert!(ping(good).await.is_ok());
    // What the refused requests got answered follows the models too.
    let answers: Vec<String> =
        sim.exchanges().iter().flat_map(|e| amazon_vendor::check(e, false, true)).collect();
    assert!(answers.is_empty(), "{}", answers.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_whose_credentials_are_not_proven_keeps_nothing() {
    let sim = amazon::Simulator::start().await;
    let seller = amazon::Seller::new("A2KEEPSNOTHING1", "na", &[MARKETPLACE]);
    sim.add_seller(seller.clone());
    let mut wrong = adapter(&seller);
    wrong.insert("client_secret".into(), json!("not-the-secret"));
    wrong.insert("client_id".into(), json!("amzn1.application-oa2-client.unproven-1"));
    let refused = Seller::new(&settings(&sim), &wrong, None).unwrap();
    assert!(matches!(check(&refused).await, Err(PingError::AuthenticationFailed(_))));
    assert!(!refused.keeps_anything(), "a refused ping keeps a bucket or a token");
    let unreachable = Settings { amazon_lwa_base: "http://127.0.0.1:9".into(), ..settings(&sim) };
    wrong.insert("client_id".into(), json!("amzn1.application-oa2-client.unproven-2"));
    let unanswered = Seller::new(&unreachable, &wrong, None).unwrap();
    assert!(check(&unanswered).await.is_err());
    assert!(!unanswered.keeps_anything(), "an unanswered ping keeps a bucket or a token");
    let proven = Seller::new(&settings(&sim), &adapter(&seller), None).unwrap();
    check(&proven).await.unwrap();
    assert!(proven.keeps_anything(), "proven credentials keep their buckets and token");
}

#[tokio::test]
async fn a_walk_is_continued_under_23_hours_and_a_token_amazon_refuses_restarts_it() {
    let sim = amazon::Simulator::start().await;
    let seller = amazon::Seller::new("A2CLIENTTESTS2", "na", &[MARKETPLACE]);
    sim.add_seller(seller.clone());
    let client = Client { seller: Seller::new(&settings(&sim), &adapter(&seller), Some(policy())).unwrap() };
    let hours = |h: u64, m: u64| Duration::from_secs(h * 3600 + m * 60);
    let lifetime = client.pull_plan().continuation_lifetime.expect("a walk is kept");
    assert!(hours(22, 59) < lifetime && lifetime <= hours(23, 0), "a token lives 24 hours: an hour's margin");
    // A token Amazon cannot read (or one past its life) is answered 400.
    let stale =
        json!({"after": "2026-01-01T00:00:00Z", "statuses": "UNSHIPPED", "token": "bm90IGEgdG9rZW4="});
    let refused = client
        .page(Ask { listing: StoreListing::Orders, since_ms: None, at: Some(&stale.to_string()) })
        .await
        .unwrap_err();
    assert!(client.continuation_refused(&refused), "{refused:?}");
    let other = crate::platforms::PlatformError::Rejected { status: 403, message: String::new() };
    assert!(!client.continuation_refused(&other), "only a 400 says the continuation is refused");
}
