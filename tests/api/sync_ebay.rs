//! Sync with an eBay seller account (annex `platforms/ebay.md`): a simulated eBay on loopback
//! (Sell Fulfillment, Sell Inventory and the token endpoint, production and sandbox), a
//! `folder` warehouse, and every step driven through the HTTP API as a user would. The
//! conformance suite (`sync_suites::stores::on_ebay`) holds what every store does; here is
//! what is eBay's own.

use std::collections::BTreeSet;

use orderbridge::simulate::ebay::{self, Fault, NewOrder, Operation, SCOPE_FULFILLMENT};
use serde_json::{Value, json};

use crate::sync_rig::{Rig, StoreKind, assert_failed, assert_hidden, ebay_adapter};

fn name(rig: &Rig) -> String {
    rig.ebay().name().to_string()
}

fn sim(rig: &Rig) -> &ebay::Simulator {
    &rig.ebay().sim
}

/// An order paid `minutes` ago (a pull's window ends two minutes before it starts).
fn paid_ago(lines: &[(&str, i64)], minutes: i64) -> NewOrder {
    let mut order = NewOrder::ready(lines);
    order.created_ms = Some(orderbridge::dates::now_ms() - minutes * 60_000);
    order
}

#[rocket::async_test]
async fn the_annex_order_is_pulled_as_the_annex_maps_it() {
    let rig = Rig::of(StoreKind::Ebay, 0).await;
    let annex =
        std::fs::read_to_string(orderbridge::simulate::shared_files::shared("spec/platforms/ebay.md"))
            .unwrap();
    let block = |info: &str| -> Value {
        let start = annex.find(&format!("```{info}\n")).unwrap() + info.len() + 4;
        serde_json::from_str(&annex[start..start + annex[start..].find("```").unwrap()]).unwrap()
    };
    let mut order = block("json ebay-response=getOrders status=200")["orders"][0].clone();
    // Its dates moved to ten minutes ago, so today's first pull (30 days back) reads it.
    let ten_ago = orderbridge::dates::format_ms(orderbridge::dates::now_ms() - 600_000);
    order["creationDate"] = json!(ten_ago);
    order["lastModifiedDate"] = json!(ten_ago);
    sim(&rig).add_order_json(&name(&rig), order);
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_pulled"], 1, "{run}");
    let pulled = rig.order_of("27-11234-56789").await;
    let mut expected = block("json orderbridge-order");
    expected["ordered_at"] = json!(ten_ago);
    for (key, value) in expected.as_object().unwrap() {
        let ours = &pulled[key];
        let same = match (ours, value) {
            (Value::Array(a), Value::Array(b)) => a.len() == b.len(),
            (Value::Object(a), Value::Object(b)) => b.iter().all(|(k, v)| a.get(k) == Some(v)),
            (a, b) => a == b,
        };
        assert!(same, "{key}: ours {ours}, the annex's {value}");
    }
    let items = pulled["order_items"].as_array().unwrap();
    let tea = items.iter().find(|i| i["sku"] == "TEA-GRN-100").unwrap();
    assert_eq!((tea["unit_price"].clone(), tea["discount_amount"].clone()), (json!(22.0), json!(3.0)));
    assert_eq!(tea["custom"]["variation"], "Size: 100 g");
}

