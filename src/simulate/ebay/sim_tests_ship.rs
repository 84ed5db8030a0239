//! The eBay simulator's shipping fulfillments over real HTTP: eBay's refusals (32100 to
//! 34500), statuses moving as units ship, a lost answer, and Global Shipping Program orders.

use serde_json::{Value, json};

use super::NewOrder;
use super::sim_tests::{ACME, get, post, started};

#[tokio::test]
async fn fulfillments_follow_ebays_rules() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    let id = sim.add_order(ACME, NewOrder::ready(&[("MUG-BLU", 2), ("TEA-GRN", 1)]));
    let order = sim.order(ACME, &id).unwrap_or_default();
    let (one, two) =
        (order["lineItems"][0]["lineItemId"].clone(), order["lineItems"][1]["lineItemId"].clone());
    let path = format!("/sell/fulfillment/v1/order/{id}/shipping_fulfillment");
    let shipped = "2999-01-01T00:00:00.000Z";
    let body = |lines: Value, tracking: &str| json!({"lineItems": lines, "shippedDate": super::iso(super::State::new().now_ms()), "shippingCarrierCode": "UPS", "trackingNumber": tracking});
    let empty = get(&base, &token, &path).await;
    assert_eq!(empty.body, json!({"fulfillments": [], "total": 0}));
    let refusals = [
        (body(json!([{"lineItemId": one, "quantity": 1}]), "1Z 999"), 32300),
        (json!({"lineItems": [{"lineItemId": one, "quantity": 1}], "trackingNumber": "1Z999"}), 32300),
        (
            body(json!([{"lineItemId": one, "quantity": 1}, {"lineItemId": one, "quantity": 1}]), "1Z999"),
            32210,
        ),
        (body(json!([{"lineItemId": "999", "quantity": 1}]), "1Z999"), 32200),
        (body(json!([{"lineItemId": one, "quantity": 3}]), "1Z999"), 32600),
        (
            json!({"lineItems": [{"lineItemId": one, "quantity": 1}], "shippedDate": "2001-01-01T00:00:00.000Z"}),
            32500,
        ),
        (json!({"lineItems": [{"lineItemId": one, "quantity": 1}], "shippedDate": shipped}), 32500),
    ];
    for (body, id) in refusals {
        let answer = post(&base, &token, &path, &body).await;
        assert_eq!((answer.status, answer.error_id()), (400, id), "{body}: {}", answer.body);
    }
    let created =
        post(&base, &token, &path, &body(json!([{"lineItemId": one, "quantity": 1}]), "1Z999AA1")).await;
    assert_eq!((created.status, &created.body), (201, &Value::Null));
    assert_eq!(created.header("location"), Some(format!("{base}{path}/1Z999AA1").as_str()));
    let order = sim.order(ACME, &id).unwrap_or_default();
    assert_eq!(order["orderFulfillmentStatus"], "IN_PROGRESS");
    assert_eq!(order["lineItems"][0]["lineItemFulfillmentStatus"], "IN_PROGRESS");
    let again =
        post(&base, &token, &path, &body(json!([{"lineItemId": one, "quantity": 1}]), "1Z999AA1")).await;
    assert_eq!((again.status, again.error_id()), (400, 34500));
    let too_many =
        post(&base, &token, &path, &body(json!([{"lineItemId": one, "quantity": 2}]), "SECOND")).await;
    assert_eq!(too_many.error_id(), 32600, "only one unit is left");
    sim.lose_next_fulfillment_answers(ACME, 1);
    let lost = post(
        &base,
        &token,
        &path,
        &body(json!([{"lineItemId": one, "quantity": 1}, {"lineItemId": two, "quantity": 1}]), "LOST1"),
    )
    .await;
    assert_eq!(lost.status, 502);
    let listed = get(&base, &token, &path).await;
    assert_eq!(listed.body["total"], 2);
    assert_eq!(listed.body["fulfillments"][1]["fulfillmentId"], "LOST1");
    let order = sim.order(ACME, &id).unwrap_or_default();
    assert_eq!(order["orderFulfillmentStatus"], "FULFILLED");
    assert_eq!(order["lineItems"][1]["lineItemFulfillmentStatus"], "FULFILLED");
    assert_eq!(sim.tracking_numbers(ACME), ["1Z999AA1", "LOST1"]);
    assert_eq!(sim.fulfillments(ACME, &id).len(), 2);
    let hub = sim.add_order(
        ACME,
        NewOrder { ebay_supported: true, ..NewOrder::ready(&[("MUG-BLU", 1), ("TEA-GRN", 1)]) },
    );
    let hub_lines = sim.order(ACME, &hub).unwrap_or_default()["lineItems"].clone();
    let both = json!([{"lineItemId": hub_lines[0]["lineItemId"], "quantity": 1}, {"lineItemId": hub_lines[1]["lineItemId"], "quantity": 1}]);
    let gsp = post(
        &base,
        &token,
        &format!("/sell/fulfillment/v1/order/{hub}/shipping_fulfillment"),
        &body(both, "GSP1"),
    )
    .await;
    assert_eq!((gsp.status, gsp.error_id()), (400, 34300), "several Global Shipping Program lines at once");
    let unknown = get(&base, &token, "/sell/fulfillment/v1/order/01-00000-00000/shipping_fulfillment").await;
    assert_eq!((unknown.status, unknown.error_id()), (400, 32100));
    let unfulfilled = get(
        &base,
        &token,
        &format!(
            "/sell/fulfillment/v1/order?filter={}",
            "orderfulfillmentstatus:%7BNOT_STARTED%7CIN_PROGRESS%7D"
        ),
    )
    .await;
    assert_eq!(
        unfulfilled.body["total"], 1,
        "the fulfilled order left the status filter, the hub order stays"
    );
    assert_eq!(unfulfilled.body["orders"][0]["orderId"], hub.as_str());
}
