//! Sync with an Amazon seller account (annex `platforms/amazon.md`): a simulated Amazon on
//! loopback (Selling Partner API and Login with Amazon), a `folder` warehouse, and every step
//! driven through the HTTP API as a user would.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use orderbridge::simulate::amazon::{FeedEnd, Listing, NewOrder, Operation, OrderStatus};
use serde_json::{Value, json};

use crate::sync_rig::{MARKETPLACE, Rig, StoreKind, amazon_adapter, assert_failed, assert_hidden};

/// The rig's seller id.
fn id(rig: &Rig) -> String {
    rig.seller().seller_id.clone()
}

fn cursor(rig: &Rig) -> Option<i64> {
    let conn = rig.app.pool().get().unwrap();
    conn.query_row("SELECT cursor FROM store_cursors WHERE store_id = ?1", [rig.store_id], |r| r.get(0)).ok()
}

#[rocket::async_test]
async fn merchant_orders_flow_to_the_warehouse_and_their_confirmations_back_once() {
    let rig = Rig::of(StoreKind::Amazon, 0).await;
    let id = id(&rig);
    let two_lines =
        rig.amazon().add_order(&id, NewOrder::mfn(&[("MUG-BLU", 2), ("TEA-GRN", 1)]).gift("Happy birthday!"));
    let easy = rig.amazon().add_order(&id, NewOrder::mfn(&[("MUG-BLU", 1)]).program("AMAZON_EASY_SHIP"));
    let fba = rig.amazon().add_order(&id, NewOrder::mfn(&[("MUG-BLU", 1)]).fba());
    let pending = rig.amazon().add_order(&id, NewOrder::mfn(&[("TEA-GRN", 1)]).status(OrderStatus::Pending));
    let pick_up = rig.amazon().add_order(&id, NewOrder::mfn(&[("TEA-GRN", 1)]).program("IN_STORE_PICK_UP"));
    let cancelled =
        rig.amazon().add_order(&id, NewOrder::mfn(&[("TEA-GRN", 1)]).status(OrderStatus::Cancelled));
    let shipped = rig.amazon().add_order(&id, NewOrder::mfn(&[("TEA-GRN", 1)]).status(OrderStatus::Shipped));

    let run = rig.sync_ok().await;
    assert_eq!((run["orders_pulled"].as_i64(), run["orders_sent"].as_i64()), (Some(2), Some(2)), "{run}");
    let orders = rig.orders_by_external().await;
    let written: BTreeSet<&String> = orders.keys().collect();
    assert_eq!(
        written,
        BTreeSet::from([&two_lines, &easy]),
        "not {fba}, {pending}, {pick_up}, {cancelled}, {shipped}"
    );
    let mine = &orders[&two_lines];
    assert_eq!(mine["gift_message"], "Happy birthday!");
    assert_eq!(mine["external_source_id"], MARKETPLACE);
    assert_eq!(orders[&easy]["external_tags"], "AMAZON_EASY_SHIP");
    assert_eq!(rig.amazon().requests(Operation::SearchOrders), 1, "one page");

    // The pending order becomes ready, the Easy Ship order is cancelled by the buyer.
    rig.amazon().set_order_status(&id, &pending, OrderStatus::Unshipped).unwrap();
    rig.amazon().set_order_status(&id, &easy, OrderStatus::Cancelled).unwrap();
    // Amazon's times are whole seconds and the change is stamped after the last one.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    rig.sync_ok().await;
    let orders = rig.orders_by_external().await;
    assert!(orders.contains_key(&pending), "written once it is ready to ship");
    assert_eq!(orders[&easy]["fulfillment_state"], "canceled", "Amazon cancelled it");

    // The warehouse ships the two-line order in two parcels; each is confirmed once, keyed by
    // the shipment's id, with Amazon's carrier code.
    let order_id = mine["id"].as_i64().unwrap();
    rig.drop_shipments(
        "s1.csv",
        &format!("order_id,tracking_number,carrier_name,service_level,sku,quantity\n{order_id},1Z999AA10123456784,ups,UPS Ground,MUG-BLU,2\n{order_id},SF-000123,Speedy Freight Ltd,,TEA-GRN,1\n"),
    );
    let run = rig.sync_ok().await;
    assert_eq!(run["shipments_notified"], 2, "{run}");
    let view = rig.amazon().order(&id, &two_lines).unwrap();
    assert_eq!(view.status, "SHIPPED");
    let shipments = rig.shipments().await;
    let by_tracking =
        |t: &str| shipments.iter().find(|s| s["tracking_number"] == t).unwrap()["id"].to_string();
    let packages: BTreeSet<(String, &str, &str)> = view
        .packages
        .iter()
        .map(|p| (p.package_reference_id.clone(), &*p.carrier, &*p.tracking_number))
        .collect();
    let expected = BTreeSet::from([
        (by_tracking("1Z999AA10123456784"), "UPS", "1Z999AA10123456784"),
        (by_tracking("SF-000123"), "Speedy Freight Ltd", "SF-000123"),
    ]);
    assert_eq!(packages, expected);
    assert!(view.packages.iter().all(|p| p.confirmations == 1));
    assert_eq!(rig.amazon().requests(Operation::ConfirmShipment), 2);
    assert_eq!(rig.amazon().requests(Operation::GetOrder), 2, "one check each");
}

