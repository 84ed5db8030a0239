//! The simulator held to eBay's own files ([`super::vendor`]): every exchange of a scenario
//! over every operation, success and error answers, follows them (and eBay's checker, when
//! python3 with jsonschema is here); and each `ebay-response=` example of the annex's §7 is
//! answered back, body equal, by a simulator seeded with the annex's data.

use serde_json::{Value, json};

use super::sim_tests::token as grant_token;
use super::sim_tests::{ACME, WINDOW, annex_orders, get, post, started};
use super::vendor::{problems, python_problems};
use super::{Api, Fault, Item, NewOrder, Operation, SCOPE_FULFILLMENT, Seller};

fn all_hold(exchanges: &[crate::simulate::openapi_check::Exchange], request: bool) {
    assert!(!exchanges.is_empty());
    let found = problems(exchanges, request);
    assert!(found.is_empty(), "{}", found.join("\n"));
    if let Some(Err(found)) = python_problems(exchanges, request) {
        panic!("validate_requests.py:\n{found}");
    }
}

#[tokio::test]
async fn every_exchange_of_the_simulator_follows_ebays_files() {
    let (sim, seller, token) = started().await;
    let base = sim.api_base();
    get(&base, &token, "/sell/inventory/v1/inventory_item?limit=1&offset=0").await;
    sim.add_orders(ACME, 190, 3);
    let id = sim.add_order(ACME, NewOrder::ready(&[("MUG-BLU", 2), ("TEA-GRN", 1)]));
    let lines = sim.order(ACME, &id).unwrap_or_default()["lineItems"].clone();
    for target in [
        format!("/sell/fulfillment/v1/order?filter={WINDOW}&limit=200&offset=0"),
        "/sell/fulfillment/v1/order?limit=20&offset=20".into(),
        "/sell/fulfillment/v1/order?limit=1".into(),
        "/sell/fulfillment/v1/order?filter=orderfulfillmentstatus:%7BNOT_STARTED%7CIN_PROGRESS%7D&limit=200".into(),
        format!("/sell/fulfillment/v1/order?orderIds={id}"),
        format!("/sell/fulfillment/v1/order/{id}/shipping_fulfillment"),
        "/sell/fulfillment/v1/order/01-00000-00001/shipping_fulfillment".into(),
        "/sell/fulfillment/v1/order?filter=lastmodifieddate:%5B2026-11-25T10:15:00.000Z..2999-01-01T00:00:00.000Z%5D".into(),
    ] {
        get(&base, &token, &target).await;
    }
    let path = format!("/sell/fulfillment/v1/order/{id}/shipping_fulfillment");
    let ship = |tracking: &str, line: usize| {
        json!({"lineItems": [{"lineItemId": lines[line]["lineItemId"], "quantity": 1}],
               "shippedDate": super::iso(super::State::new().now_ms()), "shippingCarrierCode": "UPS", "trackingNumber": tracking})
    };
    assert_eq!(post(&base, &token, &path, &ship("1Z999AA10123456784", 0)).await.status, 201);
    assert_eq!(post(&base, &token, &path, &ship("1Z999AA10123456784", 0)).await.status, 400);
    sim.lose_next_fulfillment_answers(ACME, 1);
    assert_eq!(post(&base, &token, &path, &ship("LOST1", 1)).await.status, 502);
    get(&base, &token, &path).await;
    post(&base, &token, "/sell/fulfillment/v1/order/01-00000-00001/shipping_fulfillment", &ship("X1", 0))
        .await;
    let blue = sim.add_item(ACME, "MUG-BLU", 20);
    sim.add_offer(ACME, "MUG-BLU", "EBAY_GB", false);
    sim.add_item(ACME, "MUG-RED", 9);
    sim.add_seller_hub_listing(ACME, "LEGACY-1", 5);
    get(&base, &token, "/sell/inventory/v1/inventory_item?limit=1&offset=0").await;
    get(&base, &token, "/sell/inventory/v1/inventory_item?limit=1&offset=1").await;
    let lookup = "/sell/inventory/v1/bulk_get_inventory_item";
    post(&base, &token, lookup, &json!({"requests": [{"sku": "MUG-BLU"}, {"sku": "MUG-RED"}]})).await;
    post(&base, &token, lookup, &json!({"requests": [{"sku": "MUG-BLU"}, {"sku": "LEGACY-1"}]})).await;
    get(&base, &token, "/sell/inventory/v1/offer?sku=MUG-BLU").await;
    get(&base, &token, "/sell/inventory/v1/offer?sku=LEGACY-1").await;
    let update = "/sell/inventory/v1/bulk_update_price_quantity";
    let level = |sku: &str, q: i64, offer: Option<&str>| {
        let mut entry = json!({"sku": sku, "shipToLocationAvailability": {"quantity": q}});
        if let Some(offer) = offer {
            entry["offers"] = json!([{"offerId": offer, "availableQuantity": q}]);
        }
        entry
    };
    post(
        &base,
        &token,
        update,
        &json!({"requests": [level("MUG-BLU", 17, Some(&blue)), level("MUG-RED", 3, None)]}),
    )
    .await;
    post(&base, &token, update, &json!({"requests": [level("LEGACY-1", 1, None)]})).await;
    sim.one_sku_per_call(true);
    post(
        &base,
        &token,
        update,
        &json!({"requests": [level("MUG-BLU", 17, Some(&blue)), level("MUG-RED", 3, None)]}),
    )
    .await;
    sim.fail_next(Operation::GetOffers, Fault::Status(503), 1);
    get(&base, &token, "/sell/inventory/v1/offer?sku=MUG-BLU").await;
    sim.fail_next(Operation::GetOrders, Fault::RateLimit { retry_after: Some(3) }, 1);
    get(&base, &token, "/sell/fulfillment/v1/order?limit=1").await;
    sim.set_daily_quota(&seller.client_id, Api::Inventory, 0);
    get(&base, &token, "/sell/inventory/v1/offer?sku=MUG-BLU").await;
    let narrow = Seller { scopes: vec![SCOPE_FULFILLMENT.into()], ..Seller::new("narrow") };
    sim.add_seller(&narrow);
    let narrow_token = grant_token(&sim, &narrow).await;
    get(&base, &narrow_token, "/sell/inventory/v1/inventory_item?limit=1&offset=0").await;
    sim.expire_tokens();
    get(&base, &token, "/sell/fulfillment/v1/order?limit=1").await;
    let sandbox = Seller::sandbox("sandbox_shop");
    sim.add_seller(&sandbox);
    sim.add_ready_orders("sandbox_shop", 2);
    let sandbox_token = grant_token(&sim, &sandbox).await;
    get(&sim.sandbox_base(), &sandbox_token, "/sell/fulfillment/v1/order?limit=1").await;
    let exchanges = sim.take_exchanges();
    let statuses: std::collections::BTreeSet<u16> = exchanges.iter().map(|e| e.status).collect();
    assert_eq!(statuses.into_iter().collect::<Vec<_>>(), [200, 201, 207, 400, 401, 403, 404, 429, 502, 503]);
    all_hold(&exchanges, true);

    // Requests against the files on purpose: the answers must still follow them.
    sim.set_daily_quota(&seller.client_id, Api::Inventory, 1000);
    let fresh = grant_token(&sim, &seller).await;
    get(&base, &fresh, "/sell/fulfillment/v1/order?limit=201").await;
    get(&base, &fresh, "/sell/fulfillment/v1/order?filter=orderfulfillmentstatus:%7BNOT_STARTED%7D").await;
    let doubled = json!({"lineItems": [{"lineItemId": lines[1]["lineItemId"], "quantity": 1},
                                       {"lineItemId": lines[1]["lineItemId"], "quantity": 1}]});
    post(&base, &fresh, &path, &doubled).await;
    post(
        &base,
        &fresh,
        &path,
        &json!({"lineItems": [], "shippingCarrierCode": "UPS", "trackingNumber": "1Z 9"}),
    )
    .await;
    let many: Vec<Value> = (0..26).map(|i| json!({"sku": format!("S{i}")})).collect();
    post(&base, &fresh, lookup, &json!({"requests": many})).await;
    let refused = sim.take_exchanges();
    assert!(refused.iter().filter(|e| e.status == 400).count() >= 5);
    all_hold(&refused, false);
}

