//! Connections and their channels: create from ids or nested objects in one transaction,
//! the unique triple, enable/disable, tenancy.

use crate::common::*;
use crate::stores::{ACCESS_TOKEN, bigcommerce_store, count, customer, enabled_at};
use crate::warehouses::sftp_warehouse;
use rocket::http::Status;
use serde_json::{Value, json};

/// A customer with one store and one warehouse: (customer, store, warehouse).
async fn parties(app: &TestApp, name: &str) -> (i64, i64, i64) {
    let c = customer(app, name).await;
    let s = app.post_json("/stores", &app.admin, bigcommerce_store(c)).await.id();
    let w = app.post_json("/warehouses", &app.admin, sftp_warehouse(c)).await.id();
    (c, s, w)
}

fn nested_store() -> Value {
    let mut store = bigcommerce_store(0);
    store.as_object_mut().unwrap().remove("customer_id");
    store
}

fn nested_warehouse() -> Value {
    let mut warehouse = sftp_warehouse(0);
    warehouse.as_object_mut().unwrap().remove("customer_id");
    warehouse
}

fn table_counts(app: &TestApp) -> [i64; 5] {
    ["customers", "stores", "warehouses", "connections", "channels"].map(|t| count(app, t))
}

#[rocket::async_test]
async fn create_from_ids_then_get_returns_every_field_and_disabled_sales_and_inventory_channels() {
    let app = spawn_app().await;
    let (c, s, w) = parties(&app, "Acme").await;
    let r = app
        .post_json(
            "/connections",
            &app.admin,
            json!({"name": "Main", "customer_id": c, "store_id": s.to_string(), "warehouse_id": w}),
        )
        .await;
    let id = r.id();
    assert_eq!(r.header("Location"), Some(format!("/connections/{id}").as_str()));
    let got = app.get(&format!("/connections/{id}"), &app.admin).await;
    let created_at = got.body["created_at"].as_str().unwrap().to_string();
    assert_eq!(
        got.body,
        json!({"id": id, "customer_id": c, "warehouse_id": w, "store_id": s, "name": "Main",
               "connection_type": "fulfillment", "created_at": created_at, "enabled_at": null, "locations": []})
    );
    assert_eq!(app.get("/connections", &app.admin).await.body, json!([got.body]));

    let channels = app.get(&format!("/connections/{id}/channels"), &app.admin).await;
    assert_eq!(channels.status, Status::Ok);
    let channel = channels.body[0]["id"].as_i64().unwrap();
    assert_eq!(
        channels.body,
        json!([{"id": channel, "type": "sales", "enabled_at": null},
               {"id": channel + 1, "type": "inventory", "enabled_at": null}]),
        "both channels, disabled, sales first"
    );
}

#[rocket::async_test]
async fn form_and_multipart_bodies_create_connections_with_locations() {
    let app = spawn_app().await;
    let (c, s, w) = parties(&app, "Acme").await;
    let s2 = app.post_json("/stores", &app.admin, bigcommerce_store(c)).await.id();
    let form = format!(
        "name=Form&customer_id={c}&store_id={s}&warehouse_id={w}&connection_type=dropship\
         &locations[0][code]=EAST&locations[1][code]=WEST&enabled_at=2024-03-05T14:07:09.120Z"
    );
    let a = app.post_form("/connections", &app.admin, &form).await.id();
    let (s2, w) = (s2.to_string(), w.to_string());
    let b = app
        .post_multipart(
            "/connections",
            &app.admin,
            &[("name", "Multi"), ("store_id", &s2), ("warehouse_id", &w)],
        )
        .await
        .id();
    let a = app.get(&format!("/connections/{a}"), &app.admin).await.body;
    assert_eq!(a["locations"], json!([{"code": "EAST"}, {"code": "WEST"}]));
    assert_eq!(a["connection_type"], "dropship");
    assert_eq!(a["enabled_at"], "2024-03-05T14:07:09.120Z");
    let b = app.get(&format!("/connections/{b}"), &app.admin).await.body;
    assert_eq!(b["customer_id"], c, "an admin omitting the customer gets the store's");
}

