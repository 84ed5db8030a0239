//! Warehouses: create, list, get, update, enable/disable, ping; file-transfer URLs and
//! their masked passwords; tenancy.

use crate::common::*;
use crate::stores::{count, customer, enabled_at, stored_adapter};
use rocket::http::Status;
use serde_json::{Value, json};

pub const SFTP_URL: &str = "sftp://shipper:hunter2-secret@files.example.com:2222/outbound/orders";

pub fn sftp_warehouse(customer_id: i64) -> Value {
    json!({
        "customer_id": customer_id,
        "name": "East DC",
        "description": "The east coast warehouse",
        "platform": "sftp",
        "adapter": {"connection_string": SFTP_URL},
    })
}

#[rocket::async_test]
async fn create_then_get_returns_every_field_with_the_url_password_masked() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let r = app.post_json("/warehouses", &app.admin, sftp_warehouse(c)).await;
    let id = r.id();
    assert_eq!(r.header("Location"), Some(format!("/warehouses/{id}").as_str()));

    let w = app.get(&format!("/warehouses/{id}"), &app.admin).await;
    assert_eq!(w.status, Status::Ok);
    let created_at = w.body["created_at"].as_str().unwrap().to_string();
    assert_eq!(
        w.body,
        json!({
            "id": id, "customer_id": c, "name": "East DC", "description": "The east coast warehouse",
            "platform": "sftp",
            "adapter": {"connection_string": "sftp://shipper:********@files.example.com:2222/outbound/orders"},
            "created_at": created_at, "enabled_at": null, "order_status_imported_at": null,
            "inventory_updated_at": null,
        })
    );
    let list = app.get("/warehouses", &app.admin).await;
    assert_eq!(list.body, json!([w.body]));
    for text in [&w.text, &list.text] {
        assert!(!text.contains("hunter2-secret"), "the password never leaves: {text}");
    }
    assert_eq!(stored_adapter(&app, "warehouses", id)["connection_string"], SFTP_URL);
}

#[rocket::async_test]
async fn name_is_optional_and_token_adapters_are_masked() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let id = app
        .post_json(
            "/warehouses",
            &app.admin,
            json!({"customer_id": c, "platform": "shipbob", "adapter": {"access_token": "wh-token-abcdefgh1234"}}),
        )
        .await
        .id();
    let w = app.get(&format!("/warehouses/{id}"), &app.admin).await;
    assert_eq!((w.body["name"].clone(), w.body["description"].clone()), (json!(null), json!(null)));
    assert_eq!(w.body["adapter"], json!({"access_token": "********1234"}));
    assert!(!w.text.contains("wh-token-abcdefgh1234"));
}

#[rocket::async_test]
async fn form_and_multipart_bodies_create_warehouses() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let form = format!(
        "customer_id={c}&name=Form+DC&platform=ftp&adapter[connection_string]=ftp%3A%2F%2Fu%3Apw-123456%40ftp.example.com%2Fin&enabled_at="
    );
    let a = app.post_form("/warehouses", &app.admin, &form).await.id();
    let c_text = c.to_string();
    let b = app
        .post_multipart(
            "/warehouses",
            &app.admin,
            &[
                ("customer_id", &c_text),
                ("platform", "sftp"),
                ("adapter[connection_string]", SFTP_URL),
                ("enabled_at", "now"),
            ],
        )
        .await
        .id();
    let a = app.get(&format!("/warehouses/{a}"), &app.admin).await.body;
    assert_eq!(a["adapter"]["connection_string"], "ftp://u:********@ftp.example.com/in");
    assert_eq!(a["enabled_at"], json!(null));
    let b = app.get(&format!("/warehouses/{b}"), &app.admin).await.body;
    assert!(b["enabled_at"].is_string(), "now enables: {b}");
}

