//! Where a customer user's store or warehouse may point (CONTRACT §6): not at the operator's
//! own network. A customer user's create, PATCH and ping of an address that is, or resolves
//! to, a loopback, private, link-local or other special-purpose address answers 422 naming the
//! field and connects to nothing; admins may point anywhere, and so may customer users under
//! `tenant_private_targets`; a row a customer user set is checked again when a pass connects.
//!
//! "Connects to nothing" is seen on a loopback listener nobody accepts on: a connection made
//! to it would wait in its backlog. Addresses outside loopback are only ever validated here
//! (create, PATCH, an offline ping), never connected to.

use std::net::TcpListener;
use std::time::Duration;

use orderbridge::simulate::big_commerce::Simulator;
use rocket::figment::Figment;
use serde_json::{Value, json};

use crate::common::{ADMIN_PASSWORD, Reply, TestApp, assert_error, figment, spawn_app_with};
use crate::standins::ftp::{self as ftp_standin, FtpStandIn};
use crate::sync_rig::{HASH, TOKEN};

/// Hosts (as a URL writes them) a customer user may not use, and what the 422 calls them.
const REFUSED: &[(&str, &str)] = &[
    ("127.0.0.1", "a loopback address"),
    ("127.9.9.9", "a loopback address"),
    ("10.1.2.3", "a private address"),
    ("172.16.0.1", "a private address"),
    ("172.31.255.254", "a private address"),
    ("192.168.0.10", "a private address"),
    ("169.254.169.254", "a link-local address"),
    ("100.64.0.1", "a shared (carrier-grade NAT) address"),
    ("0.0.0.0", "the unspecified address"),
    ("192.0.0.8", "a special-purpose address"),
    ("198.18.0.1", "a special-purpose address"),
    ("192.0.2.10", "a special-purpose address"),
    ("224.0.0.251", "a multicast address"),
    ("240.0.0.1", "a special-purpose address"),
    ("255.255.255.255", "the broadcast address"),
    ("[::1]", "a loopback address"),
    ("[::]", "the unspecified address"),
    ("[fc00::1]", "a private (unique local) address"),
    ("[fd00:ec2::254]", "a private (unique local) address"),
    ("[fe80::1]", "a link-local address"),
    ("[ff02::1]", "a multicast address"),
    ("[::ffff:127.0.0.1]", "a loopback address"),
    ("[::ffff:7f00:1]", "a loopback address"),
    ("[::ffff:10.0.0.1]", "a private address"),
    ("[::127.0.0.1]", "a special-purpose address"),
    ("[64:ff9b::a00:1]", "a private address"),
    ("[64:ff9b::a9fe:a9fe]", "a link-local address"),
    ("[2001:db8::1]", "a special-purpose address"),
    ("localhost", "a loopback address"),
    ("LocalHost.", "a loopback address"),
    ("shop.localhost", "a loopback address"),
    ("ip6-localhost", "a loopback address"),
    ("0x7f.1", "a loopback address"),
    ("2130706433", "a loopback address"),
    ("127.1", "a loopback address"),
    ("017700000001", "a loopback address"),
];

/// A public address a customer user may use; nothing here ever connects to it.
const PUBLIC: &str = "93.184.216.34";

fn url(scheme: &str, host: &str, port: u16) -> String {
    format!("{scheme}://wh-user:pw-SECRET-1@{host}:{port}/in")
}

fn warehouse(customer_id: i64, platform: &str, connection_string: &str) -> Value {
    json!({"customer_id": customer_id, "name": "Main", "platform": platform,
           "adapter": {"connection_string": connection_string}})
}

/// The 422 a customer user's address gets: `field` named, saying what the host is.
#[track_caller]
fn assert_refused(what: &str, r: &Reply, field: &str, kind: &str) {
    assert_error(r, 422, "validation_failed");
    let detail = r.body["error"]["details"][field].as_str().unwrap_or_else(|| panic!("{what}: {r:?}"));
    assert!(detail.contains(kind), "{what}: {detail}");
    assert!(detail.contains("public internet addresses"), "{what}: {detail}");
    assert!(!r.text.contains("pw-SECRET"), "{what}: {r:?}");
}

/// A loopback listener nobody accepts on: a connection made to it waits in its backlog.
fn quiet_listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn connections_made(listener: &TcpListener) -> usize {
    let mut made = 0;
    for _ in 0..100 {
        match listener.accept() {
            Ok(_) => made += 1,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return made,
            Err(e) => panic!("{e}"),
        }
    }
    made
}

fn address_set_by(app: &TestApp, table: &str, id: i64) -> String {
    let conn = app.pool().get().unwrap();
    conn.query_row(&format!("SELECT address_set_by FROM {table} WHERE id = ?1"), [id], |r| r.get(0)).unwrap()
}

