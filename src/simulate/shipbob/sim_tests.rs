//! The ShipBob simulator's behaviour over real HTTP: creates and their refusals, shipping by
//! itself and on request, the order list's filters and pages, cancels, inventory, and faults.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{AutoShip, Carrier, Operation, Parcel, Simulator};

pub(super) const TOKEN: &str = "pat-sim-test-0123456789";

/// An answer: status, headers (names in lower case), body as JSON (`Null` when empty).
pub(super) struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// One request on a fresh loopback connection. `target` is the path and query.
pub(super) async fn call(
    sim: &Simulator,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Answer {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = tokio::net::TcpStream::connect(sim.addr()).await.expect("connect to the simulator");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("an answer")
        .unwrap();
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let body = if body.is_empty() { Value::Null } else { serde_json::from_str(body).expect("a JSON answer") };
    Answer { status, headers, body }
}

pub(super) fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

pub(super) fn order_body(reference: &str) -> Value {
    json!({"reference_id": reference, "order_number": "101", "type": "DTC", "shipping_method": "UPS Ground",
           "purchase_date": "2026-11-28T09:12:40Z",
           "recipient": {"name": "Jane Doe", "email": "jane@example.com", "phone_number": "512-555-0100",
               "address": {"address1": "455 Main Street", "address2": "Suite 4", "city": "Austin",
                           "state": "Texas", "zip_code": "78751", "country": "US"}},
           "products": [{"reference_id": "SKU-0001", "name": "Blue mug", "quantity": 2, "unit_price": 12.5},
                        {"reference_id": "SKU-0002", "name": "Green tea", "quantity": 1}]})
}

pub(super) async fn create(sim: &Simulator, channel: i64, body: &Value) -> Answer {
    let channel = channel.to_string();
    let auth = bearer();
    call(
        sim,
        "POST",
        "/2026-01/order",
        &[("Authorization", &auth), ("shipbob_channel_id", &channel)],
        Some(body),
    )
    .await
}

pub(super) async fn get(sim: &Simulator, target: &str) -> Answer {
    let auth = bearer();
    call(sim, "GET", target, &[("Authorization", &auth)], None).await
}

#[tokio::test]
async fn a_create_answers_201_with_one_processing_shipment_and_commits_its_units() {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    sim.generate_inventory(TOKEN, 5, 7);
    let before = sim.fulfillable(TOKEN, "SKU-0001");
    let created = create(&sim, channels.sma, &order_body("ob-5")).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["status"], "Processing");
    assert_eq!(created.body["shipments"].as_array().map(Vec::len), Some(1));
    assert_eq!(created.body["shipments"][0]["status"], "Processing");
    assert!(created.body["shipments"][0].get("tracking").is_none());
    assert!(created.header("x-remaining-calls").is_some() && created.header("date").is_some());
    assert_eq!(sim.fulfillable(TOKEN, "SKU-0001"), before - 2);
    // The same reference again, and channels that may not write orders.
    let again = create(&sim, channels.sma, &order_body("ob-5")).await;
    assert_eq!(
        (again.status, again.body.clone()),
        (422, json!({"": ["Cannot insert order with existing ReferenceId"]}))
    );
    assert_eq!(create(&sim, channels.default, &order_body("ob-6")).await.status, 403);
    let auth = bearer();
    let headerless =
        call(&sim, "POST", "/2026-01/order", &[("Authorization", &auth)], Some(&order_body("ob-6"))).await;
    assert_eq!(headerless.status, 400);
    assert_eq!(sim.order_count(TOKEN), 1);
}

#[tokio::test]
async fn bodies_the_file_refuses_are_refused_with_the_member_that_is_wrong() {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    type Change = fn(&mut Value);
    let cases: [(&str, Change, &str); 7] = [
        ("no reference", |b| drop(b.as_object_mut().unwrap().remove("reference_id")), "ReferenceId"),
        (
            "no country",
            |b| drop(b["recipient"]["address"].as_object_mut().unwrap().remove("country")),
            "Recipient.Address.Country",
        ),
        ("blank city", |b| b["recipient"]["address"]["city"] = json!(""), "Recipient.Address.City"),
        ("no products", |b| b["products"] = json!([]), "Products"),
        ("zero units", |b| b["products"][0]["quantity"] = json!(0), "Products[0].Quantity"),
        ("an unknown member", |b| b["company"] = json!("x"), "Company"),
        ("a bad type", |b| b["type"] = json!("Retail"), "Type"),
    ];
    for (what, change, member) in cases {
        let mut body = order_body("ob-9");
        change(&mut body);
        let answer = create(&sim, channels.sma, &body).await;
        assert_eq!(answer.status, 400, "{what}: {}", answer.body);
        assert!(
            answer.body.get(member).and_then(Value::as_array).is_some_and(|m| !m.is_empty()),
            "{what}: {}",
            answer.body
        );
    }
    assert_eq!(sim.order_count(TOKEN), 0);
}

