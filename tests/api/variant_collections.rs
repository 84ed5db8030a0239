//! Variant collections at both paths: create, list, get, update; JSON, form and multipart
//! bodies; product checks; tenancy.

use crate::common::*;
use rocket::http::Status;
use serde_json::{Value, json};

const PATHS: [&str; 2] = ["/variant_collections", "/variant_collection"];

async fn customer(app: &TestApp, name: &str) -> i64 {
    app.post_json("/customers", &app.admin, json!({"company_name": name})).await.id()
}

async fn product(app: &TestApp, token: &str, customer_id: i64, sku: &str) -> i64 {
    app.post_json("/products", token, json!({"customer_id": customer_id, "sku": sku})).await.id()
}

fn ids(list: &Value) -> Vec<i64> {
    list.as_array().expect("a JSON array").iter().map(|c| c["id"].as_i64().unwrap()).collect()
}

async fn collection_count(app: &TestApp) -> usize {
    app.get("/variant_collections", &app.admin).await.body.as_array().unwrap().len()
}

#[rocket::async_test]
async fn create_then_get_and_list_at_both_paths_return_every_field() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let p1 = product(&app, &app.admin, c, "P1").await;
    let p2 = product(&app, &app.admin, c, "P2").await;
    let mut made = Vec::new();
    for (i, path) in PATHS.iter().enumerate() {
        let r = app
            .post_json(
                path,
                &app.admin,
                json!({"customer_id": c, "name": format!("Shirts {i}"), "product_ids": [p2, p1.to_string()]}),
            )
            .await;
        let id = r.id();
        assert_eq!(r.header("Location"), Some(format!("/variant_collections/{id}").as_str()));
        made.push(id);
    }
    for path in PATHS {
        let got = app.get(&format!("{path}/{}", made[0]), &app.admin).await;
        assert_eq!(got.status, Status::Ok, "{path}");
        let created_at = got.body["created_at"].as_str().unwrap().to_string();
        assert_eq!(created_at.len(), 24);
        assert_eq!(
            got.body,
            json!({"id": made[0], "customer_id": c, "name": "Shirts 0", "product_ids": [p2, p1], "created_at": created_at}),
            "product_ids keep the order given"
        );
        let list = app.get(path, &app.admin).await;
        assert_eq!(list.status, Status::Ok);
        assert_eq!(ids(&list.body), made, "{path} lists every collection ordered by id");
        assert_eq!(list.body[1]["product_ids"], json!([p2, p1]));
        assert_eq!(list.body[1]["name"], "Shirts 1");
    }
    assert_error(&app.get("/variant_collections/999", &app.admin).await, 404, "not_found");
    assert_error(&app.get("/variant_collection/x", &app.admin).await, 404, "not_found");
}

#[rocket::async_test]
async fn form_and_multipart_bodies_take_bracketed_product_ids() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let p1 = product(&app, &app.admin, c, "P1").await;
    let p2 = product(&app, &app.admin, c, "P2").await;
    let appended = app
        .post_form(
            "/variant_collections",
            &app.admin,
            &format!("name=A&product_ids[]={p2}&product_ids[]={p1}"),
        )
        .await
        .id();
    let indexed = app
        .post_form(
            "/variant_collection",
            &app.admin,
            &format!("name=B&product_ids[1]={p1}&product_ids[0]={p2}&customer_id={c}"),
        )
        .await
        .id();
    let (s1, s2) = (p1.to_string(), p2.to_string());
    let multipart = app
        .post_multipart(
            "/variant_collections",
            &app.admin,
            &[("name", "C"), ("product_ids[]", &s2), ("product_ids[]", &s1)],
        )
        .await
        .id();
    for id in [appended, indexed, multipart] {
        let got = app.get(&format!("/variant_collections/{id}"), &app.admin).await.body;
        assert_eq!(got["product_ids"], json!([p2, p1]), "collection {id}");
        assert_eq!(
            got["customer_id"], c,
            "an admin's collection without customer_id takes its products' customer"
        );
    }
}

#[rocket::async_test]
async fn create_collection_returns_422_naming_each_bad_field_and_writes_nothing() {
    let app = spawn_app().await;
    let c = customer(&app, "A").await;
    let other = customer(&app, "B").await;
    let mine = product(&app, &app.admin, c, "M").await;
    let foreign = product(&app, &app.admin, other, "F").await;
    let cases = [
        ("missing name", json!({"product_ids": [mine]}), "name"),
        ("blank name", json!({"name": " ", "product_ids": [mine]}), "name"),
        ("missing product_ids", json!({"name": "N"}), "product_ids"),
        ("null product_ids", json!({"name": "N", "product_ids": null}), "product_ids"),
        ("empty product_ids", json!({"name": "N", "product_ids": []}), "product_ids"),
        ("product_ids not an array", json!({"name": "N", "product_ids": "x"}), "product_ids"),
        ("non-integer product id", json!({"name": "N", "product_ids": [mine, "x"]}), "product_ids[1]"),
        ("zero product id", json!({"name": "N", "product_ids": [0]}), "product_ids[0]"),
        ("duplicate product id", json!({"name": "N", "product_ids": [mine, mine]}), "product_ids[1]"),
        ("unknown product", json!({"name": "N", "product_ids": [mine, 999]}), "product_ids[1]"),
        ("products of two customers", json!({"name": "N", "product_ids": [mine, foreign]}), "product_ids[1]"),
        (
            "product of another customer",
            json!({"name": "N", "customer_id": c, "product_ids": [foreign]}),
            "product_ids[0]",
        ),
        ("unknown customer", json!({"name": "N", "customer_id": 999, "product_ids": [mine]}), "customer_id"),
        (
            "customer_id not an id",
            json!({"name": "N", "customer_id": "x", "product_ids": [mine]}),
            "customer_id",
        ),
    ];
    for (what, body, field) in cases {
        let r = app.post_json("/variant_collections", &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: details should name {field}: {r:?}");
    }
    let r = app.post_form("/variant_collection", &app.admin, "name=N&product_ids[]=x").await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["product_ids[0]"].is_string(), "form: {r:?}");

    assert_eq!(collection_count(&app).await, 0, "no failed create left a collection behind");
    let conn = app.pool().get().unwrap();
    let members: i64 =
        conn.query_row("SELECT COUNT(*) FROM variant_collection_products", [], |r| r.get(0)).unwrap();
    assert_eq!(members, 0);
}

