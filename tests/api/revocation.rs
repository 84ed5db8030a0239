//! Revoked tokens on every route: each answers 401 from the request's one checked trip to
//! the database, and writes nothing.

use crate::common::*;
use crate::fixtures;
use orderbridge::http::users::{self, Role};
use rocket::http::{ContentType, Status};
use serde_json::{Value, json};

/// A read and a write of every route (method, path, body), for a world with one of each row.
fn every_route(ids: &Ids, session: &str) -> Vec<(&'static str, String, Option<Value>)> {
    let Ids {
        customer: c,
        store: s,
        spare_store,
        warehouse: w,
        connection,
        channel,
        product,
        collection,
        order,
    } = *ids;
    let get = |path: String| ("GET", path, None);
    let store = json!({"customer_id": c, "name": "New shop", "platform": "bigcommerce",
                       "adapter": {"access_token": "token-123456", "store_hash": "abc123"}});
    let warehouse = json!({"customer_id": c, "name": "New DC", "platform": "sftp",
                           "adapter": {"connection_string": "sftp://u:pw-123456@files.example.com/in"}});
    vec![
        get("/customers".into()),
        get(format!("/customers/{c}")),
        ("POST", "/customers".into(), Some(json!({"company_name": "New Co"}))),
        ("PATCH", format!("/customers/{c}"), Some(json!({"company_name": "Renamed"}))),
        get("/stores".into()),
        get(format!("/stores/{s}")),
        ("POST", "/stores".into(), Some(store.clone())),
        ("POST", "/stores/ping".into(), Some(store.clone())),
        ("PATCH", format!("/stores/{s}"), Some(json!({"name": "Renamed"}))),
        get("/warehouses".into()),
        get(format!("/warehouses/{w}")),
        ("POST", "/warehouses".into(), Some(warehouse.clone())),
        ("POST", "/warehouses/ping".into(), Some(warehouse.clone())),
        ("PATCH", format!("/warehouses/{w}"), Some(json!({"name": "Renamed"}))),
        get("/connections".into()),
        get(format!("/connections/{connection}")),
        (
            "POST",
            "/connections".into(),
            Some(json!({"name": "Second", "customer_id": c, "store_id": spare_store, "warehouse_id": w})),
        ),
        ("PATCH", format!("/connections/{connection}"), Some(json!({"name": "Renamed"}))),
        get(format!("/connections/{connection}/channels")),
        (
            "PATCH",
            format!("/connections/{connection}/channels/{channel}"),
            Some(json!({"enabled_at": "2026-01-01T00:00:00Z"})),
        ),
        get(format!("/products?customer_id={c}")),
        get(format!("/products/{product}")),
        ("POST", "/products".into(), Some(json!({"customer_id": c, "sku": "SKU-NEW"}))),
        ("PATCH", format!("/products/{product}"), Some(json!({"sku": "SKU-RENAMED"}))),
        get("/variant_collections".into()),
        get(format!("/variant_collections/{collection}")),
        (
            "POST",
            "/variant_collections".into(),
            Some(json!({"customer_id": c, "name": "New", "product_ids": [product]})),
        ),
        ("PATCH", format!("/variant_collections/{collection}"), Some(json!({"name": "Renamed"}))),
        get("/orders?limit=1".into()),
        get("/orders?page=1&limit=1".into()),
        get(format!("/orders?session_id={session}")),
        get(format!("/orders/{order}")),
        get("/shipments?page=1".into()),
        get("/shipments?limit=1".into()),
        ("POST", "/import/orders".into(), Some(json!([fixtures::order(s, "NEW-1")]))),
        (
            "POST",
            "/import/shipments".into(),
            Some(json!([{"order_id": order, "warehouse_id": w, "tracking_number": "T-NEW"}])),
        ),
    ]
}

#[derive(Clone, Copy)]
struct Ids {
    customer: i64,
    store: i64,
    spare_store: i64,
    warehouse: i64,
    connection: i64,
    channel: i64,
    product: i64,
    collection: i64,
    order: i64,
}

async fn one_of_each(app: &TestApp) -> Ids {
    let admin = &app.admin;
    let w = fixtures::world(app, "Acme").await;
    let spare_store = fixtures::store(app, w.customer, "Spare");
    let connection = app
        .post_json(
            "/connections",
            admin,
            json!({"name": "Main", "customer_id": w.customer, "store_id": w.store, "warehouse_id": w.warehouse}),
        )
        .await
        .id();
    let channels = app.get(&format!("/connections/{connection}/channels"), admin).await;
    let channel = channels.body[0]["id"].as_i64().expect("a channel");
    let product =
        app.post_json("/products", admin, json!({"customer_id": w.customer, "sku": "SKU-1"})).await.id();
    let collection = app
        .post_json(
            "/variant_collections",
            admin,
            json!({"customer_id": w.customer, "name": "C", "product_ids": [product]}),
        )
        .await
        .id();
    fixtures::import_orders(app, vec![fixtures::order(w.store, "X1")]);
    let order: i64 = app.pool().get().unwrap().query_row("SELECT id FROM orders", [], |r| r.get(0)).unwrap();
    Ids {
        customer: w.customer,
        store: w.store,
        spare_store,
        warehouse: w.warehouse,
        connection,
        channel,
        product,
        collection,
        order,
    }
}

async fn call(app: &TestApp, method: &str, path: &str, token: &str, body: &Option<Value>) -> Reply {
    match body {
        Some(body) => app.send(method, path, token, ContentType::JSON, body.to_string()).await,
        None => app.get(path, token).await,
    }
}

#[rocket::async_test]
async fn a_disabled_admins_token_gets_401_on_every_route_and_writes_nothing() {
    let app = spawn_app().await;
    let ids = one_of_each(&app).await;
    let token = app.user_token("ops", Role::Admin, None).await;
    let opened = app.get("/orders?limit=1", &token).await;
    let session = opened.body["session_id"].as_str().expect("a session").to_string();
    let resume = format!("/orders?session_id={session}");
    assert_eq!(app.get(&resume, &token).await.status, Status::Ok, "the session works before");

    users::disable(&app.pool().get().unwrap(), "ops").unwrap();
    let before = all_rows(&app);
    let routes = every_route(&ids, &session);
    for (method, path, body) in &routes {
        let r = call(&app, method, path, &token, body).await;
        assert_eq!(r.status.code, 401, "{method} {path}: {r:?}");
        assert_error(&r, 401, "unauthorized");
        assert_eq!(
            r.header("WWW-Authenticate"),
            Some(r#"Bearer realm="orderbridge", error="invalid_token""#),
            "{method} {path}"
        );
    }
    assert_eq!(all_rows(&app), before, "refused requests write nothing");

    // The same calls succeed with a live admin token, so each 401 above was the revocation.
    for (method, path, body) in routes.iter().filter(|(_, path, _)| *path != resume) {
        let r = call(&app, method, path, &app.admin, body).await;
        assert!(r.status.code < 300, "{method} {path} with a live token: {r:?}");
    }
}
