//! The hosted service's own platform names (CONTRACT §6): `big_commerce` beside
//! `bigcommerce`, Sellbrite's `warehouse_uuid`, `dropstream` as SFTP, connection strings
//! without a path, and `folder` warehouses (inside `folder_warehouse_root`, admins only).

use std::path::Path;

use rocket::http::Status;
use serde_json::{Value, json};

use crate::common::*;
use crate::standins::connection_string;
use crate::standins::http::{self as http_standin, HttpStandIn};
use crate::standins::sftp::{self as sftp_standin, Login};

async fn live_app(base: &str) -> TestApp {
    spawn_app_with(|f| {
        f.merge(("ping_mode", "live"))
            .merge(("bigcommerce_api_base", base))
            .merge(("sellbrite_api_base", base))
            .merge(("ping_timeout_secs", 10))
    })
    .await
}

async fn customer(app: &TestApp) -> i64 {
    app.post_json("/customers", &app.admin, json!({"company_name": "Acme"})).await.id()
}

fn store(customer_id: i64, platform: &str, adapter: Value) -> Value {
    json!({"customer_id": customer_id, "name": " Web shop ", "platform": platform, "adapter": adapter})
}

fn warehouse(customer_id: i64, platform: &str, connection_string: &str) -> Value {
    json!({
        "customer_id": customer_id,
        "name": " Main ",
        "platform": platform,
        "adapter": {"connection_string": connection_string},
    })
}

fn bigcommerce_adapter() -> Value {
    json!({"access_token": http_standin::BIGCOMMERCE_TOKEN, "store_hash": http_standin::STORE_HASH})
}

#[rocket::async_test]
async fn big_commerce_and_bigcommerce_are_one_platform_kept_as_sent() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let app = live_app(&platform.base()).await;
    let c = customer(&app).await;
    for token in ["big_commerce", "bigcommerce"] {
        let r = app.post_json("/stores", &app.admin, store(c, token, json!({"access_token": "t"}))).await;
        assert_error(&r, 422, "validation_failed");
        assert!(r.body["error"]["details"]["adapter[store_hash]"].is_string(), "{token}: {r:?}");

        let r = app.post_json("/stores/ping", &app.admin, store(c, token, bigcommerce_adapter())).await;
        assert_eq!(r.status, Status::NoContent, "{token}: {r:?}");

        let id = app.post_json("/stores", &app.admin, store(c, token, bigcommerce_adapter())).await.id();
        let r = app.get(&format!("/stores/{id}"), &app.admin).await;
        assert_eq!(r.body["platform"], token, "returned as sent");
        assert_eq!(r.body["name"], "Web shop");
    }
    let requests = platform.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests.iter().all(|r| r.path == "/stores/abc123/v2/store"), "{requests:?}");
}

#[rocket::async_test]
async fn a_big_commerce_ping_with_a_wrong_token_is_refused() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let app = live_app(&platform.base()).await;
    let c = customer(&app).await;
    let adapter = json!({"access_token": "wrong-token-1", "store_hash": http_standin::STORE_HASH});
    let r = app.post_json("/stores/ping", &app.admin, store(c, "big_commerce", adapter)).await;
    assert_error(&r, 422, "adapter_authentication_failed");
}

#[rocket::async_test]
async fn sellbrite_takes_an_optional_text_warehouse_uuid() {
    let app = spawn_app().await;
    let c = customer(&app).await;
    let adapter = |uuid: Value| json!({"auth_token": "a", "secret_key": "s", "warehouse_uuid": uuid});
    let r = app.post_json("/stores", &app.admin, store(c, "sellbrite", adapter(json!(7)))).await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["adapter[warehouse_uuid]"].is_string(), "{r:?}");
    let id = app.post_json("/stores", &app.admin, store(c, "sellbrite", adapter(json!("wh-1")))).await.id();
    let r = app.get(&format!("/stores/{id}"), &app.admin).await;
    assert_eq!(r.body["adapter"]["warehouse_uuid"], "wh-1");
}

