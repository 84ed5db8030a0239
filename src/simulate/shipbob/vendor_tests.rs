//! The annex's examples and the simulator held to ShipBob's own file, read as its README says
//! ([`super::vendor`]): every example block of `spec/platforms/shipbob.md` §9 validates, and
//! every request sent here and every answer the simulator gives, over every operation and
//! every status it answers, follows the file.

use serde_json::{Value, json};

use super::sim_tests::{TOKEN, bearer, call, create, get, order_body};
use super::vendor::{description, problems};
use super::{AutoShip, Operation, Parcel, Simulator};
use crate::simulate::openapi_check::Exchange;

fn exchange(method: &str, path: &str, status: u16, body: Vec<u8>, answer_body: Vec<u8>) -> Exchange {
    let json = vec![("Content-Type".to_string(), "application/json".to_string())];
    let mut headers = vec![
        ("Authorization".into(), "Bearer pat-example".into()),
        ("shipbob_channel_id".into(), "128944".into()),
    ];
    if !body.is_empty() {
        headers.extend(json.clone());
    }
    Exchange {
        method: method.into(),
        path: path.into(),
        query: Vec::new(),
        headers,
        body,
        status,
        answer_headers: if answer_body.is_empty() { Vec::new() } else { json },
        answer_body,
    }
}

/// The annex's example blocks: (info string, JSON text).
fn annex_blocks() -> Vec<(String, String)> {
    let annex = crate::simulate::shared_files::shared("spec/platforms/shipbob.md");
    let text = std::fs::read_to_string(&annex).unwrap_or_else(|e| panic!("{}: {e}", annex.display()));
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) if info.starts_with("json shipbob-") => {
                open = Some((info.to_string(), String::new()))
            }
            (Some(_), Some("")) => blocks.extend(open.take()),
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

#[test]
fn every_example_of_the_annex_follows_shipbobs_file() {
    let blocks = annex_blocks();
    assert!(blocks.len() >= 8, "the annex's examples were not found ({})", blocks.len());
    for (info, text) in blocks {
        let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{info}: not JSON: {e}"));
        let words: Vec<&str> = info.split_whitespace().collect();
        let (kind, method) = words[1].split_once('=').unwrap();
        let path = words[2].replace("{orderId}", "200417");
        let body = value.to_string().into_bytes();
        let found = match kind {
            "shipbob-request" => {
                description().check_parts(&exchange(method, &path, 201, body, Vec::new()), true, false)
            }
            _ => {
                let status = words[3].strip_prefix("status=").and_then(|s| s.parse().ok()).unwrap();
                description().check_parts(&exchange(method, &path, status, Vec::new(), body), false, true)
            }
        };
        assert!(found.is_empty(), "{info}:\n{}", found.join("\n"));
    }
}

#[test]
fn a_request_or_answer_that_breaks_the_file_is_reported() {
    let mut product = order_body("ob-1");
    product["products"][0]["colour"] = json!("blue");
    let mut no_name = order_body("ob-1");
    no_name["products"][0].as_object_mut().unwrap().remove("name");
    for body in [product, no_name] {
        let found = description().check_parts(
            &exchange("POST", "/2026-01/order", 201, body.to_string().into_bytes(), Vec::new()),
            true,
            false,
        );
        assert!(!found.is_empty(), "{body}");
    }
    let answer = json!({"items": [{"inventory_id": "5501", "sku": "MUG"}], "next": null});
    let found = description().check_parts(
        &exchange("GET", "/2026-01/inventory-level", 200, Vec::new(), answer.to_string().into_bytes()),
        false,
        true,
    );
    assert!(!found.is_empty());
    let mut listed = exchange("GET", "/2026-01/order", 200, Vec::new(), b"[]".to_vec());
    listed.query = vec![("Limit".into(), "2.5".into())];
    assert!(!description().check(&listed).is_empty(), "Limit is a whole number");
    listed.query = vec![("Sortorder".into(), "Oldest".into()), ("IDs".into(), "1,x".into())];
    let found = description().check(&listed);
    assert!(found.len() == 1 && found[0].contains("IDs"), "{found:?}");
}

/// A request the test sends on purpose against the file (to see the simulator refuse it):
/// its request side must be reported, and its answer must still follow the file.
fn refused_on_purpose(exchange: &Exchange) -> Vec<String> {
    let request = description().check_parts(exchange, true, false);
    assert!(!request.is_empty(), "{} was meant to break the file", exchange.line());
    description().check_parts(exchange, false, true)
}

