//! Stores: create, list, get, update, enable/disable, ping; JSON, form and multipart bodies;
//! adapter validation and masking; tenancy.

use crate::common::*;
use rocket::http::Status;
use serde_json::{Value, json};

pub const ACCESS_TOKEN: &str = "bc-access-token-1234567890";

pub fn bigcommerce_store(customer_id: i64) -> Value {
    json!({
        "customer_id": customer_id,
        "name": "Main shop",
        "description": "The web shop",
        "url": "https://shop.example.com",
        "platform": "bigcommerce",
        "adapter": {"access_token": ACCESS_TOKEN, "store_hash": "abc123", "client_id": "client-1"},
    })
}

/// Rows in `table`, read straight from the database.
pub fn count(app: &TestApp, table: &str) -> i64 {
    let conn = app.pool().get().unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

/// A stored adapter as the database holds it, unmasked.
pub fn stored_adapter(app: &TestApp, table: &str, id: i64) -> Value {
    let conn = app.pool().get().unwrap();
    let text: String = conn
        .query_row(&format!("SELECT ob_open(adapter) FROM {table} WHERE id = ?1"), [id], |r| r.get(0))
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

pub async fn customer(app: &TestApp, name: &str) -> i64 {
    app.post_json("/customers", &app.admin, json!({"company_name": name})).await.id()
}

/// `enabled_at` of the resource at `path`, as an admin sees it.
pub async fn enabled_at(app: &TestApp, path: &str) -> Value {
    app.get(path, &app.admin).await.body["enabled_at"].clone()
}

#[rocket::async_test]
async fn create_then_get_returns_every_field_with_the_adapter_masked() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let r = app.post_json("/stores", &app.admin, bigcommerce_store(c)).await;
    let id = r.id();
    assert_eq!(r.header("Location"), Some(format!("/stores/{id}").as_str()));
    assert_eq!(r.body, json!({"id": id}));

    let s = app.get(&format!("/stores/{id}"), &app.admin).await;
    assert_eq!(s.status, Status::Ok);
    let created_at = s.body["created_at"].as_str().unwrap().to_string();
    assert_eq!(created_at.len(), 24, "millisecond UTC timestamp: {created_at}");
    assert_eq!(
        s.body,
        json!({
            "id": id, "customer_id": c, "name": "Main shop", "description": "The web shop",
            "url": "https://shop.example.com", "platform": "bigcommerce",
            "adapter": {"access_token": "********7890", "store_hash": "abc123", "client_id": "client-1"},
            "created_at": created_at, "enabled_at": null, "order_imported_at": null, "inventory_updated_at": null,
        })
    );
    let list = app.get("/stores", &app.admin).await;
    assert_eq!(list.body, json!([s.body]));
    for text in [&s.text, &list.text] {
        assert!(!text.contains(ACCESS_TOKEN), "the secret never leaves whole: {text}");
    }
    assert_eq!(stored_adapter(&app, "stores", id)["access_token"], ACCESS_TOKEN, "stored unmasked");
    let raw: String = app
        .pool()
        .get()
        .unwrap()
        .query_row("SELECT adapter FROM stores WHERE id = ?1", [id], |r| r.get(0))
        .unwrap();
    assert!(!raw.contains(ACCESS_TOKEN) && raw.contains("enc:v1:"), "sealed at rest: {raw}");
}

#[rocket::async_test]
async fn optional_fields_default_to_null_and_other_platforms_take_any_adapter() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let id = app
        .post_json(
            "/stores",
            &app.admin,
            json!({"customer_id": c.to_string(), "name": "S", "platform": "etsy",
                   "adapter": {"api_key": "short", "shop": {"password": "nested-password-1"}, "n": 5}}),
        )
        .await
        .id();
    let s = app.get(&format!("/stores/{id}"), &app.admin).await.body;
    assert_eq!(s["description"], json!(null));
    assert_eq!(s["url"], json!(null));
    assert_eq!(s["adapter"], json!({"api_key": "********", "shop": {"password": "********rd-1"}, "n": 5}));
}