/// Bad warehouse bodies and the field each must name; shared by create and ping.
fn bad_warehouse_bodies(c: i64) -> Vec<(&'static str, Value, &'static str)> {
    let with = |key: &str, value: Value| {
        let mut body = sftp_warehouse(c);
        body[key] = value;
        body
    };
    let url = |u: &str| with("adapter", json!({"connection_string": u}));
    let without = |key: &str| {
        let mut body = sftp_warehouse(c);
        body.as_object_mut().unwrap().remove(key);
        body
    };
    vec![
        ("missing customer_id", without("customer_id"), "customer_id"),
        ("unknown customer_id", with("customer_id", json!(4242)), "customer_id"),
        ("missing platform", without("platform"), "platform"),
        ("missing adapter", without("adapter"), "adapter"),
        ("adapter an array", with("adapter", json!([1])), "adapter"),
        ("platform with spaces", with("platform", json!("s ftp")), "platform"),
        ("name not a string", with("name", json!({"a": 1})), "name"),
        ("sftp without connection_string", with("adapter", json!({})), "adapter[connection_string]"),
        (
            "connection_string not a string",
            with("adapter", json!({"connection_string": 5})),
            "adapter[connection_string]",
        ),
        ("wrong scheme", url("ftp://u:p@host/x"), "adapter[connection_string]"),
        ("not a URL", url("files.example.com"), "adapter[connection_string]"),
        ("no user", url("sftp://host/x"), "adapter[connection_string]"),
        ("no password", url("sftp://u@host/x"), "adapter[connection_string]"),
        ("no host", url("sftp://u:p@/x"), "adapter[connection_string]"),
        ("port not a number", url("sftp://u:p@host:ssh/x"), "adapter[connection_string]"),
        ("port out of range", url("sftp://u:p@host:99999/x"), "adapter[connection_string]"),
        ("enabled_at not a date", with("enabled_at", json!("2024-13-45")), "enabled_at"),
    ]
}

#[rocket::async_test]
async fn create_warehouse_returns_422_naming_each_bad_field() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    for (what, body, field) in bad_warehouse_bodies(c) {
        let r = app.post_json("/warehouses", &app.admin, body).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"][field].is_string(), "{what}: {r:?}");
    }
    let r = app
        .post_form(
            "/warehouses",
            &app.admin,
            &format!("customer_id={c}&platform=ftp&adapter[connection_string]=ftp://host"),
        )
        .await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["adapter[connection_string]"].is_string(), "form body: {r:?}");
    assert_eq!(count(&app, "warehouses"), 0, "nothing was written");
}

#[rocket::async_test]
async fn patch_changes_fields_keeps_a_masked_url_and_revalidates_the_adapter() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let id = app.post_json("/warehouses", &app.admin, sftp_warehouse(c)).await.id();
    let path = format!("/warehouses/{id}");

    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"name": null, "description": "Moved"})).await.status,
        Status::NoContent
    );
    let w = app.get(&path, &app.admin).await.body;
    assert_eq!((w["name"].clone(), w["description"].clone()), (json!(null), json!("Moved")));

    // Sending the masked URL back keeps the stored password.
    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"adapter": w["adapter"]})).await.status,
        Status::NoContent
    );
    assert_eq!(stored_adapter(&app, "warehouses", id)["connection_string"], SFTP_URL);

    let r = app.patch_json(&path, &app.admin, json!({"platform": "ftp"})).await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["adapter[connection_string]"].is_string(), "sftp URL on ftp: {r:?}");
    let r = app.patch_json(&path, &app.admin, json!({"adapter": {"connection_string": "sftp://nope"}})).await;
    assert_error(&r, 422, "validation_failed");

    let r = app
        .patch_form(&path, &app.admin, "platform=ftp&adapter[connection_string]=ftp://a:b@ftp.example.com/x")
        .await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    assert_eq!(
        app.get(&path, &app.admin).await.body["adapter"]["connection_string"],
        "ftp://a:********@ftp.example.com/x"
    );
}