#[rocket::async_test]
async fn only_orders_the_seller_ships_are_written_and_an_old_one_without_an_address_is_named() {
    let rig = Rig::of(StoreKind::Ebay, 0).await;
    let (sim, seller) = (sim(&rig), name(&rig));
    let ready = sim.add_order(&seller, paid_ago(&[("MUG-BLU", 2), ("TEA-GRN", 1)], 5));
    let mut kinds = Vec::new();
    for (what, change) in [
        ("pending", Box::new(|o: &mut NewOrder| o.payment_status = "PENDING") as Box<dyn Fn(&mut NewOrder)>),
        ("cancel requested", Box::new(|o: &mut NewOrder| o.cancel_state = "IN_PROGRESS")),
        ("canceled", Box::new(|o: &mut NewOrder| o.cancel_state = "CANCELED")),
        ("digital", Box::new(|o: &mut NewOrder| o.instructions_type = "DIGITAL")),
        ("pick-up", Box::new(|o: &mut NewOrder| o.instructions_type = "PREPARE_FOR_PICKUP")),
        ("eBay fulfils", Box::new(|o: &mut NewOrder| o.instructions_type = "FULFILLED_BY_EBAY")),
    ] {
        let mut order = paid_ago(&[("MUG-BLU", 1)], 5);
        change(&mut order);
        kinds.push((what, sim.add_order(&seller, order)));
    }
    let mut gsp = paid_ago(&[("MUG-RED", 1)], 5);
    gsp.ebay_supported = true;
    let gsp = sim.add_order(&seller, gsp);
    let mut old = paid_ago(&[("MUG-BLU", 1)], 5);
    old.with_address = false;
    let old = sim.add_order(&seller, old);

    let run = rig.sync_ok().await;
    let written: BTreeSet<String> = rig.orders_by_external().await.into_keys().collect();
    assert_eq!(written, BTreeSet::from([ready.clone(), gsp.clone()]), "not {kinds:?} nor {old}: {run}");
    let problems = run["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{run}");
    assert_eq!(problems[0]["step"], "pull_orders");
    assert_eq!(problems[0]["kind"], "order");
    assert_eq!(problems[0]["ref"], json!(old));
    assert!(problems[0]["message"].as_str().unwrap().contains("eBay sent no shipping address"), "{run}");
    let gsp = rig.order_of(&gsp).await;
    assert!(gsp["external_tags"].as_str().unwrap().contains("ebaySupportedFulfillment"), "{gsp}");
    assert_eq!(gsp["external_type"], "eBay");
}

#[rocket::async_test]
async fn a_busy_window_is_read_last_page_first_in_ceil_n_over_200_plus_one_requests() {
    let rig = Rig::of(StoreKind::Ebay, 450).await;
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_pulled"], 450, "{run}");
    assert_eq!(sim(&rig).requests(Operation::GetOrders), 4, "offsets 0, 400, 200, 0: {:?}", sim(&rig).log());
    let offsets: Vec<String> = sim(&rig)
        .log()
        .iter()
        .filter(|l| l.contains("/sell/fulfillment/v1/order?"))
        .map(|l| l.split("offset=").nth(1).unwrap_or("").split([' ', '&']).next().unwrap_or("").to_string())
        .collect();
    assert_eq!(offsets, ["0", "400", "200", "0"]);
    // The next pass reads the window again from its cursor and writes nothing.
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_pulled"], 0, "{run}");
}

#[rocket::async_test]
async fn an_order_that_leaves_the_window_mid_walk_hides_no_other() {
    let rig = Rig::of(StoreKind::Ebay, 450).await;
    let (sim, seller) = (sim(&rig), name(&rig));
    let ids = sim.order_ids(&seller);
    // Changed while the walk reads its pages: it leaves the closed window.
    sim.modify_between_pages(&seller, &ids[10]);
    rig.sync_ok().await;
    let written: BTreeSet<String> = rig.orders_by_external().await.into_keys().collect();
    let others: BTreeSet<String> = ids.iter().filter(|id| **id != ids[10]).cloned().collect();
    assert!(others.is_subset(&written), "missing: {:?}", others.difference(&written).collect::<Vec<_>>());
    assert!(written.len() <= 450);
}

