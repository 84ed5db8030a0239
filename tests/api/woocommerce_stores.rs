//! WooCommerce stores through the API (`platforms/woocommerce.md` §1.1, §1.2): the adapter's
//! 422s and masks, both tokens kept as sent, and every outcome of a live ping against a
//! WooCommerce simulator on loopback, which checks OAuth 1.0a signatures for real.

use orderbridge::simulate::{big_commerce, woocommerce};
use serde_json::{Value, json};

use crate::common::*;

const KEY: &str = "ck_1111111111222222222233333333334444444444";
const SECRET: &str = "cs_5555555555666666666677777777778888888888";

async fn live_app() -> TestApp {
    spawn_app_with(|f| f.merge(("ping_mode", "live")).merge(("ping_timeout_secs", 5))).await
}

fn store(customer_id: i64, platform: &str, adapter: Value) -> Value {
    json!({"customer_id": customer_id, "name": "Woo shop", "platform": platform, "adapter": adapter})
}

fn adapter(url: &str, key: &str, secret: &str) -> Value {
    json!({"url": url, "consumer_key": key, "consumer_secret": secret})
}

/// Asserts a refused ping's 422 naming `fragment`, with no credential in it.
#[track_caller]
fn assert_refused(r: &Reply, fragment: &str) {
    assert_error(r, 422, "adapter_authentication_failed");
    let message = r.body["error"]["message"].as_str().unwrap();
    assert!(message.contains(fragment), "{message:?} should name {fragment:?}");
    for secret in [KEY, SECRET] {
        assert!(!r.body.to_string().contains(secret), "{r:?}");
    }
}

#[rocket::async_test]
async fn bad_adapters_are_422_naming_the_key_and_secrets_are_masked() {
    let app = spawn_app().await;
    let c = app.post_json("/customers", &app.admin, json!({"company_name": "Acme"})).await.id();
    let cases = [
        (
            json!({"url": "http://shop.example.com", "consumer_key": KEY, "consumer_secret": SECRET}),
            "adapter[url]",
        ),
        (json!({"url": "https://shop.example.com", "consumer_key": KEY}), "adapter[consumer_secret]"),
        (json!({"url": "https://shop.example.com", "consumer_secret": SECRET}), "adapter[consumer_key]"),
        (json!({"consumer_key": KEY, "consumer_secret": SECRET}), "adapter[url]"),
        (
            json!({"url": "https://shop.example.com", "consumer_key": KEY, "consumer_secret": SECRET, "import_statuses": ["cancelled"]}),
            "adapter[import_statuses]",
        ),
        (
            json!({"url": "http://127.0.0.1:8080", "consumer_key": KEY, "consumer_secret": SECRET, "auth": "basic"}),
            "adapter[auth]",
        ),
    ];
    for (adapter, key) in cases {
        let r = app.post_json("/stores", &app.admin, store(c, "woocommerce", adapter.clone())).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][key].is_string(), "{adapter}: {r:?}");
        assert!(!r.body.to_string().contains(SECRET), "{r:?}");
    }
    let r = app
        .post_json(
            "/stores",
            &app.admin,
            store(c, "woocommerce", adapter("http://shop.example.com", KEY, SECRET)),
        )
        .await;
    assert_eq!(r.body["error"]["details"]["adapter[url]"], "https is required except on loopback");

    for token in ["woocommerce", "woo_commerce"] {
        let body = store(c, token, adapter("https://shop.example.com/wp/", KEY, SECRET));
        let id = app.post_json("/stores", &app.admin, body).await.id();
        let r = app.get(&format!("/stores/{id}"), &app.admin).await;
        assert_eq!(r.body["platform"], token, "kept as sent");
        assert_eq!(r.body["adapter"]["consumer_key"], "********4444");
        assert_eq!(r.body["adapter"]["consumer_secret"], "********8888");
        assert_eq!(r.body["adapter"]["url"], "https://shop.example.com/wp/");
    }
}

#[rocket::async_test]
async fn a_ping_reads_an_order_and_sends_an_empty_batch_signed_as_woocommerce_checks() {
    let shop = woocommerce::Simulator::start(KEY, SECRET).await;
    let app = live_app().await;
    let c = app.post_json("/customers", &app.admin, json!({"company_name": "Acme"})).await.id();
    let r = app
        .post_json("/stores/ping", &app.admin, store(c, "woocommerce", adapter(&shop.url(), KEY, SECRET)))
        .await;
    assert_eq!(r.status.code, 204, "{r:?}");
    let asked = shop.requests();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0], "GET /wp-json/wc/v3/orders?per_page=1&_fields=id");
    assert_eq!(asked[1], "POST /wp-json/wc/v3/orders/batch");

    // WordPress with plain permalinks: found through the front page's discovery header.
    shop.set_plain_permalinks(true);
    let r = app
        .post_json("/stores/ping", &app.admin, store(c, "woo_commerce", adapter(&shop.url(), KEY, SECRET)))
        .await;
    assert_eq!(r.status.code, 204, "{r:?}");
    assert!(shop.requests().iter().any(|r| r.starts_with("POST /?rest_route=/wc/v3/orders/batch")));
}

