//! The simulated store behaves as BigCommerce does where the client and the demo rely on it:
//! filters, sorts with a direction, `204` for nothing, the request window's headers and its
//! 429, and refusals in each API family's error form.

use std::time::Duration;

use serde_json::Value;

use super::Simulator;

const HASH: &str = "simtest";
const TOKEN: &str = "sim-test-token-0123";

async fn store(orders: usize) -> Simulator {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    sim.add_orders(HASH, orders, 3);
    sim
}

struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

async fn get(sim: &Simulator, path_and_query: &str) -> Answer {
    let response = crate::platforms::http::client()
        .get(format!("{}/stores/{HASH}{path_and_query}", sim.base_url()))
        .header("X-Auth-Token", TOKEN)
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap();
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    let bytes = response.bytes().await.unwrap();
    let body = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap() };
    Answer { status, headers, body }
}

fn ids(answer: &Answer) -> Vec<i64> {
    answer.body.as_array().map_or(Vec::new(), |a| a.iter().map(|o| o["id"].as_i64().unwrap()).collect())
}

#[tokio::test]
async fn orders_sort_by_any_documented_key_in_either_direction() {
    let sim = store(5).await;
    let asc = ids(&get(&sim, "/v2/orders").await);
    assert_eq!(asc, [101, 102, 103, 104, 105], "by id by default");
    assert_eq!(ids(&get(&sim, "/v2/orders?sort=id:desc").await), [105, 104, 103, 102, 101]);
    assert_eq!(ids(&get(&sim, "/v2/orders?sort=date_created:desc&limit=2").await), [105, 104]);
    assert_eq!(ids(&get(&sim, "/v2/orders?sort=date_modified:desc&limit=2&page=2").await), [103, 102]);
    sim.touch_order(HASH, "101");
    assert_eq!(ids(&get(&sim, "/v2/orders?sort=date_modified:asc").await), [102, 103, 104, 105, 101]);
    assert_eq!(ids(&get(&sim, "/v2/orders?sort=date_modified").await), [102, 103, 104, 105, 101]);
    for bad in ["modified", "id:up", "id:desc:asc"] {
        let answer = get(&sim, &format!("/v2/orders?sort={bad}")).await;
        assert_eq!(answer.status, 400, "{bad}");
        assert!(answer.body[0]["message"].as_str().unwrap().contains("sort"), "{bad}: {}", answer.body);
    }
}

#[tokio::test]
async fn orders_are_filtered_by_status_ids_and_dates_in_either_format() {
    let sim = store(4).await;
    sim.cancel_order(HASH, "102");
    assert_eq!(ids(&get(&sim, "/v2/orders?status_id=5").await), [102]);
    assert_eq!(ids(&get(&sim, "/v2/orders?status_id=11&min_id=103").await), [103, 104]);
    assert_eq!(ids(&get(&sim, "/v2/orders?max_id=101").await), [101]);
    let all = get(&sim, "/v2/orders").await;
    let third = all.body[2]["date_modified"].as_str().unwrap().to_string();
    let rfc = third.replace('+', "%2B");
    assert_eq!(
        ids(&get(&sim, &format!("/v2/orders?min_date_modified={rfc}&max_id=104")).await),
        [102, 103, 104]
    );
    let at = time::OffsetDateTime::parse(&third, &time::format_description::well_known::Rfc2822).unwrap();
    let iso = at.format(&time::format_description::well_known::Rfc3339).unwrap().replace('+', "%2B");
    assert_eq!(
        ids(&get(&sim, &format!("/v2/orders?max_date_modified={iso}&status_id=11")).await),
        [101, 103]
    );
    let none = get(&sim, "/v2/orders?customer_id=999999").await;
    assert_eq!((none.status, &none.body), (204, &Value::Null), "an empty list is 204 No Content");
    for bad in ["min_date_modified=yesterday", "status_id=eleven", "limit=251", "page=0", "include=products"]
    {
        let answer = get(&sim, &format!("/v2/orders?{bad}")).await;
        assert_eq!(answer.status, 400, "{bad}");
        assert!(
            answer.body[0]["status"] == 400 && answer.body[0]["message"].is_string(),
            "{bad}: {}",
            answer.body
        );
    }
}