#[rocket::async_test]
async fn sellbrite_over_its_rate_limit_is_unreachable_not_refused() {
    let platform = HttpStandIn::start(http_standin::sellbrite_rate_limited).await;
    let app = live_app(&platform.base()).await;
    let c = customer(&app).await;
    let adapter = json!({"auth_token": http_standin::SELLBRITE_AUTH_TOKEN, "secret_key": http_standin::SELLBRITE_SECRET_KEY});
    let r = app.post_json("/stores/ping", &app.admin, store(c, "sellbrite", adapter)).await;
    assert_error(&r, 502, "adapter_unreachable");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("Rate Limit Exceeded"), "{r:?}");
}

#[rocket::async_test]
async fn dropstream_is_validated_and_pinged_as_sftp_and_a_path_may_be_left_out() {
    let server = sftp_standin::start(Login::Password).await;
    let app = live_app("http://127.0.0.1:9").await;
    let c = customer(&app).await;
    let r = app.post_json("/warehouses", &app.admin, warehouse(c, "dropstream", "ftp://u:p@host/x")).await;
    assert_error(&r, 422, "validation_failed");
    assert!(r.body["error"]["details"]["adapter[connection_string]"].is_string(), "{r:?}");

    // No path: the login directory.
    let url = connection_string("sftp", sftp_standin::USER, sftp_standin::PASSWORD, server.addr, "");
    let r = app.post_json("/warehouses/ping", &app.admin, warehouse(c, "dropstream", &url)).await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    for (platform, url) in [
        ("dropstream", url.as_str()),
        ("sftp", "sftp://wh1:secret@ftp.example.com"),
        ("ftp", "ftp://u:p@h:21"),
    ] {
        let id = app.post_json("/warehouses", &app.admin, warehouse(c, platform, url)).await.id();
        let r = app.get(&format!("/warehouses/{id}"), &app.admin).await;
        assert_eq!(r.body["platform"], platform);
        assert_eq!(r.body["name"], "Main", "a warehouse's name is trimmed like a store's");
    }
}

/// The folder root of an app: `warehouses` beside its database.
fn root_of(app: &TestApp) -> std::path::PathBuf {
    let conn = app.pool().get().unwrap();
    let db = conn.path().map(Path::new).unwrap().to_path_buf();
    db.parent().unwrap().join("warehouses")
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[rocket::async_test]
async fn a_folder_warehouse_must_lie_inside_the_root() {
    let app = spawn_app().await;
    let c = customer(&app).await;
    let root = root_of(&app);
    let inside = warehouse(c, "folder", &file_url(&root.join("acme")));
    let r = app.post_json("/warehouses", &app.admin, inside).await;
    assert_eq!(r.status, Status::Created, "{r:?}");

    for outside in [
        file_url(&root.join("acme/../../escape")),
        file_url(root.parent().unwrap()),
        "file:///etc".to_string(),
        "/not/a/url".to_string(),
    ] {
        for path in ["/warehouses", "/warehouses/ping"] {
            let r = app.post_json(path, &app.admin, warehouse(c, "folder", &outside)).await;
            assert_error(&r, 422, "validation_failed");
            assert!(r.body["error"]["details"]["adapter[connection_string]"].is_string(), "{outside}: {r:?}");
        }
    }
    let id = app.post_json("/warehouses", &app.admin, warehouse(c, "sftp", "sftp://u:p@h")).await.id();
    let r = app
        .patch_json(
            &format!("/warehouses/{id}"),
            &app.admin,
            json!({"platform": "folder", "adapter": {"connection_string": "file:///etc"}}),
        )
        .await;
    assert_error(&r, 422, "validation_failed");
}

#[rocket::async_test]
async fn only_admins_create_or_change_a_folder_warehouse() {
    let app = spawn_app().await;
    let (c, token) = app.tenant("Acme").await;
    let url = file_url(&root_of(&app).join("acme"));
    let r = app.post_json("/warehouses", &token, warehouse(c, "folder", &url)).await;
    assert_error(&r, 403, "forbidden");
    assert_eq!(app.get("/warehouses", &app.admin).await.body, json!([]), "nothing written");

    let id = app.post_json("/warehouses", &app.admin, warehouse(c, "folder", &url)).await.id();
    let other = file_url(&root_of(&app).join("other"));
    let r = app
        .patch_json(&format!("/warehouses/{id}"), &token, json!({"adapter": {"connection_string": other}}))
        .await;
    assert_error(&r, 403, "forbidden");
    // Its name and dates are the customer's to change.
    let r = app.patch_json(&format!("/warehouses/{id}"), &token, json!({"name": " Renamed "})).await;
    assert_eq!(r.status, Status::NoContent, "{r:?}");
    let r = app.get(&format!("/warehouses/{id}"), &token).await;
    assert_eq!(
        (r.body["name"].clone(), r.body["adapter"]["connection_string"].clone()),
        (json!("Renamed"), json!(url))
    );

    // Nor may a customer user turn its own warehouse into a folder one.
    let sftp = app.post_json("/warehouses", &token, warehouse(c, "sftp", "sftp://u:p@h")).await.id();
    let r = app
        .patch_json(
            &format!("/warehouses/{sftp}"),
            &token,
            json!({"platform": "folder", "adapter": {"connection_string": url}}),
        )
        .await;
    assert_error(&r, 403, "forbidden");
}

#[rocket::async_test]
async fn a_live_folder_ping_checks_the_folder_exists_and_takes_a_file() {
    let app = live_app("http://127.0.0.1:9").await;
    let c = customer(&app).await;
    let folder = root_of(&app).join("acme");
    let url = file_url(&folder);
    let r = app.post_json("/warehouses/ping", &app.admin, warehouse(c, "folder", &url)).await;
    assert_error(&r, 422, "adapter_authentication_failed");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("cannot be opened"), "{r:?}");
    std::fs::create_dir_all(&folder).unwrap();
    let r = app.post_json("/warehouses/ping", &app.admin, warehouse(c, "folder", &url)).await;
    assert_eq!(r.status.code, 204, "{r:?}");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0, "the probe file is gone");
}

