//! `POST /stores/ping` and `POST /warehouses/ping` in live mode, end to end: the routes, the
//! body guard and the real checks against stand-ins on 127.0.0.1 that each test starts and
//! stops. Every outcome of every platform, with JSON, form and multipart bodies; no credential
//! in any response; nothing written.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use rocket::http::Status;
use serde_json::{Value, json};

use crate::common::*;
use crate::standins::ftp::{self as ftp_standin, FtpStandIn};
use crate::standins::http::{self as http_standin, HttpStandIn};
use crate::standins::sftp::{self as sftp_standin, Login};
use crate::standins::{StandIn, closed_port, connection_string};

const WRONG_BIGCOMMERCE_TOKEN: &str = "bc-WRONG-token-7001";
const WRONG_SELLBRITE_SECRET: &str = "sb-WRONG-secret-7002";
const WRONG_SSH_PASSWORD: &str = "ssh-WRONG-pass/@:7003";
const WRONG_FTP_PASSWORD: &str = "ftp-WRONG-pass/@:7004";

/// Every credential these tests send; none may appear in any response.
const SECRETS: [&str; 10] = [
    http_standin::BIGCOMMERCE_TOKEN,
    http_standin::BIGCOMMERCE_SCOPELESS_TOKEN,
    http_standin::SELLBRITE_AUTH_TOKEN,
    http_standin::SELLBRITE_SECRET_KEY,
    sftp_standin::PASSWORD,
    ftp_standin::PASSWORD,
    WRONG_BIGCOMMERCE_TOKEN,
    WRONG_SELLBRITE_SECRET,
    WRONG_SSH_PASSWORD,
    WRONG_FTP_PASSWORD,
];

/// Generous bound for checks against servers that answer, so a busy machine does not flake.
const PATIENT_SECS: u64 = 10;
/// The bound for servers that never answer; a ping must give up soon after it.
const SHORT_SECS: u64 = 1;

/// An app in live mode whose HTTP platforms live at `base`.
async fn live_app(base: &str, timeout_secs: u64) -> TestApp {
    spawn_app_with(|f| {
        f.merge(("ping_mode", "live"))
            .merge(("bigcommerce_api_base", base))
            .merge(("sellbrite_api_base", base))
            .merge(("ping_timeout_secs", timeout_secs))
    })
    .await
}

/// The base of an HTTP platform where nothing listens; for apps that only ping warehouses.
const NO_HTTP_PLATFORM: &str = "http://127.0.0.1:9";

fn bigcommerce_store(customer_id: i64, token: &str, store_hash: &str) -> Value {
    json!({
        "customer_id": customer_id,
        "name": "Web shop",
        "platform": "bigcommerce",
        "adapter": {"access_token": token, "store_hash": store_hash, "client_id": "client-1"},
    })
}

fn sellbrite_store(customer_id: i64, auth_token: &str, secret_key: &str) -> Value {
    json!({
        "customer_id": customer_id,
        "name": "Marketplaces",
        "platform": "sellbrite",
        "adapter": {"auth_token": auth_token, "secret_key": secret_key},
    })
}

fn warehouse(customer_id: i64, platform: &str, connection_string: &str) -> Value {
    json!({
        "customer_id": customer_id,
        "name": "Main warehouse",
        "platform": platform,
        "adapter": {"connection_string": connection_string},
    })
}

/// The flat form fields of a JSON body with one nested `adapter` object.
fn form_fields(body: &Value) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    for (name, value) in body.as_object().expect("an object body") {
        match value {
            Value::Object(adapter) => {
                for (key, value) in adapter {
                    fields.push((format!("{name}[{key}]"), value.as_str().expect("text").to_string()));
                }
            }
            Value::String(text) => fields.push((name.clone(), text.clone())),
            other => fields.push((name.clone(), other.to_string())),
        }
    }
    fields
}