#[rocket::async_test]
async fn nested_customer_store_and_warehouse_are_created_together() {
    let app = spawn_app().await;
    let r = app
        .post_json(
            "/connections",
            &app.admin,
            json!({"name": "All new", "customer": {"company_name": "Nested Co"},
                   "store": nested_store(), "warehouse": nested_warehouse()}),
        )
        .await;
    let id = r.id();
    let conn = app.get(&format!("/connections/{id}"), &app.admin).await.body;
    let c = conn["customer_id"].as_i64().unwrap();
    assert_eq!(app.get(&format!("/customers/{c}"), &app.admin).await.body["company_name"], "Nested Co");
    let store = app.get(&format!("/stores/{}", conn["store_id"]), &app.admin).await;
    assert_eq!(
        (store.body["customer_id"].clone(), store.body["name"].clone()),
        (json!(c), json!("Main shop"))
    );
    assert!(!store.text.contains(ACCESS_TOKEN));
    let warehouse = app.get(&format!("/warehouses/{}", conn["warehouse_id"]), &app.admin).await.body;
    assert_eq!(warehouse["customer_id"], c);
    assert_eq!(table_counts(&app), [1, 1, 1, 1, 2], "two channels");
}

#[rocket::async_test]
async fn ids_and_nested_objects_mix_and_form_bodies_nest_too() {
    let app = spawn_app().await;
    let (c, _, w) = parties(&app, "Acme").await;
    let id = app
        .post_json(
            "/connections",
            &app.admin,
            json!({"name": "Mixed", "customer_id": c, "store": nested_store(), "warehouse_id": w}),
        )
        .await
        .id();
    let conn = app.get(&format!("/connections/{id}"), &app.admin).await.body;
    assert_eq!((conn["customer_id"].clone(), conn["warehouse_id"].clone()), (json!(c), json!(w)));

    let form = format!(
        "name=Form+nested&customer_id={c}&store_id={}&warehouse[platform]=ftp\
         &warehouse[adapter][connection_string]=ftp://u:p@ftp.example.com/in",
        conn["store_id"]
    );
    let id = app.post_form("/connections", &app.admin, &form).await.id();
    let conn = app.get(&format!("/connections/{id}"), &app.admin).await.body;
    let warehouse = app.get(&format!("/warehouses/{}", conn["warehouse_id"]), &app.admin).await.body;
    assert_eq!((warehouse["platform"].clone(), warehouse["customer_id"].clone()), (json!("ftp"), json!(c)));
}

#[rocket::async_test]
async fn a_failure_inside_the_transaction_leaves_nothing_behind() {
    let app = spawn_app().await;
    let (_, _, other_warehouse) = parties(&app, "Other").await;
    let before = table_counts(&app);
    // The new customer and store are inserted before the warehouse is found to be foreign.
    let r = app
        .post_json(
            "/connections",
            &app.admin,
            json!({"name": "X", "customer": {"company_name": "Half"}, "store": nested_store(),
                   "warehouse_id": other_warehouse}),
        )
        .await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["warehouse_id"].is_string(), "{r:?}");
    assert_eq!(table_counts(&app), before, "no customer, store or warehouse was left behind");

    let mut bad_warehouse = nested_warehouse();
    bad_warehouse["adapter"]["connection_string"] = json!("sftp://no-password@host/x");
    let r = app
        .post_json(
            "/connections",
            &app.admin,
            json!({"name": "X", "customer": {"company_name": "Half"}, "store": nested_store(),
                   "warehouse": bad_warehouse}),
        )
        .await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["warehouse[adapter][connection_string]"].is_string(), "{r:?}");
    assert_eq!(table_counts(&app), before);
}