#[rocket::async_test]
async fn ebays_clock_behind_ours_moves_the_window_end_once() {
    let rig = Rig::of(StoreKind::Ebay, 0).await;
    let (sim, seller) = (sim(&rig), name(&rig));
    // eBay's clock five minutes behind: our window's end is in its future (30850).
    sim.set_clock_offset(-5 * 60_000);
    sim.add_order(&seller, paid_ago(&[("MUG-BLU", 1)], 10));
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_pulled"], 1, "{run}");
    assert_eq!(sim.requests(Operation::GetOrders), 2, "refused once, then by eBay's clock: {:?}", sim.log());
}

#[rocket::async_test]
async fn a_wait_longer_than_a_pass_stops_the_pull_without_error_and_nothing_is_asked_inside_it() {
    let rig = Rig::with_store(StoreKind::Ebay, 2, |f| f.merge(("sync_interval_secs", 10))).await;
    let sim = sim(&rig);
    sim.fail_next(Operation::GetOrders, Fault::RateLimit { retry_after: Some(30) }, 1);
    let run = rig.sync().await;
    assert_eq!(run["status"], "succeeded", "the pull stops where it is: {run}");
    assert_eq!(run["orders_pulled"], 0, "{run}");
    let asked = sim.request_count();
    let run = rig.sync().await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(sim.request_count(), asked, "no Fulfillment request inside the wait eBay asked for");
    // Stock is another quota: it goes on.
    rig.enable_channel("inventory").await;
    sim.add_item(&name(&rig), "SKU-W", 0);
    rig.add_products(&["SKU-W"]).await;
    rig.drop_stock("stock.csv", "sku,quantity\nSKU-W,4\n");
    let run = rig.sync().await;
    assert_eq!(run["stock_levels_sent"], 1, "{run}");
    assert_eq!(sim.listed_quantity(&name(&rig), "SKU-W"), Some(4));
}

#[rocket::async_test]
async fn an_inventory_wait_fails_the_stock_step_naming_the_time() {
    let rig = Rig::with_store(StoreKind::Ebay, 0, |f| f.merge(("sync_interval_secs", 10))).await;
    let sim = sim(&rig);
    rig.enable_channel("inventory").await;
    sim.add_item(&name(&rig), "SKU-W", 0);
    rig.add_products(&["SKU-W"]).await;
    rig.drop_stock("stock.csv", "sku,quantity\nSKU-W,4\n");
    sim.fail_next(Operation::BulkGetInventoryItem, Fault::RateLimit { retry_after: None }, 1);
    sim.fail_next(Operation::BulkGetInventoryItem, Fault::RateLimit { retry_after: Some(3600) }, 1);
    let run = rig.sync().await;
    assert_failed(&run, Some("stock"), "adapter_unreachable", &["eBay allows the next Inventory request at"]);
}

#[rocket::async_test]
async fn shipments_cost_two_requests_and_go_with_ebays_carrier_codes_and_bare_tracking_numbers() {
    let rig = Rig::of(StoreKind::Ebay, 0).await;
    let (sim, seller) = (sim(&rig), name(&rig));
    let first = sim.add_order(&seller, paid_ago(&[("MUG-BLU", 2)], 5));
    let second = sim.add_order(&seller, paid_ago(&[("TEA-GRN", 1)], 5));
    let third = sim.add_order(&seller, paid_ago(&[("MUG-RED", 1)], 5));
    rig.sync_ok().await;
    let orders = rig.orders_by_external().await;
    let id = |external: &str| orders[external]["id"].as_i64().unwrap();
    let (a, b, c) = (id(&first), id(&second), id(&third));
    rig.drop_shipments(
        "s.csv",
        &format!("order_id,tracking_number,carrier_name\n{a},1Z 999AA1-0123456784,Fed-Ex\n{b},SF000123,DHL Express\n{c},—,UPS\n"),
    );
    let run = rig.sync().await;
    assert_eq!(run["shipments_notified"], 2, "{run}");
    let fulfilled = sim.fulfillments(&seller, &first);
    assert_eq!(fulfilled[0]["shipmentTrackingNumber"], "1Z999AA10123456784");
    assert_eq!(fulfilled[0]["shippingCarrierCode"], "FedEx");
    assert_eq!(fulfilled[0]["lineItems"][0]["quantity"], 2);
    assert_eq!(
        sim.fulfillments(&seller, &second)[0]["shippingCarrierCode"],
        "Other",
        "DHL Express is not DHL"
    );
    assert!(sim.fulfillments(&seller, &third).is_empty());
    let looks = sim.requests(Operation::GetShippingFulfillments);
    let posts = sim.requests(Operation::CreateShippingFulfillment);
    assert_eq!((looks, posts), (2, 2), "two requests a shipment, none for one eBay cannot take");
    let shipments = rig.shipments().await;
    let bad = shipments.iter().find(|s| s["order_id"] == c).unwrap();
    assert_eq!(bad["state"], "errored_notifying_of_shipment", "{bad}");
    assert!(run["problems"].to_string().contains("letters or digits"), "{run}");
}

