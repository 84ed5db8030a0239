//! Every SP-API operation the simulator serves, in every status it answers, held to Amazon's
//! vendored models by `shared/vendor/amazon/validate_requests.py --exchanges`.
//!
//! Every answer of every operation held to Amazon's models: by the Rust checker of the
//! Swagger models ([`super::vendor`]) always, and by Amazon's own `validate_requests.py`
//! where python3 has jsonschema.

use serde_json::json;

use super::sim_tests::{client, get, post, send, start};
use super::vendor;
use super::{NewOrder, Operation, Simulator};

async fn drive(sim: &Simulator, seller: &str, token: &str) {
    sim.generate_orders(seller, 60, 17);
    let search = "/orders/2026-01-01/orders?lastUpdatedAfter=2020-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER&includedData=BUYER,RECIPIENT,PROCEEDS,FULFILLMENT,PACKAGES&maxResultsPerPage=25";
    let mut next: Option<String> = None;
    for _ in 0..10 {
        let target = match &next {
            None => search.to_string(),
            Some(t) => format!(
                "{search}&paginationToken={}",
                percent_encoding::utf8_percent_encode(t, percent_encoding::NON_ALPHANUMERIC)
            ),
        };
        let page = get(sim, token, &target).await;
        assert_eq!(page.status, 200);
        next = page.body["pagination"]["nextToken"].as_str().map(str::to_string);
        if next.is_none() {
            break;
        }
    }
    let created = "/orders/2026-01-01/orders?createdAfter=2020-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER&fulfilledBy=AMAZON";
    assert_eq!(get(sim, token, created).await.status, 200);
    assert_eq!(
        get(sim, token, "/orders/2026-01-01/orders?lastUpdatedAfter=2020-01-01T00:00:00Z").await.status,
        400
    );
    assert_eq!(get(sim, "Atza|nope", search).await.status, 403);
    sim.fail_next(seller, Some(Operation::SearchOrders), 429, 1);
    sim.fail_next(seller, Some(Operation::SearchOrders), 500, 1);
    sim.fail_next(seller, Some(Operation::SearchOrders), 503, 1);
    for status in [429, 500, 503] {
        assert_eq!(get(sim, token, search).await.status, status);
    }
    let id =
        sim.add_order(seller, NewOrder::mfn(&[("SKU-0001", 2)]).gift("Enjoy").signature().program("PRIME"));
    let item = sim.order(seller, &id).unwrap().items[0].0.clone();
    let order =
        format!("/orders/2026-01-01/orders/{id}?includedData=BUYER,RECIPIENT,PROCEEDS,FULFILLMENT,PACKAGES");
    assert_eq!(get(sim, token, &order).await.status, 200);
    assert_eq!(get(sim, token, "/orders/2026-01-01/orders/113-0000000-0000000").await.status, 404);
    let confirm = |reference: &str, units: u32| {
        json!({"marketplaceId": "ATVPDKIKX0DER", "packageDetail": {"packageReferenceId": reference, "carrierCode": "UPS",
               "shippingMethod": "UPS Ground", "trackingNumber": "1Z999AA10123456784", "shipDate": "2026-11-26T15:04:05.000Z",
               "orderItems": [{"orderItemId": item, "quantity": units}]}})
    };
    let path = format!("/orders/v0/orders/{id}/shipmentConfirmation");
    assert_eq!(post(sim, token, &path, &confirm("57", 3)).await.status, 400);
    assert_eq!(post(sim, token, &path, &confirm("57", 2)).await.status, 204);
    assert_eq!(
        post(sim, token, "/orders/v0/orders/113-0000000-0000000/shipmentConfirmation", &confirm("1", 1))
            .await
            .status,
        404
    );
    assert_eq!(get(sim, token, &order).await.status, 200);
    assert_eq!(get(sim, token, "/sellers/v1/marketplaceParticipations").await.status, 200);
    let listings = format!("/listings/2021-08-01/items/{seller}");
    let lookup = "?marketplaceIds=ATVPDKIKX0DER&identifiers=SKU-0001,FBA-0007&identifiersType=SKU&includedData=summaries,fulfillmentAvailability&pageSize=20";
    assert_eq!(get(sim, token, &format!("{listings}{lookup}")).await.status, 200);
    assert_eq!(
        get(
            sim,
            token,
            &format!("{listings}?marketplaceIds=ATVPDKIKX0DER&includedData=summaries&pageSize=1")
        )
        .await
        .status,
        200
    );
    assert_eq!(get(sim, token, &format!("{listings}?marketplaceIds=A1PA6795UKMFR9")).await.status, 400);
    assert_eq!(
        get(sim, token, "/listings/2021-08-01/items/A9SOMEONEELSE9?marketplaceIds=ATVPDKIKX0DER")
            .await
            .status,
        403
    );
    let one = "?marketplaceIds=ATVPDKIKX0DER&includedData=summaries,fulfillmentAvailability";
    assert_eq!(get(sim, token, &format!("{listings}/SKU-0001{one}")).await.status, 200);
    assert_eq!(get(sim, token, &format!("{listings}/MUG%2CXL{one}")).await.status, 404);
    let document = post(
        sim,
        token,
        "/feeds/2021-06-30/documents",
        &json!({"contentType": "application/json; charset=UTF-8"}),
    )
    .await;
    assert_eq!(document.status, 201);
    let feed = json!({"header": {"sellerId": seller, "version": "2.0", "issueLocale": "en_US"},
        "messages": [{"messageId": 1, "sku": "NOPE-1", "operationType": "PATCH", "productType": "TEA",
                      "patches": [{"op": "merge", "path": "/attributes/fulfillment_availability",
                                   "value": [{"fulfillment_channel_code": "DEFAULT", "quantity": 3}]}]}]});
    assert_eq!(
        send(
            client()
                .put(document.body["url"].as_str().unwrap())
                .header("Content-Type", "application/json; charset=UTF-8")
                .body(feed.to_string())
        )
        .await
        .status,
        200
    );
    let spec = json!({"feedType": "JSON_LISTINGS_FEED", "marketplaceIds": ["ATVPDKIKX0DER"], "inputFeedDocumentId": document.body["feedDocumentId"]});
    let created = post(sim, token, "/feeds/2021-06-30/feeds", &spec).await;
    assert_eq!(created.status, 202);
    let bad = json!({"feedType": "POST_PRODUCT_DATA", "marketplaceIds": ["ATVPDKIKX0DER"], "inputFeedDocumentId": "x"});
    assert_eq!(post(sim, token, "/feeds/2021-06-30/feeds", &bad).await.status, 400);
    let feed_path = format!("/feeds/2021-06-30/feeds/{}", created.body["feedId"].as_str().unwrap());
    assert_eq!(get(sim, token, &feed_path).await.body["processingStatus"], "IN_QUEUE");
    let done = get(sim, token, &feed_path).await;
    assert_eq!(done.body["processingStatus"], "DONE");
    let result =
        format!("/feeds/2021-06-30/documents/{}", done.body["resultFeedDocumentId"].as_str().unwrap());
    assert_eq!(get(sim, token, &result).await.status, 200);
    assert_eq!(get(sim, token, "/feeds/2021-06-30/documents/amzn1.tortuga.4.na.none").await.status, 404);
    assert_eq!(get(sim, token, "/feeds/2021-06-30/feeds/1").await.status, 404);
}

#[tokio::test]
async fn every_answer_of_every_operation_validates_against_amazons_models() {
    let (sim, seller, token) = start().await;
    sim.add_listing(&seller.seller_id, super::Listing::mfn("MUG-BLU", "DRINKING_CUP", 20));
    sim.record_exchanges();
    drive(&sim, &seller.seller_id, &token).await;
    let exchanges = sim.exchanges();
    let operations: std::collections::BTreeSet<Operation> =
        Operation::ALL.into_iter().filter(|op| op.is_sp_api() && sim.requests(*op) > 0).collect();
    assert_eq!(operations.len(), 10, "every SP-API operation was driven");
    assert!(exchanges.len() >= 30, "{} exchanges", exchanges.len());
    // The answers: the requests here include wrong ones on purpose.
    let problems: Vec<String> = exchanges.iter().flat_map(|e| vendor::check(e, false, true)).collect();
    assert!(problems.is_empty(), "Amazon's models refuse some answers:\n{}", problems.join("\n"));
}
