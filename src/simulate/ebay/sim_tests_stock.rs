//! The eBay simulator's Inventory API over real HTTP: items, the bulk lookup's 207 with 25702,
//! offers, bulk updates of item and offer, the one-SKU mode and the daily revisions.

use serde_json::json;

use super::inventory::DAILY_REVISIONS;
use super::sim_tests::{ACME, get, post, started};

const LOOKUP: &str = "/sell/inventory/v1/bulk_get_inventory_item";
const UPDATE: &str = "/sell/inventory/v1/bulk_update_price_quantity";

#[tokio::test]
async fn items_and_the_bulk_lookup() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    let none = get(&base, &token, "/sell/inventory/v1/inventory_item?limit=1&offset=0").await;
    assert_eq!((none.status, none.body["total"].as_i64()), (200, Some(0)));
    sim.add_item(ACME, "MUG-BLU", 20);
    sim.add_item(ACME, "MUG-RED", 9);
    sim.add_seller_hub_listing(ACME, "LEGACY-1", 5);
    let items = get(&base, &token, "/sell/inventory/v1/inventory_item?limit=1&offset=0").await;
    assert_eq!((items.body["total"].as_i64(), items.body["size"].as_i64()), (Some(2), Some(1)));
    assert!(items.body["next"].is_string());
    let body = json!({"requests": [{"sku": "MUG-BLU"}, {"sku": "LEGACY-1"}, {"sku": "MUG-RED"}]});
    let mixed = post(&base, &token, LOOKUP, &body).await;
    assert_eq!(mixed.status, 207);
    let responses = &mixed.body["responses"];
    assert_eq!(responses[0]["inventoryItem"]["availability"]["shipToLocationAvailability"]["quantity"], 20);
    assert_eq!(
        (responses[1]["statusCode"].as_i64(), responses[1]["errors"][0]["errorId"].as_i64()),
        (Some(404), Some(25702))
    );
    assert_eq!(responses[1]["errors"][0]["message"], "SKU LEGACY-1 is not available in the system");
    let known = post(&base, &token, LOOKUP, &json!({"requests": [{"sku": "MUG-RED"}]})).await;
    assert_eq!(known.status, 200);
    let many: Vec<_> = (0..26).map(|i| json!({"sku": format!("S{i}")})).collect();
    let refused = post(&base, &token, LOOKUP, &json!({"requests": many})).await;
    assert_eq!((refused.status, refused.error_id()), (400, 25727));
}

#[tokio::test]
async fn offers_and_the_bulk_update() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    let blue = sim.add_item(ACME, "MUG-BLU", 20);
    let gb = sim.add_offer(ACME, "MUG-BLU", "EBAY_GB", false);
    let offers = get(&base, &token, "/sell/inventory/v1/offer?sku=MUG-BLU").await;
    assert_eq!((offers.status, offers.body["total"].as_i64()), (200, Some(2)));
    assert_eq!(offers.body["offers"][0]["status"], "PUBLISHED");
    assert!(offers.body["offers"][0]["listing"]["listingId"].is_string());
    assert_eq!(offers.body["offers"][1]["status"], "UNPUBLISHED");
    let unknown = get(&base, &token, "/sell/inventory/v1/offer?sku=NOPE").await;
    assert_eq!((unknown.status, unknown.error_id()), (404, 25713));
    sim.add_item(ACME, "TEA", 3);
    let body = json!({"requests": [
        {"sku": "MUG-BLU", "shipToLocationAvailability": {"quantity": 17},
         "offers": [{"offerId": blue, "availableQuantity": 17}, {"offerId": gb, "availableQuantity": 17}]},
        {"sku": "TEA", "shipToLocationAvailability": {"quantity": 0}}]});
    let updated = post(&base, &token, UPDATE, &body).await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(
        updated.body["responses"].as_array().map(Vec::len),
        Some(3),
        "one per offer, one per SKU without"
    );
    assert_eq!(updated.body["responses"][0], json!({"statusCode": 200, "sku": "MUG-BLU", "offerId": blue}));
    assert_eq!((sim.item_quantity(ACME, "MUG-BLU"), sim.offer_quantity(ACME, &blue)), (Some(17), Some(17)));
    assert_eq!((sim.listed_quantity(ACME, "MUG-BLU"), sim.item_quantity(ACME, "TEA")), (Some(17), Some(0)));
    sim.add_seller_hub_listing(ACME, "LEGACY-1", 5);
    let hub = post(
        &base,
        &token,
        UPDATE,
        &json!({"requests": [{"sku": "LEGACY-1", "shipToLocationAvailability": {"quantity": 1}}]}),
    )
    .await;
    assert_eq!((hub.status, hub.body["responses"][0]["errors"][0]["errorId"].as_i64()), (207, Some(25702)));
    sim.one_sku_per_call(true);
    let two = post(&base, &token, UPDATE, &body).await;
    assert_eq!((two.status, two.error_id()), (400, 25002));
    let one =
        json!({"requests": [{"sku": "MUG-BLU", "offers": [{"offerId": blue, "availableQuantity": 4}]}]});
    assert_eq!(post(&base, &token, UPDATE, &one).await.status, 200);
    assert_eq!(sim.listed_quantity(ACME, "MUG-BLU"), Some(4), "the smaller of item and offer");
}

#[tokio::test]
async fn a_listing_takes_250_revisions_a_day() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    let offer = sim.add_item(ACME, "MUG-BLU", 20);
    for n in 1..DAILY_REVISIONS {
        sim.lock().accounts.get_mut(ACME).map(|a| {
            let listing = a.offers[0].listing_id.clone().unwrap_or_default();
            a.revisions.insert((listing, super::day(super::State::new().now_ms())), n)
        });
    }
    let body = |q: i64| {
        json!({"requests": [{"sku": "MUG-BLU", "shipToLocationAvailability": {"quantity": q},
                                             "offers": [{"offerId": offer, "availableQuantity": q}]}]})
    };
    assert_eq!(post(&base, &token, UPDATE, &body(5)).await.status, 200, "the 250th");
    let refused = post(&base, &token, UPDATE, &body(6)).await;
    assert_eq!(refused.status, 207);
    let entry = &refused.body["responses"][0];
    assert_eq!(
        (entry["statusCode"].as_i64(), entry["errors"][0]["errorId"].as_i64()),
        (Some(400), Some(25002))
    );
    assert_eq!(entry["offerId"], offer.as_str());
    assert_eq!(sim.listed_quantity(ACME, "MUG-BLU"), Some(5), "nothing changed");
}
