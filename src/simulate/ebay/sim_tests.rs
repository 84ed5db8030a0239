//! The eBay simulator over real HTTP (reqwest on loopback): the token endpoint's refusals,
//! access tokens and scopes, `getOrders`' grammar, errors and pages, the annex's example
//! answered back, shipping fulfillments, quotas, faults and the two environments.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Api, Fault, NewOrder, Operation, SCOPE_FULFILLMENT, SCOPE_INVENTORY, Seller, Simulator};

pub(super) const ACME: &str = "acme_mugs";
pub(super) const WINDOW: &str = "lastmodifieddate:%5B2026-11-25T10:15:00.000Z..2026-11-25T10:58:00.000Z%5D,orderfulfillmentstatus:%7BNOT_STARTED%7CIN_PROGRESS%7D";

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

    /// The first `errors[].errorId`.
    pub fn error_id(&self) -> i64 {
        self.body["errors"][0]["errorId"].as_i64().unwrap_or_default()
    }
}

fn client() -> reqwest::Client {
    crate::platforms::http::builder().build().expect("a client")
}

async fn send(request: reqwest::RequestBuilder) -> Answer {
    let response = request.send().await.expect("the simulator answers");
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_ascii_lowercase(), v.to_str().unwrap_or_default().to_string()))
        .collect();
    let bytes = response.bytes().await.expect("a body");
    Answer { status, headers, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
}

/// The token endpoint with these credentials and scopes, at `base`.
pub(super) async fn grant(base: &str, id: &str, secret: &str, refresh: &str, scopes: &[&str]) -> Answer {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"));
    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "refresh_token")
        .append_pair("refresh_token", refresh)
        .append_pair("scope", &scopes.join(" "))
        .finish();
    send(
        client()
            .post(format!("{base}/identity/v1/oauth2/token"))
            .header("Authorization", format!("Basic {basic}"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form),
    )
    .await
}

/// A seller's access token (both scopes asked unless the consent has fewer).
pub(super) async fn token(sim: &Simulator, seller: &Seller) -> String {
    let base = if seller.sandbox { sim.sandbox_base() } else { sim.api_base() };
    let scopes: Vec<&str> = seller.scopes.iter().map(String::as_str).collect();
    let answer = grant(&base, &seller.client_id, &seller.client_secret, &seller.refresh_token, &scopes).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body["access_token"].as_str().unwrap_or_default().to_string()
}

/// `GET {base}{target}` with the bearer token.
pub(super) async fn get(base: &str, token: &str, target: &str) -> Answer {
    send(client().get(format!("{base}{target}")).bearer_auth(token).header("Accept", "application/json"))
        .await
}

/// `POST {base}{target}` of a JSON body with the bearer token.
pub(super) async fn post(base: &str, token: &str, target: &str, body: &Value) -> Answer {
    let request = client()
        .post(format!("{base}{target}"))
        .bearer_auth(token)
        .header("Accept", "application/json")
        .header("Content-Type", "application/json")
        .body(body.to_string());
    send(request).await
}