#[tokio::test]
async fn consignments_come_whole_only_with_the_object_structure() {
    let sim = store(1).await;
    let link = get(&sim, "/v2/orders/101?include=consignments.line_items").await;
    assert!(
        link.body["consignments"]["resource"].is_string(),
        "without consignment_structure: {}",
        link.body
    );
    let whole =
        get(&sim, "/v2/orders/101?include=consignments.line_items&consignment_structure=object").await;
    let shipping = &whole.body["consignments"]["shipping"][0];
    assert_eq!(shipping["id"], 1010);
    assert!(shipping["line_items"][0]["sku"].is_string(), "{shipping}");
    let links = get(&sim, "/v2/orders/101?include=consignments&consignment_structure=object").await;
    assert!(links.body["consignments"]["shipping"][0]["line_items"][0]["resource"].is_string());
    assert_eq!(get(&sim, "/v2/orders/7").await.status, 404);
}

#[tokio::test]
async fn a_spent_request_window_answers_429_with_when_it_resets() {
    let sim = store(1).await;
    sim.set_rate_limit(HASH, 2, Duration::from_secs(30));
    let first = get(&sim, "/v2/orders").await;
    assert_eq!(first.headers["x-rate-limit-requests-left"], "1");
    assert_eq!(first.headers["x-rate-limit-requests-quota"], "2");
    assert_eq!(first.headers["x-rate-limit-time-window-ms"], "30000");
    assert_eq!(get(&sim, "/v2/orders").await.headers["x-rate-limit-requests-left"], "0");
    let refused = get(&sim, "/v2/orders").await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.headers["x-rate-limit-requests-left"], "0");
    let reset: u64 = refused.headers["x-rate-limit-time-reset-ms"].to_str().unwrap().parse().unwrap();
    assert!(reset > 0 && reset <= 30_000, "{reset}");
}

#[tokio::test]
async fn inventory_reads_show_what_absolute_adjustments_set_and_refusals_are_problem_json() {
    let sim = store(0).await;
    let put = |body: Value| {
        crate::platforms::http::client()
            .put(format!("{}/stores/{HASH}/v3/inventory/adjustments/absolute", sim.base_url()))
            .header("X-Auth-Token", TOKEN)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
    };
    let ok = put(serde_json::json!({"items": [{"location_id": 1, "sku": "A", "quantity": 3},
                                              {"location_id": 1, "sku": "B", "quantity": 0}]}))
    .await
    .unwrap();
    assert_eq!(ok.status(), 200);
    let refused = put(serde_json::json!({"items": [{"location_id": 1, "sku": "C", "quantity": 1},
                                                   {"location_id": 2, "sku": "A", "quantity": 9}]}))
    .await
    .unwrap();
    assert_eq!(refused.status(), 422);
    assert_eq!(refused.headers()["content-type"], "application/problem+json");
    let problem: Value = serde_json::from_slice(&refused.bytes().await.unwrap()).unwrap();
    assert!(problem["status"] == 422 && problem["title"].as_str().unwrap().contains("location"), "{problem}");
    assert_eq!(sim.stock(HASH).get("C"), None, "nothing of a refused adjustment is set");

    let items = get(&sim, "/v3/inventory/items?sku:in=A,C").await;
    assert_eq!(items.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(items.body["data"][0]["locations"][0]["available_to_sell"], 3);
    assert_eq!(items.body["meta"]["pagination"]["total"], 1);
    let here = get(&sim, "/v3/inventory/locations/1/items?limit=1&page=2").await;
    assert_eq!(here.body["data"][0]["identity"]["sku"], "B");
    assert_eq!(here.body["meta"]["pagination"]["links"]["previous"], "?limit=1&page=1");
    let missing = get(&sim, "/v3/inventory/locations/2/items").await;
    assert_eq!(
        (missing.status, &missing.headers["content-type"]),
        (404, &"application/problem+json".parse().unwrap())
    );
}
