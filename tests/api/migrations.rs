//! Upgrading a database file made by an earlier release: `tests/fixtures/v2.db` was written
//! by `orderbridge seed --demo --orders 40 --items 2` at schema version 2 (the release before
//! sync). Opened by this build, it is migrated in place and keeps every row.

use std::collections::BTreeSet;

use rusqlite::Connection;
use rusqlite::types::Value;

use crate::common::{TestApp, figment};

/// Every row of `table`, each as its values in `columns` order, sorted. With `open`, an
/// adapter is read as it was before its credentials were sealed (`ob_open`).
fn rows(conn: &Connection, table: &str, columns: &[String], open: bool) -> BTreeSet<Vec<String>> {
    let list = columns
        .iter()
        .map(|c| if open && c == "adapter" { "ob_open(adapter)".to_string() } else { format!("\"{c}\"") })
        .collect::<Vec<_>>()
        .join(", ");
    let mut stmt = conn.prepare(&format!("SELECT {list} FROM \"{table}\"")).unwrap();
    let found = stmt
        .query_map([], |r| {
            (0..columns.len())
                .map(|i| r.get::<_, Value>(i).map(|v| format!("{v:?}")))
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap();
    found.map(Result::unwrap).collect()
}

fn tables(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

fn columns(conn: &Connection, table: &str) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')")).unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[rocket::async_test]
async fn a_version_2_file_is_upgraded_in_place_and_keeps_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v2.db");
    let before = Connection::open_with_flags(fixture, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let version: i64 = before.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 2, "the fixture is the old release's file");

    let path = dir.path().join("test.db");
    std::fs::copy(fixture, &path).unwrap();
    let app = orderbridge::build(figment(&dir)).expect("the old file opens");
    let client = rocket::local::asynchronous::Client::tracked(app.rocket).await.unwrap();
    let mut app = TestApp::from_client(client);
    // The fixture's admin has a password nobody kept; a new admin reads the upgraded file.
    app.admin = app.user_token("upgrade-admin", orderbridge::http::users::Role::Admin, None).await;

    let after = app.pool().get().unwrap();
    let version: i64 = after.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, orderbridge::db::migrations::newest(), "every migration ran");
    for table in tables(&before) {
        let old_columns = columns(&before, &table);
        let kept = rows(&after, &table, &old_columns, true);
        for row in rows(&before, &table, &old_columns, false) {
            assert!(kept.contains(&row), "{table} lost {row:?}");
        }
    }
    // The credentials the old file held in plain are sealed now, in place.
    let secrets: Vec<String> = before
        .prepare("SELECT json_extract(adapter, '$.access_token') FROM stores WHERE platform = 'bigcommerce'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!secrets.is_empty());
    drop(after);
    let after = Connection::open(&path).unwrap();
    // The server's own connections may hold a read a moment longer: the checkpoint answers
    // busy then (no error), and the sealed pages would still wait in the WAL. Asked again until
    // it copies them all (bounded).
    for _ in 0..100 {
        let busy: i64 = after.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0)).unwrap();
        if busy == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let raw = std::fs::read(&path).unwrap();
    for secret in &secrets {
        assert!(!raw.windows(secret.len()).any(|w| w == secret.as_bytes()), "{secret} is still in the file");
    }
    // What the upgrade added: an inventory channel per connection, nothing else.
    let count = |sql: &str| after.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(
        count("SELECT count(*) FROM channels WHERE type = 'inventory' AND enabled_at IS NULL"),
        count("SELECT count(*) FROM connections")
    );
    assert_eq!(count("SELECT count(*) FROM channels"), 2 * count("SELECT count(*) FROM connections"));
    assert_eq!(count("SELECT count(*) FROM shipment_items WHERE quantity IS NOT NULL"), 0);
    // Every customer of the demo data has a customer user, who could have set its addresses.
    for table in ["stores", "warehouses"] {
        assert!(count(&format!("SELECT count(*) FROM {table}")) > 0, "{table}");
        assert_eq!(count(&format!("SELECT count(*) FROM {table} WHERE address_set_by <> 'customer'")), 0);
    }

    // And the service serves it.
    let orders = app.get("/orders?page=1", &app.admin).await;
    assert_eq!(orders.body["total_count"], 40, "{orders:?}");
    let connection = count("SELECT min(id) FROM connections");
    let channels = app.get(&format!("/connections/{connection}/channels"), &app.admin).await;
    let kinds: Vec<&str> =
        channels.body.as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["sales", "inventory"]);
    assert_eq!(
        app.get(&format!("/connections/{connection}/sync_runs"), &app.admin).await.body,
        serde_json::json!([])
    );
}

/// CONTRACT §6: an address a customer user set is checked at every connection. A file from
/// before the column does not say who set each address; the rows of a customer that has a
/// customer user count as that user's (checked), those of a customer that never had one as
/// an admin's.
#[rocket::async_test]
async fn an_upgrade_counts_only_the_addresses_of_customers_without_customer_users_as_an_admins() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test.db");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v2.db"), &path).unwrap();
    // One customer of the demo data whose user never existed.
    let userless: i64 = {
        let old = Connection::open(&path).unwrap();
        let userless = old.query_row("SELECT max(customer_id) FROM users", [], |r| r.get(0)).unwrap();
        old.execute("DELETE FROM users WHERE customer_id = ?1", [userless]).unwrap();
        userless
    };
    drop(orderbridge::build(figment(&dir)).expect("the old file opens"));
    let after = Connection::open(&path).unwrap();
    for table in ["stores", "warehouses"] {
        let mut stmt = after
            .prepare(&format!("SELECT customer_id = ?1, address_set_by FROM {table} ORDER BY id"))
            .unwrap();
        let rows: Vec<(bool, String)> =
            stmt.query_map([userless], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
        assert!(
            rows.iter().any(|(theirs, _)| *theirs) && rows.iter().any(|(theirs, _)| !*theirs),
            "{rows:?}"
        );
        for (userless, set_by) in rows {
            assert_eq!(set_by, if userless { "admin" } else { "customer" }, "{table}");
        }
    }
}