#[rocket::async_test]
async fn patch_changes_name_and_or_product_ids_at_both_paths() {
    let app = spawn_app().await;
    let c = customer(&app, "A").await;
    let other = customer(&app, "B").await;
    let p1 = product(&app, &app.admin, c, "P1").await;
    let p2 = product(&app, &app.admin, c, "P2").await;
    let foreign = product(&app, &app.admin, other, "F").await;
    let id = app
        .post_json("/variant_collections", &app.admin, json!({"name": "Old", "product_ids": [p1]}))
        .await
        .id();
    let path = format!("/variant_collections/{id}");
    let get = || async { app.get(&path, &app.admin).await.body };

    assert_eq!(app.patch_json(&path, &app.admin, json!({"name": "New"})).await.status, Status::NoContent);
    let got = get().await;
    assert_eq!((got["name"].clone(), got["product_ids"].clone()), (json!("New"), json!([p1])));

    let singular = format!("/variant_collection/{id}");
    let r = app.patch_form(&singular, &app.admin, &format!("product_ids[]={p2}&product_ids[]={p1}")).await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    let got = get().await;
    assert_eq!((got["name"].clone(), got["product_ids"].clone()), (json!("New"), json!([p2, p1])));

    let cases = [
        ("name null", json!({"name": null}), "name"),
        ("name blank", json!({"name": ""}), "name"),
        ("product_ids null", json!({"product_ids": null}), "product_ids"),
        ("product_ids empty", json!({"product_ids": []}), "product_ids"),
        ("foreign product", json!({"product_ids": [p1, foreign]}), "product_ids[1]"),
        ("non-integer product id", json!({"product_ids": ["x"]}), "product_ids[0]"),
        ("customer_id changed", json!({"customer_id": other}), "customer_id"),
    ];
    for (what, body, field) in cases {
        let r = app.patch_json(&path, &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    let got = get().await;
    assert_eq!(
        (got["name"].clone(), got["product_ids"].clone()),
        (json!("New"), json!([p2, p1])),
        "failed patches change nothing"
    );
    assert_error(
        &app.patch_json("/variant_collections/999", &app.admin, json!({"name": "x"})).await,
        404,
        "not_found",
    );
}

#[rocket::async_test]
async fn a_customer_user_sees_and_changes_only_its_own_collections() {
    let app = spawn_app().await;
    let (mine, token) = app.tenant("Mine").await;
    let (theirs, their_token) = app.tenant("Theirs").await;
    let my_product = product(&app, &token, mine, "M").await;
    let their_product = product(&app, &their_token, theirs, "T").await;
    let their_collection = app
        .post_json("/variant_collections", &their_token, json!({"name": "T", "product_ids": [their_product]}))
        .await
        .id();

    let own = app
        .post_json("/variant_collection", &token, json!({"name": "M", "product_ids": [my_product]}))
        .await
        .id();
    for path in PATHS {
        let list = app.get(path, &token).await.body;
        assert_eq!(ids(&list), vec![own], "{path}");
        assert_eq!(list[0]["customer_id"], mine);
        assert_error(&app.get(&format!("{path}/{their_collection}"), &token).await, 404, "not_found");
        assert_error(
            &app.patch_json(&format!("{path}/{their_collection}"), &token, json!({"name": "x"})).await,
            404,
            "not_found",
        );
    }
    let cases = [
        ("their product", json!({"name": "X", "product_ids": [their_product]}), "product_ids[0]"),
        (
            "their customer",
            json!({"name": "X", "customer_id": theirs, "product_ids": [my_product]}),
            "customer_id",
        ),
    ];
    for (what, body, field) in cases {
        let r = app.post_json("/variant_collections", &token, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    let r = app
        .patch_json(&format!("/variant_collections/{own}"), &token, json!({"product_ids": [their_product]}))
        .await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["product_ids[0]"].is_string());
    assert_eq!(
        app.patch_json(&format!("/variant_collections/{own}"), &token, json!({"name": "Renamed"}))
            .await
            .status,
        Status::NoContent
    );
    assert_eq!(collection_count(&app).await, 2);
    assert_eq!(
        app.get(&format!("/variant_collections/{their_collection}"), &their_token).await.body["name"],
        "T"
    );
}