#[rocket::async_test]
async fn a_package_amazon_already_has_and_a_cancelled_order_send_nothing() {
    let rig = Rig::of(StoreKind::Amazon, 0).await;
    let id = id(&rig);
    let easy = rig.amazon().add_order(&id, NewOrder::mfn(&[("MUG-BLU", 1)]).program("AMAZON_EASY_SHIP"));
    let gone = rig.amazon().add_order(&id, NewOrder::mfn(&[("TEA-GRN", 1)]));
    assert_eq!(rig.sync().await["orders_sent"], 2);
    let orders = rig.orders_by_external().await;
    let package = rig.amazon().ship_by_amazon(&id, &easy).unwrap();
    // Amazon cancels the other after it went to the warehouse, which ships it anyway.
    rig.amazon().set_order_status(&id, &gone, OrderStatus::Cancelled).unwrap();
    let (easy_id, gone_id) = (orders[&easy]["id"].as_i64().unwrap(), orders[&gone]["id"].as_i64().unwrap());
    rig.drop_shipments(
        "s.csv",
        &format!(
            "order_id,tracking_number,carrier_name\n{easy_id},{},Amazon Shipping\n{gone_id},1Z1,UPS\n",
            package.tracking_number
        ),
    );
    let run = rig.sync().await;
    assert_eq!(run["shipments_notified"], 1, "{run}");
    assert_eq!(rig.amazon().requests(Operation::ConfirmShipment), 0, "nothing confirmed");
    let shipments = rig.shipments().await;
    let errored = shipments.iter().find(|s| s["tracking_number"] == "1Z1").unwrap();
    assert_eq!(errored["state"], "errored_notifying_of_shipment", "{errored}");
}

#[rocket::async_test]
async fn the_cursor_follows_amazons_clock_not_ours() {
    let rig = Rig::of(StoreKind::Amazon, 0).await;
    let id = id(&rig);
    // Amazon's clock an hour behind ours: a cursor from our clock would skip its next hour.
    rig.amazon().set_clock_skew(-3600);
    rig.amazon().add_order(&id, NewOrder::mfn(&[("MUG-BLU", 1)]));
    assert_eq!(rig.sync().await["orders_pulled"], 1);
    let cursor = cursor(&rig).expect("cursor");
    assert!(cursor <= rig.amazon().now() * 1000 + 1000, "never past Amazon's Date");
    let later = rig.amazon().add_order(&id, NewOrder::mfn(&[("TEA-GRN", 1)]));
    let run = rig.sync().await;
    assert_eq!(run["orders_pulled"], 1, "{run}");
    assert!(rig.orders_by_external().await.contains_key(&later));
}