/// The same body as JSON, urlencoded and multipart.
async fn ping_each_way(app: &TestApp, path: &str, token: &str, body: &Value) -> [(&'static str, Reply); 3] {
    let fields = form_fields(body);
    let pairs: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    [
        ("json", app.post_json(path, token, body.clone()).await),
        ("form", app.post_form(path, token, &form(&pairs)).await),
        ("multipart", app.post_multipart(path, token, &pairs).await),
    ]
}

/// Asserts that no credential, plain or percent-encoded, is in the body or headers.
#[track_caller]
fn assert_no_secret(r: &Reply) {
    let everything = format!("{}\n{:?}", r.text, r.headers);
    for secret in SECRETS {
        let encoded = utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string();
        assert!(!everything.contains(secret), "leaks {secret:?}: {r:?}");
        assert!(!everything.contains(&encoded), "leaks {encoded:?}: {r:?}");
    }
}

#[track_caller]
fn assert_no_content(what: &str, r: &Reply) {
    assert_eq!(r.status, Status::NoContent, "{what}: {r:?}");
    assert!(r.text.is_empty(), "{what}: a 204 has no body: {r:?}");
}

/// Asserts the error envelope, that its message names each fragment, and that it holds no
/// credential.
#[track_caller]
fn assert_ping_error(what: &str, r: &Reply, status: u16, code: &str, fragments: &[&str]) {
    assert_eq!((r.status.code, r.code()), (status, code), "{what}: {r:?}");
    assert_error(r, status, code);
    let message = r.body["error"]["message"].as_str().unwrap_or_default();
    for fragment in fragments {
        assert!(message.contains(fragment), "{what}: {message:?} should name {fragment:?}");
    }
    assert_no_secret(r);
}

/// Rows of the tables a ping must never write.
fn rows(app: &TestApp) -> [i64; 3] {
    let conn = app.pool().get().unwrap();
    ["stores", "warehouses", "customers"]
        .map(|table| conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap())
}

async fn customer(app: &TestApp, name: &str) -> i64 {
    app.post_json("/customers", &app.admin, json!({"company_name": name})).await.id()
}

// ---- BigCommerce ----

#[rocket::async_test]
async fn bigcommerce_ping_with_good_credentials_answers_204_for_json_form_and_multipart_bodies() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let app = live_app(&platform.base(), PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    let body = bigcommerce_store(c, http_standin::BIGCOMMERCE_TOKEN, http_standin::STORE_HASH);
    for (how, r) in ping_each_way(&app, "/stores/ping", &app.admin, &body).await {
        assert_no_content(how, &r);
    }

    let requests = platform.requests();
    assert_eq!(requests.len(), 3, "one platform request per ping: {requests:?}");
    for request in &requests {
        assert_eq!(request.path, "/stores/abc123/v2/store");
        assert_eq!(request.header("x-auth-token"), Some(http_standin::BIGCOMMERCE_TOKEN), "every body way");
    }
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

#[rocket::async_test]
async fn bigcommerce_ping_with_a_refused_token_answers_422_with_the_platform_reason_but_no_token() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let app = live_app(&platform.base(), PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    // The stand-in echoes the wrong token in its error text.
    let body = bigcommerce_store(c, WRONG_BIGCOMMERCE_TOKEN, http_standin::STORE_HASH);
    for (how, r) in ping_each_way(&app, "/stores/ping", &app.admin, &body).await {
        assert_ping_error(
            how,
            &r,
            422,
            "adapter_authentication_failed",
            &["BigCommerce refused the credentials", "401", "is not valid", "[redacted]"],
        );
    }
    let body = bigcommerce_store(c, http_standin::BIGCOMMERCE_SCOPELESS_TOKEN, http_standin::STORE_HASH);
    let r = app.post_json("/stores/ping", &app.admin, body).await;
    assert_ping_error("403", &r, 422, "adapter_authentication_failed", &["403", "required scope"]);
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

#[rocket::async_test]
async fn bigcommerce_ping_of_an_unknown_store_hash_answers_422_naming_the_store() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let app = live_app(&platform.base(), PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;

    let body = bigcommerce_store(c, http_standin::BIGCOMMERCE_TOKEN, "zzz999");
    let r = app.post_json("/stores/ping", &app.admin, body).await;

    assert_ping_error(
        "404",
        &r,
        422,
        "adapter_authentication_failed",
        &["no store with hash 'zzz999'", "404"],
    );
    // A hash that would walk the URL elsewhere is refused before any request.
    let body = bigcommerce_store(c, http_standin::BIGCOMMERCE_TOKEN, "../../v3/catalog");
    let r = app.post_json("/stores/ping", &app.admin, body).await;
    assert_ping_error("path walk", &r, 422, "adapter_authentication_failed", &["no store with hash"]);
    assert_eq!(platform.requests().len(), 1, "{:?}", platform.requests());
}

#[rocket::async_test]
async fn bigcommerce_ping_answered_with_a_server_error_answers_502_with_the_status() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let app = live_app(&platform.base(), PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;

    let body = bigcommerce_store(c, http_standin::BIGCOMMERCE_TOKEN, http_standin::FAILING_STORE_HASH);
    let r = app.post_json("/stores/ping", &app.admin, body).await;

    assert_ping_error("503", &r, 502, "adapter_unreachable", &["503", "Upstream overloaded"]);
}

// ---- Sellbrite ----

#[rocket::async_test]
async fn sellbrite_ping_with_good_credentials_answers_204_for_json_form_and_multipart_bodies() {
    let platform = HttpStandIn::start(http_standin::sellbrite).await;
    let app = live_app(&platform.base(), PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    let body = sellbrite_store(c, http_standin::SELLBRITE_AUTH_TOKEN, http_standin::SELLBRITE_SECRET_KEY);
    for (how, r) in ping_each_way(&app, "/stores/ping", &app.admin, &body).await {
        assert_no_content(how, &r);
    }

    assert_eq!(platform.requests().len(), 3);
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

#[rocket::async_test]
async fn sellbrite_ping_with_a_wrong_secret_answers_422_with_the_platform_reason() {
    let platform = HttpStandIn::start(http_standin::sellbrite).await;
    let app = live_app(&platform.base(), PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    let body = sellbrite_store(c, http_standin::SELLBRITE_AUTH_TOKEN, WRONG_SELLBRITE_SECRET);
    for (how, r) in ping_each_way(&app, "/stores/ping", &app.admin, &body).await {
        assert_ping_error(
            how,
            &r,
            422,
            "adapter_authentication_failed",
            &["Sellbrite refused the credentials", "401", "HTTP Basic: Access denied."],
        );
    }
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

// ---- SFTP ----

#[rocket::async_test]
async fn sftp_ping_with_a_good_login_answers_204_for_json_form_and_multipart_bodies() {
    let server = sftp_standin::start(Login::Password).await;
    let app = live_app(NO_HTTP_PLATFORM, PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    let url = connection_string(
        "sftp",
        sftp_standin::USER,
        sftp_standin::PASSWORD,
        server.addr,
        sftp_standin::EXISTING_PATH,
    );
    for (how, r) in ping_each_way(&app, "/warehouses/ping", &app.admin, &warehouse(c, "sftp", &url)).await {
        assert_no_content(how, &r);
    }
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

#[rocket::async_test]
async fn sftp_ping_checks_a_pinned_host_key_and_names_both_fingerprints_when_it_differs() {
    let server = sftp_standin::start(Login::Password).await;
    let app = live_app(NO_HTTP_PLATFORM, PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let url = connection_string(
        "sftp",
        sftp_standin::USER,
        sftp_standin::PASSWORD,
        server.addr,
        sftp_standin::EXISTING_PATH,
    );
    let pinned = |key: &str| {
        json!({"customer_id": c, "platform": "sftp",
               "adapter": {"connection_string": url, "host_key": key}})
    };
    let r = app.post_json("/warehouses/ping", &app.admin, pinned(&sftp_standin::host_key())).await;
    assert_no_content("the server's own key", &r);
    let r = app.post_json("/warehouses/ping", &app.admin, pinned(sftp_standin::OTHER_HOST_KEY)).await;
    assert_ping_error(
        "another key",
        &r,
        422,
        "adapter_authentication_failed",
        &[&sftp_standin::host_key(), sftp_standin::OTHER_HOST_KEY, "host_key"],
    );
    let r = app.post_json("/warehouses/ping", &app.admin, pinned("MD5:ab:cd")).await;
    assert_eq!((r.status.code, r.code()), (422, "validation_failed"), "{r:?}");
    assert!(r.body.to_string().contains("adapter[host_key]"), "{r:?}");
}

#[rocket::async_test]
async fn sftp_ping_with_a_wrong_password_or_a_missing_path_answers_422_naming_the_reason() {
    let server = sftp_standin::start(Login::Password).await;
    let app = live_app(NO_HTTP_PLATFORM, PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    let url = connection_string(
        "sftp",
        sftp_standin::USER,
        WRONG_SSH_PASSWORD,
        server.addr,
        sftp_standin::EXISTING_PATH,
    );
    let body = warehouse(c, "sftp", &url);
    let r = app.post_json("/warehouses/ping", &app.admin, body.clone()).await;
    assert_ping_error(
        "wrong password, json",
        &r,
        422,
        "adapter_authentication_failed",
        &["refused the user name and password"],
    );
    let r = app
        .post_form(
            "/warehouses/ping",
            &app.admin,
            &form(&[
                ("customer_id", &c.to_string()),
                ("platform", "sftp"),
                ("adapter[connection_string]", &url),
            ]),
        )
        .await;
    assert_ping_error(
        "wrong password, form",
        &r,
        422,
        "adapter_authentication_failed",
        &["refused the user name and password"],
    );

    let url =
        connection_string("sftp", sftp_standin::USER, sftp_standin::PASSWORD, server.addr, "/no/such/dir");
    let r = app.post_json("/warehouses/ping", &app.admin, warehouse(c, "sftp", &url)).await;
    assert_ping_error(
        "missing path",
        &r,
        422,
        "adapter_authentication_failed",
        &["the path /no/such/dir does not exist"],
    );
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

// ---- FTP ----

#[rocket::async_test]
async fn ftp_ping_with_a_good_login_answers_204_for_json_form_and_multipart_bodies() {
    let server = FtpStandIn::start().await;
    let app = live_app(NO_HTTP_PLATFORM, PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    let url = connection_string(
        "ftp",
        ftp_standin::USER,
        ftp_standin::PASSWORD,
        server.server.addr,
        ftp_standin::EXISTING_DIR,
    );
    for (how, r) in ping_each_way(&app, "/warehouses/ping", &app.admin, &warehouse(c, "ftp", &url)).await {
        assert_no_content(how, &r);
    }
    let passwords =
        server.commands().into_iter().filter(|line| line.starts_with("PASS ")).collect::<Vec<_>>();
    assert_eq!(passwords, vec![format!("PASS {}", ftp_standin::PASSWORD); 3], "decoded the same every way");
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

#[rocket::async_test]
async fn ftp_ping_with_a_wrong_password_or_a_missing_directory_answers_422_naming_the_reason() {
    let server = FtpStandIn::start().await;
    let app = live_app(NO_HTTP_PLATFORM, PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    let url = connection_string(
        "ftp",
        ftp_standin::USER,
        WRONG_FTP_PASSWORD,
        server.server.addr,
        ftp_standin::EXISTING_DIR,
    );
    let r = app.post_json("/warehouses/ping", &app.admin, warehouse(c, "ftp", &url)).await;
    assert_ping_error(
        "wrong password, json",
        &r,
        422,
        "adapter_authentication_failed",
        &["refused the login", "530 Login incorrect."],
    );
    let r = app
        .post_form(
            "/warehouses/ping",
            &app.admin,
            &form(&[
                ("customer_id", &c.to_string()),
                ("platform", "ftp"),
                ("adapter[connection_string]", &url),
            ]),
        )
        .await;
    assert_ping_error(
        "wrong password, form",
        &r,
        422,
        "adapter_authentication_failed",
        &["refused the login", "530 Login incorrect."],
    );

    let url = connection_string(
        "ftp",
        ftp_standin::USER,
        ftp_standin::PASSWORD,
        server.server.addr,
        "/no/such/dir",
    );
    let r = app.post_json("/warehouses/ping", &app.admin, warehouse(c, "ftp", &url)).await;
    assert_ping_error(
        "missing directory",
        &r,
        422,
        "adapter_authentication_failed",
        &["cannot change into the path /no/such/dir", "550"],
    );
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

// ---- Unreachable, every platform ----

/// The four platforms' ping paths and bodies, all aimed at `addr`.
fn every_platform(c: i64, addr: SocketAddr) -> [(&'static str, &'static str, Value); 4] {
    [
        (
            "bigcommerce",
            "/stores/ping",
            bigcommerce_store(c, http_standin::BIGCOMMERCE_TOKEN, http_standin::STORE_HASH),
        ),
        (
            "sellbrite",
            "/stores/ping",
            sellbrite_store(c, http_standin::SELLBRITE_AUTH_TOKEN, http_standin::SELLBRITE_SECRET_KEY),
        ),
        (
            "sftp",
            "/warehouses/ping",
            warehouse(
                c,
                "sftp",
                &connection_string("sftp", sftp_standin::USER, sftp_standin::PASSWORD, addr, "/x"),
            ),
        ),
        (
            "ftp",
            "/warehouses/ping",
            warehouse(
                c,
                "ftp",
                &connection_string("ftp", ftp_standin::USER, ftp_standin::PASSWORD, addr, "/x"),
            ),
        ),
    ]
}

#[rocket::async_test]
async fn ping_to_a_port_where_nothing_listens_answers_502_for_every_platform_without_waiting() {
    let addr = closed_port().await;
    let app = live_app(&format!("http://{addr}"), PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    for (platform, path, body) in every_platform(c, addr) {
        let started = Instant::now();
        let r = app.post_json(path, &app.admin, body).await;
        assert_ping_error(platform, &r, 502, "adapter_unreachable", &["127.0.0.1", "refused"]);
        assert!(
            started.elapsed() < Duration::from_secs(PATIENT_SECS / 2),
            "{platform}: {:?}",
            started.elapsed()
        );
    }
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

#[rocket::async_test]
async fn ping_to_a_server_that_never_answers_answers_502_within_the_timeout_for_every_platform() {
    // The HTTP stand-in reads the request and never answers; the silent one never even greets.
    let http = HttpStandIn::start(http_standin::never).await;
    let silent = StandIn::silent().await;
    let app = live_app(&http.base(), SHORT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    let expected = [
        "BigCommerce did not answer within 1 s",
        "Sellbrite did not answer within 1 s",
        "The SFTP server did not answer within 1 s",
        "The FTP server did not answer within 1 s",
    ];
    for ((platform, path, body), expected) in every_platform(c, silent.addr).into_iter().zip(expected) {
        let started = Instant::now();
        let r = app.post_json(path, &app.admin, body).await;
        let took = started.elapsed();
        assert_ping_error(platform, &r, 502, "adapter_unreachable", &[expected]);
        assert!(took >= Duration::from_millis(900), "{platform} waited for the timeout: {took:?}");
        assert!(took < Duration::from_secs(5), "{platform} gave up soon after the 1 s timeout: {took:?}");
    }
    assert_eq!(http.requests().len(), 2, "both HTTP platforms were asked: {:?}", http.requests());
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

// ---- Who may ping, and what is checked first ----

#[rocket::async_test]
async fn customer_user_pings_for_its_own_customer_and_gets_422_for_another_without_the_platform_asked() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let app = live_app(&platform.base(), PATIENT_SECS).await;
    let (mine, token) = app.tenant("Mine").await;
    let theirs = customer(&app, "Theirs").await;
    let before = rows(&app);

    let body = bigcommerce_store(mine, http_standin::BIGCOMMERCE_TOKEN, http_standin::STORE_HASH);
    assert_no_content("own customer_id", &app.post_json("/stores/ping", &token, body.clone()).await);
    let mut without_customer = body;
    without_customer.as_object_mut().unwrap().remove("customer_id");
    assert_no_content("no customer_id", &app.post_json("/stores/ping", &token, without_customer).await);
    assert_eq!(platform.requests().len(), 2);

    let body = bigcommerce_store(theirs, http_standin::BIGCOMMERCE_TOKEN, http_standin::STORE_HASH);
    let ping = app.post_json("/stores/ping", &token, body.clone()).await;
    let create = app.post_json("/stores", &token, body).await;
    assert_ping_error("another customer", &ping, 422, "validation_failed", &["customer_id"]);
    assert_eq!(ping.body, create.body, "ping answers exactly as create");
    assert_eq!(ping.body["error"]["details"]["customer_id"], format!("unknown customer_id {theirs}"));

    let url = connection_string("ftp", ftp_standin::USER, ftp_standin::PASSWORD, closed_port().await, "/x");
    let ping = app.post_json("/warehouses/ping", &token, warehouse(theirs, "ftp", &url)).await;
    assert_ping_error("another customer's warehouse", &ping, 422, "validation_failed", &["customer_id"]);

    assert_eq!(platform.requests().len(), 2, "another customer's ping never reaches the platform");
    assert_eq!(rows(&app), before, "a ping writes nothing");
}

#[rocket::async_test]
async fn live_ping_with_an_invalid_body_answers_422_like_create_without_asking_the_platform() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let app = live_app(&platform.base(), PATIENT_SECS).await;
    let c = customer(&app, "Acme").await;
    let before = rows(&app);

    let mut body = bigcommerce_store(c, http_standin::BIGCOMMERCE_TOKEN, http_standin::STORE_HASH);
    body["adapter"].as_object_mut().unwrap().remove("store_hash");
    let ping = app.post_json("/stores/ping", &app.admin, body.clone()).await;
    let create = app.post_json("/stores", &app.admin, body).await;

    assert_ping_error("no store_hash", &ping, 422, "validation_failed", &["adapter[store_hash]"]);
    assert_eq!(ping.body, create.body, "ping answers exactly as create");
    assert!(platform.requests().is_empty(), "{:?}", platform.requests());
    assert_eq!(rows(&app), before, "a ping writes nothing");
}
