//! The seeded order mix of annex §8: the same seed gives the same orders, every kind the
//! annex lists is among them, and 100,000 ready orders are added quickly.

use std::time::Duration;

use serde_json::Value;

use super::Simulator;

#[tokio::test]
async fn the_seeded_mix_is_deterministic_and_varied() {
    let sim = Simulator::start().await;
    sim.add_orders("a", 300, 7);
    sim.add_orders("b", 300, 7);
    let orders = |seller: &str| -> Vec<Value> {
        sim.order_ids(seller).iter().filter_map(|id| sim.order(seller, id)).collect()
    };
    let (a, b) = (orders("a"), orders("b"));
    let shape = |o: &Value| (o["orderPaymentStatus"].clone(), o["lineItems"].as_array().map(Vec::len));
    assert_eq!(a.iter().map(shape).collect::<Vec<_>>(), b.iter().map(shape).collect::<Vec<_>>());
    let has = |f: &dyn Fn(&Value) -> bool| a.iter().any(f);
    assert!(has(&|o| o["orderPaymentStatus"] == "PENDING"));
    assert!(has(&|o| o["cancelStatus"]["cancelState"] == "CANCELED"));
    assert!(has(&|o| o["cancelStatus"]["cancelState"] == "IN_PROGRESS"));
    assert!(has(&|o| o["orderPaymentStatus"] == "PARTIALLY_REFUNDED"));
    for kind in ["DIGITAL", "PREPARE_FOR_PICKUP", "FULFILLED_BY_EBAY"] {
        assert!(
            has(&|o| o["fulfillmentStartInstructions"][0]["fulfillmentInstructionsType"] == kind),
            "{kind}"
        );
    }
    assert!(has(&|o| o["fulfillmentStartInstructions"][0]["ebaySupportedFulfillment"] == true));
    assert!(has(&|o| o
        .pointer("/fulfillmentStartInstructions/0/shippingStep/shipTo/contactAddress")
        .is_some_and(|a| a.get("addressLine1").is_none())));
    assert!(has(&|o| o["lineItems"].as_array().is_some_and(|l| l.len() > 1)));
    assert!(has(&|o| o["lineItems"][0].get("variationAspects").is_some()));
    assert!(has(&|o| o["pricingSummary"]["total"]["currency"] == "EUR"));
    let importable = a
        .iter()
        .filter(|o| o["orderPaymentStatus"] == "PAID" && o["cancelStatus"]["cancelState"] == "NONE_REQUESTED")
        .count();
    assert!(importable > 200, "{importable}");
    let started = std::time::Instant::now();
    sim.add_ready_orders("big", 100_000);
    assert_eq!(sim.order_ids("big").len(), 100_000);
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let token = super::sim_tests::token(&sim, &super::Seller::new("big")).await;
    let walk = "/sell/fulfillment/v1/order?filter=orderfulfillmentstatus:%7BNOT_STARTED%7CIN_PROGRESS%7D&limit=200&offset=99800";
    let started = std::time::Instant::now();
    let page = super::sim_tests::get(&sim.api_base(), &token, walk).await;
    assert_eq!(
        (page.body["total"].as_i64(), page.body["orders"].as_array().map(Vec::len)),
        (Some(100_000), Some(200))
    );
    assert!(started.elapsed() < Duration::from_secs(2), "a page of 100,000 took {:?}", started.elapsed());
}