#[rocket::async_test]
async fn enabled_at_enables_and_null_or_empty_disables() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let id = app.post_json("/warehouses", &app.admin, sftp_warehouse(c)).await.id();
    let path = format!("/warehouses/{id}");
    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"enabled_at": "2024-03-05T14:07:09+02:00"})).await.status,
        Status::NoContent
    );
    assert_eq!(enabled_at(&app, &path).await, "2024-03-05T12:07:09.000Z");
    assert_eq!(app.patch_form(&path, &app.admin, "enabled_at=").await.status, Status::NoContent);
    assert_eq!(enabled_at(&app, &path).await, json!(null));
    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"enabled_at": "now"})).await.status,
        Status::NoContent
    );
    assert!(enabled_at(&app, &path).await.is_string());
    assert_eq!(
        app.patch_json(&path, &app.admin, json!({"enabled_at": null})).await.status,
        Status::NoContent
    );
    assert_eq!(enabled_at(&app, &path).await, json!(null));
}

#[rocket::async_test]
async fn a_customer_user_sees_only_its_own_warehouses() {
    let app = spawn_app().await;
    let (mine, token) = app.tenant("Mine").await;
    let (theirs, _) = app.tenant("Theirs").await;
    let mut body = sftp_warehouse(mine);
    body.as_object_mut().unwrap().remove("customer_id");
    let own = app.post_json("/warehouses", &token, body).await.id();
    let foreign = app.post_json("/warehouses", &app.admin, sftp_warehouse(theirs)).await.id();

    let list = app.get("/warehouses", &token).await.body;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!((list[0]["id"].clone(), list[0]["customer_id"].clone()), (json!(own), json!(mine)));
    for path in
        [format!("/warehouses/{foreign}"), "/warehouses/9999".to_string(), "/warehouses/x1".to_string()]
    {
        assert_error(&app.get(&path, &token).await, 404, "not_found");
        assert_error(&app.patch_json(&path, &token, json!({"name": "x"})).await, 404, "not_found");
    }
    let r = app.post_json("/warehouses", &token, sftp_warehouse(theirs)).await;
    assert_error(&r, 422, "validation_failed");
    assert_eq!(r.body["error"]["details"]["customer_id"], format!("unknown customer_id {theirs}"));
    let r = app.post_json("/warehouses/ping", &token, sftp_warehouse(theirs)).await;
    assert_error(&r, 422, "validation_failed");
    assert_eq!(app.get("/warehouses", &app.admin).await.body.as_array().unwrap().len(), 2);
}

#[rocket::async_test]
async fn offline_ping_validates_like_create_and_writes_nothing() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let before = (count(&app, "warehouses"), count(&app, "customers"));
    let r = app.post_json("/warehouses/ping", &app.admin, sftp_warehouse(c)).await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    let c_text = c.to_string();
    let r = app
        .post_multipart(
            "/warehouses/ping",
            &app.admin,
            &[("customer_id", &c_text), ("platform", "ftp"), ("adapter[connection_string]", "ftp://u:p@h/x")],
        )
        .await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    for (what, body, field) in bad_warehouse_bodies(c) {
        let ping = app.post_json("/warehouses/ping", &app.admin, body.clone()).await;
        let create = app.post_json("/warehouses", &app.admin, body).await;
        assert_error(&ping, 422, "validation_failed");
        assert_eq!(ping.body, create.body, "{what}: ping answers exactly as create");
        assert!(ping.body["error"]["details"][field].is_string(), "{what}: {ping:?}");
    }
    assert_eq!((count(&app, "warehouses"), count(&app, "customers")), before, "nothing was created");
}

