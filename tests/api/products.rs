//! Products: create, get, update and the paged listing; JSON, form and multipart bodies;
//! bundles and masters; sku uniqueness; tenancy.

use crate::common::*;
use rocket::http::{ContentType, Status};
use serde_json::{Value, json};

/// Creates a product as `token` and returns its id.
async fn product(app: &TestApp, token: &str, customer_id: i64, sku: &str) -> i64 {
    app.post_json("/products", token, json!({"customer_id": customer_id, "sku": sku})).await.id()
}

async fn customer(app: &TestApp, name: &str) -> i64 {
    app.post_json("/customers", &app.admin, json!({"company_name": name})).await.id()
}

/// The ids of a `GET /products` page.
fn ids(page: &Value) -> Vec<i64> {
    page["products"].as_array().expect("products array").iter().map(|p| p["id"].as_i64().unwrap()).collect()
}

async fn product_count(app: &TestApp) -> i64 {
    app.get("/products", &app.admin).await.body["total_count"].as_i64().unwrap()
}

#[rocket::async_test]
async fn create_then_get_returns_every_field() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let part_a = product(&app, &app.admin, c, "PART-A").await;
    let part_b = product(&app, &app.admin, c, "PART-B").await;
    let r = app
        .post_json(
            "/products",
            &app.admin,
            json!({"customer_id": c.to_string(), "sku": "KIT-1", "variant_of": "Kits", "master_id": part_a,
                   "bundle": [{"product_id": part_b, "qty": 2}, {"product_id": part_a.to_string(), "qty": "1"}],
                   "id": 999, "created_at": "ignored"}),
        )
        .await;
    let id = r.id();
    assert_eq!(r.header("Location"), Some(format!("/products/{id}").as_str()));

    let p = app.get(&format!("/products/{id}"), &app.admin).await;
    assert_eq!(p.status, Status::Ok);
    let created_at = p.body["created_at"].as_str().unwrap().to_string();
    assert_eq!(created_at.len(), 24, "millisecond UTC timestamp: {created_at}");
    assert_eq!(
        p.body,
        json!({"id": id, "customer_id": c, "sku": "KIT-1", "created_at": created_at, "variant_of": "Kits",
               "master_id": part_a,
               "bundle": [{"product_id": part_b, "qty": 2}, {"product_id": part_a, "qty": 1}]})
    );

    let plain = app.get(&format!("/products/{part_a}"), &app.admin).await.body;
    assert_eq!(plain["variant_of"], Value::Null);
    assert_eq!(plain["master_id"], Value::Null);
    assert_eq!(plain["bundle"], json!([]), "a product that is no bundle has an empty bundle");
}

#[rocket::async_test]
async fn form_and_multipart_bodies_create_the_same_product() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let a = product(&app, &app.admin, c, "A").await;
    let b = product(&app, &app.admin, c, "B").await;
    let form = format!(
        "customer_id={c}&sku=FORM-KIT&variant_of=Kits&master_id={a}\
         &bundle[0][product_id]={b}&bundle[0][qty]=2&bundle[1][product_id]={a}&bundle[1][qty]=3"
    );
    let from_form = app.post_form("/products", &app.admin, &form).await.id();
    let (cs, as_, bs) = (c.to_string(), a.to_string(), b.to_string());
    let from_multipart = app
        .post_multipart(
            "/products",
            &app.admin,
            &[
                ("customer_id", &cs),
                ("sku", "MULTI-KIT"),
                ("variant_of", "Kits"),
                ("master_id", &as_),
                ("bundle[0][product_id]", &bs),
                ("bundle[0][qty]", "2"),
                ("bundle[1][product_id]", &as_),
                ("bundle[1][qty]", "3"),
            ],
        )
        .await
        .id();
    for id in [from_form, from_multipart] {
        let p = app.get(&format!("/products/{id}"), &app.admin).await.body;
        assert_eq!(p["variant_of"], "Kits");
        assert_eq!(p["master_id"], a);
        assert_eq!(p["bundle"], json!([{"product_id": b, "qty": 2}, {"product_id": a, "qty": 3}]));
    }
    // An empty form value is null: no variant group, no master, no bundle.
    let empty =
        app.post_form("/products", &app.admin, &format!("customer_id={c}&sku=E&variant_of=&bundle=")).await;
    let p = app.get(&format!("/products/{}", empty.id()), &app.admin).await.body;
    assert_eq!((p["variant_of"].clone(), p["bundle"].clone()), (Value::Null, json!([])));
}