#[rocket::async_test]
async fn an_expired_token_is_fetched_again_once_and_a_revoked_refresh_token_is_named() {
    let rig = Rig::of(StoreKind::Ebay, 1).await;
    let sim = sim(&rig);
    rig.sync_ok().await;
    let tokens = sim.requests(Operation::Token);
    assert_eq!(tokens, 1, "one exchange for the pass");
    sim.expire_tokens();
    sim.add_ready_orders(&name(&rig), 1);
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_pulled"], 1, "{run}");
    assert_eq!(sim.requests(Operation::Token), tokens + 1, "a 401, one new token, the request again");
    sim.revoke(&name(&rig));
    sim.expire_tokens();
    let run = rig.sync().await;
    assert_failed(&run, Some("pull_orders"), "adapter_authentication_failed", &["invalid_grant"]);
    let seller = &rig.ebay().seller;
    assert_hidden(&[run.to_string()], &[seller.client_secret.clone(), seller.refresh_token.clone()]);
}

#[rocket::async_test]
async fn stock_names_listings_the_inventory_api_cannot_see_and_sends_only_changes() {
    let rig = Rig::of(StoreKind::Ebay, 0).await;
    let (sim, seller) = (sim(&rig), name(&rig));
    rig.enable_channel("inventory").await;
    sim.add_item(&seller, "MUG-BLU", 20);
    sim.add_item(&seller, "TEA-GRN-100", 3);
    sim.add_item(&seller, "MUG-RED", 9);
    sim.add_seller_hub_listing(&seller, "LEGACY-1", 5);
    rig.add_products(&["MUG-BLU", "TEA-GRN-100", "LEGACY-1", "MUG-RED"]).await;
    rig.drop_stock("stock.csv", "sku,quantity\nMUG-BLU,17\nTEA-GRN-100,0\nLEGACY-1,5\nMUG-RED,9\n");
    let run = rig.sync_ok().await;
    assert_eq!(run["stock_levels_sent"], 2, "{run}");
    assert_eq!(sim.listed_quantity(&seller, "MUG-BLU"), Some(17));
    assert_eq!(sim.listed_quantity(&seller, "TEA-GRN-100"), Some(0));
    let problems = run["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{run}");
    assert_eq!((problems[0]["kind"].clone(), problems[0]["ref"].clone()), (json!("sku"), json!("LEGACY-1")));
    assert!(problems[0]["message"].as_str().unwrap().contains("not an Inventory API item"), "{run}");
    // The annex's count: one lookup, two offer reads, one update.
    let counts = [Operation::BulkGetInventoryItem, Operation::GetOffers, Operation::BulkUpdatePriceQuantity]
        .map(|op| sim.requests(op));
    assert_eq!(counts, [1, 2, 1]);
}