/// A request written by hand, so nothing encodes its target.
pub(super) async fn raw_get(sim: &Simulator, token: &str, target: &str) -> (u16, Value) {
    let head = format!(
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer {token}\r\n\r\n"
    );
    let mut stream = tokio::net::TcpStream::connect(sim.addr()).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("answer")
        .expect("read");
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// A simulator with the seller `acme_mugs` and its token.
pub(super) async fn started() -> (Simulator, Seller, String) {
    let sim = Simulator::start().await;
    let seller = Seller::new(ACME);
    sim.add_seller(&seller);
    let token = token(&sim, &seller).await;
    (sim, seller, token)
}

/// The annex §7 getOrders example's two orders.
pub(super) fn annex_orders() -> Value {
    let annex = crate::simulate::shared_files::shared("spec/platforms/ebay.md");
    let text = std::fs::read_to_string(annex).expect("the annex");
    let start = text.find("```json ebay-response=getOrders status=200").expect("the example");
    let body = &text[start..];
    let body = &body[body.find('\n').unwrap_or(0)..];
    let end = body.find("```").unwrap_or(body.len());
    serde_json::from_str(&body[..end]).expect("the example is JSON")
}

#[tokio::test]
async fn the_token_endpoint_checks_keyset_refresh_token_and_scopes() {
    let sim = Simulator::start().await;
    let s = Seller::new(ACME);
    sim.add_seller(&s);
    let base = sim.api_base();
    let both = [SCOPE_FULFILLMENT, SCOPE_INVENTORY];
    let ok = grant(&base, &s.client_id, &s.client_secret, &s.refresh_token, &both).await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body["expires_in"], 7200);
    assert_eq!(ok.body["token_type"], "User Access Token");
    assert!(
        ok.body["access_token"].as_str().is_some_and(|t| t.starts_with("v^1.1#i^1#p^3#r^1#I^3#f^0#t^H4sI"))
    );
    let wrong_secret = grant(&base, &s.client_id, "PRD-nope", &s.refresh_token, &both).await;
    assert_eq!((wrong_secret.status, wrong_secret.body["error"].as_str()), (401, Some("invalid_client")));
    assert_eq!(wrong_secret.body["error_description"], "client authentication failed");
    let wrong_grant = grant(&base, &s.client_id, &s.client_secret, "v^1.1#nope", &both).await;
    assert_eq!((wrong_grant.status, wrong_grant.body["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(
        wrong_grant.body["error_description"],
        "the provided authorization refresh token is invalid or was issued to another client"
    );
    sim.set_scopes(ACME, &[SCOPE_FULFILLMENT]);
    let scope = grant(&base, &s.client_id, &s.client_secret, &s.refresh_token, &both).await;
    assert_eq!((scope.status, scope.body["error"].as_str()), (400, Some("invalid_scope")));
    sim.revoke(ACME);
    let revoked = grant(&base, &s.client_id, &s.client_secret, &s.refresh_token, &[SCOPE_FULFILLMENT]).await;
    assert_eq!((revoked.status, revoked.body["error"].as_str()), (400, Some("invalid_grant")));
    sim.set_token_lifetime(60);
    let other = Seller::new("other_shop");
    sim.add_seller(&other);
    let short = grant(&base, &other.client_id, &other.client_secret, &other.refresh_token, &both).await;
    assert_eq!(short.body["expires_in"], 60);
    assert_eq!(sim.requests(Operation::Token), 6);
}

#[tokio::test]
async fn access_tokens_are_checked_for_expiry_environment_and_scope() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    assert_eq!(get(&base, &token, "/sell/fulfillment/v1/order?limit=1").await.status, 200);
    let none = get(&base, "v^1.1#made-up", "/sell/fulfillment/v1/order?limit=1").await;
    assert_eq!((none.status, none.error_id()), (401, 1001));
    assert_eq!(none.body["errors"][0]["message"], "Invalid access token");
    let elsewhere = get(&sim.sandbox_base(), &token, "/sell/fulfillment/v1/order?limit=1").await;
    assert_eq!((elsewhere.status, elsewhere.error_id()), (401, 1001), "a production token in the sandbox");
    sim.set_scopes(ACME, &[SCOPE_FULFILLMENT]);
    let narrow = super::sim_tests::token(
        &sim,
        &Seller { scopes: vec![SCOPE_FULFILLMENT.into()], ..Seller::new(ACME) },
    )
    .await;
    let denied = get(&base, &narrow, "/sell/inventory/v1/inventory_item?limit=1&offset=0").await;
    assert_eq!((denied.status, denied.error_id()), (403, 1100));
    assert_eq!(denied.body["errors"][0]["longMessage"], "Insufficient permissions to fulfill the request.");
    assert_eq!(get(&base, &narrow, "/sell/fulfillment/v1/order?limit=1").await.status, 200);
    sim.expire_tokens();
    let expired = get(&base, &token, "/sell/fulfillment/v1/order?limit=1").await;
    assert_eq!((expired.status, expired.error_id()), (401, 1001));
    assert!(expired.header("date").is_some(), "every answer has a Date");
}

#[tokio::test]
async fn sandbox_and_production_sellers_are_apart() {
    let sim = Simulator::start().await;
    let sandbox = Seller::sandbox("sandbox_shop");
    assert!(sandbox.client_id.contains("-SBX-") && sandbox.client_secret.starts_with("SBX-"));
    sim.add_seller(&sandbox);
    sim.add_ready_orders("sandbox_shop", 3);
    let in_production =
        grant(&sim.api_base(), &sandbox.client_id, &sandbox.client_secret, &sandbox.refresh_token, &[]).await;
    assert_eq!(in_production.status, 401, "a sandbox keyset is unknown in production");
    let token = token(&sim, &sandbox).await;
    let orders = get(&sim.sandbox_base(), &token, "/sell/fulfillment/v1/order").await;
    assert_eq!((orders.status, orders.body["total"].as_i64()), (200, Some(3)));
    assert!(orders.body["href"].as_str().is_some_and(|h| h.starts_with("https://api.sandbox.ebay.com/")));
    let production = get(&sim.api_base(), &token, "/sell/fulfillment/v1/order").await;
    assert_eq!((production.status, production.error_id()), (401, 1001));
}

#[tokio::test]
async fn the_annex_example_is_answered_back_as_it_is() {
    let (sim, _, token) = started().await;
    let example = annex_orders();
    for order in example["orders"].as_array().into_iter().flatten() {
        sim.add_order_json(ACME, order.clone());
    }
    let answer = get(
        &sim.api_base(),
        &token,
        &format!("/sell/fulfillment/v1/order?filter={WINDOW}&limit=200&offset=0"),
    )
    .await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body, example);
}