#[rocket::async_test]
async fn a_customer_user_cannot_create_patch_or_ping_a_warehouse_at_a_special_purpose_address() {
    // Offline pings validate exactly as create does and connect to nothing.
    let app = spawn_app_with(|f| f.merge(("ping_mode", "offline"))).await;
    let (customer, tenant) = app.tenant("Acme").await;
    let operators = app.post_json("/customers", &app.admin, json!({"company_name": "Operator"})).await.id();
    let own =
        app.post_json("/warehouses", &tenant, warehouse(customer, "ftp", &url("ftp", PUBLIC, 21))).await.id();
    let own_before = app.get(&format!("/warehouses/{own}"), &tenant).await.body;
    for (host, kind) in REFUSED {
        for (scheme, platform) in [("ftp", "ftp"), ("sftp", "sftp"), ("sftp", "dropstream")] {
            let what = format!("{platform} at {host}");
            let body = warehouse(customer, platform, &url(scheme, host, 2121));
            let create = app.post_json("/warehouses", &tenant, body.clone()).await;
            assert_refused(&what, &create, "adapter[connection_string]", kind);
            let ping = app.post_json("/warehouses/ping", &tenant, body.clone()).await;
            assert_eq!(ping.body, create.body, "{what}: a ping answers as create");
            let patch = app
                .patch_json(
                    &format!("/warehouses/{own}"),
                    &tenant,
                    json!({"platform": platform, "adapter": body["adapter"]}),
                )
                .await;
            assert_eq!(patch.body, create.body, "{what}: a PATCH answers as create");
            // An admin's choice is the operator's.
            let admins = warehouse(operators, platform, &url(scheme, host, 2121));
            assert_eq!(app.post_json("/warehouses", &app.admin, admins).await.status.code, 201, "{what}");
        }
    }
    assert_eq!(
        app.get(&format!("/warehouses/{own}"), &tenant).await.body,
        own_before,
        "refused PATCHes changed nothing"
    );
    let mine = app.get("/warehouses", &tenant).await.body;
    assert_eq!(mine.as_array().map(Vec::len), Some(1), "only the public one was created: {mine}");

    // A connection's nested warehouse is held to the same rule, named where the body has it.
    let store = app
        .post_json(
            "/stores",
            &tenant,
            json!({"customer_id": customer, "name": "Shop", "platform": "big_commerce",
                                              "adapter": {"access_token": "t", "store_hash": "h"}}),
        )
        .await
        .id();
    let nested = app
        .post_json("/connections", &tenant, json!({"name": "c", "store_id": store,
                   "warehouse": {"platform": "sftp", "adapter": {"connection_string": url("sftp", "10.0.0.1", 22)}}}))
        .await;
    assert_refused("nested", &nested, "warehouse[adapter][connection_string]", "a private address");
}

#[rocket::async_test]
async fn the_address_a_customer_user_sets_is_recorded_and_checked_on_each_change_and_an_admins_is_not() {
    let app = spawn_app_with(|f| f).await;
    let (customer, tenant) = app.tenant("Acme").await;
    // The operator points a customer's warehouse at its own network.
    let theirs = app
        .post_json("/warehouses", &app.admin, warehouse(customer, "ftp", &url("ftp", "10.0.0.5", 21)))
        .await
        .id();
    assert_eq!(address_set_by(&app, "warehouses", theirs), "admin");
    let path = format!("/warehouses/{theirs}");
    assert_eq!(app.patch_json(&path, &tenant, json!({"name": "Renamed"})).await.status.code, 204);
    // Writing the adapter would make the address the customer user's: it must be public.
    let mut adapter = app.get(&path, &tenant).await.body["adapter"].clone();
    adapter["orders_dir"] = json!("in");
    let r = app.patch_json(&path, &tenant, json!({"adapter": adapter})).await;
    assert_refused("the operator's private address", &r, "adapter[connection_string]", "a private address");
    assert_eq!(app.patch_json(&path, &app.admin, json!({"adapter": adapter})).await.status.code, 204);
    assert_eq!(address_set_by(&app, "warehouses", theirs), "admin");

    let own = app
        .post_json("/warehouses", &tenant, warehouse(customer, "sftp", &url("sftp", PUBLIC, 22)))
        .await
        .id();
    assert_eq!(address_set_by(&app, "warehouses", own), "customer");
    let body = app.get(&format!("/warehouses/{own}"), &tenant).await.body;
    assert!(body.get("address_set_by").is_none(), "not part of the resource: {body}");
    let moved = json!({"adapter": {"connection_string": url("sftp", "192.168.1.20", 22)}});
    let r = app.patch_json(&format!("/warehouses/{own}"), &tenant, moved.clone()).await;
    assert_refused("moved to a private address", &r, "adapter[connection_string]", "a private address");
    assert_eq!(app.patch_json(&format!("/warehouses/{own}"), &app.admin, moved).await.status.code, 204);
    assert_eq!(address_set_by(&app, "warehouses", own), "admin", "the admin's PATCH makes it the operator's");
}