#[rocket::async_test]
async fn form_and_multipart_bodies_create_stores() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let form = format!(
        "customer_id={c}&name=Form+shop&platform=sellbrite&adapter[auth_token]=sb-auth-token-0001\
         &adapter[secret_key]=sb-secret-key-0002&description=&enabled_at="
    );
    let a = app.post_form("/stores", &app.admin, &form).await.id();
    let c_text = c.to_string();
    let b = app
        .post_multipart(
            "/stores",
            &app.admin,
            &[
                ("customer_id", &c_text),
                ("name", "Multipart shop"),
                ("platform", "bigcommerce"),
                ("adapter[access_token]", ACCESS_TOKEN),
                ("adapter[store_hash]", "hash9"),
                ("enabled_at", "2024-03-05T14:07:09.120Z"),
            ],
        )
        .await
        .id();
    let a = app.get(&format!("/stores/{a}"), &app.admin).await.body;
    assert_eq!(a["name"], "Form shop");
    assert_eq!(a["description"], json!(null));
    assert_eq!(a["enabled_at"], json!(null));
    assert_eq!(a["adapter"], json!({"auth_token": "********0001", "secret_key": "********0002"}));
    let b = app.get(&format!("/stores/{b}"), &app.admin).await.body;
    assert_eq!(b["enabled_at"], "2024-03-05T14:07:09.120Z");
    assert_eq!(b["adapter"]["store_hash"], "hash9");
}

/// Bad store bodies and the field each must name; shared by create and ping.
pub fn bad_store_bodies(c: i64) -> Vec<(&'static str, Value, &'static str)> {
    let with = |key: &str, value: Value| {
        let mut body = bigcommerce_store(c);
        body[key] = value;
        body
    };
    let without = |key: &str| {
        let mut body = bigcommerce_store(c);
        body.as_object_mut().unwrap().remove(key);
        body
    };
    vec![
        ("missing customer_id", without("customer_id"), "customer_id"),
        ("missing name", without("name"), "name"),
        ("blank name", with("name", json!(" ")), "name"),
        ("missing platform", without("platform"), "platform"),
        ("missing adapter", without("adapter"), "adapter"),
        ("adapter not an object", with("adapter", json!("token")), "adapter"),
        ("name not a string", with("name", json!(7)), "name"),
        ("customer_id not an id", with("customer_id", json!("abc")), "customer_id"),
        ("unknown customer_id", with("customer_id", json!(9999)), "customer_id"),
        ("platform with capitals", with("platform", json!("BigCommerce")), "platform"),
        ("platform with a dash", with("platform", json!("big-commerce")), "platform"),
        ("platform not a string", with("platform", json!(1)), "platform"),
        (
            "bigcommerce without store_hash",
            with("adapter", json!({"access_token": "t"})),
            "adapter[store_hash]",
        ),
        (
            "bigcommerce without access_token",
            with("adapter", json!({"store_hash": "h"})),
            "adapter[access_token]",
        ),
        (
            "bigcommerce client_id not a string",
            with("adapter", json!({"access_token": "t", "store_hash": "h", "client_id": 5})),
            "adapter[client_id]",
        ),
        (
            "sellbrite without secret_key",
            json!({"customer_id": c, "name": "S", "platform": "sellbrite", "adapter": {"auth_token": "a"}}),
            "adapter[secret_key]",
        ),
        ("enabled_at not a date", with("enabled_at", json!("someday maybe")), "enabled_at"),
        ("url not a string", with("url", json!(["x"])), "url"),
    ]
}

#[rocket::async_test]
async fn create_store_returns_422_naming_each_bad_field() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    for (what, body, field) in bad_store_bodies(c) {
        let r = app.post_json("/stores", &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    let r = app
        .post_form(
            "/stores",
            &app.admin,
            &format!("customer_id={c}&name=x&platform=bigcommerce&adapter[access_token]=t"),
        )
        .await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["adapter[store_hash]"].is_string(), "form body: {r:?}");
    assert_eq!(count(&app, "stores"), 0, "nothing was written");
}

