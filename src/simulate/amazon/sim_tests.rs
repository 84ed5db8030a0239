//! The Amazon simulator's orders over real HTTP: tokens and who they admit, `searchOrders`'
//! filters, pages and tokens, datasets, `getOrder`, `confirmShipment` and its refusals, the
//! controls that move orders on, buckets and faults, the clock; and determinism.

use serde_json::{Value, json};

use super::{NewOrder, Operation, OrderStatus, Seller, Simulator};

/// An answer: status, headers (names in lower case), body as JSON (`Null` when empty or not JSON).
pub(super) struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub bytes: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

pub(super) fn client() -> reqwest::Client {
    crate::platforms::http::builder().build().expect("a client")
}

pub(super) async fn send(request: reqwest::RequestBuilder) -> Answer {
    let response = request.send().await.expect("the simulator answers");
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_ascii_lowercase(), v.to_str().unwrap_or_default().to_string()))
        .collect();
    let bytes = response.bytes().await.expect("a body").to_vec();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer { status, headers, body, bytes }
}

/// A form POST to the simulator's LWA.
pub(super) fn lwa(sim: &Simulator, fields: &[(&str, String)]) -> reqwest::RequestBuilder {
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
    let request = client().post(format!("{}/auth/o2/token", sim.lwa_base()));
    request.header("Content-Type", "application/x-www-form-urlencoded").body(body)
}

