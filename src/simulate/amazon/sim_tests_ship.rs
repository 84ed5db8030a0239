//! The Amazon simulator's shipment confirmations, the controls that move orders on, token
//! buckets, faults, the skewed clock and the demo's orders, over real HTTP.

use std::time::Duration;

use serde_json::{Value, json};

use super::sim_tests::{self, get, post, start};
use super::{NewOrder, Operation, OrderStatus};

fn confirmation(reference: &str, carrier: &str, lines: &[(&str, u32)]) -> Value {
    let items: Vec<Value> = lines.iter().map(|(id, n)| json!({"orderItemId": id, "quantity": n})).collect();
    json!({"marketplaceId": "ATVPDKIKX0DER",
           "packageDetail": {"packageReferenceId": reference, "carrierCode": carrier, "shippingMethod": "Ground",
                             "trackingNumber": format!("TRK-{reference}"), "shipDate": "2026-11-26T15:04:05.000Z",
                             "orderItems": items}})
}

fn confirm_path(order_id: &str) -> String {
    format!("/orders/v0/orders/{order_id}/shipmentConfirmation")
}

#[tokio::test]
async fn a_confirmation_adds_a_package_the_same_reference_edits_it_and_quantities_move() {
    let (sim, seller, token) = start().await;
    let id = sim.add_order(&seller.seller_id, NewOrder::mfn(&[("SKU-0001", 2), ("SKU-0002", 1)]));
    let before = sim.order(&seller.seller_id, &id).unwrap();
    let (mug, tea) = (before.items[0].0.clone(), before.items[1].0.clone());
    sim.set_clock_skew(5);
    let first = post(&sim, &token, &confirm_path(&id), &confirmation("57", "UPS", &[(&mug, 2)])).await;
    assert_eq!((first.status, first.bytes.len()), (204, 0));
    assert!(first.header("x-amzn-ratelimit-limit").is_some());
    let after = sim.order(&seller.seller_id, &id).unwrap();
    assert_eq!(after.status, "PARTIALLY_SHIPPED");
    assert!(after.last_updated > before.last_updated);
    assert_eq!(after.items[0].3, 2);
    // The same shipment again (a crash before the commit): the package is edited.
    let again = post(&sim, &token, &confirm_path(&id), &confirmation("57", "UPS", &[(&mug, 2)])).await;
    assert_eq!(again.status, 204, "{}", again.body);
    let after = sim.order(&seller.seller_id, &id).unwrap();
    assert_eq!(after.packages.len(), 1);
    assert_eq!(after.packages[0].confirmations, 2);
    let other = confirmation("58", "Other", &[(&tea, 1)]);
    let mut other = other.clone();
    other["packageDetail"]["carrierName"] = json!("Speedy Freight Ltd");
    assert_eq!(post(&sim, &token, &confirm_path(&id), &other).await.status, 204);
    let done = sim.order(&seller.seller_id, &id).unwrap();
    assert_eq!((done.status, done.packages.len()), ("SHIPPED", 2));
    assert_eq!(done.packages[1].carrier, "Speedy Freight Ltd");
    let read =
        get(&sim, &token, &format!("/orders/2026-01-01/orders/{id}?includedData=FULFILLMENT,PACKAGES")).await;
    let packages = read.body["order"]["packages"].as_array().unwrap();
    assert_eq!(packages.len(), 2);
    assert_eq!(packages[0]["packageItems"], json!([{"orderItemId": mug, "quantity": 2}]));
    assert_eq!(read.body["order"]["orderItems"][1]["fulfillment"]["quantityUnfulfilled"], 0);
    // Nothing is left to ship.
    let more = post(&sim, &token, &confirm_path(&id), &confirmation("59", "UPS", &[(&tea, 1)])).await;
    assert_eq!(more.status, 400);
}