#[rocket::async_test]
async fn a_duplicate_triple_answers_409_naming_the_existing_connection() {
    let app = spawn_app().await;
    let (c, s, w) = parties(&app, "Acme").await;
    let body = json!({"name": "First", "customer_id": c, "store_id": s, "warehouse_id": w});
    let first = app.post_json("/connections", &app.admin, body).await.id();
    let before = table_counts(&app);
    let r = app
        .post_form(
            "/connections",
            &app.admin,
            &format!("name=Second&customer_id={c}&store_id={s}&warehouse_id={w}"),
        )
        .await;
    assert_error(&r, 409, "conflict");
    assert_eq!(r.body["error"]["details"], json!({"connection_id": first}), "the id as a number");
    assert_eq!(table_counts(&app), before);
}

#[rocket::async_test]
async fn create_connection_returns_422_naming_each_bad_field() {
    let app = spawn_app().await;
    let (c, s, w) = parties(&app, "Acme").await;
    let (other, other_store, other_warehouse) = parties(&app, "Other").await;
    let good = json!({"name": "C", "customer_id": c, "store_id": s, "warehouse_id": w});
    let with = |key: &str, value: Value| {
        let mut body = good.clone();
        body[key] = value;
        body
    };
    let without = |key: &str| {
        let mut body = good.clone();
        body.as_object_mut().unwrap().remove(key);
        body
    };
    let mut bad_store = nested_store();
    bad_store["adapter"] = json!({"access_token": "t"});
    let cases = [
        ("missing name", without("name"), "name"),
        ("missing store", without("store_id"), "store_id"),
        ("missing warehouse", without("warehouse_id"), "warehouse_id"),
        ("store_id not an id", with("store_id", json!("one")), "store_id"),
        ("store not an object", with("store", json!("new")), "store"),
        ("both store_id and store", with("store", nested_store()), "store"),
        (
            "nested store without store_hash",
            json!({"name": "C", "customer_id": c, "store": bad_store, "warehouse_id": w}),
            "store[adapter][store_hash]",
        ),
        (
            "nested customer without company_name",
            json!({"name": "C", "customer": {"city": "X"}, "store_id": s, "warehouse_id": w}),
            "customer[company_name]",
        ),
        ("both customer_id and customer", with("customer", json!({"company_name": "X"})), "customer"),
        ("foreign store", with("store_id", json!(other_store)), "store_id"),
        ("foreign warehouse", with("warehouse_id", json!(other_warehouse)), "warehouse_id"),
        ("unknown store", with("store_id", json!(9999)), "store_id"),
        ("unknown customer", with("customer_id", json!(9999)), "customer_id"),
        ("store and warehouse of another customer", with("customer_id", json!(other)), "store_id"),
        ("locations not an array", with("locations", json!("east")), "locations"),
        ("location not an object", with("locations", json!([{"a": 1}, 5])), "locations[1]"),
        ("bad connection_type", with("connection_type", json!("Drop Ship")), "connection_type"),
        ("blank connection_type", with("connection_type", json!("")), "connection_type"),
        ("bad enabled_at", with("enabled_at", json!("whenever")), "enabled_at"),
        (
            "no customer and a nested store",
            json!({"name": "C", "store": nested_store(), "warehouse_id": w}),
            "customer_id",
        ),
    ];
    for (what, body, field) in cases {
        let r = app.post_json("/connections", &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    assert_eq!(count(&app, "connections"), 0);
    let r = app.post_json("/connections", &app.admin, with("store_id", json!(other_store))).await;
    assert_eq!(
        r.body["error"]["details"]["store_id"],
        format!("store_id {other_store} belongs to customer {other}, not to customer {c}")
    );
}

#[rocket::async_test]
async fn patch_changes_fields_and_enabled_at_round_trips() {
    let app = spawn_app().await;
    let (c, s, w) = parties(&app, "Acme").await;
    let id = app
        .post_json(
            "/connections",
            &app.admin,
            json!({"name": "C", "customer_id": c, "store_id": s, "warehouse_id": w}),
        )
        .await
        .id();
    let path = format!("/connections/{id}");
    let r = app
        .patch_json(
            &path,
            &app.admin,
            json!({"name": "Renamed", "locations": [{"code": "A"}], "store_id": 99}),
        )
        .await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    let got = app.get(&path, &app.admin).await.body;
    assert_eq!((got["name"].clone(), got["locations"].clone()), (json!("Renamed"), json!([{"code": "A"}])));
    assert_eq!(got["store_id"], s, "store_id is read-only");
    assert_eq!(app.patch_json(&path, &app.admin, json!({"locations": null})).await.status, Status::NoContent);
    assert_eq!(app.get(&path, &app.admin).await.body["locations"], json!([]));

    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"enabled_at": "2024-03-05T10:00:00Z"})).await.status,
        Status::NoContent
    );
    assert_eq!(enabled_at(&app, &path).await, "2024-03-05T10:00:00.000Z");
    assert_eq!(app.patch_form(&path, &app.admin, "enabled_at=").await.status, Status::NoContent);
    assert_eq!(enabled_at(&app, &path).await, json!(null));
    assert_eq!(app.patch_form(&path, &app.admin, "enabled_at=now").await.status, Status::NoContent);
    assert!(enabled_at(&app, &path).await.is_string());
    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"enabled_at": null})).await.status,
        Status::NoContent
    );
    assert_eq!(enabled_at(&app, &path).await, json!(null));

    for (what, body, field) in [
        ("null name", json!({"name": null}), "name"),
        ("blank name", json!({"name": ""}), "name"),
        ("bad enabled_at", json!({"enabled_at": "later-ish"}), "enabled_at"),
        ("locations of numbers", json!({"locations": [1]}), "locations[0]"),
    ] {
        let r = app.patch_json(&path, &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    for path in ["/connections/9999", "/connections/abc"] {
        assert_error(&app.patch_json(path, &app.admin, json!({"name": "x"})).await, 404, "not_found");
        assert_error(&app.get(path, &app.admin).await, 404, "not_found");
    }
}

async fn channel_state(app: &TestApp, channels: &str) -> Value {
    app.get(channels, &app.admin).await.body[0]["enabled_at"].clone()
}

#[rocket::async_test]
async fn channels_enable_and_disable_and_belong_to_their_connection() {
    let app = spawn_app().await;
    let (c, s, w) = parties(&app, "Acme").await;
    let body = json!({"name": "C", "customer_id": c, "store_id": s, "warehouse_id": w});
    let id = app.post_json("/connections", &app.admin, body).await.id();
    let w2 = app.post_json("/warehouses", &app.admin, sftp_warehouse(c)).await.id();
    let other = app
        .post_json("/connections", &app.admin, json!({"name": "D", "store_id": s, "warehouse_id": w2}))
        .await
        .id();
    let channels = format!("/connections/{id}/channels");
    let channel = app.get(&channels, &app.admin).await.body[0]["id"].as_i64().unwrap();
    let path = format!("{channels}/{channel}");

    let r = app.patch_json(&path, &app.admin, json!({"enabled_at": "2024-03-05", "type": "other"})).await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    assert_eq!(channel_state(&app, &channels).await, "2024-03-05T00:00:00.000Z");
    assert_eq!(app.get(&channels, &app.admin).await.body[0]["type"], "sales", "only enabled_at changes");
    assert_eq!(app.patch_form(&path, &app.admin, "enabled_at=").await.status, Status::NoContent);
    assert_eq!(channel_state(&app, &channels).await, json!(null));
    assert_eq!(app.patch_form(&path, &app.admin, "enabled_at=now").await.status, Status::NoContent);
    assert!(channel_state(&app, &channels).await.is_string());
    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"enabled_at": null})).await.status,
        Status::NoContent
    );
    assert_eq!(channel_state(&app, &channels).await, json!(null));

    let r = app.patch_json(&path, &app.admin, json!({})).await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["enabled_at"].is_string(), "{r:?}");
    let r = app.patch_json(&path, &app.admin, json!({"enabled_at": "nope nope"})).await;
    assert_error(&r, 422, "validation_failed");

    let foreign_channel = format!("/connections/{other}/channels/{channel}");
    for path in [
        foreign_channel,
        format!("{channels}/9999"),
        format!("{channels}/x"),
        "/connections/9999/channels/1".into(),
    ] {
        assert_error(
            &app.patch_json(&path, &app.admin, json!({"enabled_at": "now"})).await,
            404,
            "not_found",
        );
    }
    assert_error(&app.get("/connections/9999/channels", &app.admin).await, 404, "not_found");
}