#[rocket::async_test]
async fn live_ping_of_a_platform_without_a_check_answers_unsupported_platform() {
    let app = spawn_app_with(|f| f.merge(("ping_mode", "live"))).await;
    let c = customer(&app, "Acme").await;
    let r = app
        .post_json(
            "/warehouses/ping",
            &app.admin,
            json!({"customer_id": c, "platform": "amazon", "adapter": {}}),
        )
        .await;
    assert_error(&r, 422, "unsupported_platform");
    assert_eq!(count(&app, "warehouses"), 0);
}

/// Issue 29, fault 7 (CONTRACT §11, "File warehouses"): `orders_dir`, `shipments_dir` and
/// `inventory_dir` name three different folders as the warehouse uses them (slashes trimmed,
/// `.` dropped, empty the root, the defaults for keys not given); two that are one folder
/// answer 422 naming the field given, on create and on PATCH, and write nothing.
#[rocket::async_test]
async fn warehouse_folders_that_are_the_same_folder_answer_422_naming_the_field() {
    let app = spawn_app().await;
    let c = customer(&app, "Acme").await;
    let same: &[(&str, Value, &str)] = &[
        ("orders in inventory", json!({"orders_dir": "stock", "inventory_dir": "stock"}), "inventory_dir"),
        ("slashes and dots", json!({"orders_dir": "/out/./", "shipments_dir": "./out"}), "shipments_dir"),
        ("nested the same", json!({"shipments_dir": "a//b/", "inventory_dir": "/a/b"}), "inventory_dir"),
        ("both the root", json!({"orders_dir": "", "shipments_dir": "/"}), "shipments_dir"),
        ("the root written as a dot", json!({"orders_dir": "./", "inventory_dir": ""}), "inventory_dir"),
        ("orders in the default inventory", json!({"orders_dir": "inventory"}), "orders_dir"),
        ("stock in the default shipments", json!({"inventory_dir": "/shipments/"}), "inventory_dir"),
        ("orders in the default orders' place", json!({"shipments_dir": "orders"}), "shipments_dir"),
    ];
    let distinct: &[(&str, Value)] = &[
        ("the defaults", json!({})),
        (
            "three named folders",
            json!({"orders_dir": "in", "shipments_dir": "out", "inventory_dir": "stock"}),
        ),
        ("orders at the root", json!({"orders_dir": ""})),
        ("a folder inside another", json!({"orders_dir": "a", "shipments_dir": "a/b"})),
        ("a default given again", json!({"orders_dir": "/orders/"})),
    ];
    for platform in ["sftp", "ftp"] {
        let scheme = if platform == "ftp" { "ftp" } else { "sftp" };
        let adapter = |dirs: &Value| {
            let mut adapter = dirs.clone();
            adapter["connection_string"] = json!(format!("{scheme}://u:pw-123456@files.example.com/root"));
            adapter
        };
        let body = |dirs: &Value| json!({"customer_id": c, "platform": platform, "adapter": adapter(dirs)});
        let before = count(&app, "warehouses");
        for (what, dirs, field) in same {
            let r = app.post_json("/warehouses", &app.admin, body(dirs)).await;
            assert_error(&r, 422, "validation_failed");
            let key = format!("adapter[{field}]");
            assert!(r.body["error"]["details"][&key].is_string(), "{platform}, {what}: {r:?}");
        }
        assert_eq!(count(&app, "warehouses"), before, "{platform}: nothing was written");
        let id = app.post_json("/warehouses", &app.admin, body(&json!({}))).await.id();
        for (what, dirs, field) in same {
            let r = app
                .patch_json(&format!("/warehouses/{id}"), &app.admin, json!({"adapter": adapter(dirs)}))
                .await;
            assert_error(&r, 422, "validation_failed");
            assert!(
                r.body["error"]["details"][format!("adapter[{field}]")].is_string(),
                "PATCH {platform}, {what}: {r:?}"
            );
        }
        for (what, dirs) in distinct {
            let r = app.post_json("/warehouses", &app.admin, body(dirs)).await;
            assert_eq!(r.status.code, 201, "{platform}, {what}: {r:?}");
        }
    }
}