#[tokio::test]
async fn the_annexs_examples_are_answered_back() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    let text = std::fs::read_to_string(crate::simulate::shared_files::shared("spec/platforms/ebay.md"))
        .unwrap_or_default();
    let examples: Vec<(String, Value)> = text
        .split("```json ")
        .skip(1)
        .filter_map(|block| {
            let (info, rest) = block.split_once('\n')?;
            let body = rest.split("```").next()?;
            Some((info.trim().to_string(), serde_json::from_str(body).ok()?))
        })
        .collect();
    let example = |info: &str, nth: usize| {
        examples
            .iter()
            .filter(|(i, _)| i == info)
            .nth(nth)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{info} #{nth}"))
    };
    for order in annex_orders()["orders"].as_array().into_iter().flatten() {
        sim.add_order_json(ACME, order.clone());
    }
    let orders =
        get(&base, &token, &format!("/sell/fulfillment/v1/order?filter={WINDOW}&limit=200&offset=0")).await;
    assert_eq!(orders.body, example("ebay-response=getOrders status=200", 0));
    let path = "/sell/fulfillment/v1/order/27-11234-56789/shipping_fulfillment";
    let listed = get(&base, &token, path).await;
    assert_eq!(listed.body, example("ebay-response=getShippingFulfillments status=200", 0));
    let body = json!({"lineItems": [{"lineItemId": "10012345678901", "quantity": 2}],
        "shippedDate": "2026-11-26T15:04:05.000Z", "shippingCarrierCode": "UPS", "trackingNumber": "1Z999AA10123456784"});
    assert_eq!(post(&base, &token, path, &body).await.status, 201);
    assert_eq!(
        get(&base, &token, path).await.body,
        example("ebay-response=getShippingFulfillments status=200", 1)
    );
    let refused = json!({"lineItems": [{"lineItemId": "10012345678902", "quantity": 1}],
        "shippedDate": "2026-11-27T09:00:00.000Z", "shippingCarrierCode": "Other", "trackingNumber": "SF-000123"});
    let refusal = post(&base, &token, path, &refused).await;
    assert_eq!((refusal.status, &refusal.body), (400, &example("ebay-error status=400", 1)));
    let (status, body) = super::sim_tests::raw_get(&sim, &token,
        "/sell/fulfillment/v1/order?filter=lastmodifieddate:[2026-11-25T10:53:00.000Z..2026-11-25T11:58:00.000Z]").await;
    assert_eq!((status, body), (400, example("ebay-error status=400", 0)));
    {
        let mut state = sim.lock();
        let account = state.accounts.get_mut(ACME).expect("acme");
        for (sku, quantity, groups) in
            [("MUG-BLU", 20, vec![]), ("TEA-GRN-100", 3, vec!["TEA-GRN".to_string()]), ("MUG-RED", 9, vec![])]
        {
            account.items.insert(sku.into(), Item { quantity, groups });
        }
    }
    sim.add_seller_hub_listing(ACME, "LEGACY-1", 5);
    for (sku, offer, listing, quantity, sold) in [
        ("MUG-BLU", "5005317010", "256123456789", 20, 12),
        ("TEA-GRN-100", "5005317011", "256987654321", 3, 4),
    ] {
        sim.lock().accounts.get_mut(ACME).expect("acme").offers.push(super::Offer {
            id: offer.into(),
            sku: sku.into(),
            marketplace: "EBAY_US".into(),
            published: true,
            quantity,
            listing_id: Some(listing.into()),
            sold,
        });
    }
    let lookup = json!({"requests": [{"sku": "MUG-BLU"}, {"sku": "TEA-GRN-100"}, {"sku": "LEGACY-1"}, {"sku": "MUG-RED"}]});
    let found = post(&base, &token, "/sell/inventory/v1/bulk_get_inventory_item", &lookup).await;
    assert_eq!(
        (found.status, &found.body),
        (207, &example("ebay-response=bulkGetInventoryItem status=200", 0))
    );
    for (n, sku) in ["MUG-BLU", "TEA-GRN-100"].into_iter().enumerate() {
        let offers = get(&base, &token, &format!("/sell/inventory/v1/offer?sku={sku}")).await;
        assert_eq!(offers.body, example("ebay-response=getOffers status=200", n));
    }
    let update = json!({"requests": [
        {"sku": "MUG-BLU", "shipToLocationAvailability": {"quantity": 17}, "offers": [{"offerId": "5005317010", "availableQuantity": 17}]},
        {"sku": "TEA-GRN-100", "shipToLocationAvailability": {"quantity": 0}, "offers": [{"offerId": "5005317011", "availableQuantity": 0}]}]});
    let updated = post(&base, &token, "/sell/inventory/v1/bulk_update_price_quantity", &update).await;
    assert_eq!(
        (updated.status, &updated.body),
        (200, &example("ebay-response=bulkUpdatePriceQuantity status=200", 0))
    );
    sim.set_scopes(ACME, &[SCOPE_FULFILLMENT]);
    let narrow =
        grant_token(&sim, &Seller { scopes: vec![SCOPE_FULFILLMENT.into()], ..Seller::new(ACME) }).await;
    let denied = get(&base, &narrow, "/sell/inventory/v1/inventory_item?limit=1&offset=0").await;
    assert_eq!((denied.status, &denied.body), (403, &example("ebay-error status=403", 0)));
    all_hold(&sim.take_exchanges(), false);
}

#[test]
fn a_broken_answer_is_caught_by_both_checkers() {
    let exchange = crate::simulate::openapi_check::Exchange {
        method: "GET".into(),
        path: "/sandbox/sell/fulfillment/v1/order".into(),
        query: vec![("limit".into(), "1".into())],
        headers: vec![("Authorization".into(), "Bearer t".into())],
        body: Vec::new(),
        status: 200,
        answer_headers: vec![("Content-Type".into(), "application/json".into())],
        answer_body: json!({"total": "two", "orders": [], "colour": "blue"}).to_string().into_bytes(),
    };
    let found = problems(std::slice::from_ref(&exchange), true);
    assert!(found.iter().any(|p| p.contains("total")), "{found:?}");
    if let Some(result) = python_problems(&[exchange], true) {
        let found = result.expect_err("eBay's checker finds it");
        assert!(found.contains("colour") && found.contains("two"), "{found}");
    }
}