#[tokio::test]
async fn get_orders_refuses_what_ebay_refuses() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    let (status, body) = raw_get(
        &sim,
        &token,
        "/sell/fulfillment/v1/order?filter=lastmodifieddate:[2026-11-25T10:53:00.000Z..2026-11-25T11:58:00.000Z]",
    )
    .await;
    assert_eq!((status, body["errors"][0]["errorId"].as_i64()), (400, Some(30800)), "{body}");
    let future = "lastmodifieddate:%5B2026-11-25T10:15:00.000Z..2999-01-01T00:00:00.000Z%5D";
    let cases = [
        (format!("filter={future}"), 30850),
        ("limit=201".into(), 31100),
        ("limit=ten".into(), 31100),
        ("limit=0".into(), 31100),
        ("offset=-1".into(), 31000),
        ("filter=orderfulfillmentstatus:%7BNOT_STARTED%7D".into(), 30800),
        ("filter=lastmodifieddate:%5B2020-01-01T00:00:00.000Z..2026-11-25T00:00:00.000Z%5D".into(), 30830),
        ("filter=buyer:%7Bx%7D".into(), 30700),
    ];
    for (query, id) in cases {
        let answer = get(&base, &token, &format!("/sell/fulfillment/v1/order?{query}")).await;
        assert_eq!((answer.status, answer.error_id()), (400, id), "{query}: {}", answer.body);
    }
    sim.set_clock_offset(-10 * 86_400_000);
    let now = super::iso(super::State::new().now_ms() - 86_400_000);
    let answer = get(
        &base,
        &token,
        &format!("/sell/fulfillment/v1/order?filter=lastmodifieddate:%5B2026-01-01T00:00:00.000Z..{now}%5D"),
    )
    .await;
    assert_eq!(answer.error_id(), 30850, "the simulator's clock is behind: yesterday is its future");
}