#[tokio::test]
async fn a_confirmation_amazon_would_refuse_is_answered_400_and_changes_nothing() {
    let (sim, seller, token) = start().await;
    let id = sim.add_order(&seller.seller_id, NewOrder::mfn(&[("SKU-0001", 2)]));
    let item = sim.order(&seller.seller_id, &id).unwrap().items[0].0.clone();
    let good = confirmation("7", "UPS", &[(&item, 1)]);
    let change = |pointer: &str, value: Value| {
        let mut body = good.clone();
        *body.pointer_mut(pointer).unwrap() = value;
        body
    };
    let cases = [
        (change("/packageDetail/packageReferenceId", json!("0")), "a zero reference"),
        (change("/packageDetail/packageReferenceId", json!("ob-7")), "a reference that is not numeric"),
        (change("/packageDetail/carrierCode", json!("Speedy")), "an unknown carrier code"),
        (change("/packageDetail/carrierCode", json!("Other")), "Other without carrierName"),
        (change("/packageDetail/shipDate", json!("26/11/2026")), "a date that is not ISO 8601"),
        (change("/packageDetail/trackingNumber", json!("")), "no tracking number"),
        (change("/packageDetail/orderItems", json!([])), "no items"),
        (
            change("/packageDetail/orderItems", json!([{"orderItemId": item, "quantity": 3}])),
            "too many units",
        ),
        (
            change("/packageDetail/orderItems", json!([{"orderItemId": "99999999999999", "quantity": 1}])),
            "another item",
        ),
        (change("/marketplaceId", json!("A1PA6795UKMFR9")), "another marketplace"),
        (json!({"marketplaceId": "ATVPDKIKX0DER"}), "no packageDetail"),
    ];
    for (body, why) in cases {
        let answer = post(&sim, &token, &confirm_path(&id), &body).await;
        assert_eq!(answer.status, 400, "{why}: {}", answer.body);
        assert_eq!(answer.body["errors"][0]["code"], "InvalidInput", "{why}");
    }
    assert!(sim.order(&seller.seller_id, &id).unwrap().packages.is_empty());
    let fba = sim.add_order(&seller.seller_id, NewOrder::mfn(&[("FBA-0007", 1)]).fba());
    let cancelled =
        sim.add_order(&seller.seller_id, NewOrder::mfn(&[("SKU-0003", 1)]).status(OrderStatus::Cancelled));
    for order in [fba, cancelled] {
        let line = sim.order(&seller.seller_id, &order).unwrap().items[0].0.clone();
        let answer =
            post(&sim, &token, &confirm_path(&order), &confirmation("8", "USPS", &[(&line, 1)])).await;
        assert_eq!(answer.status, 400, "{order}: {}", answer.body);
    }
    let unknown = post(&sim, &token, &confirm_path("113-0000000-0000000"), &good).await;
    assert_eq!((unknown.status, unknown.body["errors"][0]["code"].as_str()), (404, Some("NotFound")));
    assert_eq!(post(&sim, &token, &confirm_path(&id), &good).await.status, 204);
}

#[tokio::test]
async fn orders_move_on_request_and_an_easy_ship_package_appears_without_a_confirmation() {
    let (sim, seller, token) = start().await;
    let s = seller.seller_id.as_str();
    let pending = sim.add_order(s, NewOrder::mfn(&[("SKU-0001", 1)]).status(OrderStatus::Pending));
    let before = sim.order(s, &pending).unwrap().last_updated;
    sim.set_clock_skew(10);
    sim.set_order_status(s, &pending, OrderStatus::Unshipped).unwrap();
    let now = sim.order(s, &pending).unwrap();
    assert_eq!(now.status, "UNSHIPPED");
    assert!(now.last_updated > before);
    sim.set_order_status(s, &pending, OrderStatus::Cancelled).unwrap();
    assert_eq!(sim.order(s, &pending).unwrap().status, "CANCELLED");
    assert!(sim.set_order_status(s, &pending, OrderStatus::Unshipped).is_err());
    let easy =
        sim.add_order(s, NewOrder::mfn(&[("SKU-0002", 2), ("SKU-0003", 1)]).program("AMAZON_EASY_SHIP"));
    let package = sim.ship_by_amazon(s, &easy).unwrap();
    assert_eq!((package.confirmations, package.items.len()), (0, 2));
    let read =
        get(&sim, &token, &format!("/orders/2026-01-01/orders/{easy}?includedData=FULFILLMENT,PACKAGES"))
            .await;
    assert_eq!(read.body["order"]["fulfillment"]["fulfillmentStatus"], "SHIPPED");
    assert_eq!(read.body["order"]["packages"][0]["trackingNumber"], json!(package.tracking_number));
    assert_eq!(read.body["order"]["programs"], json!(["AMAZON_EASY_SHIP"]));
    assert!(sim.ship_by_amazon(s, &easy).is_err());
}