#[rocket::async_test]
async fn a_ping_with_wrong_keys_or_a_read_only_key_is_refused_with_woocommerces_reason() {
    let shop = woocommerce::Simulator::start(KEY, SECRET).await;
    let app = live_app().await;
    let c = app.post_json("/customers", &app.admin, json!({"company_name": "Acme"})).await.id();
    let ping = |key: &str, secret: &str| store(c, "woocommerce", adapter(&shop.url(), key, secret));
    let r = app.post_json("/stores/ping", &app.admin, ping(KEY, "cs_wrong")).await;
    assert_refused(&r, "Invalid signature - provided signature does not match.");
    let r = app.post_json("/stores/ping", &app.admin, ping("ck_unknown", SECRET)).await;
    assert_refused(&r, "Consumer key is invalid.");
    shop.set_read_only(true);
    let r = app.post_json("/stores/ping", &app.admin, ping(KEY, SECRET)).await;
    assert_refused(&r, "The API key provided does not have write permissions.");
    assert!(shop.requests().last().unwrap().starts_with("POST /wp-json/wc/v3/orders/batch"));
}

#[rocket::async_test]
async fn a_ping_of_an_address_that_is_not_the_woocommerce_api_is_refused_naming_what_was_found() {
    let shop = woocommerce::Simulator::start(KEY, SECRET).await;
    let app = live_app().await;
    let c = app.post_json("/customers", &app.admin, json!({"company_name": "Acme"})).await.id();
    // Something that is no WordPress at all.
    let other = big_commerce::Simulator::start().await;
    let r = app
        .post_json(
            "/stores/ping",
            &app.admin,
            store(c, "woocommerce", adapter(&other.base_url(), KEY, SECRET)),
        )
        .await;
    assert_refused(&r, "no WordPress REST API");
    // A site that redirects elsewhere.
    shop.redirect_next(1);
    let r = app
        .post_json("/stores/ping", &app.admin, store(c, "woocommerce", adapter(&shop.url(), KEY, SECRET)))
        .await;
    assert_refused(&r, "use that address as url");
    // A plugin printing warnings before the JSON.
    shop.warn_next(1);
    let r = app
        .post_json("/stores/ping", &app.admin, store(c, "woocommerce", adapter(&shop.url(), KEY, SECRET)))
        .await;
    assert_refused(&r, "not JSON");
    // WordPress without WooCommerce.
    shop.set_woocommerce_active(false);
    let r = app
        .post_json("/stores/ping", &app.admin, store(c, "woocommerce", adapter(&shop.url(), KEY, SECRET)))
        .await;
    assert_refused(&r, "has no route wc/v3/orders: is WooCommerce (3.5 or later) active?");
}

#[rocket::async_test]
async fn a_ping_answered_with_503_or_nothing_is_unreachable() {
    let shop = woocommerce::Simulator::start(KEY, SECRET).await;
    let app = live_app().await;
    let c = app.post_json("/customers", &app.admin, json!({"company_name": "Acme"})).await.id();
    shop.fail_next("", 503, 1);
    let r = app
        .post_json("/stores/ping", &app.admin, store(c, "woocommerce", adapter(&shop.url(), KEY, SECRET)))
        .await;
    assert_error(&r, 502, "adapter_unreachable");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let r =
        app.post_json("/stores/ping", &app.admin, store(c, "woocommerce", adapter(&url, KEY, SECRET))).await;
    assert_error(&r, 502, "adapter_unreachable");
}

#[rocket::async_test]
async fn a_ping_asked_to_wait_past_any_clock_is_unreachable_not_a_500() {
    let shop = woocommerce::Simulator::start(KEY, SECRET).await;
    let app = live_app().await;
    let c = app.post_json("/customers", &app.admin, json!({"company_name": "Acme"})).await.id();
    shop.retry_after_next(429, u64::MAX, 1);
    let r = app
        .post_json("/stores/ping", &app.admin, store(c, "woocommerce", adapter(&shop.url(), KEY, SECRET)))
        .await;
    assert_error(&r, 502, "adapter_unreachable");
    let message = r.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("18446744073709551615"), "{message}");
}

#[rocket::async_test]
async fn a_customer_user_may_not_point_a_store_at_loopback_and_nothing_is_asked() {
    let shop = woocommerce::Simulator::start(KEY, SECRET).await;
    let app = live_app().await;
    let (customer, tenant) = app.tenant("Acme").await;
    let body = store(customer, "woocommerce", adapter(&shop.url(), KEY, SECRET));
    for path in ["/stores/ping", "/stores"] {
        let r = app.post_json(path, &tenant, body.clone()).await;
        assert_error(&r, 422, "validation_failed");
        let detail = r.body["error"]["details"]["adapter[url]"].as_str().unwrap_or_default();
        assert!(detail.contains("a loopback address"), "{path}: {r:?}");
    }
    assert!(shop.requests().is_empty(), "{:?}", shop.requests());
    let r = app.post_json("/stores/ping", &app.admin, body).await;
    assert_eq!(r.status.code, 204, "an admin may: {r:?}");
}