#[rocket::async_test]
async fn orders_without_an_address_fail_the_pull_naming_the_role_and_write_nothing() {
    let rig = Rig::of(StoreKind::Amazon, 0).await;
    let id = id(&rig);
    rig.amazon().add_order(&id, NewOrder::mfn(&[("MUG-BLU", 1)]));
    rig.amazon().hide_recipients(&id, true);
    let says = ["Direct-to-Consumer Delivery (Restricted)"];
    assert_failed(&rig.sync().await, None, "adapter_authentication_failed", &says);
    assert!(rig.orders_by_external().await.is_empty());
}

#[rocket::async_test]
async fn an_expired_token_is_renewed() {
    // A refused refresh token: the suite's `on_amazon::refused_credentials_are_never_shown`.
    let rig = Rig::of(StoreKind::Amazon, 0).await;
    let id = id(&rig);
    rig.amazon().add_order(&id, NewOrder::mfn(&[("MUG-BLU", 1)]));
    assert_eq!(rig.sync().await["status"], "succeeded");
    let tokens = rig.amazon().requests(Operation::Token);
    rig.amazon().expire_tokens(&id);
    rig.amazon().add_order(&id, NewOrder::mfn(&[("TEA-GRN", 1)]));
    assert_eq!(rig.sync_ok().await["orders_pulled"], 1);
    assert_eq!(rig.amazon().requests(Operation::Token), tokens + 1, "one new token after the 403");
}

#[rocket::async_test]
async fn stock_goes_as_one_feed_of_changed_merchant_listings_and_refusals_are_read_later() {
    let rig = Rig::of(StoreKind::Amazon, 0).await;
    let id = id(&rig);
    rig.add_products(&["MUG-BLU", "TEA-GRN", "FBA-ONLY", "NOPE-1", "MUG,XL"]).await;
    rig.enable_channel("inventory").await;
    rig.drop_stock("stock.csv", "sku,quantity\nMUG-BLU,17\nTEA-GRN,0\nFBA-ONLY,5\nNOPE-1,3\n\"MUG,XL\",4\n");
    rig.amazon().hold_feeds(&id, 1);
    let run = rig.sync_ok().await;
    assert_eq!(run["stock_levels_sent"], 2, "MUG-BLU and MUG,XL: {run}");
    let feeds = rig.amazon().feeds(&id);
    assert_eq!(feeds.len(), 1);
    let messages = feeds[0].document.as_ref().unwrap()["messages"].as_array().unwrap().clone();
    let level =
        |m: &Value| (m["sku"].as_str().unwrap().to_string(), m["patches"][0]["value"][0]["quantity"].clone());
    let sent: BTreeMap<String, Value> = messages.iter().map(level).collect();
    assert_eq!(sent, BTreeMap::from([("MUG-BLU".into(), json!(17)), ("MUG,XL".into(), json!(4))]));
    assert_eq!(rig.amazon().requests(Operation::SearchListingsItems), 1);
    assert_eq!(rig.amazon().requests(Operation::GetListingsItem), 1);
    // The seller changes MUG-BLU's product type before Amazon processes the feed, which
    // then refuses that level. The next pass finds the feed still queued; the one after
    // reads its report.
    rig.amazon().add_listing(&id, Listing::mfn("MUG-BLU", "TEA", 20));
    rig.sync_ok().await;
    assert_eq!(rig.amazon().requests(Operation::GetFeedDocument), 0, "still queued");
    let run = rig.sync().await;
    assert_failed(&run, None, "bad_data", &[]);
    let refused =
        format!("Amazon refused 1 of 2 stock levels of feed {}; first: SKU MUG-BLU: ", feeds[0].feed_id);
    assert!(run["error"]["message"].as_str().unwrap().starts_with(&refused), "{run}");
    assert!(run["problems"].as_array().unwrap().iter().any(|p| p["ref"] == "MUG-BLU"), "{run}");
    assert_eq!(rig.amazon().listing(&id, "MUG,XL").unwrap().quantity, 4, "the other level stands");
    assert_eq!(rig.amazon().listing(&id, "FBA-ONLY").unwrap().quantity, 12, "FBA untouched");
    // The refused level went again in the same step, with the listing's product type now.
    assert_eq!(run["stock_levels_sent"], 1, "{run}");
    rig.amazon().process_feeds(&id);
    rig.sync_ok().await;
    assert_eq!(rig.amazon().listing(&id, "MUG-BLU").unwrap().quantity, 17);
    // A feed Amazon did not process sends its levels again.
    rig.drop_stock("stock2.csv", "sku,quantity\nMUG-BLU,9\n");
    let run = rig.sync().await;
    assert_eq!(run["stock_levels_sent"], 1, "{run}");
    let feed = rig.amazon().feeds(&id).last().unwrap().feed_id.clone();
    assert!(rig.amazon().end_feed(&id, &feed, FeedEnd::Fatal));
    let run = rig.sync().await;
    assert_failed(&run, None, "bad_data", &[&feed]);
    assert_eq!(run["stock_levels_sent"], 1, "its level went again in a new feed at once: {run}");
    assert_eq!(rig.amazon().feeds(&id).len(), 4);
}

