//! Sync with a Sellbrite store (CONTRACT §11, "Sellbrite"): a Sellbrite simulator on
//! loopback (HTTP Basic, pages of 100, newest first, 403 `Rate Limit Exceeded`), a `folder`
//! warehouse, and every step driven through the HTTP API as a user would.

use serde_json::{Value, json};

use crate::sync_rig::{Rig, SB_SECRET, SB_TOKEN, StoreKind};

fn list_requests(rig: &Rig, path: &str) -> Vec<String> {
    rig.sb()
        .requests()
        .into_iter()
        .filter(|r| r.split('?').next().is_some_and(|p| p.ends_with(path)))
        .collect()
}

#[rocket::async_test]
async fn orders_come_from_every_page_and_tracking_goes_back_by_sku() {
    let rig = Rig::of(StoreKind::Sellbrite, 250).await;
    let run = rig.sync_ok().await;
    assert_eq!((run["orders_pulled"].as_i64(), run["orders_sent"].as_i64()), (Some(250), Some(250)), "{run}");
    let pages = list_requests(&rig, "/v1/orders");
    assert_eq!(pages.len(), 3 + 1, "100 + 100 + 50 open orders, then one page of cancellations: {pages:?}");
    assert!(pages.iter().all(|p| p.contains("limit=100")), "{pages:?}");
    assert!(pages[..3].iter().all(|p| p.contains("sb_status=open")));
    assert!(pages[3].contains("sb_status=canceled"));
    assert!(!pages[0].contains("min_ordered_at"), "the first pull reads everything");

    // How an order maps: `platforms::sellbrite::client::tests::an_order_maps_as_the_contract_says`;
    // here only what it leaves out.
    let orders = rig.orders().await;
    assert_eq!(orders.len(), 250);
    let first = rig.order_of(rig.sb().order_seqs(SB_TOKEN)[0]).await;
    let shipping =
        (&first["external_type"], &first["shipping_carrier_name"], &first["shipping_carrier_service_level"]);
    assert_eq!(shipping, (&json!("eBay"), &json!("USPS"), &json!("Standard")), "{first}");

    // The warehouse ships two orders whole; Sellbrite hears of each once, by sku.
    let (a, b) = (orders[0]["id"].as_i64().unwrap(), orders[1]["id"].as_i64().unwrap());
    rig.ship_whole("ship-1.csv", &[(a, "1Z-A", "ups"), (b, "TRK-B", "Pigeon Post")]);
    let run = rig.sync_ok().await;
    assert_eq!(run["shipments_notified"], 2, "{run}");
    let posted = rig.sb().shipments(SB_TOKEN);
    assert_eq!(posted.len(), 2);
    assert_eq!(posted[0].carrier_name, "UPS", "Sellbrite's own spelling");
    assert_eq!(posted[1].carrier_name, "Other", "a carrier Sellbrite does not list");
    assert_eq!(posted[0].shipping_method.as_deref(), Some("Priority"));
    assert_eq!(posted[0].warehouse_uuid, None, "the adapter names no warehouse");
    let items = orders.iter().find(|o| o["id"] == a).unwrap()["order_items"].as_array().unwrap();
    let sku_units = |i: &Value| (i["sku"].as_str().unwrap().to_string(), i["quantity"].as_i64().unwrap());
    assert_eq!(posted[0].items, items.iter().map(sku_units).collect::<Vec<_>>());
    let basic = rig.sb().requests();
    assert!(!basic.iter().any(|r| r.contains(SB_SECRET)), "the secret travels only in the header");
}

