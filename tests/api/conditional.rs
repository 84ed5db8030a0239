//! Conditional requests: every successful GET carries a weak ETag of what it shows, and an
//! `If-None-Match` that still names it answers 304 with no body.

use serde_json::{Value, json};

use crate::common::{TestApp, spawn_app};

fn order(store_id: i64, external_id: &str, sku: &str) -> Value {
    json!({"store_id": store_id, "external_id": external_id, "ordered_at": "2026-11-01T10:00:00Z",
           "order_items": [{"sku": sku, "quantity": 1}]})
}

async fn store_of(app: &TestApp, customer_id: i64) -> i64 {
    app.post_json(
        "/stores",
        &app.admin,
        json!({"customer_id": customer_id, "name": format!("shop {customer_id}"), "platform": "big_commerce",
               "adapter": {"access_token": "t", "store_hash": "h"}}),
    )
    .await
    .id()
}

async fn import(app: &TestApp, records: Value) {
    let r = app.post_json("/import/orders", &app.admin, records).await;
    assert_eq!(r.status.code, 200, "{r:?}");
}

#[rocket::async_test]
async fn a_document_answers_304_while_it_is_unchanged_and_200_with_a_new_tag_after_a_change() {
    let app = spawn_app().await;
    let (customer, _) = app.tenant("Acme").await;
    let store = store_of(&app, customer).await;
    import(&app, json!([order(store, "A-1", "SKU-1")])).await;
    let id = app.get("/orders?page=1", &app.admin).await.body["orders"][0]["id"].as_i64().unwrap();
    let path = format!("/orders/{id}");

    let first = app.get(&path, &app.admin).await;
    assert_eq!(first.status.code, 200);
    let tag = first.header("ETag").expect("an ETag").to_string();
    assert!(tag.starts_with("W/\""), "a weak tag: {tag}");
    assert_eq!(first.header("Cache-Control"), Some("private, no-cache"));

    let again = app.get_if_none_match(&path, &app.admin, &tag).await;
    assert_eq!(again.status.code, 304, "{again:?}");
    assert!(again.text.is_empty(), "a 304 has no body");
    assert_eq!(again.header("ETag"), Some(tag.as_str()));
    // Strong and weak forms compare weakly; a list may name it; another tag does not.
    let strong = tag.trim_start_matches("W/");
    assert_eq!(app.get_if_none_match(&path, &app.admin, strong).await.status.code, 304);
    let listed = format!("W/\"nope\", {tag}");
    assert_eq!(app.get_if_none_match(&path, &app.admin, &listed).await.status.code, 304);
    assert_eq!(app.get_if_none_match(&path, &app.admin, "W/\"nope\"").await.status.code, 200);

    import(&app, json!([order(store, "A-1", "SKU-2")])).await;
    let changed = app.get_if_none_match(&path, &app.admin, &tag).await;
    assert_eq!(changed.status.code, 200, "the order changed: {changed:?}");
    assert_ne!(changed.header("ETag"), Some(tag.as_str()));
    assert_eq!(changed.body["order"]["order_items"][0]["sku"], "SKU-2");
}

#[rocket::async_test]
async fn a_listing_page_is_tagged_by_what_it_shows_and_another_customers_writes_do_not_change_it() {
    let app = spawn_app().await;
    let (acme, acme_token) = app.tenant("Acme").await;
    let (other, _) = app.tenant("Other").await;
    let (acme_store, other_store) = (store_of(&app, acme).await, store_of(&app, other).await);
    import(&app, json!([order(acme_store, "A-1", "SKU-1")])).await;

    let path = "/orders?page=1&limit=10";
    let page = app.get(path, &acme_token).await;
    assert_eq!(page.status.code, 200);
    let tag = page.header("ETag").expect("an ETag").to_string();
    assert_eq!(app.get_if_none_match(path, &acme_token, &tag).await.status.code, 304);

    // Another customer's order: Acme's page is the same, and so is its tag.
    import(&app, json!([order(other_store, "O-1", "SKU-9")])).await;
    let after_other = app.get_if_none_match(path, &acme_token, &tag).await;
    assert_eq!(after_other.status.code, 304, "nothing on Acme's page changed: {after_other:?}");

    // Acme's own new order changes the page.
    import(&app, json!([order(acme_store, "A-2", "SKU-1")])).await;
    let after_own = app.get_if_none_match(path, &acme_token, &tag).await;
    assert_eq!(after_own.status.code, 200);
    assert_eq!(after_own.body["orders"].as_array().map(Vec::len), Some(2));
}

#[rocket::async_test]
async fn errors_and_writes_carry_no_tag_and_if_modified_since_alone_never_answers_304() {
    let app = spawn_app().await;
    let missing = app.get_if_none_match("/orders/999", &app.admin, "*").await;
    assert_eq!(missing.status.code, 404);
    assert_eq!(missing.header("ETag"), None);
    let created = app.post_json("/customers", &app.admin, json!({"company_name": "Acme"})).await;
    assert_eq!(created.status.code, 201);
    assert_eq!(created.header("ETag"), None);
    // Without a Last-Modified there is nothing to compare a date with (RFC 9110 §13.1.3).
    let request = app
        .client
        .get("/customers")
        .header(rocket::http::Header::new("Authorization", format!("Bearer {}", app.admin)))
        .header(rocket::http::Header::new("If-Modified-Since", "Sun, 06 Nov 2050 08:49:37 GMT"));
    let response = request.dispatch().await;
    assert_eq!(response.status().code, 200);
    assert_eq!(response.headers().get_one("Last-Modified"), None);
}

/// Page-mode answers are kept for repeats (`listing::Pages`): a kept page is served only to
/// callers who may see all of it, and never after the data changed.
#[rocket::async_test]
async fn a_kept_page_is_served_to_its_own_customer_only_and_never_after_a_change() {
    let app = spawn_app().await;
    let (acme, acme_token) = app.tenant("Acme").await;
    let (other, other_token) = app.tenant("Other").await;
    let (acme_store, other_store) = (store_of(&app, acme).await, store_of(&app, other).await);
    import(&app, json!([order(acme_store, "A-1", "SKU-1"), order(other_store, "O-1", "SKU-9")])).await;

    let path = "/orders?page=1&limit=10";
    let externals = |r: &crate::common::Reply| -> Vec<String> {
        r.body["orders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["external_id"].as_str().unwrap().to_string())
            .collect()
    };
    // The same URL, asked twice by each: every caller sees its own page, each time.
    for _ in 0..2 {
        assert_eq!(externals(&app.get(path, &acme_token).await), ["A-1"]);
        assert_eq!(externals(&app.get(path, &other_token).await), ["O-1"]);
        assert_eq!(externals(&app.get(path, &app.admin).await), ["A-1", "O-1"]);
    }
    // A write lands: the next answer shows it, for every caller the page concerns.
    import(&app, json!([order(acme_store, "A-2", "SKU-1")])).await;
    assert_eq!(externals(&app.get(path, &acme_token).await), ["A-1", "A-2"]);
    assert_eq!(externals(&app.get(path, &app.admin).await), ["A-1", "O-1", "A-2"]);
    assert_eq!(externals(&app.get(path, &other_token).await), ["O-1"]);
    // A record changed in place, the page's length unchanged: the answer is new too.
    import(&app, json!([order(acme_store, "A-1", "SKU-CHANGED")])).await;
    let page = app.get(path, &acme_token).await;
    assert_eq!(page.body["orders"][0]["order_items"][0]["sku"], "SKU-CHANGED");
}