#[rocket::async_test]
async fn an_account_that_takes_one_sku_a_call_gets_one_sku_a_call() {
    let rig = Rig::of(StoreKind::Ebay, 0).await;
    let (sim, seller) = (sim(&rig), name(&rig));
    rig.enable_channel("inventory").await;
    sim.one_sku_per_call(true);
    for sku in ["A-1", "A-2", "A-3"] {
        sim.add_item(&seller, sku, 0);
    }
    rig.add_products(&["A-1", "A-2", "A-3"]).await;
    rig.drop_stock("stock.csv", "sku,quantity\nA-1,1\nA-2,2\nA-3,3\n");
    let run = rig.sync_ok().await;
    assert_eq!(run["stock_levels_sent"], 3, "{run}");
    assert_eq!(sim.requests(Operation::BulkUpdatePriceQuantity), 4, "refused with three, then one by one");
    assert_eq!(sim.listed_quantity(&seller, "A-3"), Some(3));
}

async fn ping(rig: &Rig, adapter: Value) -> crate::common::Reply {
    let body = json!({"customer_id": rig.customer_id, "name": "Acme on eBay", "platform": "ebay", "adapter": adapter});
    let r = rig.app.post_json("/stores/ping", &rig.app.admin, body).await;
    let seller = &rig.ebay().seller;
    assert_hidden(
        std::slice::from_ref(&r.text),
        &[seller.client_secret.clone(), seller.refresh_token.clone()],
    );
    r
}

#[rocket::async_test]
async fn the_ping_asks_for_a_token_an_order_and_an_item_and_names_what_is_wrong() {
    let rig = Rig::of(StoreKind::Ebay, 0).await;
    let (sim, seller) = (sim(&rig), name(&rig));
    let adapter = ebay_adapter(&rig.ebay().seller);
    let ok = ping(&rig, adapter.clone()).await;
    assert_eq!(ok.status.code, 204, "{ok:?}");
    assert_eq!(sim.requests(Operation::Token), 1);
    // The same keyset asked in the sandbox is another eBay.
    let mut sandbox = adapter.clone();
    sandbox["environment"] = json!("Sandbox");
    let r = ping(&rig, sandbox).await;
    assert_eq!(r.status.code, 422, "{r:?}");
    assert!(r.text.contains("invalid_client"), "{r:?}");
    sim.set_scopes(&seller, &[SCOPE_FULFILLMENT]);
    let r = ping(&rig, adapter.clone()).await;
    assert_eq!(r.status.code, 422, "{r:?}");
    assert!(r.text.contains("invalid_scope"), "{r:?}");
    sim.set_scopes(&seller, &[SCOPE_FULFILLMENT, ebay::SCOPE_INVENTORY]);
    sim.fail_next(Operation::GetInventoryItems, Fault::Status(503), 1);
    let r = ping(&rig, adapter.clone()).await;
    assert_eq!(r.status.code, 502, "{r:?}");
    sim.revoke(&seller);
    let r = ping(&rig, adapter).await;
    assert_eq!(r.status.code, 422, "{r:?}");
    assert!(r.text.contains("invalid_grant"), "{r:?}");
}

#[rocket::async_test]
async fn a_sandbox_seller_syncs_against_the_sandbox_base() {
    let rig = Rig::of(StoreKind::Ebay, 0).await;
    let sim = sim(&rig);
    let seller = ebay::Seller::sandbox("sandbox_seller");
    sim.add_seller(&seller);
    sim.add_ready_orders(&seller.username, 2);
    rig.patch_store_adapter(ebay_adapter(&seller)).await;
    let run = rig.sync_ok().await;
    assert_eq!(run["orders_pulled"], 2, "{run}");
    let sandboxed = sim.log().iter().filter(|l| l.contains("/sandbox/sell/")).count();
    assert!(sandboxed >= 1, "{:?}", sim.log());
}