#[tokio::test]
async fn every_operation_and_status_of_the_simulator_follows_shipbobs_file() {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    sim.add_store_channel(TOKEN, "ShipBobs-Shopify-Store");
    sim.generate_inventory(TOKEN, 12, 5);
    sim.add_foreign_orders(TOKEN, 2, 9);
    sim.record_exchanges();
    let auth = bearer();
    let sma = channels.sma.to_string();
    let with_channel = [("Authorization", auth.as_str()), ("shipbob_channel_id", sma.as_str())];

    assert_eq!(get(&sim, "/2026-01/channel").await.status, 200);
    assert_eq!(get(&sim, "/2026-01/channel?RecordsPerPage=2").await.status, 200);
    let created = create(&sim, channels.sma, &order_body("ob-1")).await;
    assert_eq!(created.status, 201);
    let id = created.body["id"].as_i64().unwrap();
    assert_eq!(create(&sim, channels.sma, &order_body("ob-1")).await.status, 422);
    assert_eq!(create(&sim, channels.default, &order_body("ob-2")).await.status, 403);
    sim.refuse_create(TOKEN, "ob-3", 400);
    assert_eq!(create(&sim, channels.sma, &order_body("ob-3")).await.status, 400);
    let second = create(&sim, channels.sma, &order_body("ob-4")).await.body["id"].as_i64().unwrap();
    let third = create(&sim, channels.sma, &order_body("ob-5")).await.body["id"].as_i64().unwrap();
    sim.ship_units(TOKEN, id, &[("SKU-0001", 2)], Parcel::default()).unwrap();
    sim.ship_order(TOKEN, id, Parcel::default()).unwrap();
    sim.hold_in_exception(TOKEN, second);
    let voided = sim.ship_order(TOKEN, third, Parcel::default()).unwrap();
    sim.void_label(TOKEN, voided.shipment_id);
    sim.set_auto_ship(Some(AutoShip { split_one_in: 1, ..AutoShip::immediately() }));
    create(&sim, channels.sma, &order_body("ob-6")).await;

    let walk = "LastTrackingUpdateStartDate=2020-01-01T00:00:00Z&SortOrder=Oldest&Limit=2";
    for page in 1..=4 {
        let answer =
            call(&sim, "GET", &format!("/2026-01/order?{walk}&Page={page}"), &with_channel, None).await;
        assert_eq!(answer.status, 200);
    }
    for query in [
        "ReferenceIds=ob-1,ob-4",
        &format!("IDs={id},{second}"),
        "HasTracking=true&lastupdatestartdate=2020-01-01T00:00:00Z",
        "StartDate=2020-01-01T00:00:00Z&IsTrackingUploaded=false",
    ] {
        assert_eq!(
            call(&sim, "GET", &format!("/2026-01/order?{query}"), &with_channel, None).await.status,
            200
        );
    }
    assert_eq!(call(&sim, "GET", &format!("/2026-01/order/{id}"), &with_channel, None).await.status, 200);
    assert_eq!(call(&sim, "GET", "/2026-01/order/123", &with_channel, None).await.status, 404);
    let cancel = |id: i64| format!("/2026-01/order/{id}:cancel");
    assert_eq!(
        call(&sim, "POST", &cancel(id), &[("Authorization", &auth)], None).await.body["status"],
        "Failure"
    );
    assert_eq!(
        call(&sim, "POST", &cancel(second), &[("Authorization", &auth)], None).await.body["status"],
        "Success"
    );
    assert_eq!(call(&sim, "POST", &cancel(second), &[("Authorization", &auth)], None).await.status, 422);
    assert_eq!(call(&sim, "POST", &cancel(77), &[("Authorization", &auth)], None).await.status, 404);
    let mut target = "/2026-01/inventory-level?PageSize=5".to_string();
    for _ in 0..5 {
        let page = get(&sim, &target).await;
        match page.body["next"].as_str() {
            Some(next) => target = next.to_string(),
            None => break,
        }
    }
    assert_eq!(get(&sim, "/2026-01/inventory-level?PageSize=900").await.status, 400);
    sim.rate_limit_next(TOKEN, 1, 3);
    assert_eq!(get(&sim, "/2026-01/order").await.status, 429);
    sim.fail_next(TOKEN, Some(Operation::GetOrders), 503, 1);
    assert_eq!(get(&sim, "/2026-01/order").await.status, 503);
    for path in ["/2026-01/channel", "/2026-01/order", "/2026-01/inventory-level"] {
        assert_eq!(
            call(&sim, "GET", path, &[("Authorization", "Bearer not-a-token")], None).await.status,
            401
        );
    }

    let mut found = problems(&sim.exchanges());
    // Sent against the file on purpose: no channel header, and a Limit above 250.
    let headerless =
        call(&sim, "POST", "/2026-01/order", &[("Authorization", &auth)], Some(&order_body("ob-7"))).await;
    assert_eq!(headerless.status, 400);
    assert_eq!(get(&sim, "/2026-01/order?Limit=251").await.status, 400);
    let mut bad = order_body("ob-8");
    bad["recipient"]["address"].as_object_mut().unwrap().remove("country");
    assert_eq!(create(&sim, channels.sma, &bad).await.status, 400);
    let exchanges = sim.exchanges();
    for exchange in &exchanges[exchanges.len() - 3..] {
        found.extend(refused_on_purpose(exchange));
    }
    let statuses: std::collections::BTreeSet<u16> = exchanges.iter().map(|e| e.status).collect();
    assert_eq!(statuses.into_iter().collect::<Vec<_>>(), vec![200, 201, 400, 401, 403, 404, 422, 429, 503]);
    assert!(found.is_empty(), "{}", found.join("\n"));
}