#[rocket::async_test]
async fn later_pulls_overlap_a_day_and_take_only_new_and_canceled_orders() {
    let rig = Rig::of(StoreKind::Sellbrite, 3).await;
    let run = rig.sync().await;
    assert_eq!(run["orders_pulled"], 3, "{run}");
    let seqs = rig.sb().order_seqs(SB_TOKEN);

    // Nothing changed: the one-day overlap re-reads the orders (and writes none of them: the
    // suite's `on_sellbrite::an_overlap_doubles_nothing`).
    rig.sync().await;
    let last = list_requests(&rig, "/v1/orders").into_iter().rev().nth(1).unwrap();
    let since = last.split("min_ordered_at=").nth(1).expect("a filter").split('&').next().unwrap();
    let parse =
        |t: &str| time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).unwrap();
    let newest = rig.orders().await.iter().map(|o| parse(o["ordered_at"].as_str().unwrap())).max().unwrap();
    assert_eq!(parse(since), newest - time::Duration::days(1), "the newest order placed, less a day");

    // One order is canceled, one is corrected after it went to the warehouse, one arrives.
    rig.sb().cancel_order(SB_TOKEN, seqs[0]);
    rig.sb().change_address(SB_TOKEN, seqs[1], "Reykjavik");
    rig.sb().add_orders(SB_TOKEN, 1, 99);
    let run = rig.sync_ok().await;
    // Only the new order: a sent order keeps what the warehouse got.
    assert_eq!((run["orders_pulled"].as_i64(), run["orders_sent"].as_i64()), (Some(1), Some(1)), "{run}");
    assert_eq!(rig.order_of(seqs[0]).await["fulfillment_state"], "canceled");
    assert_eq!(rig.order_of(seqs[1]).await["fulfillment_state"], "pending_shipment");
    assert_eq!(rig.orders().await.len(), 4);
}

#[rocket::async_test]
async fn with_a_warehouse_uuid_orders_come_from_its_fulfillments_and_shipments_name_it() {
    let rig = Rig::with_store(StoreKind::SellbriteWarehouse, 2, |f| f).await;
    let run = rig.sync().await;
    assert_eq!(run["orders_pulled"], 2, "{run}");
    let fulfillments = list_requests(&rig, &format!("/v1/warehouses/fulfillments/{}", rig.sb_warehouse()));
    assert_eq!(fulfillments.len(), 1, "{:?}", rig.sb().requests());
    let order = rig.orders().await[0]["id"].as_i64().unwrap();
    rig.ship_whole("s.csv", &[(order, "1Z-W", "FedEx")]);
    let run = rig.sync().await;
    assert_eq!(run["shipments_notified"], 1, "{run}");
    assert_eq!(rig.sb().shipments(SB_TOKEN)[0].warehouse_uuid.as_deref(), Some(rig.sb_warehouse()));
}

#[rocket::async_test]
async fn a_shipment_sellbrite_refuses_is_errored_and_can_be_retried() {
    let rig = Rig::of(StoreKind::Sellbrite, 1).await;
    rig.ship_first("1Z-422", "UPS").await;
    rig.sb().fail_next(SB_TOKEN, "/v1/shipments", 422, 1);
    let run = rig.sync().await;
    assert_eq!(run["shipments_notified"], 0, "{run}");
    let shipment = rig.shipments().await[0].clone();
    assert_eq!(shipment["state"], "errored_notifying_of_shipment");
    assert_eq!(rig.retry(&format!("shipments/{}", shipment["id"])).await.status.code, 204);
    let run = rig.sync().await;
    assert_eq!(run["shipments_notified"], 1, "{run}");
    assert_eq!(rig.sb().shipments(SB_TOKEN).len(), 1);
}

#[rocket::async_test]
async fn stock_goes_to_sellbrite_as_available_levels_fifty_at_a_time_and_once() {
    let rig = Rig::of(StoreKind::Sellbrite, 0).await;
    rig.enable_channel("inventory").await;
    let skus: Vec<String> = (0..120).map(|i| format!("P-{i:03}")).collect();
    let ids = rig.add_products(&skus).await;
    rig.add_bundle("KIT", &[(ids[0], 2), (ids[1], 3)]).await;
    let levels: String = skus.iter().enumerate().map(|(i, sku)| format!("{sku},{}\n", 10 + i)).collect();
    let file = format!("sku,quantity\n{levels}NOBODY,5\n");
    rig.drop_stock("stock.csv", &file);
    let run = rig.sync_ok().await;
    assert_eq!(run["stock_levels_sent"], 121, "120 products and the kit; NOBODY skipped: {run}");
    assert_eq!(rig.sb().inventory_requests(SB_TOKEN), 3, "50 + 50 + 21");
    // NOBODY skipped: the suite's `on_sellbrite::stock_is_sent_once`.
    let stock = rig.sb().stock(SB_TOKEN);
    assert_eq!((stock.get("P-000"), stock.get("KIT")), (Some(&10), Some(&3)), "P-000 has 5 kits, P-001 3");
    assert_eq!(list_requests(&rig, "/v1/warehouses").len(), 1, "the account's warehouse, asked once");

    let store: Value = rig.app.get(&format!("/stores/{}", rig.store_id), rig.admin()).await.body;
    assert!(store["inventory_updated_at"].is_string(), "{store}");
}