#[rocket::async_test]
async fn file_localhost_names_the_same_folder_as_file_with_no_host() {
    let app = live_app("http://127.0.0.1:9").await;
    let c = customer(&app).await;
    let folder = root_of(&app).join("acme");
    std::fs::create_dir_all(&folder).unwrap();
    // RFC 8089: `file://localhost/path` and `file:///path` are one URL.
    let url = format!("file://localhost{}", folder.display());
    let r = app.post_json("/warehouses/ping", &app.admin, warehouse(c, "folder", &url)).await;
    assert_eq!(r.status.code, 204, "{r:?}");
    let id = app.post_json("/warehouses", &app.admin, warehouse(c, "folder", &url)).await.id();
    let r = app.get(&format!("/warehouses/{id}"), &app.admin).await;
    assert_eq!(r.body["adapter"]["connection_string"], url);

    let elsewhere = format!("file://files.example.com{}", folder.display());
    for path in ["/warehouses", "/warehouses/ping"] {
        let r = app.post_json(path, &app.admin, warehouse(c, "folder", &elsewhere)).await;
        assert_error(&r, 422, "validation_failed");
        let problem = r.body["error"]["details"]["adapter[connection_string]"].as_str().unwrap_or_default();
        assert!(problem.contains("localhost"), "{path}: {r:?}");
    }
}

#[rocket::async_test]
async fn a_customer_user_cannot_slip_a_folder_warehouse_in_through_a_connection() {
    let app = spawn_app().await;
    let (c, token) = app.tenant("Acme").await;
    let url = file_url(&root_of(&app).join("acme"));
    let store = json!({"name": "Shop", "platform": "custom", "adapter": {}});
    let warehouse = json!({"platform": "folder", "adapter": {"connection_string": url}});
    let body = json!({"name": "N", "customer_id": c, "store": store, "warehouse": warehouse});
    let r = app.post_json("/connections", &token, body).await;
    assert_error(&r, 403, "forbidden");
    assert_eq!(app.get("/stores", &app.admin).await.body, json!([]), "nothing written");
    assert_eq!(app.get("/warehouses", &app.admin).await.body, json!([]), "nothing written");
}