#[rocket::async_test]
async fn an_order_canceled_at_ebay_is_canceled_here_by_the_next_pull() {
    let rig = Rig::of(StoreKind::Ebay, 2).await;
    let (sim, seller) = (sim(&rig), name(&rig));
    assert_eq!(rig.sync_ok().await["orders_pulled"], 2);
    let ids = sim.order_ids(&seller);
    // Canceled three minutes ago by eBay's clock: inside the next walk's window, which ends
    // two minutes before it starts.
    sim.set_clock_offset(-180_000);
    sim.cancel(&seller, &ids[0]);
    sim.set_clock_offset(0);
    rig.sync_ok().await;
    let orders = rig.orders_by_external().await;
    assert_eq!(orders[&ids[0]]["fulfillment_state"], "canceled", "{:?}", orders[&ids[0]]);
    assert_ne!(orders[&ids[1]]["fulfillment_state"], "canceled");
}

#[rocket::async_test]
async fn a_wait_ebay_asks_of_one_store_holds_every_store_of_the_same_keyset() {
    let rig = Rig::with_store(StoreKind::Ebay, 1, |f| f.merge(("sync_interval_secs", 10))).await;
    let (sim, first) = (sim(&rig), rig.ebay().seller.clone());
    // A second seller consented to the same application (keyset).
    let second = ebay::Seller {
        username: format!("{}_two", first.username),
        refresh_token: format!("{}-two", first.refresh_token),
        ..first.clone()
    };
    sim.add_seller(&second);
    sim.add_ready_orders(&second.username, 1);
    let warehouse = rig.warehouse_id;
    let store = json!({"customer_id": rig.customer_id, "name": "Second", "platform": "ebay",
                       "adapter": ebay_adapter(&second), "enabled_at": "now"});
    let other = rig.connect_store(store, warehouse).await;
    sim.fail_next(Operation::GetOrders, Fault::RateLimit { retry_after: Some(60) }, 1);
    assert_eq!(rig.sync().await["status"], "succeeded");
    let asked = sim.requests(Operation::GetOrders);
    let run = rig.sync_connection(other).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["orders_pulled"], 0, "{run}");
    assert_eq!(sim.requests(Operation::GetOrders), asked, "the keyset waits, whichever store asks");
}

#[rocket::async_test]
async fn a_shipment_met_by_a_long_wait_is_delayed_without_a_try_counted() {
    let rig = Rig::with_store(StoreKind::Ebay, 2, |f| f.merge(("sync_interval_secs", 10))).await;
    let sim = sim(&rig);
    assert_eq!(rig.sync_ok().await["orders_sent"], 2);
    let orders = rig.orders().await;
    let (a, b) = (orders[0]["id"].as_i64().unwrap(), orders[1]["id"].as_i64().unwrap());
    rig.drop_shipments(
        "s.csv",
        &format!("order_id,tracking_number,carrier_name\n{a},1ZWAIT0001,UPS\n{b},1ZWAIT0002,UPS\n"),
    );
    // The first shipment's look is answered 429 asking for an hour.
    sim.fail_next(Operation::GetShippingFulfillments, Fault::RateLimit { retry_after: Some(3600) }, 1);
    let run = rig.sync().await;
    assert_eq!(run["status"], "succeeded", "a paced notify is not a failure: {run}");
    assert_eq!(run["shipments_notified"], 0, "{run}");
    let problem = run["problems"][0]["message"].as_str().unwrap_or_default();
    assert!(problem.contains("eBay allows the next Fulfillment request at"), "{run}");
    let shipments = rig.shipments().await;
    let states: BTreeSet<&str> = shipments.iter().map(|s| s["state"].as_str().unwrap()).collect();
    assert!(states.contains("delayed_notifying_of_shipment"), "annex §5: {shipments:?}");
    for shipment in &shipments {
        let why = rig.app.get(&format!("/shipments/{}/sync", shipment["id"]), rig.admin()).await;
        assert_eq!(why.body["attempts"], 0, "no try counted: {why:?}");
    }
    assert_eq!(sim.requests(Operation::CreateShippingFulfillment), 0);
}