async fn ping(rig: &Rig) -> crate::common::Reply {
    let body = json!({"customer_id": rig.customer_id, "name": "Acme on Amazon", "platform": "amazon",
                      "adapter": amazon_adapter(rig.seller())});
    let r = rig.app.post_json("/stores/ping", &rig.app.admin, body).await;
    let secrets = [rig.seller().client_secret.clone(), rig.seller().refresh_token.clone()];
    assert_hidden(std::slice::from_ref(&r.text), &secrets);
    r
}

#[rocket::async_test]
async fn the_ping_checks_token_participations_and_listings_and_names_what_is_wrong() {
    let rig = Rig::of(StoreKind::Amazon, 0).await;
    let id = id(&rig);
    let ok = ping(&rig).await;
    assert_eq!(ok.status.code, 204, "{ok:?}");
    rig.amazon().set_participation(&id, MARKETPLACE, false);
    let r = ping(&rig).await;
    assert_eq!(r.status.code, 422, "{r:?}");
    assert!(r.text.contains("ATVPDKIKX0DER is not a marketplace of this seller in region na"), "{r:?}");
    rig.amazon().set_participation(&id, MARKETPLACE, true);
    rig.amazon().fail_next(&id, Some(Operation::GetMarketplaceParticipations), 503, 1);
    let r = ping(&rig).await;
    assert_eq!(r.status.code, 502, "{r:?}");
    rig.amazon().revoke_refresh_token(&id);
    let r = ping(&rig).await;
    assert_eq!(r.status.code, 422, "{r:?}");
    assert!(r.body.to_string().contains("invalid_grant"), "{r:?}");
    assert!(!r.body.to_string().contains(&rig.seller().refresh_token));
}

#[rocket::async_test]
async fn each_adapter_key_is_checked_and_the_secrets_come_back_masked() {
    let rig = Rig::of(StoreKind::Amazon, 0).await;
    let mut bad = amazon_adapter(rig.seller());
    bad["marketplace_ids"] = json!(["nope"]);
    bad["region"] = json!("us");
    let r = rig
        .app
        .post_json(
            "/stores",
            &rig.app.admin,
            json!({"customer_id": rig.customer_id, "name": "x", "platform": "amazon", "adapter": bad}),
        )
        .await;
    assert_eq!(r.status.code, 422, "{r:?}");
    let details = r.body["error"]["details"].as_object().unwrap();
    assert!(
        ["adapter[marketplace_ids]", "adapter[region]"].iter().all(|k| details.contains_key(*k)),
        "{r:?}"
    );
    let store = rig.app.get(&format!("/stores/{}", rig.store_id), &rig.app.admin).await;
    let shown = &store.body["adapter"];
    assert_eq!(shown["seller_id"], json!(rig.seller().seller_id));
    assert_eq!(shown["marketplace_ids"], json!([MARKETPLACE]));
    for key in ["client_secret", "refresh_token"] {
        assert!(shown[key].as_str().unwrap().starts_with("********"), "{shown}");
    }
}

