//! `POST /stores/ping` for `shopify` stores in live mode (annex A.3), against a simulated shop
//! on loopback: the shop's name and the app's scopes; what each of Shopify's refusals and
//! failures answers; the client credentials grant; the adapter's 422s. No credential in any
//! answer, and nothing written.

use std::time::Duration;

use orderbridge::simulate::shopify::{ALL_SCOPES, Fault, Simulator};
use serde_json::{Value, json};

use crate::common::{TestApp, spawn_app_with};

const SHOP: &str = "ping-me.myshopify.com";
const TOKEN: &str = "shpat_ping_GOOD_0001";
const WRONG: &str = "shpat_ping_WRONG_0002";
const SCOPELESS: &str = "shpat_ping_SCOPELESS_0003";
const APP: &str = "ping-app";
const SECRET: &str = "ping-app-SECRET-0004";

async fn app(sim: &Simulator, timeout_secs: u64) -> TestApp {
    let base = sim.base_url();
    spawn_app_with(move |f| {
        f.merge(("ping_mode", "live"))
            .merge(("shopify_api_base", base))
            .merge(("ping_timeout_secs", timeout_secs))
    })
    .await
}

async fn customer(app: &TestApp) -> i64 {
    app.post_json("/customers", &app.admin, json!({"company_name": "Acme"})).await.id()
}

async fn ping(app: &TestApp, customer: i64, adapter: Value) -> crate::common::Reply {
    let r = app
        .post_json(
            "/stores/ping",
            &app.admin,
            json!({"customer_id": customer, "name": "Shop", "platform": "shopify", "adapter": adapter}),
        )
        .await;
    for secret in [TOKEN, WRONG, SCOPELESS, SECRET] {
        assert!(!r.text.contains(secret), "a credential in the answer: {r:?}");
    }
    r
}

fn simulator_shop(sim: &Simulator) {
    sim.add_shop(SHOP, TOKEN, &ALL_SCOPES);
    sim.add_token(SHOP, SCOPELESS, &["read_products", "write_inventory"]);
    sim.add_app(SHOP, APP, SECRET, &ALL_SCOPES, 3600);
}

#[rocket::async_test]
async fn each_answer_of_shopify_becomes_the_pings_answer() {
    let sim = Simulator::start().await;
    simulator_shop(&sim);
    let app = app(&sim, 5).await;
    let c = customer(&app).await;
    let token = |t: &str| json!({"shop": SHOP, "access_token": t});
    let r = ping(&app, c, token(TOKEN)).await;
    assert_eq!(r.status.code, 204, "{r:?}");
    let r = ping(&app, c, json!({"shop": "PING-ME.myshopify.com", "access_token": TOKEN})).await;
    assert_eq!(r.status.code, 204, "the shop's domain is case-insensitive: {r:?}");
    let r = ping(&app, c, json!({"shop": SHOP, "client_id": APP, "client_secret": SECRET})).await;
    assert_eq!(r.status.code, 204, "client credentials: {r:?}");

    // (adapter, a fault set first, status, code, words of the message)
    let refused = "adapter_authentication_failed";
    let unreachable = "adapter_unreachable";
    let cases: Vec<(Value, Option<Fault>, u16, &str, &str)> = vec![
        (token(WRONG), None, 422, refused, "Invalid API key or access token"),
        (token(SCOPELESS), None, 422, refused, "read_orders"),
        (
            json!({"shop": "nobody-here.myshopify.com", "access_token": TOKEN}),
            None,
            422,
            refused,
            "nobody-here.myshopify.com",
        ),
        (
            json!({"shop": SHOP, "client_id": APP, "client_secret": "wrong-secret"}),
            None,
            422,
            refused,
            "client credentials",
        ),
        (token(TOKEN), Some(Fault::Status(402)), 422, refused, "frozen"),
        (token(TOKEN), Some(Fault::Status(423)), 422, refused, "locked"),
        (token(TOKEN), Some(Fault::Status(403)), 422, refused, "403"),
        (token(TOKEN), Some(Fault::Code("ACCESS_DENIED")), 422, refused, "denied"),
        (token(TOKEN), Some(Fault::Status(503)), 502, unreachable, "503"),
        (token(TOKEN), Some(Fault::RetryAfter(0.2)), 502, unreachable, "slow down"),
        (token(TOKEN), Some(Fault::Code("THROTTLED")), 502, unreachable, "throttled"),
        (token(TOKEN), Some(Fault::Code("INTERNAL_SERVER_ERROR")), 502, unreachable, "failed"),
        (token(TOKEN), Some(Fault::Code("SOMETHING_NEW")), 502, unreachable, "Simulated SOMETHING_NEW"),
    ];
    for (adapter, fault, status, code, says) in cases {
        if let Some(fault) = fault.clone() {
            sim.fail_next(SHOP, "OrderbridgePing", fault, 1);
        }
        let r = ping(&app, c, adapter.clone()).await;
        assert_eq!((r.status.code, r.code()), (status, code), "{adapter} {fault:?}: {r:?}");
        let message = r.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{adapter} {fault:?}: {message}");
        // A rate limit is remembered for the account; the next case must not meet it.
        if matches!(fault, Some(Fault::RetryAfter(_)) | Some(Fault::Code("THROTTLED"))) {
            tokio::time::sleep(Duration::from_millis(1100)).await;
        }
    }
    let r = app.get("/stores", &app.admin).await;
    assert_eq!(r.body, json!([]), "a ping writes nothing");
}