#[tokio::test]
async fn a_lost_answer_is_applied_and_a_delayed_package_shows_after_n_reads() {
    let (sim, seller, token) = start().await;
    let s = seller.seller_id.as_str();
    let id = sim.add_order(s, NewOrder::mfn(&[("SKU-0001", 1)]));
    let item = sim.order(s, &id).unwrap().items[0].0.clone();
    sim.lose_confirmations(s, 1);
    sim.delay_packages(s, 2);
    let lost = post(&sim, &token, &confirm_path(&id), &confirmation("41", "FedEx", &[(&item, 1)])).await;
    assert_eq!(lost.status, 502);
    assert_eq!(sim.order(s, &id).unwrap().packages.len(), 1, "applied before the answer was lost");
    let path = format!("/orders/2026-01-01/orders/{id}?includedData=FULFILLMENT,PACKAGES");
    for read in 1..=2 {
        let answer = get(&sim, &token, &path).await;
        assert_eq!(answer.body["order"]["packages"], json!([]), "read {read}");
        assert_eq!(answer.body["order"]["fulfillment"]["fulfillmentStatus"], "UNSHIPPED");
        assert_eq!(answer.body["order"]["orderItems"][0]["fulfillment"]["quantityUnfulfilled"], 1);
    }
    let shown = get(&sim, &token, &path).await;
    assert_eq!(shown.body["order"]["packages"][0]["packageReferenceId"], "41");
    // Sent again, it is the same package.
    let again = post(&sim, &token, &confirm_path(&id), &confirmation("41", "FedEx", &[(&item, 1)])).await;
    assert_eq!(again.status, 204);
    let packages = sim.order(s, &id).unwrap().packages;
    assert_eq!((packages.len(), packages[0].confirmations), (1, 2));
}

#[tokio::test]
async fn buckets_and_faults_answer_429_quota_exceeded_without_retry_after_and_5xx() {
    let (sim, seller, token) = start().await;
    let s = seller.seller_id.as_str();
    let path = "/sellers/v1/marketplaceParticipations";
    sim.set_rate(s, Operation::GetMarketplaceParticipations, 0.016, 2);
    for _ in 0..2 {
        let answer = get(&sim, &token, path).await;
        assert_eq!((answer.status, answer.header("x-amzn-ratelimit-limit")), (200, Some("0.016")));
    }
    let quota = json!({"errors": [{"code": "QuotaExceeded", "message": "You exceeded your quota for the requested resource.", "details": ""}]});
    let refused = get(&sim, &token, path).await;
    assert_eq!((refused.status, refused.body.clone()), (429, quota.clone()));
    assert!(refused.header("retry-after").is_none());
    // Other operations have their own buckets.
    let search =
        "/orders/2026-01-01/orders?lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER";
    assert_eq!(get(&sim, &token, search).await.status, 200);
    sim.use_amazon_rates(s);
    assert_eq!(get(&sim, &token, search).await.header("x-amzn-ratelimit-limit"), Some("0.0056"));
    sim.fail_next(s, Some(Operation::SearchOrders), 429, 1);
    sim.fail_next(s, Some(Operation::SearchOrders), 503, 1);
    sim.fail_next(s, Some(Operation::SearchOrders), 500, 1);
    // A fault for another operation does not fire here.
    assert_eq!(get(&sim, &token, path).await.status, 200);
    assert_eq!(get(&sim, &token, search).await.body, quota);
    assert_eq!(get(&sim, &token, search).await.status, 503);
    assert_eq!(get(&sim, &token, search).await.status, 500);
    assert_eq!(get(&sim, &token, search).await.status, 200);
    assert_eq!(sim.requests(Operation::SearchOrders), 6);
    assert_eq!(sim.sp_api_requests(), 10);
}

#[tokio::test]
async fn the_clock_skew_moves_the_date_header_and_the_demo_adds_orders_with_an_fba_one() {
    let (sim, seller, token) = start().await;
    let path = "/sellers/v1/marketplaceParticipations";
    let date = |answer: &super::sim_tests::Answer| {
        httpdate::parse_http_date(answer.header("date").unwrap())
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    };
    let real = date(&get(&sim, &token, path).await);
    sim.set_clock_skew(-3600);
    let skewed = date(&get(&sim, &token, path).await);
    assert!((real - skewed - 3600).abs() <= 5, "{real} {skewed}");
    sim.set_clock_skew(0);
    sim.set_demo(Some(Duration::from_secs(60)));
    assert!(sim.order_ids(&seller.seller_id).is_empty());
    // Four demo intervals later (on the simulator's clock), the next request finds them.
    sim.set_clock_skew(4 * 60 + 1);
    let fresh = sim_tests::token(&sim, &seller).await;
    assert_eq!(get(&sim, &fresh, path).await.status, 200);
    let ids = sim.order_ids(&seller.seller_id);
    assert_eq!(ids.len(), 4);
    let fba = ids.iter().filter(|id| sim.order(&seller.seller_id, id).unwrap().fulfilled_by_amazon).count();
    assert_eq!(fba, 1);
}