#[rocket::async_test]
async fn a_shipment_paced_to_a_later_pass_waits_for_it_without_spinning_the_pass() {
    let rig = Rig::with_store(StoreKind::Amazon, 0, |f| f.merge(("ping_timeout_secs", 1))).await;
    let id = id(&rig);
    let first = rig.amazon().add_order(&id, NewOrder::mfn(&[("MUG-BLU", 1)]));
    let second = rig.amazon().add_order(&id, NewOrder::mfn(&[("TEA-GRN", 1)]));
    assert_eq!(rig.sync().await["orders_sent"], 2);
    let orders = rig.orders_by_external().await;
    let (a, b) = (orders[&first]["id"].as_i64().unwrap(), orders[&second]["id"].as_i64().unwrap());
    // One getOrder, then one every 100 s: the second shipment's check is for a later pass.
    rig.amazon().set_rate(&id, Operation::GetOrder, 0.01, 1);
    rig.drop_shipments(
        "s.csv",
        &format!("order_id,tracking_number,carrier_name\n{a},9400100000000000000001,USPS\n{b},9400100000000000000002,USPS\n"),
    );
    let run = rig.sync().await;
    assert_eq!(run["status"], "succeeded", "a paced notify is not a failure: {run}");
    assert_eq!(run["shipments_notified"], 1, "{run}");
    assert_eq!(run["problems_count"], 1, "one problem saying until when: {run}");
    let problem = run["problems"][0]["message"].as_str().unwrap_or_default();
    assert!(problem.contains("later pass") && problem.contains("getOrder"), "{run}");
    let shipments = rig.shipments().await;
    let waiting = shipments.iter().find(|s| s["tracking_number"] == "9400100000000000000002").unwrap();
    assert_eq!(waiting["state"], "ready_for_shipment_notification", "it keeps its state: {waiting}");
    let why = rig.app.get(&format!("/shipments/{}/sync", waiting["id"]), rig.admin()).await;
    assert_eq!(why.body["attempts"], 0, "no try counted: {why:?}");
}

#[rocket::async_test]
async fn an_access_token_amazon_quotes_back_is_never_in_the_run() {
    let rig = Rig::of(StoreKind::Amazon, 0).await;
    let id = id(&rig);
    let amazon_id = rig.amazon().add_order(&id, NewOrder::mfn(&[("MUG-BLU", 1)]));
    // The pull's refusal quotes the token it was sent.
    rig.amazon().echo_token_next(&id, Operation::SearchOrders, 400, 1);
    let run = rig.sync().await;
    assert_eq!(run["error"]["code"], "bad_data", "{run}");
    let text = run.to_string();
    assert!(text.contains("was rejected") && text.contains("[redacted]"), "{run}");
    assert!(!text.contains("Atza|"), "the access token in the run: {run}");
    assert_eq!(rig.sync().await["orders_sent"], 1);
    // So do the notify's check and its confirmation.
    let order_id = rig.orders_by_external().await[&amazon_id]["id"].as_i64().unwrap();
    rig.drop_shipments(
        "s.csv",
        &format!("order_id,tracking_number,carrier_name\n{order_id},9400100000000000000001,USPS\n"),
    );
    rig.amazon().echo_token_next(&id, Operation::GetOrder, 400, 1);
    let run = rig.sync().await;
    let text = run.to_string();
    assert!(text.contains("was rejected") && !text.contains("Atza|"), "{run}");
    let shipment = &rig.shipments().await[0];
    rig.retry(&format!("shipments/{}", shipment["id"])).await;
    rig.amazon().echo_token_next(&id, Operation::ConfirmShipment, 400, 1);
    let run = rig.sync().await;
    let text = run.to_string();
    assert!(text.contains("was rejected") && !text.contains("Atza|"), "{run}");
    let shipment = &rig.shipments().await[0];
    assert!(!shipment.to_string().contains("Atza|"), "{shipment}");
}