#[rocket::async_test]
async fn create_product_returns_422_naming_each_bad_field_and_writes_nothing() {
    let app = spawn_app().await;
    let c = customer(&app, "Mine").await;
    let other = customer(&app, "Other").await;
    let mine = product(&app, &app.admin, c, "MINE").await;
    let foreign = product(&app, &app.admin, other, "FOREIGN").await;
    let cases = [
        ("missing sku", json!({"customer_id": c}), "sku"),
        ("blank sku", json!({"customer_id": c, "sku": " "}), "sku"),
        ("sku not a string", json!({"customer_id": c, "sku": 12}), "sku"),
        ("missing customer_id (admin)", json!({"sku": "X"}), "customer_id"),
        ("customer_id not an id", json!({"customer_id": "abc", "sku": "X"}), "customer_id"),
        ("unknown customer_id", json!({"customer_id": 999, "sku": "X"}), "customer_id"),
        ("variant_of not a string", json!({"customer_id": c, "sku": "X", "variant_of": 5}), "variant_of"),
        ("master_id not an id", json!({"customer_id": c, "sku": "X", "master_id": "m"}), "master_id"),
        ("unknown master", json!({"customer_id": c, "sku": "X", "master_id": 999}), "master_id"),
        (
            "master of another customer",
            json!({"customer_id": c, "sku": "X", "master_id": foreign}),
            "master_id",
        ),
        ("bundle not an array", json!({"customer_id": c, "sku": "X", "bundle": "x"}), "bundle"),
        ("bundle element not an object", json!({"customer_id": c, "sku": "X", "bundle": [5]}), "bundle[0]"),
        (
            "qty 0",
            json!({"customer_id": c, "sku": "X", "bundle": [{"product_id": mine, "qty": 0}]}),
            "bundle[0][qty]",
        ),
        (
            "qty not an integer",
            json!({"customer_id": c, "sku": "X", "bundle": [{"product_id": mine, "qty": "x"}]}),
            "bundle[0][qty]",
        ),
        (
            "qty missing",
            json!({"customer_id": c, "sku": "X", "bundle": [{"product_id": mine}]}),
            "bundle[0][qty]",
        ),
        (
            "product_id not an id",
            json!({"customer_id": c, "sku": "X", "bundle": [{"product_id": 1.5, "qty": 1}]}),
            "bundle[0][product_id]",
        ),
        (
            "bundle product of another customer",
            json!({"customer_id": c, "sku": "X",
                   "bundle": [{"product_id": mine, "qty": 1}, {"product_id": foreign, "qty": 1}]}),
            "bundle[1][product_id]",
        ),
        (
            "bundle product listed twice",
            json!({"customer_id": c, "sku": "X",
                   "bundle": [{"product_id": mine, "qty": 1}, {"product_id": mine, "qty": 2}]}),
            "bundle[1][product_id]",
        ),
    ];
    for (what, body, field) in cases {
        let r = app.post_json("/products", &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: details should name {field}: {r:?}");
    }
    let r = app
        .post_form(
            "/products",
            &app.admin,
            &format!("customer_id={c}&sku=X&bundle[0][product_id]={mine}&bundle[0][qty]=0"),
        )
        .await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["bundle[0][qty]"].is_string(), "form qty 0: {r:?}");

    assert_eq!(product_count(&app).await, 2, "no failed create left a product behind");
    let conn = app.pool().get().unwrap();
    let items: i64 = conn.query_row("SELECT COUNT(*) FROM product_bundle_items", [], |r| r.get(0)).unwrap();
    assert_eq!(items, 0, "no failed create left bundle items behind");
}