#[rocket::async_test]
async fn one_warehouse_serves_a_bigcommerce_and_a_sellbrite_store_from_one_shipment_file() {
    let sb = orderbridge::simulate::sellbrite::Simulator::start().await;
    sb.add_account(SB_TOKEN, SB_SECRET);
    sb.add_orders(SB_TOKEN, 2, 3);
    let base = sb.base_url();
    let rig = Rig::with_store(StoreKind::BigCommerce, 2, |f| f.merge(("sellbrite_api_base", base))).await;
    let adapter = json!({"auth_token": SB_TOKEN, "secret_key": SB_SECRET});
    let connection =
        rig.connect_store(json!({"platform": "sellbrite", "adapter": adapter}), rig.warehouse_id).await;
    assert_eq!(rig.sync().await["orders_sent"], 2);
    let run = rig.sync_connection(connection).await;
    assert_eq!(run["orders_sent"], 2, "{run}");

    // The warehouse answers both stores' orders in one file; whichever pass reads it, each
    // store hears of its own shipments.
    let orders = rig.orders().await;
    assert_eq!(orders.len(), 4);
    let mut file = String::from("order_id,tracking_number,carrier_name\n");
    for order in &orders {
        file.push_str(&format!("{},TRK-{},UPS\n", order["id"], order["id"]));
    }
    rig.drop_shipments("both.csv", &file);
    let (first, second) = tokio::join!(rig.sync_connection(connection), rig.sync());
    for run in [&first, &second] {
        assert_eq!(run["status"], "succeeded", "{run}");
    }
    let pulled = first["shipments_pulled"].as_i64().unwrap() + second["shipments_pulled"].as_i64().unwrap();
    assert_eq!(pulled, 4, "the file is read once: {first} {second}");
    // A pass after the file was read notifies what the other pass imported.
    rig.sync().await;
    rig.sync_connection(connection).await;
    assert_eq!(rig.bc().shipments(crate::sync_rig::HASH).len(), 2);
    assert_eq!(sb.shipments(SB_TOKEN).len(), 2);
    let shipments = rig.shipments().await;
    assert!(shipments.iter().all(|s| s["state"] == "notified_shipped"), "{shipments:?}");
    assert_eq!(rig.files("shipments/processed"), vec!["both.csv"]);
}

/// Issue 29, fault 9: a post whose answer was lost leaves the shipment in doubt as a stored
/// fact, whatever state it goes to next. Here the post lands and its answer is lost, then
/// the look that follows fails: with a 422 the shipment is errored and retried through the
/// API, with a 401 it is put back as it was; either way the next pass looks at Sellbrite's
/// order before posting, and Sellbrite has exactly one shipment.
#[rocket::async_test]
async fn a_shipment_whose_lost_post_was_retried_or_put_back_is_not_posted_twice() {
    for (what, look_status, state_after) in [
        ("errored, then retried", 422, "errored_notifying_of_shipment"),
        ("put back by a 401", 401, "ready_for_shipment_notification"),
    ] {
        let rig = Rig::of(StoreKind::Sellbrite, 1).await;
        rig.ship_first("1Z-DOUBT", "USPS").await;
        rig.sb().lose_answers(SB_TOKEN, "/v1/shipments", 504, 1);
        rig.sb().then_fail_next(SB_TOKEN, "/v1/orders/", look_status, 1);
        let run = rig.sync().await;
        assert_eq!(run["shipments_notified"], 0, "{what}: {run}");
        let shipment = rig.shipments().await[0].clone();
        assert_eq!(shipment["state"], state_after, "{what}: {shipment}");
        assert_eq!(rig.sb().shipments(SB_TOKEN).len(), 1, "{what}: the lost post landed");
        if look_status == 422 {
            let r = rig.retry(&format!("shipments/{}", shipment["id"])).await;
            assert_eq!(r.status.code, 204, "{what}: {r:?}");
        }
        let run = rig.sync().await;
        assert_eq!(run["status"], "succeeded", "{what}: {run}");
        assert_eq!(rig.shipments().await[0]["state"], "notified_shipped", "{what}");
        assert_eq!(rig.sb().shipments(SB_TOKEN).len(), 1, "{what}: exactly one Sellbrite shipment");
        let posts = rig
            .sb()
            .requests()
            .iter()
            .filter(|r| r.starts_with("POST") && r.contains("/v1/shipments"))
            .count();
        assert_eq!(posts, 1, "{what}: never posted again: {:?}", rig.sb().requests());
    }
}