#[rocket::async_test]
async fn a_customer_users_ping_of_a_loopback_server_connects_to_nothing_and_an_admins_reaches_it() {
    let server = FtpStandIn::start().await;
    let (listener, quiet) = quiet_listener();
    let app = spawn_app_with(|f| f.merge(("ping_mode", "live")).merge(("ping_timeout_secs", 5))).await;
    let (customer, tenant) = app.tenant("Acme").await;
    let standin = crate::standins::connection_string(
        "ftp",
        ftp_standin::USER,
        ftp_standin::PASSWORD,
        server.server.addr,
        ftp_standin::EXISTING_DIR,
    );
    let r = app.post_json("/warehouses/ping", &tenant, warehouse(customer, "ftp", &standin)).await;
    assert_refused("the stand-in", &r, "adapter[connection_string]", "a loopback address");
    for host in ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "0x7f.1", "2130706433", "127.1"] {
        for scheme in ["ftp", "sftp"] {
            let r = app
                .post_json(
                    "/warehouses/ping",
                    &tenant,
                    warehouse(customer, scheme, &url(scheme, host, quiet)),
                )
                .await;
            assert_refused(host, &r, "adapter[connection_string]", "a loopback address");
        }
    }
    assert_eq!(connections_made(&listener), 0);
    assert!(server.commands().is_empty(), "{:?}", server.commands());

    let r = app.post_json("/warehouses/ping", &app.admin, warehouse(customer, "ftp", &standin)).await;
    assert_eq!(r.status.code, 204, "an admin reaches the operator's own server: {r:?}");
    assert!(!server.commands().is_empty());
}

#[rocket::async_test]
async fn with_tenant_private_targets_a_customer_user_may_point_at_loopback_as_an_admin_may() {
    let server = FtpStandIn::start().await;
    let app = spawn_app_with(|f| {
        f.merge(("ping_mode", "live")).merge(("ping_timeout_secs", 5)).merge(("tenant_private_targets", true))
    })
    .await;
    let (customer, tenant) = app.tenant("Acme").await;
    let standin = crate::standins::connection_string(
        "ftp",
        ftp_standin::USER,
        ftp_standin::PASSWORD,
        server.server.addr,
        ftp_standin::EXISTING_DIR,
    );
    let body = warehouse(customer, "ftp", &standin);
    let r = app.post_json("/warehouses/ping", &tenant, body.clone()).await;
    assert_eq!(r.status.code, 204, "{r:?}");
    let id = app.post_json("/warehouses", &tenant, body).await.id();
    // Still the customer user's: checked again should the operator turn the setting off.
    assert_eq!(address_set_by(&app, "warehouses", id), "customer");
}

/// An app over `figment`'s database, and the admin's token.
async fn app_over(figment: Figment) -> TestApp {
    let app = orderbridge::build(figment).expect("app builds");
    let client = rocket::local::asynchronous::Client::tracked(app.rocket).await.expect("valid rocket");
    let mut app = TestApp::from_client(client);
    app.admin = app.token("admin", ADMIN_PASSWORD).await;
    app
}

