//! The Amazon simulator's stock path over real HTTP: participations, the listings lookups,
//! the feed cycle with its presigned URLs and gzipped reports, the feed document rules held
//! against Amazon's JSON Schema; and every exchange held to Amazon's models by the vendored
//! validator.

use std::io::Read as _;

use serde_json::{Value, json};

use super::sim_tests::{Answer, client, get, post, send, start};
use super::{FeedEnd, Listing, Operation, Simulator};

fn schema(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(super::vendor::file(name)).expect("the vendored schema");
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).expect("a valid schema")
}

fn document(seller: &str, messages: Value) -> Value {
    json!({"header": {"sellerId": seller, "version": "2.0", "issueLocale": "en_US"}, "messages": messages})
}

fn patch(id: i64, sku: &str, product_type: &str, quantity: i64) -> Value {
    json!({"messageId": id, "sku": sku, "operationType": "PATCH", "productType": product_type,
           "patches": [{"op": "merge", "path": "/attributes/fulfillment_availability",
                        "value": [{"fulfillment_channel_code": "DEFAULT", "quantity": quantity}]}]})
}

/// Uploads `body` as a feed and submits it: the feed id.
async fn submit(sim: &Simulator, token: &str, body: &[u8]) -> String {
    let created = post(
        sim,
        token,
        "/feeds/2021-06-30/documents",
        &json!({"contentType": "application/json; charset=UTF-8"}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let upload = created.body["url"].as_str().unwrap();
    assert!(upload.contains("X-Amz-Expires=300"));
    let put = send(
        client().put(upload).header("Content-Type", "application/json; charset=UTF-8").body(body.to_vec()),
    )
    .await;
    assert_eq!(put.status, 200);
    let feed = post(
        sim,
        token,
        "/feeds/2021-06-30/feeds",
        &json!({"feedType": "JSON_LISTINGS_FEED",
        "marketplaceIds": ["ATVPDKIKX0DER"], "inputFeedDocumentId": created.body["feedDocumentId"]}),
    )
    .await;
    assert_eq!(feed.status, 202, "{}", feed.body);
    feed.body["feedId"].as_str().unwrap().to_string()
}

/// The processing report of a processed feed, through getFeedDocument and its URL.
async fn report(sim: &Simulator, token: &str, feed: &Answer) -> Value {
    let id = feed.body["resultFeedDocumentId"].as_str().expect("a result document");
    let document = get(sim, token, &format!("/feeds/2021-06-30/documents/{id}")).await;
    assert_eq!(document.body["compressionAlgorithm"], "GZIP");
    let download = send(client().get(document.body["url"].as_str().unwrap())).await;
    assert_eq!(download.status, 200);
    let mut text = String::new();
    flate2::read::GzDecoder::new(download.bytes.as_slice()).read_to_string(&mut text).expect("gzip");
    serde_json::from_str(&text).expect("a JSON report")
}

#[tokio::test]
async fn participations_list_the_marketplaces_with_their_participation() {
    let (sim, seller, token) = start().await;
    let answer = get(&sim, &token, "/sellers/v1/marketplaceParticipations").await;
    assert_eq!(answer.body["payload"][0]["marketplace"]["id"], "ATVPDKIKX0DER");
    assert_eq!(answer.body["payload"][0]["storeName"], "Acme Mugs");
    assert_eq!(
        answer.body["payload"][0]["participation"],
        json!({"isParticipating": true, "hasSuspendedListings": false})
    );
    sim.set_participation(&seller.seller_id, "ATVPDKIKX0DER", false);
    let answer = get(&sim, &token, "/sellers/v1/marketplaceParticipations").await;
    assert_eq!(answer.body["payload"][0]["participation"]["isParticipating"], false);
}

#[tokio::test]
async fn listings_are_looked_up_by_sku_with_default_or_amazon_availability_within_amazons_limits() {
    let (sim, seller, token) = start().await;
    let s = seller.seller_id.as_str();
    sim.add_listing(s, Listing::mfn("MUG,XL", "DRINKING_CUP", 4));
    let base = format!("/listings/2021-08-01/items/{s}?marketplaceIds=ATVPDKIKX0DER");
    let wanted = "identifiers=SKU-0001,FBA-0007,NOPE-1&identifiersType=SKU&includedData=summaries,fulfillmentAvailability&pageSize=20";
    let found = get(&sim, &token, &format!("{base}&{wanted}")).await;
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(found.body["numberOfResults"], 2);
    let items = found.body["items"].as_array().unwrap();
    assert_eq!(items[0]["fulfillmentAvailability"][0]["fulfillmentChannelCode"], "AMAZON_NA");
    assert_eq!(items[1]["sku"], "SKU-0001");
    assert_eq!(items[1]["fulfillmentAvailability"][0]["fulfillmentChannelCode"], "DEFAULT");
    assert_eq!(items[1]["summaries"][0]["marketplaceId"], "ATVPDKIKX0DER");
    assert!(items[1]["summaries"][0]["productType"].is_string());
    let twenty_one = (0..21).map(|i| format!("SKU-{i:04}")).collect::<Vec<_>>().join(",");
    let cases = [
        format!("{base}&identifiers={twenty_one}&identifiersType=SKU"),
        format!("{base}&identifiers=SKU-0001&identifiersType=SKU&pageSize=21"),
        format!("{base}&identifiers=SKU-0001"),
        format!("/listings/2021-08-01/items/{s}?identifiers=SKU-0001&identifiersType=SKU"),
    ];
    for target in cases {
        let answer = get(&sim, &token, &target).await;
        assert_eq!(
            (answer.status, answer.body["errors"][0]["code"].as_str()),
            (400, Some("InvalidInput")),
            "{target}"
        );
    }
    // Pages of the whole list, and the ping's one-item page.
    let page = get(&sim, &token, &format!("{base}&includedData=summaries&pageSize=1")).await;
    assert_eq!(
        (page.body["numberOfResults"].as_u64(), page.body["items"].as_array().map(Vec::len)),
        (Some(41), Some(1))
    );
    assert!(page.body["pagination"]["nextToken"].is_string());
    let one = get(&sim, &token, &format!("/listings/2021-08-01/items/{s}/MUG%2CXL?marketplaceIds=ATVPDKIKX0DER&includedData=summaries,fulfillmentAvailability")).await;
    assert_eq!((one.status, one.body["sku"].as_str()), (200, Some("MUG,XL")));
    assert_eq!(one.body["fulfillmentAvailability"][0]["quantity"], 4);
    let none =
        get(&sim, &token, &format!("/listings/2021-08-01/items/{s}/NOPE-1?marketplaceIds=ATVPDKIKX0DER"))
            .await;
    assert_eq!((none.status, none.body["errors"][0]["code"].as_str()), (404, Some("NotFound")));
}

#[tokio::test]
async fn a_feed_is_queued_then_done_in_order_applies_quantities_by_merge_and_reports_errors() {
    let (sim, seller, token) = start().await;
    let s = seller.seller_id.as_str();
    let mut mug = Listing::mfn("MUG-BLU", "DRINKING_CUP", 20);
    mug.restock_date = Some("2026-12-24".into());
    sim.add_listing(s, mug);
    sim.add_listing(s, Listing::mfn("TEA-GRN", "TEA", 3));
    let first = document(
        s,
        json!([
            patch(1, "MUG-BLU", "DRINKING_CUP", 17),
            patch(2, "NOPE-1", "TEA", 3),
            patch(3, "TEA-GRN", "DRINKING_CUP", 9)
        ]),
    );
    let first_id = submit(&sim, &token, first.to_string().as_bytes()).await;
    let second_id = submit(
        &sim,
        &token,
        document(s, json!([patch(1, "MUG-BLU", "DRINKING_CUP", 12)])).to_string().as_bytes(),
    )
    .await;
    let read = |id: String| {
        let (sim, token) = (&sim, &token);
        async move { get(sim, token, &format!("/feeds/2021-06-30/feeds/{id}")).await }
    };
    assert_eq!(read(second_id.clone()).await.body["processingStatus"], "IN_QUEUE");
    assert_eq!(sim.listing(s, "MUG-BLU").unwrap().quantity, 20);
    // The second feed's turn processes the first before it: the later level wins.
    let second = read(second_id).await;
    assert_eq!(second.body["processingStatus"], "DONE", "{}", second.body);
    let mug = sim.listing(s, "MUG-BLU").unwrap();
    assert_eq!(
        (mug.quantity, mug.handling_time, mug.restock_date.as_deref()),
        (12, Some(2), Some("2026-12-24"))
    );
    assert_eq!(sim.listing(s, "TEA-GRN").unwrap().quantity, 3, "a wrong product type changes nothing");
    let first = read(first_id).await;
    assert_eq!(first.body["processingStatus"], "DONE");
    let report = report(&sim, &token, &first).await;
    let errors = schema("listings-feed-processing-report-schema-v2.json");
    assert!(errors.is_valid(&report), "{report}");
    let refused: Vec<&str> =
        report["issues"].as_array().unwrap().iter().map(|i| i["sku"].as_str().unwrap()).collect();
    assert_eq!(refused, ["NOPE-1", "TEA-GRN"]);
    assert!(report["issues"].as_array().unwrap().iter().all(|i| i["severity"] == "ERROR"));
    assert_eq!(
        report["summary"],
        json!({"errors": 2, "warnings": 0, "messagesProcessed": 3, "messagesAccepted": 1, "messagesInvalid": 2})
    );
    assert_eq!(sim.feeds(s)[0].document.as_ref().unwrap()["messages"][0]["sku"], "MUG-BLU");
}

#[tokio::test]
async fn feeds_end_fatal_for_a_document_without_a_header_and_on_request_and_urls_expire() {
    let (sim, seller, token) = start().await;
    let s = seller.seller_id.as_str();
    sim.hold_feeds(s, 0);
    let broken = submit(&sim, &token, b"{\"messages\": []}").await;
    let answer = get(&sim, &token, &format!("/feeds/2021-06-30/feeds/{broken}")).await;
    assert_eq!(answer.body["processingStatus"], "FATAL");
    let text = submit(&sim, &token, b"quantity,17").await;
    assert_eq!(
        get(&sim, &token, &format!("/feeds/2021-06-30/feeds/{text}")).await.body["processingStatus"],
        "FATAL"
    );
    sim.hold_feeds(s, 3);
    let held =
        submit(&sim, &token, document(s, json!([patch(1, "SKU-0001", "TEA", 1)])).to_string().as_bytes())
            .await;
    assert!(sim.end_feed(s, &held, FeedEnd::Cancelled));
    assert_eq!(
        get(&sim, &token, &format!("/feeds/2021-06-30/feeds/{held}")).await.body["processingStatus"],
        "CANCELLED"
    );
    let fatal =
        submit(&sim, &token, document(s, json!([patch(1, "SKU-0001", "TEA", 1)])).to_string().as_bytes())
            .await;
    assert!(sim.end_feed(s, &fatal, FeedEnd::Fatal));
    assert_eq!(
        get(&sim, &token, &format!("/feeds/2021-06-30/feeds/{fatal}")).await.body["processingStatus"],
        "FATAL"
    );
    // A feed type the simulator does not take, a document never uploaded, an unknown feed.
    let other = post(
        &sim,
        &token,
        "/feeds/2021-06-30/feeds",
        &json!({"feedType": "POST_INVENTORY_AVAILABILITY_DATA",
        "marketplaceIds": ["ATVPDKIKX0DER"], "inputFeedDocumentId": "x"}),
    )
    .await;
    assert_eq!(other.status, 400);
    let created = post(
        &sim,
        &token,
        "/feeds/2021-06-30/documents",
        &json!({"contentType": "application/json; charset=UTF-8"}),
    )
    .await;
    let empty = post(
        &sim,
        &token,
        "/feeds/2021-06-30/feeds",
        &json!({"feedType": "JSON_LISTINGS_FEED",
        "marketplaceIds": ["ATVPDKIKX0DER"], "inputFeedDocumentId": created.body["feedDocumentId"]}),
    )
    .await;
    assert_eq!(empty.status, 400);
    assert_eq!(get(&sim, &token, "/feeds/2021-06-30/feeds/1").await.status, 404);
    // The upload URL is signed for the document's content type.
    let url = created.body["url"].as_str().unwrap();
    let plain = send(client().put(url).header("Content-Type", "text/plain").body("{}")).await;
    assert_eq!(plain.status, 403);
    assert!(String::from_utf8_lossy(&plain.bytes).contains("SignatureDoesNotMatch"));
    // Five minutes later the upload URL is refused.
    sim.set_clock_skew(301);
    let late =
        send(client().put(url).header("Content-Type", "application/json; charset=UTF-8").body("{}")).await;
    assert_eq!(late.status, 403);
    assert!(String::from_utf8_lossy(&late.bytes).contains("Request has expired"));
    assert_eq!(sim.requests(Operation::Upload), 6);
}

#[test]
fn the_feed_document_rules_agree_with_amazons_schema() {
    let schema = schema("listings-feed-schema-v2.json");
    let good = patch(1, "MUG-BLU", "DRINKING_CUP", 17);
    let with = |f: &dyn Fn(&mut Value)| {
        let mut m = good.clone();
        f(&mut m);
        m
    };
    let messages = [
        good.clone(),
        with(&|m| m["messageId"] = json!(0)),
        with(&|m| m["sku"] = json!("")),
        with(&|m| m["operationType"] = json!("UPSERT")),
        with(&|m| m["attributes"] = json!({"item_name": [{"value": "Mug"}]})),
        with(&|m| m["patches"] = json!([])),
        with(&|m| m["patches"][0]["op"] = json!("move")),
        with(&|m| m["patches"][0]["value"] = json!(17)),
        with(&|m| {
            m.as_object_mut().unwrap().remove("productType");
        }),
        json!({"messageId": 2, "sku": "MUG-BLU", "operationType": "DELETE"}),
        json!({"messageId": 2, "sku": "MUG-BLU", "operationType": "DELETE", "productType": "TEA"}),
        json!({"messageId": 3, "sku": "A", "operationType": "UPDATE", "productType": "TEA", "attributes": {"x": [1]}}),
        json!({"messageId": 3, "sku": "A", "operationType": "PARTIAL_UPDATE", "productType": "TEA", "requirements": "LISTING", "attributes": {"x": [1]}}),
    ];
    for m in messages {
        let doc = document("A2EXAMPLE12345", json!([m.clone()]));
        let ours =
            super::feed_check::check_envelope(&doc).is_ok() && super::feed_check::check_message(&m).is_none();
        assert_eq!(ours, schema.is_valid(&doc), "{m}");
    }
    let envelopes = [
        json!({"messages": [good.clone()]}),
        json!({"header": {"sellerId": "A2EXAMPLE12345", "version": "1.0"}, "messages": [good.clone()]}),
        json!({"header": {"sellerId": "A2EXAMPLE12345", "version": "2.0"}, "messages": []}),
        json!({"header": {"version": "2.0"}, "messages": [good.clone()]}),
        json!({"header": {"sellerId": "A2EXAMPLE12345", "version": "2.0"}, "messages": [good]}),
    ];
    for doc in envelopes {
        assert_eq!(super::feed_check::check_envelope(&doc).is_ok(), schema.is_valid(&doc), "{doc}");
    }
}