#[tokio::test]
async fn get_orders_filters_pages_and_takes_order_ids() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    let old = sim.add_order(
        ACME,
        NewOrder {
            created_ms: Some(super::State::new().now_ms() - 86_400_000 * 3),
            ..NewOrder::ready(&[("MUG-BLU", 1)])
        },
    );
    sim.add_ready_orders(ACME, 449);
    let first = get(&base, &token, "/sell/fulfillment/v1/order?limit=200").await;
    assert_eq!((first.body["total"].as_i64(), first.body["limit"].as_i64()), (Some(450), Some(200)));
    assert!(first.body["next"].is_string() && first.body.get("prev").is_none());
    let mut seen = std::collections::BTreeSet::new();
    for offset in [400, 200, 0] {
        let page = get(&base, &token, &format!("/sell/fulfillment/v1/order?limit=200&offset={offset}")).await;
        for order in page.body["orders"].as_array().into_iter().flatten() {
            assert!(seen.insert(order["orderId"].as_str().unwrap_or_default().to_string()));
            assert_eq!(order["cancelStatus"]["cancelRequests"], json!([]));
        }
        assert_eq!(page.body["offset"].as_i64(), Some(offset));
        assert_eq!(page.body.get("prev").is_some(), offset > 0);
    }
    assert_eq!(seen.len(), 450);
    let last = get(&base, &token, "/sell/fulfillment/v1/order?limit=200&offset=400").await;
    assert_eq!(last.body["orders"].as_array().map(Vec::len), Some(50));
    assert_eq!(last.body["orders"][49]["orderId"].as_str(), Some(old.as_str()), "newest creation first");
    let ping = get(&base, &token, "/sell/fulfillment/v1/order?limit=1").await;
    assert_eq!(ping.body["orders"].as_array().map(Vec::len), Some(1));
    let default = get(&base, &token, "/sell/fulfillment/v1/order").await;
    assert_eq!(default.body["limit"].as_i64(), Some(50));
    let ids = sim.order_ids(ACME);
    let by_id = get(
        &base,
        &token,
        &format!(
            "/sell/fulfillment/v1/order?orderIds={},{}&filter=creationdate:%5B2026-01-01T00:00:00.000Z..%5D",
            ids[0], ids[7]
        ),
    )
    .await;
    assert_eq!(by_id.body["total"].as_i64(), Some(2));
    let many: Vec<String> = ids.iter().take(51).cloned().collect();
    let refused =
        get(&base, &token, &format!("/sell/fulfillment/v1/order?orderIds={}", many.join(","))).await;
    assert_eq!(refused.error_id(), 30900);
    let today = super::iso(super::State::new().now_ms() - 86_400_000);
    let recent = get(&base, &token, &format!("/sell/fulfillment/v1/order?filter=creationdate:%5B{today}..%5D,lastmodifieddate:%5B2026-06-01T00:00:00.000Z..%5D")).await;
    assert_eq!(recent.body["total"].as_i64(), Some(449), "creationdate wins: {}", recent.body);
}

#[tokio::test]
async fn changes_between_pages_and_index_lag() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    let two_hours_ago = super::State::new().now_ms() - 7_200_000;
    for _ in 0..5 {
        sim.add_order(
            ACME,
            NewOrder { created_ms: Some(two_hours_ago), ..NewOrder::ready(&[("MUG-BLU", 1)]) },
        );
    }
    let ids = sim.order_ids(ACME);
    let before = sim.order(ACME, &ids[2]).and_then(|o| o["lastModifiedDate"].as_str().map(str::to_string));
    sim.modify_between_pages(ACME, &ids[2]);
    get(&base, &token, "/sell/fulfillment/v1/order?limit=2").await;
    let after = sim.order(ACME, &ids[2]).and_then(|o| o["lastModifiedDate"].as_str().map(str::to_string));
    assert_ne!(before, after);
    sim.set_index_lag(3600);
    sim.touch(ACME, &ids[0]);
    let lagging = get(&base, &token, "/sell/fulfillment/v1/order").await;
    assert_eq!(lagging.body["total"].as_i64(), Some(3), "the two just modified are not indexed yet");
}