#[rocket::async_test]
async fn patch_changes_only_present_fields_and_revalidates_the_adapter() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let id = app.post_json("/stores", &app.admin, bigcommerce_store(c)).await.id();
    let path = format!("/stores/{id}");

    let r = app
        .patch_json(&path, &app.admin, json!({"description": "New", "url": null, "customer_id": 77}))
        .await;
    assert_eq!(r.status, Status::NoContent);
    assert!(r.text.is_empty());
    let s = app.get(&path, &app.admin).await.body;
    assert_eq!((s["description"].clone(), s["url"].clone()), (json!("New"), json!(null)));
    assert_eq!(
        (s["name"].clone(), s["customer_id"].clone()),
        (json!("Main shop"), json!(c)),
        "customer_id is read-only"
    );

    // The adapter as a GET returned it, with one field changed: the masked secret is kept.
    let mut adapter = s["adapter"].clone();
    adapter["store_hash"] = json!("newhash");
    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"adapter": adapter})).await.status,
        Status::NoContent
    );
    assert_eq!(
        stored_adapter(&app, "stores", id),
        json!({"access_token": ACCESS_TOKEN, "store_hash": "newhash", "client_id": "client-1"})
    );

    let cases = [
        ("platform change without its adapter", json!({"platform": "sellbrite"}), "adapter[auth_token]"),
        ("adapter lacking store_hash", json!({"adapter": {"access_token": "t"}}), "adapter[store_hash]"),
        ("null name", json!({"name": null}), "name"),
        ("null platform", json!({"platform": null}), "platform"),
        ("null adapter", json!({"adapter": null}), "adapter"),
        ("bad platform", json!({"platform": "Nope!"}), "platform"),
        ("bad enabled_at", json!({"enabled_at": 5}), "enabled_at"),
    ];
    for (what, body, field) in cases {
        let r = app.patch_json(&path, &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }

    let r = app
        .patch_form(
            &path,
            &app.admin,
            "platform=sellbrite&adapter[auth_token]=auth-0123456789&adapter[secret_key]=k",
        )
        .await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    let s = app.get(&path, &app.admin).await.body;
    assert_eq!(s["platform"], "sellbrite");
    assert_eq!(s["adapter"], json!({"auth_token": "********6789", "secret_key": "********"}));
}

#[rocket::async_test]
async fn enabled_at_enables_and_null_or_empty_disables() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let id = app.post_json("/stores", &app.admin, bigcommerce_store(c)).await.id();
    let path = format!("/stores/{id}");

    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"enabled_at": "2024-03-05"})).await.status,
        Status::NoContent
    );
    assert_eq!(enabled_at(&app, &path).await, "2024-03-05T00:00:00.000Z");
    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"enabled_at": null})).await.status,
        Status::NoContent
    );
    assert_eq!(enabled_at(&app, &path).await, json!(null));
    assert_eq!(app.patch_form(&path, &app.admin, "enabled_at=now").await.status, Status::NoContent);
    assert!(enabled_at(&app, &path).await.as_str().is_some_and(|s| s.ends_with('Z')), "now enables");
    assert_eq!(app.patch_form(&path, &app.admin, "enabled_at=").await.status, Status::NoContent);
    assert_eq!(enabled_at(&app, &path).await, json!(null));
}

#[rocket::async_test]
async fn unknown_garbage_and_foreign_store_ids_answer_404() {
    let app = spawn_app().await;
    let (mine, token) = app.tenant("Mine").await;
    let theirs = customer(&app, "Theirs").await;
    app.post_json("/stores", &app.admin, bigcommerce_store(mine)).await.id();
    let foreign = app.post_json("/stores", &app.admin, bigcommerce_store(theirs)).await.id();
    for path in [
        "/stores/9999".to_string(),
        "/stores/abc".to_string(),
        "/stores/0".to_string(),
        format!("/stores/{foreign}"),
    ] {
        assert_error(&app.get(&path, &token).await, 404, "not_found");
        assert_error(&app.patch_json(&path, &token, json!({"name": "x"})).await, 404, "not_found");
    }
    assert_eq!(
        app.get(&format!("/stores/{foreign}"), &token).await.text,
        app.get("/stores/9999", &token).await.text.replace("9999", &foreign.to_string()),
        "a foreign store answers exactly like a missing one"
    );
}

