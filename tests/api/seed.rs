//! The demo data set: deterministic, complete, and served by the API.

use orderbridge::seed::{self, Options};
use rocket::http::Status;

use crate::common::*;

fn fingerprint(conn: &rusqlite::Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT o.external_id || o.customer_email || o.store_id || count(i.id) FROM orders o JOIN order_items i ON i.order_id = o.id GROUP BY o.id ORDER BY o.id")
        .unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[rocket::async_test]
async fn the_demo_seed_is_deterministic_complete_and_served() {
    // The seed writes without a journal, which no other connection may share, so it runs
    // before the server starts, as `serve --demo` has it (the first admin first, then the
    // seed): a running server's WAL checkpoints and sync reads would contend with it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seeded.db");
    let seeded = orderbridge::db::open(&path).unwrap();
    let options = Options { orders: 2_000, seed: 7, items: None, warehouse_root: None };
    let mut conn = seeded.get().unwrap();
    orderbridge::http::users::ensure_first_admin(&conn, Some(ADMIN_PASSWORD)).unwrap();
    let summary = seed::seed_demo(&mut conn, &options, &mut |_| {}).unwrap();
    assert_eq!(summary.orders, 2_000);
    assert!(summary.shipments > 1_500, "most orders shipped: {}", summary.shipments);
    assert!(seed::seed_demo(&mut conn, &options, &mut |_| {}).is_err(), "refuses a database with data");

    let other = tempfile::tempdir().unwrap();
    let pool = orderbridge::db::open(&other.path().join("again.db")).unwrap();
    let mut again = pool.get().unwrap();
    seed::seed_demo(&mut again, &options, &mut |_| {}).unwrap();
    assert_eq!(fingerprint(&conn), fingerprint(&again), "the same seed gives the same data");

    let scalar = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(scalar("SELECT count(DISTINCT state) FROM shipments"), 9, "every shipment state occurs");
    assert_eq!(
        scalar("SELECT count(DISTINCT platform) FROM stores WHERE platform IN ('bigcommerce', 'sellbrite')"),
        2
    );
    assert_eq!(scalar("SELECT count(*) FROM warehouses WHERE platform <> 'sftp'"), 0);
    assert_eq!(scalar("SELECT count(*) FROM connections WHERE enabled_at IS NULL"), 0);
    assert_eq!(scalar("SELECT count(*) FROM channels WHERE type = 'sales' AND enabled_at IS NULL"), 0);
    assert_eq!(
        scalar("SELECT count(*) FROM channels WHERE type = 'inventory'"),
        scalar("SELECT count(*) FROM connections"),
        "every connection has its inventory channel"
    );
    assert!(scalar("SELECT count(*) FROM products WHERE master_id IS NOT NULL") > 0);
    assert!(scalar("SELECT count(*) FROM product_bundle_items") > 0);
    assert!(scalar("SELECT count(*) FROM variant_collection_products") > 0);
    assert_eq!(scalar("SELECT max(c) FROM (SELECT count(*) AS c FROM order_items GROUP BY order_id)"), 5);
    assert!(scalar("SELECT min(ordered_at) FROM orders") >= orderbridge::dates::now_ms() - 91 * 86_400_000);
    let indexes = scalar(
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'orders' AND sql IS NOT NULL",
    );
    assert_eq!(indexes, 11, "the secondary indexes were rebuilt");
    drop(conn);
    drop(seeded);

    let app = spawn_app_with(|f| f.merge(("database", &path)).merge(("sync_mode", "off"))).await;

    let login = &summary.logins[0];
    let token = app.token(&login.username, &login.password).await;
    let r = app.get("/orders?ordered_at_min=3+days+ago&sort=-ordered_at", &token).await;
    assert_eq!(r.status, Status::Ok);
    assert!(!r.body["orders"].as_array().unwrap().is_empty());
    let all = app.get("/orders?page=1", &app.admin).await;
    assert_eq!(all.body["total_count"], 2_000);
    let mine = app.get("/orders?page=1", &token).await;
    assert!(mine.body["total_count"].as_i64().unwrap() < 2_000, "a customer sees only its own");
}
