//! Customers: create, list, get, update; JSON and form bodies; tenancy.

use crate::common::*;
use rocket::http::Status;
use serde_json::json;

#[rocket::async_test]
async fn create_then_get_returns_every_field() {
    let app = spawn_app().await;
    let r = app
        .post_json(
            "/customers",
            &app.admin,
            json!({"company_name": "Acme", "street1": "1 Main St", "street3": null, "city": "Springfield",
                   "state": "IL", "zipcode": "62701", "country": "US", "provider": "acme-provider", "id": 99}),
        )
        .await;
    let id = r.id();
    assert_eq!(r.header("Location"), Some(format!("/customers/{id}").as_str()));
    let c = app.get(&format!("/customers/{id}"), &app.admin).await;
    assert_eq!(c.status, Status::Ok);
    assert_eq!(c.body["id"], id);
    assert_eq!(c.body["company_name"], "Acme");
    assert_eq!(c.body["street1"], "1 Main St");
    assert_eq!(c.body["street2"], json!(null));
    assert_eq!(c.body["street3"], json!(null));
    assert_eq!(c.body["zipcode"], "62701");
    assert_eq!(c.body["provider"], "acme-provider");
    let created = c.body["created_at"].as_str().unwrap();
    assert_eq!(created.len(), 24, "millisecond UTC timestamp: {created}");
    assert!(created.ends_with('Z'));
}

#[rocket::async_test]
async fn form_and_multipart_bodies_create_the_same_customer() {
    let app = spawn_app().await;
    let a = app.post_form("/customers", &app.admin, "company_name=Form+Co&city=Paris&street2=").await.id();
    let b = app
        .post_multipart(
            "/customers",
            &app.admin,
            &[("company_name", "Form Co"), ("city", "Paris"), ("street2", "")],
        )
        .await
        .id();
    for id in [a, b] {
        let c = app.get(&format!("/customers/{id}"), &app.admin).await;
        assert_eq!(c.body["company_name"], "Form Co");
        assert_eq!(c.body["city"], "Paris");
        assert_eq!(c.body["street2"], json!(null));
    }
}

#[rocket::async_test]
async fn create_customer_returns_422_for_bad_fields() {
    let app = spawn_app().await;
    let cases = [
        ("missing company_name", json!({"city": "x"}), "company_name"),
        ("blank company_name", json!({"company_name": "  "}), "company_name"),
        ("null company_name", json!({"company_name": null}), "company_name"),
        ("company_name not a string", json!({"company_name": 5}), "company_name"),
        ("city not a string", json!({"company_name": "a", "city": ["x"]}), "city"),
    ];
    for (what, body, field) in cases {
        let r = app.post_json("/customers", &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    assert_eq!(app.get("/customers", &app.admin).await.body, json!([]), "nothing was written");
}

#[rocket::async_test]
async fn patch_changes_only_present_fields_and_null_clears() {
    let app = spawn_app().await;
    let id = app
        .post_json("/customers", &app.admin, json!({"company_name": "A", "city": "X", "state": "S"}))
        .await
        .id();
    let path = format!("/customers/{id}");
    let r = app.patch_json(&path, &app.admin, json!({"city": "Y", "state": null})).await;
    assert_eq!(r.status, Status::NoContent);
    assert!(r.text.is_empty());
    let c = app.get(&path, &app.admin).await.body;
    assert_eq!(
        (c["company_name"].clone(), c["city"].clone(), c["state"].clone()),
        (json!("A"), json!("Y"), json!(null))
    );

    assert_eq!(app.patch_form(&path, &app.admin, "company_name=B&city=").await.status, Status::NoContent);
    let c = app.get(&path, &app.admin).await.body;
    assert_eq!((c["company_name"].clone(), c["city"].clone()), (json!("B"), json!(null)));

    assert_error(
        &app.patch_json(&path, &app.admin, json!({"company_name": null})).await,
        422,
        "validation_failed",
    );
    assert_error(&app.patch_json("/customers/999", &app.admin, json!({"city": "Z"})).await, 404, "not_found");
}

#[rocket::async_test]
async fn a_customer_user_sees_and_changes_only_its_own_customer() {
    let app = spawn_app().await;
    let (mine, token) = app.tenant("Mine").await;
    let (theirs, _) = app.tenant("Theirs").await;

    let list = app.get("/customers", &token).await.body;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["id"], mine);
    assert_eq!(app.get(&format!("/customers/{mine}"), &token).await.status, Status::Ok);
    assert_error(&app.get(&format!("/customers/{theirs}"), &token).await, 404, "not_found");
    assert_error(
        &app.patch_json(&format!("/customers/{theirs}"), &token, json!({"city": "x"})).await,
        404,
        "not_found",
    );
    assert_eq!(
        app.patch_json(&format!("/customers/{mine}"), &token, json!({"city": "x"})).await.status,
        Status::NoContent
    );
    assert_error(
        &app.post_json("/customers", &token, json!({"company_name": "New"})).await,
        403,
        "forbidden",
    );

    let all = app.get("/customers", &app.admin).await.body;
    let ids: Vec<i64> = all.as_array().unwrap().iter().map(|c| c["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, vec![mine, theirs], "admins see every customer, ordered by id");
}