#[rocket::async_test]
async fn a_shop_that_does_not_answer_in_time_is_unreachable() {
    let sim = Simulator::start().await;
    simulator_shop(&sim);
    sim.set_delay(SHOP, Duration::from_secs(3));
    let app = app(&sim, 1).await;
    let c = customer(&app).await;
    let r = ping(&app, c, json!({"shop": SHOP, "access_token": TOKEN})).await;
    assert_eq!((r.status.code, r.code()), (502, "adapter_unreachable"), "{r:?}");
}

#[rocket::async_test]
async fn malformed_shopify_adapters_are_422_naming_the_field_and_nothing_is_asked() {
    let sim = Simulator::start().await;
    simulator_shop(&sim);
    let app = app(&sim, 5).await;
    let c = customer(&app).await;
    let cases = [
        (json!({"access_token": TOKEN}), "adapter[shop]"),
        (json!({"shop": "ping-me.com", "access_token": TOKEN}), "adapter[shop]"),
        (json!({"shop": "https://ping-me.myshopify.com", "access_token": TOKEN}), "adapter[shop]"),
        (json!({"shop": SHOP}), "adapter[access_token]"),
        (
            json!({"shop": SHOP, "access_token": TOKEN, "client_id": APP, "client_secret": SECRET}),
            "adapter[access_token]",
        ),
        (json!({"shop": SHOP, "client_id": APP}), "adapter[client_secret]"),
        (json!({"shop": SHOP, "client_secret": SECRET}), "adapter[client_id]"),
        (json!({"shop": SHOP, "access_token": TOKEN, "location_id": "main"}), "adapter[location_id]"),
        (
            json!({"shop": SHOP, "access_token": TOKEN, "import_financial_statuses": ["PAID", "SHIPPED"]}),
            "adapter[import_financial_statuses][1]",
        ),
        (
            json!({"shop": SHOP, "access_token": TOKEN, "import_financial_statuses": "PAID"}),
            "adapter[import_financial_statuses]",
        ),
        (
            json!({"shop": SHOP, "access_token": TOKEN, "notify_customer": "sometimes"}),
            "adapter[notify_customer]",
        ),
    ];
    for (adapter, field) in cases {
        let r = ping(&app, c, adapter.clone()).await;
        assert_eq!((r.status.code, r.code()), (422, "validation_failed"), "{adapter}: {r:?}");
        assert!(r.body["error"]["details"].get(field).is_some(), "{adapter}: {field} in {r:?}");
    }
    assert!(sim.log(SHOP).is_empty(), "nothing was asked");
    assert_eq!(sim.tokens_issued(SHOP), 0);
    // The same rules hold when a store is created, and its secrets come back masked.
    let id = app
        .post_json(
            "/stores",
            &app.admin,
            json!({"customer_id": c, "name": "Shop", "platform": "shopify",
                   "adapter": {"shop": SHOP, "access_token": TOKEN, "location_id": "71183532067",
                               "import_financial_statuses": ["PAID", "PENDING"], "notify_customer": false}}),
        )
        .await
        .id();
    let store = app.get(&format!("/stores/{id}"), &app.admin).await.body;
    assert_eq!(store["adapter"]["shop"], SHOP);
    assert_eq!(store["adapter"]["access_token"], "********0001");
    assert_eq!(store["adapter"]["location_id"], "71183532067");
}