/// CONTRACT §6: the address a pass connects to is checked when it connects, so what was
/// allowed when the row was saved (here, by `tenant_private_targets`; in the wild, by a name
/// that resolved elsewhere then) does not carry a customer user's warehouse into the
/// operator's network later.
#[rocket::async_test]
async fn a_pass_does_not_connect_to_a_customer_users_loopback_warehouse_once_private_targets_are_off() {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    sim.add_orders(HASH, 2, 7);
    let (listener, port) = quiet_listener();
    let dir = tempfile::tempdir().unwrap();
    let base = sim.base_url();
    let configured = |private: bool| {
        figment(&dir)
            .merge(("bigcommerce_api_base", base.clone()))
            .merge(("tenant_private_targets", private))
            .merge(("sync_interval_secs", 86_400))
            .merge(("sync_retry_base_secs", 1))
            .merge(("ping_timeout_secs", 5))
    };

    let trusted = app_over(configured(true)).await;
    let (customer, tenant) = trusted.tenant("Acme").await;
    let store = trusted
        .post_json(
            "/stores",
            &trusted.admin,
            json!({"customer_id": customer, "name": "Shop", "platform": "big_commerce",
                   "adapter": {"access_token": TOKEN, "store_hash": HASH}, "enabled_at": "now"}),
        )
        .await
        .id();
    let connection = trusted
        .post_json(
            "/connections",
            &tenant,
            json!({"name": "c", "store_id": store, "enabled_at": "now",
                   "warehouse": {"platform": "ftp", "enabled_at": "now",
                                 "adapter": {"connection_string": url("ftp", "127.0.0.1", port)}}}),
        )
        .await
        .id();
    let channels = trusted.get(&format!("/connections/{connection}/channels"), &tenant).await.body;
    let sales = channels[0]["id"].as_i64().unwrap();
    let on = trusted
        .patch_json(
            &format!("/connections/{connection}/channels/{sales}"),
            &tenant,
            json!({"enabled_at": "now"}),
        )
        .await;
    assert_eq!(on.status.code, 204, "{on:?}");
    drop(trusted);

    // The operator turns the setting off; the next pass, whoever asks for it, stops short.
    let app = app_over(configured(false)).await;
    let started = app.post_json(&format!("/connections/{connection}/sync"), &app.admin, json!({})).await;
    assert_eq!(started.status.code, 202, "{started:?}");
    let run_id = started.body["run_id"].as_i64().unwrap();
    let mut run = Value::Null;
    for _ in 0..600 {
        run = app.get(&format!("/connections/{connection}/sync_runs/{run_id}"), &app.admin).await.body;
        if !run["finished_at"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["orders_pulled"], 2, "the store's side ran: {run}");
    assert_eq!(run["error"]["step"], "send_orders", "{run}");
    assert_eq!(run["error"]["code"], "bad_data", "not retried as if the server were down: {run}");
    let message = run["error"]["message"].as_str().unwrap();
    let address = format!("127.0.0.1:{port}");
    for fragment in [address.as_str(), "a loopback address", "customer user", "tenant_private_targets"] {
        assert!(message.contains(fragment), "{message} should say {fragment}");
    }
    assert!(!run.to_string().contains("pw-SECRET"), "{run}");
    assert_eq!(connections_made(&listener), 0);
}

/// Issue 29, fault 6: who set the address changes only when the address (host and port)
/// changes. An admin's routine edit of a customer user's warehouse (a folder, a rotated
/// password, the same host written in capitals) leaves it the customer user's, so the pass
/// keeps checking where the name points; a new host is the admin's.
#[rocket::async_test]
async fn an_admins_edit_that_keeps_the_address_leaves_it_the_customer_users() {
    let app = spawn_app_with(|f| f.merge(("ping_mode", "offline"))).await;
    let (customer, tenant) = app.tenant("Acme").await;
    let id = app
        .post_json("/warehouses", &tenant, warehouse(customer, "sftp", &url("sftp", "files.example.com", 22)))
        .await
        .id();
    let path = format!("/warehouses/{id}");
    assert_eq!(address_set_by(&app, "warehouses", id), "customer");
    let edits = [
        (
            "orders_dir only",
            json!({"adapter": {"connection_string": url("sftp", "files.example.com", 22), "orders_dir": "in"}}),
        ),
        (
            "a rotated password",
            json!({"adapter": {"connection_string": "sftp://wh-user:rotated-SECRET-2@files.example.com:22/in"}}),
        ),
        (
            "the default port written out",
            json!({"adapter": {"connection_string": "sftp://wh-user:p@files.example.com/in"}}),
        ),
        (
            "the host in capitals",
            json!({"adapter": {"connection_string": "sftp://wh-user:p@FILES.example.com:22/in"}}),
        ),
        ("the name only", json!({"name": "Renamed"})),
    ];
    for (what, patch) in edits {
        let r = app.patch_json(&path, &app.admin, patch).await;
        assert_eq!(r.status.code, 204, "{what}: {r:?}");
        assert_eq!(address_set_by(&app, "warehouses", id), "customer", "{what}");
    }
    for (what, connection_string) in [
        ("another host", "sftp://wh-user:p@10.0.0.7:22/in"),
        ("another port", "sftp://wh-user:p@10.0.0.7:2222/in"),
    ] {
        // Back to the customer user's public address first, so each change is seen alone.
        let back = json!({"adapter": {"connection_string": url("sftp", PUBLIC, 22)}});
        assert_eq!(app.patch_json(&path, &tenant, back).await.status.code, 204, "{what}");
        assert_eq!(address_set_by(&app, "warehouses", id), "customer", "{what}: the tenant's own change");
        if what == "another port" {
            let host = json!({"adapter": {"connection_string": "sftp://wh-user:p@10.0.0.7:22/in"}});
            assert_eq!(app.patch_json(&path, &app.admin, host).await.status.code, 204);
        }
        let r = app
            .patch_json(&path, &app.admin, json!({"adapter": {"connection_string": connection_string}}))
            .await;
        assert_eq!(r.status.code, 204, "{what}: {r:?}");
        assert_eq!(address_set_by(&app, "warehouses", id), "admin", "{what}");
    }
}