#[tokio::test]
async fn orders_ship_by_themselves_with_tracking_of_their_carriers_form() {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    sim.generate_inventory(TOKEN, 5, 7);
    sim.set_auto_ship(Some(AutoShip::immediately()));
    let id = create(&sim, channels.sma, &order_body("ob-1")).await.body["id"].as_i64().unwrap();
    let order = get(&sim, &format!("/2026-01/order/{id}")).await.body;
    assert_eq!(order["status"], "Fulfilled");
    let shipment = &order["shipments"][0];
    assert_eq!(shipment["status"], "Completed");
    let number = shipment["tracking"]["tracking_number"].as_str().unwrap();
    let form = match shipment["tracking"]["carrier"].as_str().unwrap() {
        "USPS" => number.len() == 22 && number.starts_with("9400"),
        "UPS" => number.len() == 18 && number.starts_with("1Z"),
        "FedEx" => number.len() == 12,
        "DHL Express" => number.len() == 10,
        other => panic!("carrier {other}"),
    };
    assert!(form && number.chars().skip(2).all(|c| c.is_ascii_digit()), "{number}");
    assert!(shipment["measurements"]["total_weight_oz"].as_i64().unwrap() > 0);
    assert_eq!(shipment["last_tracking_update_at"], shipment["last_update_at"]);
    assert_eq!(shipment["products"][0]["inventory_items"][0]["quantity"], 2);
    // Shipped units leave the shelf and are no longer committed.
    assert_eq!(sim.fulfillable(TOKEN, "SKU-0002"), {
        let levels = get(&sim, "/2026-01/inventory-level?PageSize=250").await.body;
        levels["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["sku"] == "SKU-0002")
            .map(|i| i["total_on_hand_quantity"].as_i64().unwrap())
            .sum::<i64>()
    });
}

#[tokio::test]
async fn shipping_on_request_splits_orders_and_moves_their_status_on() {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    let id = create(&sim, channels.sma, &order_body("ob-2")).await.body["id"].as_i64().unwrap();
    sim.hold_in_exception(TOKEN, id);
    assert_eq!(sim.order_status(TOKEN, id), Some("Exception"));
    let parcel = Parcel { carrier: Some(Carrier::Ups), tracking_number: Some("1Z999AA10123456784".into()) };
    let first = sim.ship_units(TOKEN, id, &[("SKU-0001", 2)], parcel).unwrap();
    assert_eq!((first.carrier, first.tracking_number.as_str()), ("UPS", "1Z999AA10123456784"));
    assert_eq!(sim.order_status(TOKEN, id), Some("PartiallyFulfilled"));
    assert!(sim.ship_units(TOKEN, id, &[("SKU-0002", 5)], Parcel::default()).is_err());
    let second = sim
        .ship_order(TOKEN, id, Parcel { carrier: Some(Carrier::DhlExpress), ..Parcel::default() })
        .unwrap();
    assert_eq!(sim.order_status(TOKEN, id), Some("Fulfilled"));
    let order = get(&sim, &format!("/2026-01/order/{id}")).await.body;
    let shipments = order["shipments"].as_array().unwrap();
    assert_eq!(shipments.len(), 2);
    assert!(shipments.iter().all(|s| s["products"].as_array().unwrap().len() == 1));
    assert!(sim.void_label(TOKEN, second.shipment_id));
    let order = get(&sim, &format!("/2026-01/order/{id}")).await.body;
    let voided = order["shipments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == second.shipment_id)
        .unwrap()
        .clone();
    assert_eq!(voided["status"], "Cancelled");
    assert_eq!(order["status"], "Fulfilled", "the other parcel is all that is left, and it shipped");
}

#[tokio::test]
async fn the_list_filters_by_tracking_time_and_pages_in_creation_order() {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    let mut ids = Vec::new();
    for n in 0..5 {
        ids.push(
            create(&sim, channels.sma, &order_body(&format!("ob-{n}"))).await.body["id"].as_i64().unwrap(),
        );
    }
    // Shipped in reverse, so tracking time and creation disagree.
    for id in ids.iter().skip(1).rev() {
        sim.ship_order(TOKEN, *id, Parcel::default()).unwrap();
    }
    let listed = |answer: &Answer| -> Vec<i64> {
        answer.body.as_array().unwrap().iter().map(|o| o["id"].as_i64().unwrap()).collect()
    };
    let all = get(&sim, "/2026-01/order").await;
    assert_eq!(listed(&all), ids.iter().rev().copied().collect::<Vec<_>>(), "Newest by default");
    let since = "2000-01-01T00:00:00Z";
    let page1 = get(
        &sim,
        &format!("/2026-01/order?LastTrackingUpdateStartDate={since}&SortOrder=Oldest&Limit=2&Page=1"),
    )
    .await;
    let page2 = get(
        &sim,
        &format!("/2026-01/order?lasttrackingupdatestartdate={since}&sortorder=oldest&limit=2&page=2"),
    )
    .await;
    assert_eq!(
        [listed(&page1), listed(&page2)].concat(),
        ids[1..].to_vec(),
        "only tracked orders, by creation"
    );
    let future = get(&sim, "/2026-01/order?LastTrackingUpdateStartDate=2999-01-01T00:00:00Z").await;
    assert_eq!(listed(&future), Vec::<i64>::new());
    let by_reference = get(&sim, "/2026-01/order?ReferenceIds=ob-3,ob-0").await;
    assert_eq!(listed(&by_reference), vec![ids[3], ids[0]]);
    assert_eq!(listed(&get(&sim, &format!("/2026-01/order?IDs={}", ids[2])).await), vec![ids[2]]);
    assert_eq!(listed(&get(&sim, "/2026-01/order?HasTracking=false").await), vec![ids[0]]);
    assert_eq!(get(&sim, "/2026-01/order?Limit=251").await.status, 400);
    assert_eq!(get(&sim, "/2026-01/order?Limit=0").await.status, 400);
    assert_eq!(get(&sim, "/2026-01/order/999").await.status, 404);
}

#[tokio::test]
async fn a_cancel_succeeds_before_anything_ships_and_fails_with_reasons_after() {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    sim.add_inventory(TOKEN, "SKU-0001", "Blue mug", 50);
    let before = sim.fulfillable(TOKEN, "SKU-0001");
    let open = create(&sim, channels.sma, &order_body("ob-1")).await.body["id"].as_i64().unwrap();
    let shipped = create(&sim, channels.sma, &order_body("ob-2")).await.body["id"].as_i64().unwrap();
    sim.ship_order(TOKEN, shipped, Parcel::default()).unwrap();
    let auth = bearer();
    let cancel = |id: i64| format!("/2026-01/order/{id}:cancel");
    let done = call(&sim, "POST", &cancel(open), &[("Authorization", &auth)], None).await;
    assert_eq!((done.status, done.body["status"].clone()), (200, json!("Success")));
    assert_eq!(sim.order_status(TOKEN, open), Some("Cancelled"));
    assert_eq!(
        sim.fulfillable(TOKEN, "SKU-0001"),
        before - 2,
        "the cancelled order's units are free again; the shipped one's left"
    );
    let refused = call(&sim, "POST", &cancel(shipped), &[("Authorization", &auth)], None).await;
    assert_eq!(refused.body["status"], "Failure");
    assert_eq!(refused.body["canceled_shipment_results"][0]["reason"], "Shipment is already labeled");
    assert_eq!(sim.order_status(TOKEN, shipped), Some("Fulfilled"));
    assert_eq!(call(&sim, "POST", &cancel(open), &[("Authorization", &auth)], None).await.status, 422);
    assert_eq!(call(&sim, "POST", &cancel(4242), &[("Authorization", &auth)], None).await.status, 404);
}

#[tokio::test]
async fn inventory_pages_follow_next_links_to_every_item_once() {
    let sim = Simulator::start().await;
    sim.add_account(TOKEN);
    sim.generate_inventory(TOKEN, 40, 3);
    let mut target = "/2026-01/inventory-level?PageSize=7".to_string();
    let mut seen = Vec::new();
    for _ in 0..20 {
        let page = get(&sim, &target).await;
        assert_eq!(page.status, 200);
        assert!(page.body["items"].as_array().unwrap().len() <= 7);
        seen.extend(
            page.body["items"].as_array().unwrap().iter().map(|i| i["inventory_id"].as_i64().unwrap()),
        );
        match page.body["next"].as_str() {
            Some(next) => target = next.to_string(),
            None => break,
        }
    }
    let mut unique = seen.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!((seen.len(), unique.len()), (41, 41));
    assert_eq!(get(&sim, "/2026-01/inventory-level?PageSize=251").await.status, 400);
}

#[tokio::test]
async fn faults_answer_as_shipbob_does_and_requests_are_counted() {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    sim.rate_limit_next(TOKEN, 1, 7);
    let limited = get(&sim, "/2026-01/channel").await;
    assert_eq!(
        (limited.status, limited.header("x-retry-after"), limited.header("x-remaining-calls")),
        (429, Some("7"), Some("0"))
    );
    sim.fail_next(TOKEN, Some(Operation::CreateOrder), 503, 1);
    assert_eq!(get(&sim, "/2026-01/order").await.status, 200, "a fault waits for its operation");
    assert_eq!(create(&sim, channels.sma, &order_body("ob-1")).await.status, 503);
    assert_eq!(sim.order_count(TOKEN), 0);
    sim.lose_answers(TOKEN, Operation::CreateOrder, 1);
    assert_eq!(create(&sim, channels.sma, &order_body("ob-1")).await.status, 502);
    assert!(sim.order_by_reference(TOKEN, "ob-1").is_some(), "applied, its answer lost");
    sim.duplicate_next_create(TOKEN);
    assert_eq!(create(&sim, channels.sma, &order_body("ob-2")).await.status, 422);
    assert!(sim.order_by_reference(TOKEN, "ob-2").is_some());
    sim.refuse_create(TOKEN, "ob-3", 400);
    sim.refuse_create(TOKEN, "ob-4", 422);
    assert_eq!(create(&sim, channels.sma, &order_body("ob-3")).await.status, 400);
    assert_eq!(create(&sim, channels.sma, &order_body("ob-4")).await.status, 422);
    assert!(sim.order_by_reference(TOKEN, "ob-4").is_none());
    sim.set_rate_limit(TOKEN, 7);
    let answers = [get(&sim, "/2026-01/order").await, get(&sim, "/2026-01/order").await];
    assert_eq!(answers[0].status, 200, "the window held six requests, the 429 aside");
    assert_eq!(answers[1].status, 429);
    assert!(
        answers[1]
            .header("x-retry-after")
            .and_then(|s| s.parse::<u64>().ok())
            .is_some_and(|s| (1..=60).contains(&s))
    );
    sim.set_rate_limit(TOKEN, 150);
    sim.revoke_token(TOKEN);
    assert_eq!(get(&sim, "/2026-01/order").await.status, 401);
    let inventory = get(&sim, "/2026-01/inventory-level").await;
    assert_eq!((inventory.status, inventory.body["status"].clone()), (401, json!(401)));
    assert_eq!(sim.requests(Operation::CreateOrder), 5);
    assert_eq!(sim.requests(Operation::GetChannels), 1);
    assert_eq!(sim.total_requests(), 11);
}

#[tokio::test]
async fn foreign_orders_sit_beside_ours_and_ship_like_them() {
    let sim = Simulator::start().await;
    sim.add_account(TOKEN);
    let foreign = sim.add_foreign_orders(TOKEN, 4, 11);
    let channels = get(&sim, "/2026-01/channel").await.body;
    assert_eq!(channels["items"].as_array().unwrap().len(), 3);
    for id in &foreign {
        sim.ship_order(TOKEN, *id, Parcel::default()).unwrap();
    }
    let listed = get(&sim, "/2026-01/order?HasTracking=true").await.body;
    let references: Vec<&str> =
        listed.as_array().unwrap().iter().map(|o| o["reference_id"].as_str().unwrap()).collect();
    assert_eq!(references.len(), 4);
    assert!(references.iter().any(|r| r.starts_with("ob-")) && references.iter().any(|r| r.starts_with('#')));
}