#[rocket::async_test]
async fn a_customer_user_sees_and_creates_only_its_own_connections() {
    let app = spawn_app().await;
    let (mine, token) = app.tenant("Mine").await;
    let (theirs, their_token) = app.tenant("Theirs").await;
    let s = app.post_json("/stores", &token, bigcommerce_store(mine)).await.id();
    let w = app.post_json("/warehouses", &token, sftp_warehouse(mine)).await.id();
    let their_store = app.post_json("/stores", &their_token, bigcommerce_store(theirs)).await.id();
    let their_warehouse = app.post_json("/warehouses", &their_token, sftp_warehouse(theirs)).await.id();
    let foreign = app
        .post_json(
            "/connections",
            &their_token,
            json!({"name": "T", "store_id": their_store, "warehouse_id": their_warehouse}),
        )
        .await
        .id();

    // The own customer is the default; nested objects belong to it.
    let own = app
        .post_json("/connections", &token, json!({"name": "M", "store_id": s, "warehouse_id": w}))
        .await
        .id();
    let nested = app
        .post_json("/connections", &token, json!({"name": "N", "store": nested_store(), "warehouse_id": w}))
        .await
        .id();
    assert_eq!(app.get(&format!("/connections/{nested}"), &token).await.body["customer_id"], mine);

    let r = app
        .post_json(
            "/connections",
            &token,
            json!({"name": "X", "customer": {"company_name": "Mine 2"}, "store_id": s, "warehouse_id": w}),
        )
        .await;
    assert_error(&r, 403, "forbidden");
    let r = app
        .post_json("/connections", &token, json!({"name": "X", "store_id": their_store, "warehouse_id": w}))
        .await;
    assert_error(&r, 422, "validation_failed");
    assert_eq!(r.body["error"]["details"]["store_id"], format!("unknown store_id {their_store}"), "no leak");
    let r = app
        .post_json(
            "/connections",
            &token,
            json!({"name": "X", "customer_id": theirs, "store_id": s, "warehouse_id": w}),
        )
        .await;
    assert_error(&r, 422, "validation_failed");
    assert_eq!(r.body["error"]["details"]["customer_id"], format!("unknown customer_id {theirs}"));

    let ids: Vec<i64> = app
        .get("/connections", &token)
        .await
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![own, nested]);
    let their_channel =
        app.get(&format!("/connections/{foreign}/channels"), &their_token).await.body[0]["id"].clone();
    for r in [
        app.get(&format!("/connections/{foreign}"), &token).await,
        app.patch_json(&format!("/connections/{foreign}"), &token, json!({"name": "x"})).await,
        app.get(&format!("/connections/{foreign}/channels"), &token).await,
        app.patch_json(
            &format!("/connections/{foreign}/channels/{their_channel}"),
            &token,
            json!({"enabled_at": "now"}),
        )
        .await,
    ] {
        assert_error(&r, 404, "not_found");
    }
    assert_eq!(app.get("/connections", &app.admin).await.body.as_array().unwrap().len(), 3);
}