#[tokio::test]
async fn quotas_faults_clock_and_delay() {
    let (sim, seller, token) = started().await;
    let base = sim.api_base();
    sim.set_daily_quota(&seller.client_id, Api::Fulfillment, 2);
    for _ in 0..2 {
        assert_eq!(get(&base, &token, "/sell/fulfillment/v1/order?limit=1").await.status, 200);
    }
    let over = get(&base, &token, "/sell/fulfillment/v1/order?limit=1").await;
    assert_eq!((over.status, over.error_id()), (429, 2001));
    assert_eq!(
        get(&base, &token, "/sell/inventory/v1/inventory_item").await.status,
        200,
        "another API's quota"
    );
    sim.set_daily_quota(&seller.client_id, Api::Fulfillment, 1000);
    sim.fail_next(Operation::GetOrders, Fault::RateLimit { retry_after: Some(7) }, 1);
    let limited = get(&base, &token, "/sell/fulfillment/v1/order").await;
    assert_eq!((limited.status, limited.header("retry-after")), (429, Some("7")));
    sim.fail_next(Operation::GetOrders, Fault::RateLimit { retry_after: None }, 1);
    let bare = get(&base, &token, "/sell/fulfillment/v1/order").await;
    assert_eq!((bare.status, bare.header("retry-after")), (429, None));
    sim.fail_next(Operation::GetOffers, Fault::Status(503), 2);
    assert_eq!(
        get(&base, &token, "/sell/fulfillment/v1/order").await.status,
        200,
        "faults keep to their operation"
    );
    for _ in 0..2 {
        let down = get(&base, &token, "/sell/inventory/v1/offer?sku=X").await;
        assert_eq!(down.status, 503);
        assert!(down.body["errors"][0]["errorId"].is_number());
    }
    sim.set_clock_offset(-86_400_000 * 400);
    let answer = get(&base, &token, "/sell/fulfillment/v1/order").await;
    let date = httpdate::parse_http_date(answer.header("date").unwrap_or_default()).expect("an HTTP date");
    let behind = std::time::SystemTime::now().duration_since(date).map(|d| d.as_secs()).unwrap_or_default();
    assert!(behind > 86_400 * 399, "the Date is the simulator's clock");
    sim.set_delay(Duration::from_millis(150));
    let started = std::time::Instant::now();
    get(&base, &token, "/sell/fulfillment/v1/order").await;
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert!(sim.log().iter().any(|l| l == "GET /sell/fulfillment/v1/order -> 503" || l.ends_with("-> 429")));
    assert_eq!(sim.request_count(), 12, "{:?}", sim.log());
}

#[tokio::test]
async fn nonsense_gets_an_answer_not_a_panic() {
    let (sim, _, token) = started().await;
    let base = sim.api_base();
    let id = sim.add_order(ACME, NewOrder::ready(&[("MUG-BLU", 1)]));
    sim.add_order_json(ACME, json!({"orderId": "odd", "lineItems": [7, "x"]}));
    sim.add_item(ACME, "MUG-BLU", 1);
    let ship = format!("/sell/fulfillment/v1/order/{id}/shipping_fulfillment");
    for (target, body) in [
        (ship.as_str(), json!("text")),
        (ship.as_str(), json!({"lineItems": "all"})),
        (ship.as_str(), json!({"lineItems": [{"lineItemId": 5, "quantity": "two"}], "shippedDate": 3})),
        ("/sell/fulfillment/v1/order/odd/shipping_fulfillment", json!({"lineItems": [{"lineItemId": "x"}]})),
        ("/sell/inventory/v1/bulk_get_inventory_item", json!([1, 2])),
        (
            "/sell/inventory/v1/bulk_update_price_quantity",
            json!({"requests": [{"sku": "MUG-BLU", "offers": [7]}]}),
        ),
        ("/sell/inventory/v1/bulk_update_price_quantity", json!({"requests": [{"sku": 3}]})),
    ] {
        let answer = post(&base, &token, target, &body).await;
        let refused = (400..500).contains(&answer.status) && answer.error_id() > 0
            || answer.status == 207 && answer.body["responses"][0]["statusCode"] == 400;
        assert!(refused, "{target} {body}: {}", answer.body);
    }
    let huge = format!("/sell/fulfillment/v1/order?limit=200&offset={}", usize::MAX);
    assert_eq!(get(&base, &token, &huge).await.status, 200);
    let unknown = get(&base, &token, "/sell/fulfillment/v1/nothing").await;
    assert_eq!(unknown.status, 404);
    let form = client().post(format!("{base}/identity/v1/oauth2/token")).header("Authorization", "Basic !!!");
    assert_eq!(send(form).await.status, 401);
}