/// An access token for the seller, from the simulator's LWA.
pub(super) async fn token(sim: &Simulator, seller: &Seller) -> String {
    let form = [
        ("grant_type", "refresh_token".to_string()),
        ("refresh_token", seller.refresh_token.clone()),
        ("client_id", seller.client_id.clone()),
        ("client_secret", seller.client_secret.clone()),
    ];
    let answer = send(lwa(sim, &form)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body["access_token"].as_str().expect("an access token").to_string()
}

/// `target` (path and query, as sent) under the seller's region.
pub(super) fn url(sim: &Simulator, region: &str, target: &str) -> String {
    format!("{}{target}", sim.api_base().replace("{region}", region))
}

pub(super) async fn get(sim: &Simulator, token: &str, target: &str) -> Answer {
    send(client().get(url(sim, "na", target)).header("x-amz-access-token", token)).await
}

pub(super) async fn post(sim: &Simulator, token: &str, target: &str, body: &Value) -> Answer {
    let request = client().post(url(sim, "na", target)).header("x-amz-access-token", token);
    send(request.header("Content-Type", "application/json").body(body.to_string())).await
}

/// A simulator with the annex's example seller, 40 listings and a token.
pub(super) async fn start() -> (Simulator, Seller, String) {
    let sim = Simulator::start().await;
    let seller = Seller::example();
    sim.add_seller(seller.clone());
    sim.generate_listings(&seller.seller_id, 40, 3);
    let token = token(&sim, &seller).await;
    (sim, seller, token)
}

const SEARCH: &str =
    "/orders/2026-01-01/orders?lastUpdatedAfter=2020-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER";

/// Every order of a walk with `query`, `max` a page; the pages' sizes.
async fn walk(sim: &Simulator, token: &str, query: &str) -> (Vec<Value>, usize) {
    let mut orders = Vec::new();
    let mut next: Option<String> = None;
    for page in 1..=1000 {
        let target = match &next {
            None => query.to_string(),
            Some(t) => format!(
                "{query}&paginationToken={}",
                percent_encoding::utf8_percent_encode(t, percent_encoding::NON_ALPHANUMERIC)
            ),
        };
        let answer = get(sim, token, &target).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        orders.extend(answer.body["orders"].as_array().expect("orders").iter().cloned());
        match answer.body["pagination"]["nextToken"].as_str() {
            Some(t) => next = Some(t.to_string()),
            None => return (orders, page),
        }
    }
    panic!("the walk did not end");
}

#[tokio::test]
async fn lwa_gives_an_hour_token_and_refuses_wrong_credentials_as_lwa_words_them() {
    let sim = Simulator::start().await;
    let seller = Seller::example();
    sim.add_seller(seller.clone());
    let form = |refresh: &str, id: &str, secret: &str| {
        vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh.to_string()),
            ("client_id", id.to_string()),
            ("client_secret", secret.to_string()),
        ]
    };
    let ok = send(lwa(&sim, &form(&seller.refresh_token, &seller.client_id, &seller.client_secret))).await;
    assert_eq!(ok.status, 200);
    assert!(ok.body["access_token"].as_str().is_some_and(|t| t.starts_with("Atza|")), "{}", ok.body);
    assert_eq!(
        (ok.body["token_type"].clone(), ok.body["expires_in"].clone()),
        (json!("bearer"), json!(3600))
    );
    assert!(ok.header("date").is_some());
    let cases = [
        (form("Atzr|wrong", &seller.client_id, &seller.client_secret), 400, "invalid_grant"),
        (form(&seller.refresh_token, &seller.client_id, "wrong"), 401, "invalid_client"),
        (
            form(&seller.refresh_token, "amzn1.application-oa2-client.other", &seller.client_secret),
            401,
            "invalid_client",
        ),
        (form(&seller.refresh_token, &seller.client_id, ""), 400, "invalid_request"),
    ];
    for (fields, status, error) in cases {
        let answer = send(lwa(&sim, &fields)).await;
        assert_eq!((answer.status, answer.body["error"].as_str()), (status, Some(error)), "{fields:?}");
        assert!(answer.body["error_description"].is_string());
    }
    sim.revoke_refresh_token(&seller.seller_id);
    let revoked =
        send(lwa(&sim, &form(&seller.refresh_token, &seller.client_id, &seller.client_secret))).await;
    assert_eq!((revoked.status, revoked.body["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(sim.requests(Operation::Token), 6);
}

#[tokio::test]
async fn sp_api_refuses_unknown_and_expired_tokens_another_region_and_another_sellers_listings() {
    let (sim, seller, token) = start().await;
    let other = Seller::new("A3OTHERSELLER1", "eu", &["A1PA6795UKMFR9"]);
    sim.add_seller(other.clone());
    let other_token = self::token(&sim, &other).await;
    let denied = json!({"errors": [{"code": "Unauthorized", "message": "Access to requested resource is denied.", "details": ""}]});
    let participations = "/sellers/v1/marketplaceParticipations";
    let fine = get(&sim, &token, participations).await;
    assert_eq!(fine.status, 200);
    assert_eq!(fine.header("x-amzn-ratelimit-limit"), Some("100"));
    for bad in ["", "Atza|unknown"] {
        let answer = get(&sim, bad, participations).await;
        assert_eq!((answer.status, answer.body.clone()), (403, denied.clone()), "token {bad:?}");
        assert!(answer.header("date").is_some() && answer.header("x-amzn-ratelimit-limit").is_none());
    }
    // The other seller's token on na, and the first seller's listings read with it on eu.
    assert_eq!(get(&sim, &other_token, participations).await.status, 403);
    let theirs = format!("/listings/2021-08-01/items/{}?marketplaceIds=A1PA6795UKMFR9", seller.seller_id);
    let answer =
        send(client().get(url(&sim, "eu", &theirs)).header("x-amz-access-token", &other_token)).await;
    assert_eq!((answer.status, answer.body.clone()), (403, denied.clone()));
    let own = format!("/listings/2021-08-01/items/{}?marketplaceIds=A1PA6795UKMFR9", other.seller_id);
    let answer = send(client().get(url(&sim, "eu", &own)).header("x-amz-access-token", &other_token)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    sim.expire_tokens(&seller.seller_id);
    assert_eq!(get(&sim, &token, participations).await.status, 403);
    let fresh = self::token(&sim, &seller).await;
    assert_eq!(get(&sim, &fresh, participations).await.status, 200);
    assert_eq!(get(&sim, &fresh, "/orders/2099-01-01/orders").await.status, 404);
}

#[tokio::test]
async fn search_orders_refuses_what_amazon_refuses_with_400_invalid_input() {
    let (sim, _, token) = start().await;
    let base = "/orders/2026-01-01/orders?";
    let cases = [
        ("marketplaceIds=ATVPDKIKX0DER", "no time filter"),
        (
            "createdAfter=2026-01-01T00:00:00Z&lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER",
            "both",
        ),
        (
            "createdAfter=2026-01-01T00:00:00Z&lastUpdatedBefore=2026-02-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER",
            "mixed",
        ),
        ("lastUpdatedAfter=2026-01-01T00:00:00Z", "no marketplaceIds"),
        ("lastUpdatedAfter=yesterday&marketplaceIds=ATVPDKIKX0DER", "not ISO 8601"),
        ("lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER&maxResultsPerPage=0", "page 0"),
        (
            "lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER&maxResultsPerPage=101",
            "page 101",
        ),
        (
            "lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER&fulfilledBy=SELLER",
            "fulfilledBy",
        ),
        (
            "lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER&fulfillmentStatuses=OPEN",
            "status",
        ),
        (
            "lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER&includedData=EVERYTHING",
            "dataset",
        ),
        (
            "lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=A1PA6795UKMFR9",
            "not the seller's marketplace",
        ),
        (
            "lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER&paginationToken=abc",
            "bad token",
        ),
        (
            "lastUpdatedAfter=2026-01-01T00:00:00Z&lastUpdatedBefore=2025-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER",
            "before earlier than after",
        ),
        (
            "lastUpdatedAfter=2026-01-01T00:00:00Z&lastUpdatedBefore=2099-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER",
            "before less than two minutes ago",
        ),
    ];
    for (query, why) in cases {
        let answer = get(&sim, &token, &format!("{base}{query}")).await;
        assert_eq!(answer.status, 400, "{why}: {}", answer.body);
        assert_eq!(answer.body["errors"][0]["code"], "InvalidInput", "{why}");
    }
    let fine = get(
        &sim,
        &token,
        &format!(
            "{base}lastUpdatedAfter=2026-01-01T00:00:00Z&marketplaceIds=ATVPDKIKX0DER&maxResultsPerPage=100"
        ),
    )
    .await;
    assert_eq!(fine.status, 200, "{}", fine.body);
}

#[tokio::test]
async fn a_walk_reads_every_matching_order_once_in_pages_that_are_not_in_modification_order() {
    let (sim, seller, token) = start().await;
    sim.generate_orders(&seller.seller_id, 250, 11);
    let (orders, pages) = walk(&sim, &token, &format!("{SEARCH}&maxResultsPerPage=100")).await;
    assert_eq!((orders.len(), pages), (250, 3));
    let mut ids: Vec<&str> = orders.iter().map(|o| o["orderId"].as_str().unwrap()).collect();
    let times: Vec<&str> = orders.iter().map(|o| o["lastUpdatedTime"].as_str().unwrap()).collect();
    assert!(times.windows(2).any(|w| w[0] > w[1]) && times.windows(2).any(|w| w[0] < w[1]), "sorted by time");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 250);
    // The pull's filters: MFN orders ready to ship or cancelled.
    let pull = format!(
        "{SEARCH}&fulfilledBy=MERCHANT&fulfillmentStatuses=UNSHIPPED,PARTIALLY_SHIPPED,CANCELLED&maxResultsPerPage=7&includedData=BUYER,RECIPIENT,PROCEEDS,FULFILLMENT"
    );
    let (pulled, pages) = walk(&sim, &token, &pull).await;
    let expected = sim
        .order_ids(&seller.seller_id)
        .iter()
        .filter_map(|id| sim.order(&seller.seller_id, id))
        .filter(|o| {
            !o.fulfilled_by_amazon && ["UNSHIPPED", "PARTIALLY_SHIPPED", "CANCELLED"].contains(&o.status)
        })
        .count();
    assert_eq!((pulled.len(), pages), (expected, expected.div_ceil(7)));
    assert!(pulled.iter().all(|o| o["fulfillment"]["fulfilledBy"] == "MERCHANT"));
    // The token: base64 with the symbols a client must encode.
    let first = get(&sim, &token, &pull).await;
    let next = first.body["pagination"]["nextToken"].as_str().expect("a next page");
    assert!(next.contains('+') && next.contains('/') && next.ends_with('='), "{next}");
    assert!(first.body["lastUpdatedBefore"].is_string());
}

#[tokio::test]
async fn a_page_token_is_refused_when_a_filter_changes_or_after_24_hours() {
    let (sim, seller, token) = start().await;
    sim.generate_orders(&seller.seller_id, 30, 5);
    let query = format!("{SEARCH}&maxResultsPerPage=10");
    let first = get(&sim, &token, &query).await;
    let next = first.body["pagination"]["nextToken"].as_str().expect("a next page").to_string();
    let encoded =
        percent_encoding::utf8_percent_encode(&next, percent_encoding::NON_ALPHANUMERIC).to_string();
    let same = get(&sim, &token, &format!("{query}&paginationToken={encoded}")).await;
    assert_eq!(same.status, 200);
    for changed in [
        format!("{SEARCH}&maxResultsPerPage=20&paginationToken={encoded}"),
        format!("{query}&fulfilledBy=MERCHANT&paginationToken={encoded}"),
        format!("{query}&includedData=BUYER&paginationToken={encoded}"),
    ] {
        let answer = get(&sim, &token, &changed).await;
        assert_eq!(
            (answer.status, answer.body["errors"][0]["code"].as_str()),
            (400, Some("InvalidInput")),
            "{changed}"
        );
    }
    // A day later, with a new access token (the old one expired with the day).
    sim.set_clock_skew(24 * 3600 + 60);
    let later = self::token(&sim, &seller).await;
    let stale = get(&sim, &later, &format!("{query}&paginationToken={encoded}")).await;
    assert_eq!(stale.status, 400, "{}", stale.body);
    assert!(stale.body["errors"][0]["message"].as_str().unwrap().contains("expired"));
}

#[tokio::test]
async fn included_data_leaves_out_what_was_not_asked_and_pending_orders_have_no_recipient() {
    let (sim, seller, token) = start().await;
    let pending =
        sim.add_order(&seller.seller_id, NewOrder::mfn(&[("SKU-0001", 1)]).status(OrderStatus::Pending));
    let ready =
        sim.add_order(&seller.seller_id, NewOrder::mfn(&[("SKU-0002", 2)]).program("AMAZON_BUSINESS"));
    let bare = get(&sim, &token, &format!("/orders/2026-01-01/orders/{ready}")).await;
    assert_eq!(bare.status, 200);
    for member in ["buyer", "recipient", "proceeds", "fulfillment", "packages"] {
        assert!(bare.body["order"].get(member).is_none(), "{member} without asking");
    }
    assert!(bare.body["order"]["orderItems"][0].get("proceeds").is_none());
    let all = "?includedData=BUYER,RECIPIENT,PROCEEDS,FULFILLMENT,PACKAGES";
    let full = get(&sim, &token, &format!("/orders/2026-01-01/orders/{ready}{all}")).await;
    let order = &full.body["order"];
    assert_eq!(order["buyer"]["buyerPurchaseOrderNumber"].as_str().map(|p| p.starts_with("PO-")), Some(true));
    assert!(order["buyer"]["buyerEmail"].as_str().unwrap().ends_with("@marketplace.amazon.com"));
    assert!(order["recipient"]["deliveryAddress"]["addressLine1"].is_string());
    assert_eq!(order["packages"], json!([]));
    assert_eq!(order["fulfillment"]["fulfillmentStatus"], "UNSHIPPED");
    let waiting = get(&sim, &token, &format!("/orders/2026-01-01/orders/{pending}{all}")).await;
    assert_eq!(waiting.body["order"]["fulfillment"]["fulfillmentStatus"], "PENDING");
    assert!(waiting.body["order"].get("recipient").is_none());
    sim.hide_recipients(&seller.seller_id, true);
    let hidden = get(&sim, &token, &format!("/orders/2026-01-01/orders/{ready}{all}")).await;
    assert!(hidden.body["order"].get("recipient").is_none() && hidden.body["order"]["buyer"].is_object());
    let unknown = get(&sim, &token, "/orders/2026-01-01/orders/113-0000000-0000000").await;
    assert_eq!((unknown.status, unknown.body["errors"][0]["code"].as_str()), (404, Some("NotFound")));
}

/// Thousandths of a Money amount.
fn milli(money: &Value) -> i64 {
    let text = money["amount"].as_str().expect("an amount");
    let (whole, fraction) =
        text.trim_start_matches('-').split_once('.').unwrap_or((text.trim_start_matches('-'), ""));
    let value = whole.parse::<i64>().unwrap() * 1000 + format!("{fraction:0<3}").parse::<i64>().unwrap();
    if text.starts_with('-') { -value } else { value }
}

fn breakdown(breakdowns: &Value, kind: &str) -> i64 {
    breakdowns.as_array().unwrap().iter().filter(|b| b["type"] == kind).map(|b| milli(&b["subtotal"])).sum()
}

#[tokio::test]
async fn generated_orders_are_deterministic_and_their_proceeds_add_up_in_every_currency() {
    let sim = Simulator::start().await;
    let (one, two) = (
        Seller::new("A1SELLERONE111", "eu", &["A1F83G8C2ARO7P", "A1PA6795UKMFR9"]),
        Seller::new("A1SELLERTWO222", "eu", &["A1F83G8C2ARO7P", "A1PA6795UKMFR9"]),
    );
    let until = sim.now();
    for s in [&one, &two] {
        sim.add_seller(s.clone());
        sim.generate_listings(&s.seller_id, 20, 9);
        sim.generate_orders_until(&s.seller_id, 300, 42, until);
    }
    let (a, b) = (sim.order_ids(&one.seller_id), sim.order_ids(&two.seller_id));
    assert_eq!(a, b, "the same seed gives the same orders");
    let full = |s: &Seller, id: &str| {
        let mut v = sim.order_json(&s.seller_id, id).unwrap();
        v["buyer"]["buyerEmail"] = Value::Null;
        v
    };
    assert!(a.iter().all(|id| full(&one, id) == full(&two, id)));
    let japan = Seller::new("A1SELLERJAPAN3", "fe", &["A1VC38T7YXB528"]);
    sim.add_seller(japan.clone());
    sim.generate_listings(&japan.seller_id, 10, 1);
    sim.generate_orders(&japan.seller_id, 100, 7);
    let mut seen = std::collections::BTreeSet::new();
    let (mut spaces, mut no_space, mut line2, mut no_line2) = (0, 0, 0, 0);
    for (s, ids) in [(&one, &a), (&japan, &sim.order_ids(&japan.seller_id))] {
        for id in ids.iter() {
            let o = sim.order_json(&s.seller_id, id).unwrap();
            seen.insert(o["fulfillment"]["fulfillmentStatus"].as_str().unwrap().to_string());
            seen.insert(o["fulfillment"]["fulfilledBy"].as_str().unwrap().to_string());
            for p in o["programs"].as_array().into_iter().flatten() {
                seen.insert(p.as_str().unwrap().to_string());
            }
            if let Some(address) = o["recipient"]["deliveryAddress"].as_object() {
                if address["name"].as_str().unwrap().contains(' ') {
                    spaces += 1
                } else {
                    no_space += 1
                }
                if address.contains_key("addressLine2") { line2 += 1 } else { no_line2 += 1 }
            }
            let Some(proceeds) = o.get("proceeds") else { continue };
            let currency = proceeds["grandTotal"]["currencyCode"].as_str().unwrap().to_string();
            seen.insert(currency.clone());
            let amount = proceeds["grandTotal"]["amount"].as_str().unwrap();
            assert_eq!(currency == "JPY", !amount.contains('.'), "{amount} {currency}");
            let parts =
                ["ITEM", "SHIPPING", "TAX", "DISCOUNT"].map(|k| breakdown(&proceeds["breakdowns"], k));
            assert_eq!(parts.iter().sum::<i64>(), milli(&proceeds["grandTotal"]), "{id}");
            assert!(parts[3] <= 0);
            let items = o["orderItems"].as_array().unwrap();
            for kind in ["ITEM", "SHIPPING", "TAX", "DISCOUNT"] {
                let per_item: i64 = items.iter().map(|i| breakdown(&i["proceeds"]["breakdowns"], kind)).sum();
                assert_eq!(per_item, breakdown(&proceeds["breakdowns"], kind), "{id} {kind}");
            }
            for item in items {
                let p = &item["proceeds"];
                let sum: i64 = ["ITEM", "SHIPPING", "TAX", "DISCOUNT"]
                    .iter()
                    .map(|k| breakdown(&p["breakdowns"], k))
                    .sum();
                assert_eq!(sum, milli(&p["proceedsTotal"]));
                assert!(item["orderItemId"].as_str().unwrap().len() == 14);
            }
            assert!(id.len() == 19 && id.as_bytes()[3] == b'-' && id.as_bytes()[11] == b'-', "{id}");
        }
    }
    for wanted in [
        "PENDING",
        "UNSHIPPED",
        "PARTIALLY_SHIPPED",
        "SHIPPED",
        "CANCELLED",
        "MERCHANT",
        "AMAZON",
        "PRIME",
        "AMAZON_BUSINESS",
        "AMAZON_EASY_SHIP",
        "GBP",
        "EUR",
        "JPY",
    ] {
        assert!(seen.contains(wanted), "no {wanted} among {seen:?}");
    }
    assert!(spaces > 0 && no_space > 0 && line2 > 0 && no_line2 > 0);
}

#[tokio::test]
async fn five_thousand_ready_orders_are_walked_in_fifty_full_pages() {
    let (sim, seller, token) = start().await;
    sim.generate_ready_orders(&seller.seller_id, 5_000, 8);
    assert_eq!(sim.order_count(&seller.seller_id), 5_000);
    let pull = format!(
        "{SEARCH}&fulfilledBy=MERCHANT&fulfillmentStatuses=UNSHIPPED,PARTIALLY_SHIPPED&maxResultsPerPage=100&includedData=BUYER,RECIPIENT,PROCEEDS,FULFILLMENT"
    );
    sim.reset_counts();
    let (orders, pages) = walk(&sim, &token, &pull).await;
    assert_eq!((orders.len(), pages), (5_000, 50));
    assert_eq!(sim.requests(Operation::SearchOrders), 50);
    let mut ids: Vec<&str> = orders.iter().map(|o| o["orderId"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 5_000);
    assert!(orders.iter().all(|o| o.get("recipient").is_some()
        && o["programs"].as_array().is_none_or(|p| !p.contains(&json!("IN_STORE_PICK_UP")))));
}