#[rocket::async_test]
async fn a_customer_user_sees_and_creates_only_its_own_stores() {
    let app = spawn_app().await;
    let (mine, token) = app.tenant("Mine").await;
    let (theirs, their_token) = app.tenant("Theirs").await;

    let mut body = bigcommerce_store(mine);
    body.as_object_mut().unwrap().remove("customer_id");
    let own = app.post_json("/stores", &token, body).await.id();
    let other = app.post_json("/stores", &their_token, bigcommerce_store(theirs)).await.id();

    let r = app.post_json("/stores", &token, bigcommerce_store(theirs)).await;
    assert_error(&r, 422, "validation_failed");
    assert_eq!(r.body["error"]["details"]["customer_id"], format!("unknown customer_id {theirs}"));

    let list = app.get("/stores", &token).await.body;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!((list[0]["id"].clone(), list[0]["customer_id"].clone()), (json!(own), json!(mine)));
    assert_eq!(
        app.patch_json(&format!("/stores/{own}"), &token, json!({"name": "Renamed"})).await.status,
        Status::NoContent
    );
    let all = app.get("/stores", &app.admin).await.body;
    let ids: Vec<i64> = all.as_array().unwrap().iter().map(|s| s["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, vec![own, other], "admins see every store, ordered by id");
}

#[rocket::async_test]
async fn offline_ping_validates_like_create_and_writes_nothing() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let before = (count(&app, "stores"), count(&app, "customers"));

    let r = app.post_json("/stores/ping", &app.admin, bigcommerce_store(c)).await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    assert!(r.text.is_empty());
    let form =
        format!("customer_id={c}&name=x&platform=sellbrite&adapter[auth_token]=a&adapter[secret_key]=b");
    assert_eq!(app.post_form("/stores/ping", &app.admin, &form).await.status, Status::NoContent);

    for (what, body, field) in bad_store_bodies(c) {
        let ping = app.post_json("/stores/ping", &app.admin, body.clone()).await;
        let create = app.post_json("/stores", &app.admin, body).await;
        assert_error(&ping, 422, "validation_failed");
        assert_eq!(ping.body, create.body, "{what}: ping answers exactly as create");
        assert!(ping.body["error"]["details"][field].is_string(), "{what}: {ping:?}");
    }
    assert_eq!((count(&app, "stores"), count(&app, "customers")), before, "nothing was created");
}

#[rocket::async_test]
async fn ping_with_a_foreign_customer_answers_422_like_create() {
    let app = spawn_app().await;
    let (_, token) = app.tenant("Mine").await;
    let theirs = customer(&app, "Theirs").await;
    let r = app.post_json("/stores/ping", &token, bigcommerce_store(theirs)).await;
    assert_error(&r, 422, "validation_failed");
    assert_eq!(r.body["error"]["details"]["customer_id"], format!("unknown customer_id {theirs}"));
}

#[rocket::async_test]
async fn live_ping_of_a_platform_without_a_check_answers_unsupported_platform() {
    let app = spawn_app_with(|f| f.merge(("ping_mode", "live"))).await;
    let c = customer(&app, "Acme").await;
    let r = app
        .post_json(
            "/stores/ping",
            &app.admin,
            json!({"customer_id": c, "name": "S", "platform": "etsy", "adapter": {"api_key": "k"}}),
        )
        .await;
    assert_error(&r, 422, "unsupported_platform");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("'etsy'"), "{r:?}");
    assert_eq!(count(&app, "stores"), 0);
}