#[rocket::async_test]
async fn a_sku_is_unique_per_customer_with_409() {
    let app = spawn_app().await;
    let c = customer(&app, "A").await;
    let other = customer(&app, "B").await;
    let first = product(&app, &app.admin, c, "SKU-1").await;
    let r = app.post_json("/products", &app.admin, json!({"customer_id": c, "sku": "SKU-1"})).await;
    assert_error(&r, 409, "conflict");
    assert!(r.body["error"]["details"]["sku"].as_str().unwrap().contains(&first.to_string()), "{r:?}");
    assert_eq!(product_count(&app).await, 1);

    product(&app, &app.admin, other, "SKU-1").await;
    let second = product(&app, &app.admin, c, "SKU-2").await;
    let r = app.patch_json(&format!("/products/{second}"), &app.admin, json!({"sku": "SKU-1"})).await;
    assert_error(&r, 409, "conflict");
    assert!(r.body["error"]["details"]["sku"].is_string());
    let r = app.patch_json(&format!("/products/{second}"), &app.admin, json!({"sku": "SKU-2"})).await;
    assert_eq!(r.status, Status::NoContent, "keeping its own sku is no conflict");
}

#[rocket::async_test]
async fn patch_changes_only_present_fields_and_null_or_empty_clears() {
    let app = spawn_app().await;
    let c = customer(&app, "A").await;
    let a = product(&app, &app.admin, c, "A").await;
    let b = product(&app, &app.admin, c, "B").await;
    let id = app
        .post_json(
            "/products",
            &app.admin,
            json!({"customer_id": c, "sku": "K", "variant_of": "V", "master_id": a,
                   "bundle": [{"product_id": b, "qty": 4}]}),
        )
        .await
        .id();
    let path = format!("/products/{id}");
    let get = || async { app.get(&path, &app.admin).await.body };

    assert_eq!(app.patch_json(&path, &app.admin, json!({"sku": "K2"})).await.status, Status::NoContent);
    let p = get().await;
    assert_eq!(
        (p["sku"].clone(), p["variant_of"].clone(), p["master_id"].clone(), p["bundle"].clone()),
        (json!("K2"), json!("V"), json!(a), json!([{"product_id": b, "qty": 4}])),
        "absent fields are left alone"
    );

    let r = app.patch_json(&path, &app.admin, json!({"bundle": [{"product_id": a, "qty": 1}]})).await;
    assert_eq!(r.status, Status::NoContent);
    assert_eq!(get().await["bundle"], json!([{"product_id": a, "qty": 1}]), "a new bundle replaces the old");

    let r = app
        .patch_json(&path, &app.admin, json!({"variant_of": null, "master_id": null, "bundle": null}))
        .await;
    assert_eq!(r.status, Status::NoContent);
    let p = get().await;
    assert_eq!(
        (p["variant_of"].clone(), p["master_id"].clone(), p["bundle"].clone()),
        (Value::Null, Value::Null, json!([]))
    );
    assert_eq!(p["sku"], "K2");

    let form = format!("variant_of=W&master_id={b}&bundle[0][product_id]={a}&bundle[0][qty]=5");
    assert_eq!(app.patch_form(&path, &app.admin, &form).await.status, Status::NoContent);
    let p = get().await;
    assert_eq!((p["variant_of"].clone(), p["master_id"].clone()), (json!("W"), json!(b)));
    assert_eq!(p["bundle"], json!([{"product_id": a, "qty": 5}]));

    assert_eq!(app.patch_json(&path, &app.admin, json!({"bundle": []})).await.status, Status::NoContent);
    assert_eq!(get().await["bundle"], json!([]), "an empty bundle clears the components");
    assert_eq!(app.patch_form(&path, &app.admin, "variant_of=&master_id=").await.status, Status::NoContent);
    let p = get().await;
    assert_eq!((p["variant_of"].clone(), p["master_id"].clone()), (Value::Null, Value::Null));

    let cases = [
        ("sku null", json!({"sku": null}), "sku"),
        ("sku blank", json!({"sku": ""}), "sku"),
        ("qty 0", json!({"bundle": [{"product_id": a, "qty": 0}]}), "bundle[0][qty]"),
        ("customer_id changed", json!({"customer_id": c + 1}), "customer_id"),
    ];
    for (what, body, field) in cases {
        let r = app.patch_json(&path, &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"customer_id": c, "sku": "K3"})).await.status,
        Status::NoContent,
        "an unchanged customer_id is accepted"
    );
    assert_error(&app.patch_json("/products/999", &app.admin, json!({"sku": "Z"})).await, 404, "not_found");
    assert_error(&app.patch_json("/products/abc", &app.admin, json!({"sku": "Z"})).await, 404, "not_found");
}

#[rocket::async_test]
async fn patch_refuses_self_references_cycles_and_foreign_products() {
    let app = spawn_app().await;
    let c = customer(&app, "A").await;
    let other = customer(&app, "B").await;
    let foreign = product(&app, &app.admin, other, "F").await;
    let a = product(&app, &app.admin, c, "A").await;
    let b = app
        .post_json(
            "/products",
            &app.admin,
            json!({"customer_id": c, "sku": "B", "master_id": a,
                                                   "bundle": [{"product_id": a, "qty": 1}]}),
        )
        .await
        .id();
    let cases = [
        ("self bundle", a, json!({"bundle": [{"product_id": a, "qty": 1}]}), "bundle[0][product_id]"),
        ("bundle cycle", a, json!({"bundle": [{"product_id": b, "qty": 1}]}), "bundle[0][product_id]"),
        ("self master", a, json!({"master_id": a}), "master_id"),
        ("master cycle", a, json!({"master_id": b}), "master_id"),
        ("foreign master", a, json!({"master_id": foreign}), "master_id"),
        (
            "foreign bundle product",
            b,
            json!({"bundle": [{"product_id": foreign, "qty": 1}]}),
            "bundle[0][product_id]",
        ),
    ];
    for (what, id, body, field) in cases {
        let r = app.patch_json(&format!("/products/{id}"), &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    let p = app.get(&format!("/products/{b}"), &app.admin).await.body;
    assert_eq!(
        (p["master_id"].clone(), p["bundle"].clone()),
        (json!(a), json!([{"product_id": a, "qty": 1}]))
    );
}

#[rocket::async_test]
async fn the_listing_pages_by_id_in_the_documented_envelope() {
    let app = spawn_app().await;
    let c = customer(&app, "A").await;
    let mut made = Vec::new();
    for i in 0..5 {
        made.push(product(&app, &app.admin, c, &format!("SKU-{i}")).await);
    }
    let kit = app
        .post_json(
            "/products",
            &app.admin,
            json!({"customer_id": c, "sku": "KIT",
                                                   "bundle": [{"product_id": made[0], "qty": 3}]}),
        )
        .await
        .id();
    made.push(kit);

    let all = app.get("/products", &app.admin).await;
    assert_eq!(all.status, Status::Ok);
    assert_eq!(all.body["page"], 1);
    assert_eq!(all.body["limit"], 1000, "the default limit");
    assert_eq!(all.body["total_count"], 6);
    assert_eq!(all.body["total_pages"], 1);
    assert_eq!(ids(&all.body), made);
    assert_eq!(all.body["products"][5]["bundle"], json!([{"product_id": made[0], "qty": 3}]));
    assert_eq!(all.body["products"][0]["bundle"], json!([]));
    for key in ["id", "customer_id", "sku", "created_at", "variant_of", "master_id", "bundle"] {
        assert!(all.body["products"][0].get(key).is_some(), "listed products carry {key}");
    }

    let page2 = app.get("/products?page=2&limit=4", &app.admin).await.body;
    assert_eq!((page2["page"].clone(), page2["limit"].clone()), (json!(2), json!(4)));
    assert_eq!((page2["total_count"].clone(), page2["total_pages"].clone()), (json!(6), json!(2)));
    assert_eq!(ids(&page2), made[4..].to_vec());
    let past = app.get("/products?page=3&limit=4", &app.admin).await.body;
    assert_eq!(past["products"], json!([]), "a page past the end is empty");
    assert_eq!(past["total_count"], 6);
    assert_eq!(
        app.get("/products?page=99999999999999&limit=1000", &app.admin).await.body["products"],
        json!([])
    );
    assert_eq!(ids(&app.get("/products?limit=1000&unknown=1", &app.admin).await.body), made);
    let repeated = app.get("/products?limit=1&page=1&limit=4&page=2", &app.admin).await.body;
    assert_eq!(
        (repeated["page"].clone(), repeated["limit"].clone()),
        (json!(2), json!(4)),
        "the last one wins"
    );

    let bad = [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=x", "limit"),
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=x", "page"),
        ("customer_id=abc", "customer_id"),
        ("limit=5&limit=null", "limit"),
    ];
    for (query, param) in bad {
        let r = app.get(&format!("/products?{query}"), &app.admin).await;
        assert_error(&r, 400, "bad_request");
        assert!(r.body["error"]["details"][param].is_string(), "{query}: {r:?}");
    }
    let r =
        app.send("GET", "/products", &app.admin, ContentType::JSON, json!({"limit": 0}).to_string()).await;
    assert_error(&r, 400, "bad_request");
    assert!(r.body["error"]["details"]["limit"].is_string(), "limit in the body: {r:?}");

    let empty = app.get("/products?customer_id=999", &app.admin).await.body;
    assert_eq!(
        (empty["products"].clone(), empty["total_count"].clone(), empty["total_pages"].clone()),
        (json!([]), json!(0), json!(0))
    );
}

#[rocket::async_test]
async fn the_listing_filters_by_customer_and_sku_from_the_query_or_a_body() {
    let app = spawn_app().await;
    let a = customer(&app, "A").await;
    let b = customer(&app, "B").await;
    let a1 = product(&app, &app.admin, a, "SHARED").await;
    let b1 = product(&app, &app.admin, b, "SHARED").await;
    let a2 = product(&app, &app.admin, a, "ONLY-A").await;

    assert_eq!(ids(&app.get(&format!("/products?customer_id={a}"), &app.admin).await.body), vec![a1, a2]);
    assert_eq!(ids(&app.get("/products?sku=SHARED", &app.admin).await.body), vec![a1, b1]);
    assert_eq!(
        ids(&app.get(&format!("/products?sku=SHARED&customer_id={b}"), &app.admin).await.body),
        vec![b1]
    );

    let get_with = |ct: ContentType, body: String| app.send("GET", "/products", &app.admin, ct, body);
    let json_body = get_with(ContentType::JSON, json!({"customer_id": b}).to_string()).await;
    assert_eq!(json_body.status, Status::Ok, "{json_body:?}");
    assert_eq!(ids(&json_body.body), vec![b1], "customer_id in a JSON body");
    let json_text =
        get_with(ContentType::JSON, json!({"customer_id": a.to_string(), "sku": "ONLY-A"}).to_string()).await;
    assert_eq!(ids(&json_text.body), vec![a2], "customer_id as a digit string, sku in the body");
    let form_body = get_with(ContentType::Form, format!("customer_id={a}&limit=1")).await;
    assert_eq!(ids(&form_body.body), vec![a1], "customer_id and limit in a form body");
    assert_eq!(form_body.body["total_count"], 2);

    let both = app
        .send(
            "GET",
            &format!("/products?customer_id={a}"),
            &app.admin,
            ContentType::JSON,
            json!({"customer_id": b}).to_string(),
        )
        .await;
    assert_eq!(ids(&both.body), vec![a1, a2], "the query string wins over the body");

    let r = get_with(ContentType::JSON, "{not json".to_string()).await;
    assert_error(&r, 400, "bad_request");
    let r = get_with(ContentType::Plain, "customer_id=1".to_string()).await;
    assert_error(&r, 415, "unsupported_media_type");
}

#[rocket::async_test]
async fn a_customer_user_sees_and_changes_only_its_own_products() {
    let app = spawn_app().await;
    let (mine, token) = app.tenant("Mine").await;
    let (theirs, their_token) = app.tenant("Theirs").await;
    let their_product = product(&app, &their_token, theirs, "T").await;

    // Without customer_id, the user's own customer is used.
    let own = app.post_json("/products", &token, json!({"sku": "M"})).await.id();
    let p = app.get(&format!("/products/{own}"), &token).await;
    assert_eq!((p.status, p.body["customer_id"].clone()), (Status::Ok, json!(mine)));

    let list = app.get("/products", &token).await.body;
    assert_eq!((ids(&list), list["total_count"].clone()), (vec![own], json!(1)));
    let spying = app.get(&format!("/products?customer_id={theirs}"), &token).await.body;
    assert_eq!((spying["products"].clone(), spying["total_count"].clone()), (json!([]), json!(0)), "no leak");
    let spying = app
        .send("GET", "/products", &token, ContentType::JSON, json!({"customer_id": theirs}).to_string())
        .await;
    assert_eq!(spying.body["products"], json!([]));

    assert_error(&app.get(&format!("/products/{their_product}"), &token).await, 404, "not_found");
    assert_error(
        &app.patch_json(&format!("/products/{their_product}"), &token, json!({"sku": "X"})).await,
        404,
        "not_found",
    );
    let cases = [
        ("another customer's id", json!({"customer_id": theirs, "sku": "X"}), "customer_id"),
        ("their master", json!({"sku": "X", "master_id": their_product}), "master_id"),
        (
            "their bundle product",
            json!({"sku": "X", "bundle": [{"product_id": their_product, "qty": 1}]}),
            "bundle[0][product_id]",
        ),
    ];
    for (what, body, field) in cases {
        let r = app.post_json("/products", &token, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    let r = app.patch_json(&format!("/products/{own}"), &token, json!({"master_id": their_product})).await;
    assert_error(&r, 422, "validation_failed");
    assert_eq!(
        app.patch_json(&format!("/products/{own}"), &token, json!({"sku": "M2"})).await.status,
        Status::NoContent
    );
    // The same sku under another customer is no conflict, even for a customer user.
    assert_eq!(app.post_json("/products", &token, json!({"sku": "T"})).await.status, Status::Created);
    assert_eq!(product_count(&app).await, 3);
}

/// CONTRACT §4 ignores unknown fields, and a form field whose name is not bracket notation is
/// one: schemathesis sent `POST /products` as multipart with a field named like
/// `4íH'Nõ[.Ĕ][…][]` and got 400 "the form name '' is not valid bracket notation". A field
/// whose name is valid still has its value checked.
#[rocket::async_test]
async fn a_form_field_whose_name_is_not_bracket_notation_is_ignored_as_unknown() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let cs = c.to_string();
    for (n, name) in ["4íH'Nõ[.Ĕ][…][]", "", "[x]", "a[b", "a]b[", "a[][b]", "sku]"].into_iter().enumerate()
    {
        let sku = format!("ODD-{n}");
        let r = app
            .post_multipart("/products", &app.admin, &[("customer_id", &cs), ("sku", &sku), (name, "1")])
            .await;
        assert_eq!(r.status.code, 201, "{name:?}: {r:?}");
        let form = format!("customer_id={c}&sku=FORM-ODD-{n}&{}=1", name.replace('&', "%26"));
        let r = app.post_form("/products", &app.admin, &form).await;
        assert_eq!(r.status.code, 201, "{name:?}: {r:?}");
    }
    // A known field with a bad value is still refused.
    let r = app.post_multipart("/products", &app.admin, &[("customer_id", "x"), ("sku", "BAD")]).await;
    assert_eq!(r.status.code, 422, "{r:?}");
}
